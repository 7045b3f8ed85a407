//! The HTTP door: the gateway over Streamable HTTP on loopback, for hosts and containers that
//! speak only HTTP (`toolgate serve --http 127.0.0.1:PORT`, or the window's switch).
//!
//! ```text
//!  a host ──HTTP (127.0.0.1:PORT/mcp, Bearer token)──▶ guard ──▶ rmcp's Streamable HTTP
//!                                                     (Host, Origin,   server: both eras
//!                                                      token → name)         │
//!                                                                    Session (the socket's)
//! ```
//!
//! - **Off by default**, and only ever on a loopback address ([`HttpDoor::bind`] refuses any
//!   other). Its port is refused to every confined server, to reach or to bind
//!   (`toolgate_sandbox::Reserved`).
//! - **Who may come in** is decided by `door/guard.rs` before any MCP is read: a loopback Host,
//!   a loopback Origin when there is one, a token Toolgate issued (`toolgate_host::DoorTokens`).
//!   The token's name is the client's, and picks its gateway profile as `toolgate connect
//!   --profile NAME` does.
//! - **What is spoken** is rmcp's own Streamable HTTP server (`StreamableHttpService`): the
//!   2025-11-25 era with sessions (`Mcp-Session-Id`, a GET stream, DELETE), and the 2026-07-28
//!   era, stateless, request by request.
//! - **One gate for every caller**: each session (or 2026-07-28 request) is a [`Session`], the
//!   same handler the socket's clients get, so every `tools/call` is `Host::agent(Caller::Client
//!   { .. })`'s.

mod guard;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use toolgate_host::Host;

use crate::session::{DoorClients, Session};
use crate::GatewayError;

/// The door, bound and ready to serve.
pub struct HttpDoor {
    host: Arc<Host>,
    listener: std::net::TcpListener,
    address: SocketAddr,
    stop: CancellationToken,
    /// Its port, kept from every confined server while it is open (the configured one is held
    /// by the host anyway; this covers `--http` and port 0).
    hold: toolgate_sandbox::Reservation,
}

impl HttpDoor {
    /// Binds the door at `address`, which must be on loopback (port 0: any free port).
    pub fn bind(host: Arc<Host>, address: SocketAddr) -> Result<Self, GatewayError> {
        if let Some(problem) = toolgate_settings::door_address_problem(&address) {
            return Err(GatewayError::NotLoopback(problem));
        }
        let failed = |source| GatewayError::Door { address, source };
        let listener = std::net::TcpListener::bind(address).map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        let address = listener.local_addr().map_err(failed)?;
        let hold = host.servers().hold_port(address.port());
        Ok(Self {
            host,
            listener,
            address,
            stop: CancellationToken::new(),
            hold,
        })
    }

    /// Where it listens (the port chosen, when 0 was asked for).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// What a client is given.
    pub fn url(&self) -> String {
        toolgate_host::door_url(&self.address)
    }

    /// Cancel it to close the door: every session and stream ends.
    pub fn stopper(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Serves until stopped.
    pub async fn serve(self) -> Result<(), GatewayError> {
        let address = self.address;
        let _hold = self.hold;
        let listener = tokio::net::TcpListener::from_std(self.listener)
            .map_err(|source| GatewayError::Door { address, source })?;
        let clients = Arc::new(DoorClients::default());
        let (host, stop) = (self.host.clone(), self.stop.clone());
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(self.stop.child_token())
            // The guard checks Host and Origin first, with answers that say what was wrong.
            .disable_allowed_hosts()
            .disable_allowed_origins();
        let mcp = StreamableHttpService::new(
            move || {
                Ok(Session::for_door(
                    host.clone(),
                    clients.clone(),
                    stop.child_token(),
                ))
            },
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let app = Router::new()
            .route_service("/mcp", mcp)
            .fallback(|| async {
                (
                    http::StatusCode::NOT_FOUND,
                    "Toolgate's MCP door is at /mcp (http://127.0.0.1:PORT/mcp)",
                )
            })
            .layer(axum::middleware::from_fn_with_state(
                self.host.clone(),
                guard::guard,
            ));
        tracing::info!(url = %toolgate_host::door_url(&address), "the HTTP door is open");
        axum::serve(listener, app)
            .with_graceful_shutdown(self.stop.clone().cancelled_owned())
            .await
            .map_err(|source| GatewayError::Door { address, source })?;
        tracing::info!("the HTTP door is closed");
        Ok(())
    }
}
