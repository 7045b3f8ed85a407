//! Unix: the shim hands the host's own stdin and stdout to the gateway (`SCM_RIGHTS` over the
//! socket) and then only waits, so a message goes from the host to the gateway and back without
//! passing through the shim: two process wake-ups fewer each way, which is most of what a relay
//! costs a call.
//!
//! The exchange, so that a shim and a gateway of different versions (the app in the tray not
//! yet restarted after an update) still work together:
//!
//! 1. The shim's hello offers (`"handover": true`). A gateway from before ignores the offer and
//!    reads the host's messages from the socket, as it always did.
//! 2. A gateway that takes the offer answers [`YES`], then reads the next message.
//! 3. On the yes, the shim sends one byte with its stdin and stdout attached, and waits. With no
//!    answer within [`ANSWER_WAIT`] it relays instead, dropping a yes that comes late; the
//!    gateway, reading host messages where it expected the descriptors, serves the socket.
//! 4. When the session ends, the gateway writes [`HOST_ENDED`] if the host ended it, then closes
//!    the socket: the shim exits 0 after that byte, and 1 ("Toolgate closed the connection")
//!    without it. The gateway ends the session if the shim goes away (a host that kills its
//!    server without closing stdin), as it would see the relay's socket close.
//!
//! Only pipes and sockets are handed over (what hosts give their servers: Rust and Python make
//! pipes, Node socket pairs); a terminal or a file is relayed, and so is everything with
//! `toolgate connect --relay`.

use std::io::ErrorKind::{TimedOut, WouldBlock};
use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;

use rustix::fs::{fstat, FileType};
use rustix::net::{
    recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio_util::sync::CancellationToken;

use super::{Ended, Opened, Reader, Writer};
use crate::Hello;

/// The gateway's yes to a shim's offer.
const YES: &[u8] = b"{\"toolgateGateway\":{\"handover\":true}}\n";

/// How long a shim waits for the yes before it relays: a gateway that takes the offer answers
/// at once; one from before never does.
const ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The byte that tells the shim the host ended the session.
const HOST_ENDED: u8 = b'.';

/// How far the gateway reads for a first line that could be a hello.
const HELLO_LIMIT: usize = 64 * 1024;

/// What a descriptor is, for handing it over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    Socket,
    /// A terminal, a file, anything else: relayed, not handed over.
    Other,
}

fn kind_of(fd: impl AsFd) -> Kind {
    match fstat(fd).map(|stat| FileType::from_raw_mode(stat.st_mode)) {
        Ok(FileType::Fifo) => Kind::Pipe,
        Ok(FileType::Socket) => Kind::Socket,
        _ => Kind::Other,
    }
}

/// Whether this process's stdin and stdout can be handed to the gateway.
pub(super) fn can_hand_over() -> bool {
    kind_of(std::io::stdin()) != Kind::Other && kind_of(std::io::stdout()) != Kind::Other
}

/// What became of the shim's offer.
pub(super) enum Offer {
    /// Stdin and stdout were handed over, and the session has ended so.
    Taken(Ended),
    /// No yes in time: the hello is sent, and the shim relays.
    Unanswered,
}

/// The shim's side: sends `hello` with the offer; on the gateway's yes hands stdin and stdout
/// over and waits for the gateway's word on how the session ended.
pub(super) fn offer(stream: &mut UnixStream, hello: &Hello) -> std::io::Result<Offer> {
    let offer = Hello {
        handover: true,
        ..hello.clone()
    };
    stream.write_all(offer.line().as_bytes())?;
    stream.set_read_timeout(Some(ANSWER_WAIT))?;
    let mut answer = Vec::new();
    let mut buffer = [0; 64];
    while answer.len() < YES.len() {
        match stream.read(&mut buffer[..YES.len() - answer.len()]) {
            Ok(0) => return Ok(Offer::Taken(Ended::Gateway)),
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), WouldBlock | TimedOut) && answer.is_empty() => {
                stream.set_read_timeout(None)?;
                return Ok(Offer::Unanswered);
            }
            // A yes begun is finished: wait for the rest of it.
            Err(e) if matches!(e.kind(), WouldBlock | TimedOut) => stream.set_read_timeout(None)?,
            Err(e) => return Err(e),
        }
    }
    stream.set_read_timeout(None)?;
    if answer != YES {
        return Err(std::io::Error::other(
            "the gateway answered the offer to hand stdin and stdout over with something else",
        ));
    }
    hand(&*stream, std::io::stdin(), std::io::stdout())?;
    let mut word = [0; 1];
    loop {
        return Ok(Offer::Taken(match stream.read(&mut word) {
            Ok(1) if word[0] == HOST_ENDED => Ended::Host,
            Ok(_) => Ended::Gateway,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }));
    }
}

