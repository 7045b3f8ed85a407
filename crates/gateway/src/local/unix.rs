//! Linux and macOS: a Unix domain socket, `/run/user/<uid>/toolgate/<folder>.sock`, in a folder
//! only the user can enter (0700), itself 0600; a connection from another uid is refused. Where
//! the system makes no runtime folder of the user's (macOS, a container), the socket is the data
//! folder's `gateway.sock`.
//!
//! Where the socket is depends on the data folder, the user and the file system, never on an
//! environment variable: hosts start their servers with a pared-down environment (Codex passes
//! on only HOME, PATH, LANG, SHELL and TERM; the MCP SDKs little more than HOME and PATH), and a
//! shim that looked in `$XDG_RUNTIME_DIR` would look elsewhere than the app that opened it.
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

/// Where the system keeps each user's runtime folder (systemd-logind and elogind make
/// `/run/user/<uid>` at login, the user's alone, and empty it at logout): what
/// `XDG_RUNTIME_DIR` names in a desktop session.
const RUN_USER: &str = "/run/user";

/// The user's runtime folder under `run_user`: `<run_user>/<uid>`, when it is a folder (not a
/// link) of the user's that nobody else may write to. Anything else (missing, another's, open
/// to others) is not taken: the socket goes to the data folder instead.
fn runtime_dir(run_user: &Path, uid: u32) -> Option<PathBuf> {
    let dir = run_user.join(uid.to_string());
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    (meta.is_dir() && meta.uid() == uid && meta.mode() & 0o022 == 0).then_some(dir)
}

/// The socket of the Toolgate on `data_dir`, given the user's runtime folder, if any.
fn address_in(data_dir: &Path, runtime: Option<&Path>) -> PathBuf {
    match runtime {
        Some(runtime) => runtime
            .join("toolgate")
            .join(format!("{}.sock", folder_key(data_dir))),
        None => data_dir.join("gateway.sock"),
    }
}

impl Transport for UnixSocket {
    type Listener = Bound;
    type Conn = UnixStream;
    type Client = std::os::unix::net::UnixStream;

    /// In the user's runtime folder (`/run/user/<uid>/toolgate`: the user's own, cleared at
    /// logout), else in the data folder; the same from any environment the user has.
    fn address(data_dir: &Path) -> PathBuf {
        let uid = rustix::process::geteuid().as_raw();
        address_in(data_dir, runtime_dir(Path::new(RUN_USER), uid).as_deref())
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
            // A folder of another user's would let them replace the socket with their own.
            let owner = std::fs::metadata(dir).map_err(failed)?.uid();
            if owner != rustix::process::geteuid().as_raw() {
                return Err(failed(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!("{} belongs to another user (uid {owner})", dir.display()),
                )));
            }
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

    /// A runtime folder is taken only when it is the user's alone: not missing, not a link, not
    /// another uid's, not writable by group or others.
    #[test]
    fn the_runtime_folder_is_the_users_own_or_none() {
        let root = tempfile::tempdir().expect("temp dir");
        let run_user = root.path().join("run-user");
        std::fs::create_dir(&run_user).expect("run-user");
        let uid = rustix::process::geteuid().as_raw();
        assert_eq!(runtime_dir(&run_user, uid), None, "missing: none");

        let mine = run_user.join(uid.to_string());
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&mine)
            .expect("mine");
        assert_eq!(runtime_dir(&run_user, uid), Some(mine.clone()));
        for open in [0o770, 0o707, 0o777] {
            std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(open)).expect("mode");
            assert_eq!(runtime_dir(&run_user, uid), None, "mode {open:o}");
        }
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o700)).expect("mode");

        // Another uid's folder, or a link to ours under its number, is not ours.
        let other = uid.wrapping_add(1);
        std::os::unix::fs::symlink(&mine, run_user.join(other.to_string())).expect("link");
        assert_eq!(runtime_dir(&run_user, other), None, "a link");
        std::fs::create_dir(run_user.join("5")).expect("dir");
        if uid != 5 {
            assert_eq!(runtime_dir(&run_user, 5), None, "owned by {uid}, not 5");
        }

        let data = Path::new("/home/u/.local/share/dev.toolgate.desktop");
        assert_eq!(
            address_in(data, Some(&mine)),
            mine.join("toolgate")
                .join(format!("{}.sock", folder_key(data)))
        );
        assert_eq!(address_in(data, None), data.join("gateway.sock"));
    }

    /// The gateway opened in a desktop session (`XDG_RUNTIME_DIR` and the rest) and a shim
    /// started with only what Codex passes on (HOME, PATH, LANG, SHELL, TERM) resolve the same
    /// socket. Each side is this test binary run again, with that environment, filtered to
    /// the helper below, which prints the path.
    #[test]
    fn the_socket_does_not_follow_the_environment() {
        let exe = std::env::current_exe().expect("exe");
        let data = "/home/u/.local/share/dev.toolgate.desktop";
        let runtime = tempfile::tempdir().expect("temp dir");
        let resolve = |desktop: bool| {
            let mut command = std::process::Command::new(&exe);
            command
                .args([
                    "--exact",
                    "local::unix::tests::print_socket_path",
                    "--nocapture",
                ])
                .args(["--include-ignored", "--test-threads=1"])
                .env_clear()
                .env("TOOLGATE_TEST_DATA", data);
            for name in ["HOME", "PATH", "LANG", "SHELL", "TERM"] {
                if let Some(value) = std::env::var_os(name) {
                    command.env(name, value);
                }
            }
            if desktop {
                command
                    .env("XDG_RUNTIME_DIR", runtime.path())
                    .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nowhere")
                    .env("XDG_DATA_HOME", runtime.path());
            }
            let out = command.output().expect("runs");
            let out = String::from_utf8_lossy(&out.stdout).into_owned();
            out.lines()
                .find_map(|l| l.split_once("socket: "))
                .map(|(_, path)| path.trim().to_owned())
                .unwrap_or_else(|| panic!("no path printed: {out}"))
        };
        let (desktop, codex) = (resolve(true), resolve(false));
        assert_eq!(desktop, codex);
        assert!(
            !desktop.starts_with(&*runtime.path().to_string_lossy()),
            "{desktop}"
        );
    }

    /// Not a test of its own: `the_socket_does_not_follow_the_environment` runs it in a child
    /// with the environment it chose.
    #[test]
    #[ignore = "run by the_socket_does_not_follow_the_environment"]
    fn print_socket_path() {
        if let Some(data) = std::env::var_os("TOOLGATE_TEST_DATA") {
            println!("socket: {}", crate::socket_path(Path::new(&data)).display());
        }
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
