//! The gateway's door on this machine, behind one small trait: a Unix domain socket on Linux
//! and macOS ([`unix`]), a named pipe on Windows ([`pipe`]). The gateway and the shim use
//! [`Local`], the current platform's transport; nothing else in the crate knows which it is.

use std::future::Future;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::{GatewayError, Hello};

#[cfg(unix)]
mod handover;
#[cfg(windows)]
pub(crate) mod pipe;
#[cfg(unix)]
pub(crate) mod unix;

#[cfg(windows)]
pub(crate) use pipe::{detach, NamedPipe as Local};
#[cfg(unix)]
pub(crate) use unix::{detach, UnixSocket as Local};

/// A client's way in, as the session reads it.
pub(crate) type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// A client's way out, as the session writes it.
pub(crate) type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// One client's connection, opened: what the session reads (its first line included) and
/// writes, and, when the shim handed the host's own stdin and stdout over (on Unix, see
/// `local/handover.rs`), where to say how the session ended.
pub(crate) struct Opened {
    pub read: Reader,
    pub write: Writer,
    /// `Some` for a handed-over connection: send `true` when the host ended the session (the
    /// shim then exits 0), `false` or nothing when the gateway did (the shim says Toolgate
    /// closed the connection). The shim going away cancels the session's `closed` token.
    pub ended: Option<tokio::sync::oneshot::Sender<bool>>,
}

/// Where the gateway listens and how the shim reaches it, for one platform.
pub(crate) trait Transport {
    /// The bound door, ready to accept.
    type Listener: Send + 'static;
    /// A client's connection, accepted, not yet read.
    type Conn: Send + 'static;
    /// The shim's end of a connection.
    type Client;

    /// The address of the gateway of the Toolgate on `data_dir` (already normalised).
    fn address(data_dir: &Path) -> PathBuf;

    /// Opens the door at `address`, readable and writable by the current user only. A door
    /// that answers is another running gateway ([`GatewayError::AlreadyRunning`]).
    fn bind(address: &Path) -> Result<Self::Listener, GatewayError>;

    /// The next client of the current user. `Ok(None)`: a client was refused (another user),
    /// and logged; the caller goes on accepting.
    fn accept(
        listener: &mut Self::Listener,
    ) -> impl Future<Output = std::io::Result<Option<Self::Conn>>> + Send;

    /// Reads the start of a connection (in the client's own task, never the accepting one)
    /// and opens it; `closed` is cancelled if the shim goes away while the session runs.
    fn open(
        conn: Self::Conn,
        closed: CancellationToken,
    ) -> impl Future<Output = std::io::Result<Opened>> + Send;

    /// Removes what `bind` left behind, if anything.
    fn unbind(address: &Path);

    /// The shim's connection to the gateway at `address`. `NotFound` and `ConnectionRefused`
    /// mean no gateway runs there.
    fn dial(address: &Path) -> std::io::Result<Self::Client>;

    /// Sends `hello`, then carries the host's messages to the gateway and back until the host
    /// closes stdin (`Ok(Ended::Host)`) or the gateway goes away (`Ok(Ended::Gateway)`): by
    /// copying them, or on Unix, unless `copy`, by handing stdin and stdout to a gateway that
    /// takes them and waiting. Blocking.
    fn relay(client: Self::Client, hello: &Hello, copy: bool) -> std::io::Result<Ended>;
}

/// Which side ended a relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The host closed the shim's stdin: done.
    Host,
    /// The gateway closed the connection (the app quit, or its gateway stopped).
    Gateway,
}

/// FNV-1a: a short, stable name for a data folder (the same in every build, unlike std's
/// hasher), so the app and the CLI on one folder find one door.
pub(crate) fn folder_key(path: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in path.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The name the app's executable has on this platform.
pub(crate) fn app_file_name() -> String {
    format!("toolgate-app{}", std::env::consts::EXE_SUFFIX)
}
