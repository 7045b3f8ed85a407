//! The gateway: Toolgate as the one MCP server that other hosts (Claude Desktop, Claude Code,
//! Cursor, VS Code, Goose, Zed) connect to, so that every agent's tool calls pass the same gate.
//!
//! ```text
//!  Claude Code ──stdio──▶ toolgate connect ──socket/pipe──▶ Gateway (in the app, or
//!  Cursor ───────stdio──▶ toolgate connect ──────────────▶  `toolgate serve`) ──▶ Host
//!                                                               gate · rules · audit · servers
//! ```
//!
//! - **Where:** one door per data folder ([`socket_path`]), the current user's alone, behind
//!   one small trait in [`local`]: on Linux and macOS a Unix domain socket,
//!   `/run/user/<uid>/toolgate/<folder>.sock` (else the data folder's `gateway.sock`), in a
//!   folder only the user can enter (0700), itself 0600, a connection from another uid refused,
//!   found the same from any environment (no variable decides it); on Windows a named pipe,
//!   `\\.\pipe\toolgate-<user>-<folder>`, whose security descriptor admits the user alone.
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
mod local;
mod rounds;
mod session;
pub mod shim;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use toolgate_host::Host;

use local::{Local, Transport};

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
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The shim offers to hand the host's stdin and stdout over (Unix); a gateway that can
    /// take them says so ([`local`]'s handover), an older one ignores the offer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub handover: bool,
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
                handover: self.handover,
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

/// Where the gateway of the Toolgate on `data_dir` listens: on Linux and macOS a socket in the
/// user's runtime folder (`/run/user/<uid>/toolgate/<folder>.sock`, else the data folder's
/// `gateway.sock`), on Windows the named pipe `\\.\pipe\toolgate-<user>-<folder>`. One per data
/// folder, and the same whatever the environment (a host may start the shim with little of it).
pub fn socket_path(data_dir: &Path) -> PathBuf {
    let data_dir: PathBuf = data_dir.components().collect();
    Local::address(&data_dir)
}

/// The gateway, bound and ready to serve.
pub struct Gateway {
    host: Arc<Host>,
    path: PathBuf,
    listener: <Local as Transport>::Listener,
    stop: CancellationToken,
}

impl Gateway {
    /// Opens the gateway's door for `host` at `path` (see [`socket_path`]), for the current user
    /// only. A socket left by a Toolgate that was killed is replaced; a door that answers is
    /// another running gateway, and is left alone.
    pub fn bind(host: Arc<Host>, path: PathBuf) -> Result<Self, GatewayError> {
        let listener = Local::bind(&path)?;
        Ok(Self {
            host,
            path,
            listener,
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
    pub async fn serve(mut self) -> Result<(), GatewayError> {
        tracing::info!(door = %self.path.display(), "the gateway is listening");
        loop {
            let accepted = tokio::select! {
                () = self.stop.cancelled() => break,
                accepted = Local::accept(&mut self.listener) => accepted,
            };
            let conn = match accepted {
                Ok(Some(conn)) => conn,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!("the gateway could not accept a client: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            tokio::spawn(serve_client(
                self.host.clone(),
                conn,
                self.stop.child_token(),
            ));
        }
        Local::unbind(&self.path);
        Ok(())
    }
}

/// One client, from its first line to its last.
async fn serve_client(host: Arc<Host>, conn: <Local as Transport>::Conn, stop: CancellationToken) {
    // Ended by the client (its side closed, or its shim gone) or by the gateway stopping.
    let closed = stop.child_token();
    let opened = match Local::open(conn, closed.clone()).await {
        Ok(opened) => opened,
        Err(e) => {
            tracing::info!("a gateway client left before it said who it is: {e}");
            return;
        }
    };
    // Boxed as `Send` here: proven there, inside, the compiler manages it; proven at the
    // spawn, through the boxed reader and writer, it fails ("not general enough").
    let session: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> =
        Box::pin(run(host, opened.read, opened.write, closed));
    session.await;
    if let Some(ended) = opened.ended {
        // Not stopped by the gateway: the host closed its side (or its shim went away).
        let _ = ended.send(!stop.is_cancelled());
    }
}

/// A client's session, from its first line to its last.
async fn run<R, W>(host: Arc<Host>, read: R, write: W, closed: CancellationToken)
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let mut lines = frame::lines(read);
    let first = match frame::next_line(&mut lines).await {
        Some(frame::Line::Complete(line)) => line,
        _ => return,
    };
    let (profile, first) = match Hello::parse(&first) {
        Some(hello) => (hello.profile, None),
        None => (None, Some(first)),
    };
    let transport = frame::LineTransport::new(lines, write, first, closed.clone());
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
    fn a_hello_names_the_profile_and_mcp_is_no_hello() {
        let hello = Hello {
            profile: Some("claude-code".into()),
            ..Hello::default()
        };
        assert_eq!(Hello::parse(hello.line().trim().as_bytes()), Some(hello));
        // The offer to hand stdin and stdout over is said only when made, and a hello from
        // before it (or a gateway from before it reading one with it) still reads.
        let offer = Hello {
            handover: true,
            ..Hello::default()
        };
        assert_eq!(offer.line(), "{\"toolgateConnect\":{\"handover\":true}}\n");
        assert_eq!(
            Hello::parse(br#"{"toolgateConnect":{"profile":"x","handover":true,"later":1}}"#)
                .map(|h| (h.profile, h.handover)),
            Some((Some("x".into()), true))
        );
        assert_eq!(
            Hello::parse(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#),
            None
        );
    }
}
