//! The transport between a client's connection and rmcp's server: one line, one JSON-RPC
//! message.
//!
//! rmcp's own stream transport drops a line that is not JSON, or is too long, without a word; a
//! client (or a person typing at the socket) then waits for an answer that never comes. Here
//! each such line is answered with a JSON-RPC error that says what was wrong, and the connection
//! stays open. Memory stays bounded: a line is never held past [`MAX_MESSAGE`] bytes. The
//! transport reads and writes the socket itself (no pipe or task in between), since every call
//! of every connected host passes through it.
//!
//! rmcp's serve loop races [`Transport::receive`](rmcp::transport::Transport::receive) against
//! the answers going out (`tokio::select!`), and drops the `receive` future whenever another
//! branch wins, often in the middle of a large message. So nothing `receive` has read may live
//! in the future itself: the part of a line read so far stays in the transport's [`FramedRead`]
//! buffer ([`LineCodec`]), and a refusal being written stays in the transport until it is out.
//! A line held in a local `Vec` was lost that way, and its tail refused as junk.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::StreamExt;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::RoleServer;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::Mutex;
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, FramedRead};
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
}

/// One line, one item, of at most `limit` bytes (its `\n` not counted). The part of a line
/// read so far is kept in the reader's buffer, not in a future, so that reading may be
/// cancelled at any point and resumed without losing a byte; a line past the limit is
/// dropped as it arrives, never held.
#[derive(Debug)]
pub(crate) struct LineCodec {
    limit: usize,
    /// Inside a line past the limit: dropping bytes until its end.
    discarding: bool,
    /// How far the buffer has been searched for `\n` already.
    searched: usize,
}

impl LineCodec {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            discarding: false,
            searched: 0,
        }
    }
}

