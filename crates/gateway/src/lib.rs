//! The gateway: Toolgate as the one MCP server that other hosts (Claude Desktop, Claude Code,
//! Cursor, VS Code, Goose, Zed) connect to, so that every agent's tool calls pass the same gate.
//!
//! ```text
//!  Claude Code ──stdio──▶ toolgate connect ──Unix socket──▶ Gateway (in the app, or
//!  Cursor ───────stdio──▶ toolgate connect ──────────────▶  `toolgate serve`) ──▶ Host
//!                                                               gate · rules · audit · servers
//! ```
//!
//! - **Where:** a Unix domain socket, `$XDG_RUNTIME_DIR/toolgate/<folder>.sock` ([`socket_path`]),
//!   one per data folder, in a folder only the user can enter (0700), itself 0600; a
//!   connection from another uid is refused ([`same_user`]).
//! - **What is spoken:** MCP, served by rmcp's server side, both protocol eras (`initialize`
//!   and `server/discover`), over [`frame`]'s transport, which answers junk and oversized
//!   messages with a JSON-RPC error instead of silence.
//! - **Who asks:** a shim may send one line before MCP, `{"toolgateConnect":{"profile":…}}`,
//!   naming the profile (`toolgate connect --profile NAME`); otherwise the client's
//!   `clientInfo.name` picks it. See [`toolgate_settings::GatewaySettings`].
//! - **Every `tools/call`** goes through [`toolgate_agent::Agent::call_for_client`]: the same
//!   catalog, rules, gate, fingerprints, pause and audit as a chat call, with the client named
//!   on the card and in the log. A refusal is an `isError` result that says why.
//! - **Or over HTTP:** the [`door`] serves the same sessions over Streamable HTTP on loopback,
//!   to clients holding a token Toolgate issued.
//! - **Questions during a call** (sampling, elicitation) go to the client that made it, when it
//!   said it can answer them ([`asker`]); otherwise to the gate.
//! - **Ends:** a client that goes away has its running calls cancelled at their servers
//!   (`notifications/cancelled`); stopping the gateway ends every connection, and each shim
//!   says so on stderr.

mod asker;
pub mod door;
mod frame;
mod rounds;
mod session;
pub mod shim;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::BufReader;
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;
use toolgate_host::Host;

pub use door::HttpDoor;
pub use frame::MAX_MESSAGE;
pub use session::MAX_CALLS_PER_CLIENT;

/// Why the gateway could not listen.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("Toolgate's gateway is already running at {} (the app, or `toolgate serve`); connect to it with `toolgate connect`", .0.display())]
    AlreadyRunning(PathBuf),
    #[error("could not open the gateway's socket at {}: {source}", path.display())]
    Socket {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not open the HTTP door at {address}: {source} (is another program, or another Toolgate, using that port? choose another with --http 127.0.0.1:PORT)")]
    Door {
        address: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    NotLoopback(String),
}

/// The first line a shim sends, before any MCP message.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct HelloLine {
    toolgate_connect: Hello,
}

impl Hello {
    pub fn line(&self) -> String {
        let line = HelloLine {
            toolgate_connect: Hello {
                profile: self.profile.clone(),
            },
        };
        format!("{}\n", serde_json::json!(line))
    }

    fn parse(line: &[u8]) -> Option<Self> {
        serde_json::from_slice::<HelloLine>(line)
            .ok()
            .map(|h| h.toolgate_connect)
    }
}

/// FNV-1a: a short, stable name for a data folder (the same in every build, unlike std's
/// hasher), so the app and the CLI on one folder find one socket.
fn folder_key(path: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in path.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The user's runtime folder: `$XDG_RUNTIME_DIR`, else `/run/user/<uid>` when it is there.
/// Hosts often start their servers with a pared-down environment (the MCP SDKs pass on little
/// more than `HOME` and `PATH`), so the shim must find the same folder without the variable.
fn runtime_dir() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .or_else(|| {
            let uid = std::fs::metadata("/proc/self").ok()?.uid();
            let dir = PathBuf::from(format!("/run/user/{uid}"));
            dir.is_dir().then_some(dir)
        })
}

