//! The MCP client over rmcp: what Toolgate says to a server and how it listens.
//!
//! - [`client`]: Toolgate's side of a connection (its `clientInfo` and capabilities: roots,
//!   sampling, form and URL elicitation, the tasks and UI extensions) and how it answers a
//!   server's requests and notifications;
//! - [`asker`]: who answers a server's questions during a call ([`ServerRequests`], [`Asker`]);
//! - the transports: [`stdio`] over a pair of pipes it is *given* (a child's stdout and stdin,
//!   or any reader and writer), with junk lines sorted out ([`stdout`]); Streamable HTTP
//!   ([`http`], plain or signed in); and the older HTTP+SSE ([`sse`]);
//! - what a server offers and sends, in Toolgate's terms ([`ToolInfo`], [`ToolOutput`],
//!   [`ServerEvent`], …), and RFC 6570 resource [`templates`].
//!
//! This crate knows no process, sandbox or host: it does not spawn, confine, or look at the
//! environment it runs in. Starting a local server, and keeping it in line, is `toolgate-mcp`'s
//! supervision, which hands this crate the pipes.

pub mod asker;
pub mod client;
pub mod http;
pub mod sse;
pub mod stdio;
pub mod stdout;
pub mod templates;
mod types;

pub use asker::{Asker, DeclineServerRequests, Question, Rounds, ServerRequests, Unanswered};
pub use types::{
    CallOptions, CallProgress, LogLevel, PromptArgumentInfo, PromptInfo, ResourceInfo,
    ResourceTemplateInfo, ServerEvent, TaskState, ToolInfo, ToolOutput,
};

/// The MCP Apps extension: tools whose results are shown by an HTML app the server serves.
pub const UI_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's `ui://` resource.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