/// Sends `stdin` and `stdout` over `socket`, attached to one byte (a stream socket sends no
/// descriptors without data).
fn hand(socket: impl AsFd, stdin: impl AsFd, stdout: impl AsFd) -> std::io::Result<()> {
    let fds = [stdin.as_fd(), stdout.as_fd()];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut rights = SendAncillaryBuffer::new(&mut space);
    if !rights.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(std::io::Error::other("no room to send stdin and stdout"));
    }
    sendmsg(
        socket,
        &[IoSlice::new(b"+")],
        &mut rights,
        SendFlags::empty(),
    )?;
    Ok(())
}

/// A relaying shim whose offer went unanswered: drops the gateway's yes if it comes first
/// after all, and passes on whatever else came instead.
pub(super) fn skip_late_yes(mut stream: &UnixStream, mut out: impl Write) -> std::io::Result<()> {
    let mut first = Vec::new();
    let mut buffer = [0; 64];
    while first.len() < YES.len() && YES.starts_with(&first) {
        match stream.read(&mut buffer[..YES.len() - first.len()]) {
            Ok(0) => break,
            Ok(n) => first.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if first != YES {
        out.write_all(&first)?;
        out.flush()?;
    }
    Ok(())
}

/// The gateway's side: reads the start of a connection, and takes a shim's offer. Anything
/// else (a shim relaying, one from before the handover, a client on the socket itself) is
/// read from the socket, its first bytes included.
pub(super) async fn open(
    mut stream: tokio::net::UnixStream,
    closed: CancellationToken,
) -> std::io::Result<Opened> {
    let first = first_line(&mut stream).await?;
    if first.is_empty() {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    // An offer, and nothing after it yet (a shim that already relays has given up on it).
    let offered = first
        .strip_suffix(b"\n")
        .filter(|line| !line.contains(&b'\n'))
        .and_then(Hello::parse)
        .is_some_and(|hello| hello.handover);
    if !offered {
        return Ok(relayed(stream, first));
    }
    stream.write_all(YES).await?;
    let (more, fds) = receive(&stream).await?;
    let [input, output] = match <[OwnedFd; 2]>::try_from(fds) {
        Ok(pair) => pair,
        // The shim gave up waiting for the yes: its host's messages follow the hello.
        Err(fds) if fds.is_empty() && !more.is_empty() => {
            return Ok(relayed(stream, [first, more].concat()))
        }
        Err(fds) if fds.is_empty() => return Err(std::io::ErrorKind::UnexpectedEof.into()),
        Err(fds) => {
            return Err(std::io::Error::other(format!(
                "a shim sent {} descriptors (it sends 2, stdin and stdout)",
                fds.len()
            )))
        }
    };
    let read = reader(input)?;
    let write = writer(output)?;
    tracing::debug!("a shim handed its host's stdin and stdout over");
    let (ended, told) = tokio::sync::oneshot::channel::<bool>();
    tokio::spawn(async move {
        let mut byte = [0; 1];
        tokio::select! {
            // The shim sends nothing more: a read ends only when it goes away.
            _ = stream.read(&mut byte) => closed.cancel(),
            host_ended = told => {
                if host_ended == Ok(true) {
                    let _ = stream.write_all(&[HOST_ENDED]).await;
                }
            }
        }
    });
    Ok(Opened {
        // The hello is the session's first line, as on the socket.
        read: Box::new(AsyncReadExt::chain(std::io::Cursor::new(first), read)),
        write,
        ended: Some(ended),
    })
}

/// A connection served on the socket, starting with what was read of it already.
fn relayed(stream: tokio::net::UnixStream, first: Vec<u8>) -> Opened {
    let (read, write) = stream.into_split();
    Opened {
        read: Box::new(AsyncReadExt::chain(std::io::Cursor::new(first), read)),
        write: Box::new(write),
        ended: None,
    }
}

/// What a connection sent first: up to its first line's end (or [`HELLO_LIMIT`] bytes, or its
/// end), and whatever came with it.
async fn first_line(stream: &mut tokio::net::UnixStream) -> std::io::Result<Vec<u8>> {
    let mut first = Vec::new();
    let mut buffer = [0; 4096];
    while !first.contains(&b'\n') && first.len() < HELLO_LIMIT {
        let n = stream.read(&mut buffer).await?;
        if n == 0 {
            break;
        }
        first.extend_from_slice(&buffer[..n]);
    }
    Ok(first)
}

/// The next bytes of a connection and the descriptors that came with them.
async fn receive(stream: &tokio::net::UnixStream) -> std::io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut buffer = vec![0; 4096];
    // Room for more than a shim sends, so a client that sends more is told, not cut short
    // (what does not fit is closed by the kernel; what fits and is not taken, by the buffer).
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(8))];
    let (n, fds) = stream
        .async_io(Interest::READABLE, || {
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let message = recvmsg(
                stream,
                &mut [IoSliceMut::new(&mut buffer)],
                &mut control,
                cloexec(),
            )?;
            let fds: Vec<OwnedFd> = control
                .drain()
                .filter_map(|message| match message {
                    RecvAncillaryMessage::ScmRights(fds) => Some(fds),
                    _ => None,
                })
                .flatten()
                .collect();
            Ok((message.bytes, fds))
        })
        .await?;
    for fd in &fds {
        keep_from_children(fd)?;
    }
    buffer.truncate(n);
    Ok((buffer, fds))
}

