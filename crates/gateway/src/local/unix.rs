//! Linux and macOS: a Unix domain socket, `$XDG_RUNTIME_DIR/toolgate/<folder>.sock`, in a folder
//! only the user can enter (0700), itself 0600; a connection from another uid is refused.
//!
//! The shim hands the host's stdin and stdout to the gateway where it can ([`super::handover`]);
//! otherwise it relays with plain threads and blocking I/O: every message of the host passes
//! there twice, and a thread blocked on a read wakes sooner than a runtime's task would.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use super::{folder_key, handover, Ended, Opened, Transport};
use crate::{GatewayError, Hello};

pub(crate) struct UnixSocket;

/// The bound socket and whose it is. The runtime's listener is made at the first accept, in
/// the runtime that serves it (the app binds before its runtime runs).
pub(crate) struct Bound {
    bound: Option<std::os::unix::net::UnixListener>,
    listener: Option<UnixListener>,
    own_uid: u32,
}

/// Whether a peer may use the gateway: only the user who runs it.
pub(crate) fn same_user(peer_uid: u32, own_uid: u32) -> bool {
    peer_uid == own_uid
}

/// The user's runtime folder: `$XDG_RUNTIME_DIR`, else `/run/user/<uid>` when it is there.
/// Hosts often start their servers with a pared-down environment (the MCP SDKs pass on little
/// more than `HOME` and `PATH`), so the shim must find the same folder without the variable.
fn runtime_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .or_else(|| {
            let uid = std::fs::metadata("/proc/self").ok()?.uid();
            let dir = PathBuf::from(format!("/run/user/{uid}"));
            dir.is_dir().then_some(dir)
        })
}

impl Transport for UnixSocket {
    type Listener = Bound;
    type Conn = UnixStream;
    type Client = std::os::unix::net::UnixStream;

    /// In the user's runtime folder (`$XDG_RUNTIME_DIR/toolgate`: the user's own, cleared at
    /// logout), else in the data folder.
    fn address(data_dir: &Path) -> PathBuf {
        match runtime_dir() {
            Some(runtime) => runtime
                .join("toolgate")
                .join(format!("{}.sock", folder_key(data_dir))),
            None => data_dir.join("gateway.sock"),
        }
    }

    /// A socket left by a Toolgate that was killed is replaced; one that answers is another
    /// running gateway, and is left alone.
    fn bind(path: &Path) -> Result<Bound, GatewayError> {
        let failed = |source| GatewayError::Socket {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(failed)?;
        }
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(GatewayError::AlreadyRunning(path.to_owned()));
            }
            std::fs::remove_file(path).map_err(failed)?;
        }
        let listener = std::os::unix::net::UnixListener::bind(path).map_err(failed)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        let own_uid = std::fs::metadata(path).map_err(failed)?.uid();
        Ok(Bound {
            bound: Some(listener),
            listener: None,
            own_uid,
        })
    }

    async fn accept(bound: &mut Bound) -> std::io::Result<Option<UnixStream>> {
        if let Some(listener) = bound.bound.take() {
            bound.listener = Some(UnixListener::from_std(listener)?);
        }
        let Some(listener) = &bound.listener else {
            return Err(std::io::Error::other("the gateway's socket is closed"));
        };
        let (stream, _) = listener.accept().await?;
        match stream.peer_cred() {
            Ok(cred) if same_user(cred.uid(), bound.own_uid) => Ok(Some(stream)),
            Ok(cred) => {
                tracing::warn!(uid = cred.uid(), "refused a gateway client of another user");
                Ok(None)
            }
            Err(e) => {
                tracing::warn!("refused a gateway client whose user is unknown: {e}");
                Ok(None)
            }
        }
    }

    async fn open(stream: UnixStream, closed: CancellationToken) -> std::io::Result<Opened> {
        handover::open(stream, closed).await
    }

    fn unbind(path: &Path) {
        let _ = std::fs::remove_file(path);
    }

    fn dial(path: &Path) -> std::io::Result<Self::Client> {
        std::os::unix::net::UnixStream::connect(path)
    }

    fn relay(mut stream: Self::Client, hello: &Hello, copy: bool) -> std::io::Result<Ended> {
        // A late yes to the offer may still come; it is not the host's to read.
        let mut late_yes = false;
        if !copy && handover::can_hand_over() {
            match handover::offer(&mut stream, hello)? {
                handover::Offer::Taken(ended) => return Ok(ended),
                handover::Offer::Unanswered => late_yes = true,
            }
        } else {
            stream.write_all(hello.line().as_bytes())?;
        }
        let to_gateway = stream.try_clone()?;
        let (done, ended) = std::sync::mpsc::channel();
        let host_side = done.clone();
        std::thread::spawn(move || {
            let sent = pump(std::io::stdin().lock(), &to_gateway);
            // Said before the gateway can see the end: its answer (closing the connection)
            // must not be taken for the gateway going away.
            let _ = host_side.send(("host", sent));
            // The host is done: the gateway sees the end, and answers what is still running.
            let _ = to_gateway.shutdown(std::net::Shutdown::Write);
        });
        std::thread::spawn(move || {
            let received = match late_yes {
                true => handover::skip_late_yes(&stream, std::io::stdout().lock()),
                false => Ok(()),
            }
            .and_then(|()| pump(&stream, std::io::stdout().lock()));
            let _ = done.send(("gateway", received));
        });
        match ended.recv() {
            Ok(("host", sent)) => {
                sent?;
                // Let the last answers out, briefly.
                let _ = ended.recv_timeout(Duration::from_secs(5));
                Ok(Ended::Host)
            }
            Ok((_, received)) => received.map(|()| Ended::Gateway),
            Err(_) => Ok(Ended::Gateway),
        }
    }
}

/// Copies what `from` sends to `to` as it arrives, flushing each piece.
fn pump(mut from: impl Read, mut to: impl Write) -> std::io::Result<()> {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buffer[..n])?;
        to.flush()?;
    }
}

/// The app started by a shim gets its own process group: the host that launched the shim may
/// stop it, never the app.
pub(crate) fn detach(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_folder_one_socket_and_others_elsewhere() {
        let a = crate::socket_path(Path::new("/home/u/.local/share/dev.toolgate.desktop"));
        let again = crate::socket_path(Path::new("/home/u/.local/share/dev.toolgate.desktop/"));
        let b = crate::socket_path(Path::new("/tmp/other"));
        assert_eq!(a, again);
        assert_ne!(a, b);
        assert!(a.to_string_lossy().ends_with(".sock"));
    }

    #[test]
    fn only_the_same_user_may_connect() {
        assert!(same_user(1000, 1000));
        assert!(!same_user(1001, 1000));
        assert!(
            !same_user(0, 1000),
            "not even root's clients: the gate is the user's"
        );
    }
}
