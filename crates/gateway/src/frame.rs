//! Between a client's connection and rmcp: one line is one JSON-RPC message.
//!
//! rmcp drops a line that is not JSON, or is too long, without a word. A client (or a person
//! typing at a socket) then waits for an answer that never comes. Here each such line is
//! answered with a JSON-RPC error that says what was wrong, and the connection stays open;
//! everything else passes through unchanged, in order. Memory stays bounded: a line is never
//! held past [`MAX_MESSAGE`] bytes, and rmcp's side is a small pipe that pushes back.

use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The largest message a client may send: far beyond any tool call's arguments.
pub const MAX_MESSAGE: usize = 8 * 1024 * 1024;

/// What reading one line gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line, without its `\n`.
    Complete(Vec<u8>),
    /// A line longer than the limit; it was read to its end and dropped.
    TooLong,
    Eof,
}

/// Reads one line of at most `limit` bytes, never buffering more than that.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // A last line without `\n` still counts, as the other SDKs read it.
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::Eof,
                (false, false) => Line::Complete(line),
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if !too_long {
            let part = &available[..newline.unwrap_or(available.len())];
            if line.len() + part.len() > limit {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(part);
            }
        }
        reader.consume(take);
        if newline.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete(line)
            });
        }
    }
}

/// The JSON-RPC error for a line that could not be taken, as one line to send.
pub(crate) fn error_line(code: i64, message: &str) -> Vec<u8> {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// Why a line is refused, if it is: JSON-RPC's parse error, with serde's reason.
pub(crate) fn check(line: &[u8]) -> Option<Vec<u8>> {
    let trimmed = line.strip_suffix(b"\r").unwrap_or(line);
    if trimmed.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match serde_json::from_slice::<serde::de::IgnoredAny>(trimmed) {
        Ok(_) => None,
        Err(e) => Some(error_line(
            -32700,
            &format!(
                "Parse error: this line is not JSON ({e}); send one JSON-RPC message per line"
            ),
        )),
    }
}

/// Connects `reader`/`writer` (the client) to the returned stream (rmcp's side). `first` is a
/// line already read from `reader`, passed on first. `closed` is cancelled as soon as the
/// client's side ends, so that its running calls are cancelled without waiting for rmcp.
pub(crate) fn guard<R, W>(
    mut reader: BufReader<R>,
    mut writer: W,
    first: Option<Vec<u8>>,
    closed: CancellationToken,
) -> DuplexStream
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (mut from_rmcp, mut to_rmcp) = tokio::io::split(ours);
    let (errors, mut pending_errors) = mpsc::channel::<Vec<u8>>(16);

    tokio::spawn(async move {
        let mut next = first;
        loop {
            let line = match next.take() {
                Some(line) => Line::Complete(line),
                None => match read_line(&mut reader, MAX_MESSAGE).await {
                    Ok(line) => line,
                    Err(e) => {
                        tracing::debug!("a gateway client's connection failed: {e}");
                        Line::Eof
                    }
                },
            };
            match line {
                Line::Complete(line) => {
                    if let Some(error) = check(&line) {
                        let _ = errors.send(error).await;
                    } else {
                        let mut line = line;
                        line.push(b'\n');
                        if to_rmcp.write_all(&line).await.is_err() {
                            break;
                        }
                    }
                }
                Line::TooLong => {
                    let message = format!(
                        "Invalid request: the message is larger than {} MiB and was dropped",
                        MAX_MESSAGE / 1024 / 1024
                    );
                    let _ = errors.send(error_line(-32600, &message)).await;
                }
                Line::Eof => break,
            }
        }
        closed.cancel();
        let _ = to_rmcp.shutdown().await;
    });

    tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(&mut from_rmcp);
        let mut line = Vec::new();
        loop {
            line.clear();
            tokio::select! {
                read = from_rmcp.read_until(b'\n', &mut line) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
                            break;
                        }
                    }
                },
                Some(error) = pending_errors.recv() => {
                    if writer.write_all(&error).await.is_err() || writer.flush().await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = writer.shutdown().await;
    });
    theirs
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], limit: usize) -> Vec<Line> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut reader, limit).await.expect("reads");
            let end = line == Line::Eof;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_past_the_limit_are_dropped_whole_and_the_next_is_read() {
        let got = lines(b"{\"a\":1}\n0123456789abc\nok\nlast", 10).await;
        assert_eq!(
            got,
            [
                Line::Complete(b"{\"a\":1}".to_vec()),
                Line::TooLong,
                Line::Complete(b"ok".to_vec()),
                Line::Complete(b"last".to_vec()),
                Line::Eof
            ]
        );
    }

    #[test]
    fn junk_gets_a_parse_error_and_json_passes() {
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
        assert!(
            check(b"   ").is_none(),
            "blank lines are skipped, as rmcp does"
        );
        let error = check(b"hello there").expect("refused");
        let error: serde_json::Value = serde_json::from_slice(&error).expect("json");
        assert_eq!(error["error"]["code"], -32700);
        assert_eq!(error["id"], serde_json::Value::Null);
    }

    #[tokio::test]
    async fn a_bad_line_is_answered_and_the_good_ones_reach_rmcp_in_order() {
        let (client, server) = tokio::io::duplex(1024);
        let (server_read, server_write) = tokio::io::split(server);
        let closed = CancellationToken::new();
        let rmcp = guard(
            BufReader::new(server_read),
            server_write,
            Some(b"{\"first\":1}".to_vec()),
            closed.clone(),
        );
        let (client_read, mut client_write) = tokio::io::split(client);
        client_write
            .write_all(b"not json\n{\"second\":2}\n")
            .await
            .expect("write");
        let mut rmcp = BufReader::new(rmcp);
        let mut got = String::new();
        rmcp.read_line(&mut got).await.expect("read");
        rmcp.read_line(&mut got).await.expect("read");
        assert_eq!(got, "{\"first\":1}\n{\"second\":2}\n");
        let mut answer = String::new();
        BufReader::new(client_read)
            .read_line(&mut answer)
            .await
            .expect("read");
        assert!(answer.contains("-32700"), "{answer}");
        drop(client_write);
        tokio::time::timeout(std::time::Duration::from_secs(5), closed.cancelled())
            .await
            .expect("the end of the client is noticed");
    }
}