/// The host's stdin, as the shim had it.
fn reader(fd: OwnedFd) -> std::io::Result<Reader> {
    Ok(match kind_of(&fd) {
        Kind::Pipe => Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?),
        Kind::Socket => Box::new(socket(fd)?),
        Kind::Other => return Err(not_handable()),
    })
}

/// The host's stdout, as the shim had it.
fn writer(fd: OwnedFd) -> std::io::Result<Writer> {
    Ok(match kind_of(&fd) {
        Kind::Pipe => Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(fd)?),
        Kind::Socket => Box::new(socket(fd)?),
        Kind::Other => return Err(not_handable()),
    })
}

fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

fn not_handable() -> std::io::Error {
    std::io::Error::other("a shim handed over something that is neither a pipe nor a socket")
}

/// Received descriptors are closed on exec, so no server the gateway starts holds the host's
/// pipes open (the host would then never see its server end). Linux does it as they arrive.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn cloexec() -> RecvFlags {
    RecvFlags::CMSG_CLOEXEC
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn cloexec() -> RecvFlags {
    RecvFlags::empty()
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn keep_from_children(_fd: &OwnedFd) -> std::io::Result<()> {
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn keep_from_children(fd: &OwnedFd) -> std::io::Result<()> {
    use rustix::io::{fcntl_getfd, fcntl_setfd, FdFlags};
    fcntl_setfd(fd, fcntl_getfd(fd)? | FdFlags::CLOEXEC)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_and_sockets_are_handed_over_and_files_are_not() {
        let (read, write) = std::io::pipe().expect("pipe");
        assert_eq!(kind_of(&read), Kind::Pipe);
        assert_eq!(kind_of(&write), Kind::Pipe);
        let (a, _b) = UnixStream::pair().expect("socket pair");
        assert_eq!(kind_of(&a), Kind::Socket);
        let file = tempfile::tempfile().expect("file");
        assert_eq!(kind_of(&file), Kind::Other);
    }

    fn hello(handover: bool) -> Vec<u8> {
        Hello {
            profile: Some("p".into()),
            handover,
        }
        .line()
        .into_bytes()
    }

    #[test]
    fn an_offer_a_gateway_from_before_never_answers_leaves_the_shim_relaying() {
        let (mut shim, gateway) = UnixStream::pair().expect("pair");
        let old = Hello {
            profile: Some("p".into()),
            handover: false,
        };
        let started = std::time::Instant::now();
        assert!(matches!(
            offer(&mut shim, &old).expect("offer"),
            Offer::Unanswered
        ));
        assert!(started.elapsed() >= ANSWER_WAIT);
        let mut said = vec![0; 256];
        let n = (&gateway).read(&mut said).expect("read");
        assert_eq!(
            &said[..n],
            hello(true).as_slice(),
            "the hello, with the offer"
        );
    }

    #[test]
    fn a_late_yes_is_dropped_and_anything_else_passed_on() {
        let answer = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n";
        for (sent, shown) in [
            ([YES, answer.as_slice()].concat(), answer.to_vec()),
            (answer.to_vec(), answer.to_vec()),
            // Begins like the yes, is not it.
            (
                b"{\"toolgateGateway\":{\"other\":1}}\n".to_vec(),
                b"{\"toolgateGateway\":{\"other\":1}}\n".to_vec(),
            ),
        ] {
            let (shim, mut gateway) = UnixStream::pair().expect("pair");
            gateway.write_all(&sent).expect("write");
            drop(gateway);
            let mut out = Vec::new();
            skip_late_yes(&shim, &mut out).expect("skip");
            (&shim).read_to_end(&mut out).expect("rest");
            assert_eq!(out, shown);
        }
    }

    async fn read_some(read: &mut Reader, want: usize) -> Vec<u8> {
        let mut got = vec![0; want];
        read.read_exact(&mut got).await.expect("read");
        got
    }

    /// A shim's first two steps against `open`: the offer sent, the yes read.
    async fn offered(
        closed: CancellationToken,
    ) -> (
        tokio::net::UnixStream,
        tokio::task::JoinHandle<std::io::Result<Opened>>,
    ) {
        let (mut client, gateway) = tokio::net::UnixStream::pair().expect("pair");
        client.write_all(&hello(true)).await.expect("write");
        let opening = tokio::spawn(open(gateway, closed));
        let mut yes = vec![0; YES.len()];
        client.read_exact(&mut yes).await.expect("the yes");
        assert_eq!(yes, YES);
        (client, opening)
    }

    #[tokio::test]
    async fn a_gateway_serves_the_socket_for_a_client_that_offers_nothing_or_gives_up() {
        let message = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        // A shim from before (or `--relay`): the hello, then the host's messages.
        let (mut client, gateway) = tokio::net::UnixStream::pair().expect("pair");
        client
            .write_all(&[hello(false), message.to_vec()].concat())
            .await
            .expect("write");
        let mut opened = open(gateway, CancellationToken::new()).await.expect("open");
        assert!(opened.ended.is_none());
        let expected = [hello(false), message.to_vec()].concat();
        assert_eq!(read_some(&mut opened.read, expected.len()).await, expected);

        // A shim that offered, then relayed before the yes reached it.
        let (mut client, opening) = offered(CancellationToken::new()).await;
        client.write_all(message).await.expect("write");
        let mut opened = opening.await.expect("joins").expect("open");
        assert!(opened.ended.is_none(), "served on the socket");
        let expected = [hello(true), message.to_vec()].concat();
        assert_eq!(read_some(&mut opened.read, expected.len()).await, expected);
    }

    #[tokio::test]
    async fn a_gateway_takes_handed_pipes_and_says_how_the_session_ended() {
        for host_ended in [true, false] {
            let closed = CancellationToken::new();
            let (mut client, opening) = offered(closed.clone()).await;
            // The host's two pipes: it writes to `to_shim`, reads `from_shim`.
            let (stdin, mut to_shim) = std::io::pipe().expect("pipe");
            let (mut from_shim, stdout) = std::io::pipe().expect("pipe");
            hand(&client, stdin, stdout).expect("send");
            let mut opened = opening.await.expect("joins").expect("open");

            to_shim.write_all(b"from the host\n").expect("host writes");
            let expected = [hello(true), b"from the host\n".to_vec()].concat();
            assert_eq!(read_some(&mut opened.read, expected.len()).await, expected);
            opened
                .write
                .write_all(b"to the host\n")
                .await
                .expect("write");
            opened.write.flush().await.expect("flush");
            let mut line = vec![0; 12];
            from_shim.read_exact(&mut line).expect("host reads");
            assert_eq!(line, b"to the host\n");

            opened
                .ended
                .take()
                .expect("handed")
                .send(host_ended)
                .expect("send");
            let mut word = Vec::new();
            client.read_to_end(&mut word).await.expect("the end");
            let expected: &[u8] = if host_ended { &[HOST_ENDED] } else { &[] };
            assert_eq!(word, expected);
            assert!(!closed.is_cancelled());
        }
    }

    #[tokio::test]
    async fn a_shim_gone_ends_a_handed_over_session() {
        let closed = CancellationToken::new();
        let (client, opening) = offered(closed.clone()).await;
        let (stdin, _host_in) = std::io::pipe().expect("pipe");
        let (_host_out, stdout) = std::io::pipe().expect("pipe");
        hand(&client, &stdin, &stdout).expect("send");
        let _opened = opening.await.expect("joins").expect("open");
        assert!(!closed.is_cancelled());
        drop(client);
        tokio::time::timeout(std::time::Duration::from_secs(10), closed.cancelled())
            .await
            .expect("the session is told the shim is gone");
    }
}
