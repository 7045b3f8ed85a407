//! MCP over a pair of pipes this crate is given: a child's stdout and stdin, or any reader and
//! writer. Who starts the process, and how, is not its business.
//!
//! What comes in is sorted inside rmcp's own reads ([`SortedStdout`]): JSON-RPC lines go to
//! rmcp, anything else to a [`SetAside`] the caller chooses (a server's log), and a line over
//! [`MESSAGE_LIMIT`] is dropped whole.

use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::RoleClient;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::broadcast;

use crate::stdout::{Line, LineSorter};
use crate::types::ServerEvent;

/// How much of the server's stdout is read at once.
const READ_BUFFER: usize = 64 * 1024;
/// The largest message accepted from a server. Tool results can be big (files, images), but a
/// server that never ends its line must not take all memory.
pub const MESSAGE_LIMIT: usize = 64 * 1024 * 1024;

/// Where a line that is not a message goes besides the server's events: the server's log.
pub type SetAside = Box<dyn Fn(&str) + Send + Sync>;

/// The client side of MCP over `reader` (the server's stdout) and `writer` (its stdin): what
/// `serve` takes. Lines that are not JSON-RPC are sent to `events` as [`ServerEvent::Output`]
/// of `server` and to `aside`.
pub fn transport<R, W>(
    server: &str,
    reader: R,
    writer: W,
    events: broadcast::Sender<ServerEvent>,
    aside: SetAside,
) -> AsyncRwTransport<RoleClient, SortedStdout<R>, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let reader = SortedStdout::new(server, reader, events, aside);
    AsyncRwTransport::new_client(reader, writer).with_max_line_length(MESSAGE_LIMIT)
}

/// A server's stdout as rmcp reads it: JSON-RPC lines only. Anything else is set aside as it is
/// met, and a line over [`MESSAGE_LIMIT`] is dropped whole.
///
/// It sorts inside rmcp's own reads, with no task or pipe between the process and rmcp: every
/// message of every call passes through here, and a task in between cost a wake-up and a copy
/// each way.
pub struct SortedStdout<R> {
    stdout: R,
    /// Bytes read from the pipe and not yet sorted: `buf[start..end]`.
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    sorter: LineSorter,
    /// A message for rmcp, of which `sent` bytes were handed over.
    message: Vec<u8>,
    sent: usize,
    server: String,
    aside: SetAside,
    events: broadcast::Sender<ServerEvent>,
}

impl<R> SortedStdout<R> {
    /// Sorts `stdout` of `server`, as [`transport`] describes.
    pub fn new(
        server: &str,
        stdout: R,
        events: broadcast::Sender<ServerEvent>,
        aside: SetAside,
    ) -> Self {
        SortedStdout {
            stdout,
            buf: vec![0; READ_BUFFER].into_boxed_slice(),
            start: 0,
            end: 0,
            sorter: LineSorter::new(MESSAGE_LIMIT),
            message: Vec::new(),
            sent: 0,
            server: server.to_owned(),
            aside,
            events,
        }
    }

    fn set_aside(&self, line: Line) {
        let text = match line {
            Line::Message(_) => return,
            Line::TooLong => {
                let text = format!(
                    "(stdout) a message larger than {} MiB was dropped; the call it answered will time out",
                    MESSAGE_LIMIT / (1024 * 1024)
                );
                tracing::warn!(server = %self.server, "{text}");
                (self.aside)(&text);
                return;
            }
            Line::Other(other) => {
                // A stray print would otherwise corrupt the stream; keep it where users look.
                let text = String::from_utf8_lossy(&other);
                format!("(stdout, not JSON-RPC, skipped) {}", text.trim_end())
            }
        };
        tracing::debug!(server = %self.server, "{text}");
        (self.aside)(&text);
        let _ = self.events.send(ServerEvent::Output {
            server: self.server.clone(),
            line: text,
        });
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for SortedStdout<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        loop {
            if me.sent < me.message.len() {
                let n = out.remaining().min(me.message.len() - me.sent);
                out.put_slice(&me.message[me.sent..me.sent + n]);
                me.sent += n;
                if me.sent == me.message.len() {
                    me.message.clear();
                    me.sent = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if me.start < me.end {
                let (take, line) = me.sorter.feed(&me.buf[me.start..me.end]);
                me.start += take;
                match line {
                    Some(Line::Message(message)) => me.message = message,
                    Some(other) => me.set_aside(other),
                    None => {}
                }
                continue;
            }
            let mut read = ReadBuf::new(&mut me.buf);
            match Pin::new(&mut me.stdout).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                // An error ends the stream as the end of the pipe does: the connection closes
                // and calls in flight fail.
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {
                    let n = read.filled().len();
                    if n == 0 {
                        return Poll::Ready(Ok(()));
                    }
                    me.start = 0;
                    me.end = n;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn messages_pass_and_other_lines_are_set_aside() {
        let (events, mut seen) = broadcast::channel(8);
        let kept = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = kept.clone();
        let wire: &[u8] =
            b"hello from a stray print\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
        let mut sorted = SortedStdout::new(
            "s",
            wire,
            events,
            Box::new(move |line| log.lock().expect("log").push(line.to_owned())),
        );
        let mut read = String::new();
        sorted.read_to_string(&mut read).await.expect("reads");
        assert_eq!(read, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        let kept = kept.lock().expect("log").clone();
        assert_eq!(kept.len(), 1);
        assert!(kept[0].contains("hello from a stray print"), "{kept:?}");
        assert!(matches!(
            seen.try_recv(),
            Ok(ServerEvent::Output { server, .. }) if server == "s"
        ));
    }
}