impl Decoder for LineCodec {
    type Item = Line;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Line>> {
        let newline = buf[self.searched..]
            .iter()
            .position(|b| *b == b'\n')
            .map(|i| self.searched + i);
        let Some(end) = newline else {
            if self.discarding || buf.len() > self.limit {
                self.discarding = true;
                buf.clear();
                release(buf);
            }
            self.searched = buf.len();
            return Ok(None);
        };
        let mut line = buf.split_to(end + 1);
        line.truncate(end);
        self.searched = 0;
        release(buf);
        if std::mem::take(&mut self.discarding) || line.len() > self.limit {
            return Ok(Some(Line::TooLong));
        }
        Ok(Some(Line::Complete(line.to_vec())))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Line>> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        // A last line without `\n` still counts, as the other SDKs read it.
        self.searched = 0;
        if std::mem::take(&mut self.discarding) {
            buf.clear();
            return Ok(Some(Line::TooLong));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        let line = buf.split().to_vec();
        Ok(Some(Line::Complete(line)))
    }
}

/// What an idle client's buffer may keep of the room its largest message took.
const KEPT: usize = 64 * 1024;

/// Gives the room back once a large message has gone: a host that sent one 8 MiB call does
/// not hold 8 MiB for the rest of its session.
fn release(buf: &mut BytesMut) {
    if buf.is_empty() && buf.capacity() > KEPT {
        *buf = BytesMut::new();
    }
}

/// A client's lines, as the gateway reads them.
pub(crate) type Lines<R> = FramedRead<R, LineCodec>;

/// Reads `read` line by line, at most [`MAX_MESSAGE`] bytes a line.
pub(crate) fn lines<R: AsyncRead>(read: R) -> Lines<R> {
    FramedRead::new(read, LineCodec::new(MAX_MESSAGE))
}

/// The next line; `None` at the end (or when the connection failed). Cancel-safe.
pub(crate) async fn next_line<R: AsyncRead + Unpin>(lines: &mut Lines<R>) -> Option<Line> {
    match lines.next().await? {
        Ok(line) => Some(line),
        Err(e) => {
            tracing::debug!("a gateway client's connection failed: {e}");
            None
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

/// A write that must finish even if the future that began it is dropped.
type Writing = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>;

/// rmcp's transport for one client. `closed` is cancelled as soon as the client's side ends, so
/// that its running calls are cancelled without waiting for rmcp.
pub(crate) struct LineTransport<R, W> {
    lines: Lines<R>,
    writer: Arc<Mutex<BufWriter<W>>>,
    first: Option<Vec<u8>>,
    /// A refusal on its way out, finished before anything more is read: kept here, not in
    /// `receive`'s future, so that no refusal goes out half written.
    refusing: Option<Writing>,
    closed: CancellationToken,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// `first` is a line already read from `lines`, taken first.
    pub(crate) fn new(
        lines: Lines<R>,
        writer: W,
        first: Option<Vec<u8>>,
        closed: CancellationToken,
    ) -> Self {
        Self {
            lines,
            writer: Arc::new(Mutex::new(BufWriter::new(writer))),
            first,
            refusing: None,
            closed,
        }
    }

    /// Writes `line` whole, or fails; run to its end (in a task of rmcp's, or kept in
    /// `refusing`), never dropped halfway, so lines never mix.
    async fn write(writer: Arc<Mutex<BufWriter<W>>>, line: Vec<u8>) -> std::io::Result<()> {
        let mut writer = writer.lock().await;
        writer.write_all(&line).await?;
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
            Self::write(writer, line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(refusing) = self.refusing.as_mut() {
                let written = refusing.await;
                self.refusing = None;
                if written.is_err() {
                    self.closed.cancel();
                    return None;
                }
            }
            let line = match self.first.take() {
                Some(line) => Some(Line::Complete(line)),
                None => next_line(&mut self.lines).await,
            };
            let refusal = match line {
                None => {
                    self.closed.cancel();
                    return None;
                }
                Some(Line::TooLong) => error_line(
                    &Value::Null,
                    -32600,
                    &format!(
                        "Invalid request: the message is larger than {} MiB and was dropped",
                        MAX_MESSAGE / 1024 / 1024
                    ),
                ),
                Some(Line::Complete(line)) => match parse(&line) {
                    Read::Message(message) => return Some(*message),
                    Read::Skip => continue,
                    Read::Refuse(answer) => answer,
                },
            };
            self.refusing = Some(Box::pin(Self::write(self.writer.clone(), refusal)));
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
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// Every line of `input`, read `piece` bytes at a time.
    async fn lines_of(input: &[u8], limit: usize, piece: usize) -> Vec<Line> {
        let (mut client, server) = tokio::io::duplex(piece);
        let input = input.to_vec();
        let writer = tokio::spawn(async move {
            for part in input.chunks(piece) {
                client.write_all(part).await.expect("write");
            }
        });
        let mut lines = FramedRead::new(server, LineCodec::new(limit));
        let mut out = Vec::new();
        while let Some(line) = next_line(&mut lines).await {
            out.push(line);
        }
        writer.await.expect("written");
        out
    }

    #[tokio::test]
    async fn lines_past_the_limit_are_dropped_whole_and_the_next_is_read() {
        let input = b"{\"a\":1}\n0123456789abc\nok\n0123456789\n\n01234567890\nlast";
        let want = [
            Line::Complete(b"{\"a\":1}".to_vec()),
            Line::TooLong,
            Line::Complete(b"ok".to_vec()),
            Line::Complete(b"0123456789".to_vec()),
            Line::Complete(Vec::new()),
            Line::TooLong,
            Line::Complete(b"last".to_vec()),
        ];
        // However the bytes are cut, the same lines.
        for piece in [1, 2, 3, 4, 7, 11, 64] {
            assert_eq!(lines_of(input, 10, piece).await, want, "pieces of {piece}");
        }
        assert_eq!(
            lines_of(b"0123456789abcdef", 10, 4).await,
            [Line::TooLong],
            "a last line past the limit, without its newline"
        );
        assert_eq!(lines_of(b"", 10, 4).await, []);
    }

    /// Reading cut short at every point (the future dropped, as rmcp's `select!` does) loses
    /// nothing: the next read goes on where the last stopped.
    #[tokio::test]
    async fn a_read_dropped_halfway_loses_nothing() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut lines = FramedRead::new(server, LineCodec::new(1024));
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        for part in line.chunks(5) {
            client.write_all(part).await.expect("write");
            let read = tokio::time::timeout(std::time::Duration::ZERO, next_line(&mut lines));
            if let Ok(got) = read.await {
                assert_eq!(got, Some(Line::Complete(line[..line.len() - 1].to_vec())));
                return;
            }
        }
        panic!("the line never came whole");
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
        let mut transport =
            LineTransport::new(lines(server_read), server_write, None, closed.clone());
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

    /// rmcp's serve loop, in small: `receive` raced against the answers going out (each sent
    /// from a task of its own, whose end is one more branch of the race), as in rmcp's
    /// `service.rs`. Every time another branch wins, the `receive` future is dropped.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_message_is_lost_or_split_when_reads_race_answers() {
        const ROUNDS: usize = 2_000;
        const LARGE_EVERY: usize = 100;
        const JUNK_EVERY: usize = 7;
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let closed = CancellationToken::new();
        let mut transport =
            LineTransport::new(lines(server_read), server_write, None, closed.clone());
        let (client_read, mut client_write) = tokio::io::split(client);
        let size = |round: usize| match round % LARGE_EVERY {
            0 => 1024 * 1024,
            r => 1024 * (1 + r % 48),
        };
        let message = |id: usize, pad: usize| {
            let mut line = serde_json::json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "t", "arguments": {"pad": "x".repeat(pad)}},
            })
            .to_string()
            .into_bytes();
            line.push(b'\n');
            line
        };
        let writer = tokio::spawn(async move {
            for round in 0..ROUNDS {
                // A small call, then a large one in small pieces.
                client_write
                    .write_all(&message(2 * round, 10))
                    .await
                    .expect("write");
                if round % JUNK_EVERY == 0 {
                    // Refused while the answers go out: each refusal whole, once.
                    let junk = format!("junk {round}\n");
                    client_write
                        .write_all(junk.as_bytes())
                        .await
                        .expect("write");
                }
                for piece in message(2 * round + 1, size(round)).chunks(4096) {
                    client_write.write_all(piece).await.expect("write");
                    tokio::task::yield_now().await;
                }
            }
            client_write.shutdown().await.expect("shutdown");
        });
        // Everything the client is sent: answers, and no error. Read to the end whatever
        // comes, so that the gateway's writes never wait on a reader that gave up.
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(client_read).lines();
            let (mut answers, mut refusals, mut others) = (0, 0, Vec::new());
            while let Ok(Some(line)) = lines.next_line().await {
                let value = serde_json::from_str::<Value>(&line).unwrap_or_default();
                if value.get("result").is_some() {
                    answers += 1;
                } else if value["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("expected value"))
                {
                    refusals += 1;
                } else {
                    others.push(line.chars().take(200).collect::<String>());
                }
            }
            (answers, refusals, others)
        });
        let mut sending = tokio::task::JoinSet::new();
        let mut received = Vec::new();
        loop {
            tokio::select! {
                message = transport.receive() => {
                    let Some(message) = message else { break };
                    let value = serde_json::to_value(&message).expect("json");
                    let id = value["id"].as_u64().expect("a request") as usize;
                    let pad = value["params"]["arguments"]["pad"].as_str().expect("pad");
                    let want = if id.is_multiple_of(2) { 10 } else { size(id / 2) };
                    assert_eq!((pad.len(), pad.bytes().all(|b| b == b'x')), (want, true), "message {id}");
                    received.push(id);
                    let answer: TxJsonRpcMessage<RoleServer> = serde_json::from_value(
                        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                    )
                    .expect("an answer");
                    sending.spawn(transport.send(answer));
                }
                Some(sent) = sending.join_next(), if !sending.is_empty() => {
                    sent.expect("joins").expect("sent");
                }
            }
        }
        while let Some(sent) = sending.join_next().await {
            sent.expect("joins").expect("sent");
        }
        writer.await.expect("the writer ends");
        transport.close().await.expect("closes");
        let lost = (0..2 * ROUNDS)
            .zip(&received)
            .find(|(want, got)| want != *got);
        assert_eq!(
            (lost, received.len()),
            (None, 2 * ROUNDS),
            "every message, whole, in order"
        );
        let (answers, refusals, others) = reader.await.expect("the reader ends");
        assert_eq!(
            (answers, refusals, others),
            (
                2 * ROUNDS,
                ROUNDS.div_ceil(JUNK_EVERY),
                Vec::<String>::new()
            )
        );
    }
}
