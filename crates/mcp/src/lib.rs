//! Supervision of MCP servers over rmcp.
//!
//! [`ServerManager`] starts each enabled server as a child process speaking MCP over stdio,
//! performs the handshake, lists its tools, routes tool calls to it with a timeout, and stops it
//! cleanly. Each server runs in its own process group so that stopping a launcher such as `npx`
//! also stops the server it started. Its stderr is kept (the last lines) so a failure can say why.
//!
//! This crate knows nothing of models, approval or windows: callers decide *whether* a call may
//! run; this crate only runs it.

mod server;

pub use server::{ServerManager, ServerSnapshot, ServerStatus, ToolInfo, ToolOutput};

/// Why a server or a call failed, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("no server '{0}' is configured")]
    UnknownServer(String),
    #[error("server '{server}' is not running ({status})")]
    NotRunning { server: String, status: String },
    #[error("server '{server}' has no tool named '{tool}'")]
    UnknownTool { server: String, tool: String },
    #[error("tool arguments must be a JSON object, got {0}")]
    BadArguments(String),
    #[error("server '{server}' did not answer the call to '{tool}' within {seconds} s")]
    Timeout {
        server: String,
        tool: String,
        seconds: u64,
    },
    #[error("server '{server}' failed the call to '{tool}': {detail}")]
    Call {
        server: String,
        tool: String,
        detail: String,
    },
}
