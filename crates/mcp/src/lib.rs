//! Supervision of MCP servers.
//!
//! [`ServerManager`] runs every configured server: a child process speaking MCP over stdio, or a
//! remote server over Streamable HTTP. It performs the handshake (both protocol eras), lists
//! tools, resources and prompts across all pages, keeps them current when a server says its list
//! changed, routes tool calls with timeouts that progress resets and cancellation that reaches the
//! server, and publishes status, progress and log messages to subscribers.
//!
//! The protocol itself, the client handler and its transports, is `toolgate-mcp-client`'s: this
//! crate spawns a local server (confined, in its own group, recorded against orphans) and hands
//! its stdin and stdout to that crate's stdio transport. The types of it that callers use are
//! re-exported here, so `toolgate_mcp::ToolInfo` and the like keep their paths.
//!
//! Supervision is the point of the crate:
//! - a server that crashes fails its calls at once and is restarted with backoff;
//! - a server that hangs is caught by the timeouts;
//! - junk on a server's stdout is logged and skipped (sorted by the client's transport);
//! - stderr is kept in memory (for failure reasons) and in a rotated log file;
//! - no server outlives the app: each runs in its own process group, stopped by closing stdin,
//!   then SIGTERM, then SIGKILL; on Linux the kernel kills it if the app dies; and processes left
//!   by a run that was killed anyway are swept up at the next start (see [`orphans`]).
//! - commands are found on the login shell's PATH, which an app launched from a desktop menu
//!   does not inherit (see [`HostEnv`]).
//!
//! This crate knows nothing of models, approval or windows: callers decide *whether* a call may
//! run; this crate only runs it. Requests a server makes of the client (sampling, elicitation)
//! go to a [`ServerRequests`] handler the caller provides.

pub mod confine;
pub mod doctor;
mod host_env;
mod known;
mod logs;
mod manager;
pub mod orphans;
mod reference;
mod spawn;
mod types;

pub use confine::SandboxReport;
pub use host_env::{CommandNotFound, HostEnv};
pub use known::known_secrets;
pub use manager::{Admission, HostAnswer, ManagerOptions, Refusal, RootsChange, ServerManager};
pub use reference::{lookup as lookup_reference, LookupError};
#[cfg(unix)]
pub use toolgate_guard::REAPER_NAME;
pub use toolgate_mcp_client::{
    stdout, templates, Asker, CallOptions, CallProgress, DeclineServerRequests, LogLevel,
    PromptArgumentInfo, PromptInfo, Question, ResourceInfo, ResourceTemplateInfo, Rounds,
    ServerEvent, ServerRequests, TaskState, ToolInfo, ToolOutput, Unanswered, APP_MIME_TYPE,
    UI_EXTENSION_ID,
};
pub use toolgate_settings::NetworkAccess;
pub use types::{
    Installed, Launch, RefusedTool, ServerSnapshot, ServerStatus, ToolChange, ToolText,
};

/// Why a server or a call failed, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("no server '{0}' is configured")]
    UnknownServer(String),
    #[error("server '{server}' is not running ({status})")]
    NotRunning { server: String, status: String },
    #[error("server '{server}' has no tool named '{tool}'")]
    UnknownTool { server: String, tool: String },
    #[error("'{tool}' of '{server}' changed since you accepted it and is held until you look at the change and accept it (its card in the window, or `toolgate tools changes`)")]
    Held { server: String, tool: String },
    #[error("'{tool}' of '{server}' is not held: there is no change of it to accept")]
    NotHeld { server: String, tool: String },
    #[error("tool arguments must be a JSON object, got {0}")]
    BadArguments(String),
    #[error("server '{server}' did not answer the call to '{tool}' within {seconds} s; the call was cancelled")]
    Timeout {
        server: String,
        tool: String,
        seconds: u64,
    },
    #[error("the call to '{tool}' was cancelled")]
    Cancelled { tool: String },
    #[error("server '{server}' stopped while the call to '{tool}' was running")]
    ServerExited { server: String, tool: String },
    #[error("server '{server}' failed the call to '{tool}': {detail}")]
    Call {
        server: String,
        tool: String,
        detail: String,
        /// The server's JSON-RPC error code, when it answered the call with an error (rather
        /// than failing to answer): a connected client gets that error as the server sent it.
        code: Option<i32>,
        /// That error's `data`, as JSON text.
        data: Option<String>,
    },
    #[error("server '{server}' needs more access for '{tool}' (scope: {scope}); sign in to it again to grant it (`toolgate servers login {server}`, or Sign in on its card)")]
    MoreAccess {
        server: String,
        tool: String,
        scope: String,
    },
    #[error("server '{server}' needs you to sign in again before '{tool}' can run (`toolgate servers login {server}`, or Sign in on its card)")]
    SignInNeeded { server: String, tool: String },
    #[error("server '{server}' could not {what}: {detail}")]
    Request {
        server: String,
        what: &'static str,
        detail: String,
    },
}