/// Where the gateway of the Toolgate on `data_dir` listens: in the user's runtime folder
/// (`$XDG_RUNTIME_DIR/toolgate`: the user's own, cleared at logout), else in the data folder.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    let data_dir: PathBuf = data_dir.components().collect();
    match runtime_dir() {
        Some(runtime) => runtime
            .join("toolgate")
            .join(format!("{}.sock", folder_key(&data_dir))),
        None => data_dir.join("gateway.sock"),
    }
}

/// Whether a peer may use the gateway: only the user who runs it.
pub fn same_user(peer_uid: u32, own_uid: u32) -> bool {
    peer_uid == own_uid
}

/// The gateway, bound and ready to serve.
pub struct Gateway {
    host: Arc<Host>,
    path: PathBuf,
    listener: std::os::unix::net::UnixListener,
    own_uid: u32,
    stop: CancellationToken,
}

impl Gateway {
    /// Binds the socket for `host` at `path`. A socket left by a Toolgate that was killed is
    /// replaced; one that answers is another running gateway, and is left alone.
    pub fn bind(host: Arc<Host>, path: PathBuf) -> Result<Self, GatewayError> {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        let failed = |source| GatewayError::Socket {
            path: path.clone(),
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
            if std::os::unix::net::UnixStream::connect(&path).is_ok() {
                return Err(GatewayError::AlreadyRunning(path));
            }
            std::fs::remove_file(&path).map_err(failed)?;
        }
        let listener = std::os::unix::net::UnixListener::bind(&path).map_err(failed)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        let own_uid = std::fs::metadata(&path).map_err(failed)?.uid();
        Ok(Self {
            host,
            path,
            listener,
            own_uid,
            stop: CancellationToken::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Cancel it to stop accepting, end every connection, and remove the socket.
    pub fn stopper(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Accepts clients until stopped.
    pub async fn serve(self) -> Result<(), GatewayError> {
        let listener =
            UnixListener::from_std(self.listener).map_err(|source| GatewayError::Socket {
                path: self.path.clone(),
                source,
            })?;
        tracing::info!(socket = %self.path.display(), "the gateway is listening");
        loop {
            let accepted = tokio::select! {
                () = self.stop.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("the gateway could not accept a client: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            match stream.peer_cred() {
                Ok(cred) if same_user(cred.uid(), self.own_uid) => {}
                Ok(cred) => {
                    tracing::warn!(uid = cred.uid(), "refused a gateway client of another user");
                    continue;
                }
                Err(e) => {
                    tracing::warn!("refused a gateway client whose user is unknown: {e}");
                    continue;
                }
            }
            tokio::spawn(serve_client(
                self.host.clone(),
                stream,
                self.stop.child_token(),
            ));
        }
        let _ = std::fs::remove_file(&self.path);
        Ok(())
    }
}

/// One client, from its first line to its last.
async fn serve_client(host: Arc<Host>, stream: UnixStream, stop: CancellationToken) {
    let (read, write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let first = match frame::read_line(&mut reader, MAX_MESSAGE).await {
        Ok(frame::Line::Complete(line)) => line,
        _ => return,
    };
    let (profile, first) = match Hello::parse(&first) {
        Some(hello) => (hello.profile, None),
        None => (None, Some(first)),
    };
    // Ended by the client (its side closed) or by the gateway stopping.
    let closed = stop.child_token();
    let transport = frame::LineTransport::new(reader, write, first, closed.clone());
    let session = session::Session::new(host, profile, closed.clone());
    let running = match rmcp::serve_server(session, transport).await {
        Ok(running) => running,
        Err(e) => {
            tracing::info!("a gateway client left before its handshake ended: {e}");
            closed.cancel();
            return;
        }
    };
    let cancel = running.cancellation_token();
    tokio::select! {
        _ = running.waiting() => {}
        () = closed.cancelled() => cancel.cancel(),
    }
    closed.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_folder_one_socket_and_others_elsewhere() {
        let a = socket_path(Path::new("/home/u/.local/share/dev.toolgate.desktop"));
        let again = socket_path(Path::new("/home/u/.local/share/dev.toolgate.desktop/"));
        let b = socket_path(Path::new("/tmp/other"));
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

    #[test]
    fn a_hello_names_the_profile_and_mcp_is_no_hello() {
        let hello = Hello {
            profile: Some("claude-code".into()),
        };
        assert_eq!(Hello::parse(hello.line().trim().as_bytes()), Some(hello));
        assert_eq!(
            Hello::parse(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#),
            None
        );
    }
}
