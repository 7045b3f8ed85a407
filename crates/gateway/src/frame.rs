//! The transport between a client's connection and rmcp's server: one line, one JSON-RPC
//! message.
//!
//! rmcp's own stream transport drops a line that is not JSON, or is too long, without a word; a
//! client (or a person typing at the socket) then waits for an answer that never comes. Here
//! each such line is answered with a JSON-RPC error that says what was wrong, and the connection
//! stays open. Memory stays bounded: a line is never held past [`MAX_MESSAGE`] bytes. The
//! transport reads and writes the socket itself (no pipe or task in between), since every call
//! of every connected host passes through it.

use std::sync::Arc;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::RoleServer;
use serde_json::Value;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter,
};
use tokio::sync::Mutex;
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

/// A JSON-RPC error, as one line to send.
pub(crate) fn error_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// What to do with one line from the client.
#[derive(Debug)]
pub(crate) enum Read {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to pass on or answer: a blank line, or a notification rmcp does not know
    /// (JSON-RPC answers no notification, not even with an error).
    Skip,
    /// Answer this, and read on.
    Refuse(Vec<u8>),
}

pub(crate) fn parse(line: &[u8]) -> Read {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Read::Skip;
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => Read::Message(Box::new(message)),
        Err(e) => match serde_json::from_slice::<Value>(line) {
            Err(e) => Read::Refuse(error_line(
                &Value::Null,
                -32700,
                &format!(
                    "Parse error: this line is not JSON ({e}); send one JSON-RPC message per line"
                ),
            )),
            Ok(value) => match value.get("id") {
                None => Read::Skip,
                Some(id) => Read::Refuse(error_line(
                    id,
                    -32600,
                    &format!("Invalid request: not a JSON-RPC message Toolgate knows ({e})"),
                )),
            },
        },
    }
}

/// rmcp's transport for one client. `closed` is cancelled as soon as the client's side ends, so
/// that its running calls are cancelled without waiting for rmcp.
pub(crate) struct LineTransport<R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<BufWriter<W>>>,
    first: Option<Vec<u8>>,
    closed: CancellationToken,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// `first` is a line already read from `reader`, taken first.
    pub(crate) fn new(
        reader: BufReader<R>,
        writer: W,
        first: Option<Vec<u8>>,
        closed: CancellationToken,
    ) -> Self {
        Self {
            reader,
            writer: Arc::new(Mutex::new(BufWriter::new(writer))),
            first,
            closed,
        }
    }

    async fn write(writer: &Mutex<BufWriter<W>>, line: &[u8]) -> std::io::Result<()> {
        let mut writer = writer.lock().await;
        writer.write_all(line).await?;
        writer.flush().await
    }
}

impl<R, W> rmcp::transport::Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            Self::write(&writer, &line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = match self.first.take() {
                Some(line) => Line::Complete(line),
                None => match read_line(&mut self.reader, MAX_MESSAGE).await {
                    Ok(line) => line,
                    Err(e) => {
                        tracing::debug!("a gateway client's connection failed: {e}");
                        Line::Eof
                    }
                },
            };
            let refusal = match line {
                Line::Eof => {
                    self.closed.cancel();
                    return None;
                }
                Line::TooLong => error_line(
                    &Value::Null,
                    -32600,
                    &format!(
                        "Invalid request: the message is larger than {} MiB and was dropped",
                        MAX_MESSAGE / 1024 / 1024
                    ),
                ),
                Line::Complete(line) => match parse(&line) {
                    Read::Message(message) => return Some(*message),
                    Read::Skip => continue,
                    Read::Refuse(answer) => answer,
                },
            };
            if Self::write(&self.writer, &refusal).await.is_err() {
                self.closed.cancel();
                return None;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::Transport;
    use tokio::io::AsyncBufReadExt;

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

    fn refused(line: &[u8]) -> Value {
        match parse(line) {
            Read::Refuse(answer) => serde_json::from_slice(&answer).expect("json"),
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn junk_gets_a_parse_error_a_bad_request_its_id_and_messages_pass() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Read::Message(_)
        ));
        assert!(matches!(parse(b"   "), Read::Skip));
        let junk = refused(b"hello there");
        assert_eq!(
            (junk["error"]["code"].clone(), junk["id"].clone()),
            (Value::from(-32700), Value::Null)
        );
        let bad = refused(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}"#);
        assert_eq!(
            (bad["error"]["code"].clone(), bad["id"].clone()),
            (Value::from(-32600), Value::from(7))
        );
        assert!(
            !matches!(
                parse(br#"{"jsonrpc":"2.0","method":"$/lsp-thing"}"#),
                Read::Refuse(_)
            ),
            "no answer to a notification"
        );
    }

    #[tokio::test]
    async fn a_bad_line_is_answered_and_the_next_message_arrives() {
        let (client, server) = tokio::io::duplex(1024);
        let (server_read, server_write) = tokio::io::split(server);
        let closed = CancellationToken::new();
        let mut transport = LineTransport::new(
            BufReader::new(server_read),
            server_write,
            None,
            closed.clone(),
        );
        let (client_read, mut client_write) = tokio::io::split(client);
        client_write
            .write_all(b"not json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
            .await
            .expect("write");
        let message = transport.receive().await.expect("a message");
        assert!(serde_json::to_string(&message)
            .expect("json")
            .contains("ping"));
        let mut answer = String::new();
        BufReader::new(client_read)
            .read_line(&mut answer)
            .await
            .expect("read");
        assert!(answer.contains("-32700"), "{answer}");
        drop(client_write);
        assert!(transport.receive().await.is_none());
        assert!(closed.is_cancelled(), "the end of the client is noticed");
    }
}
