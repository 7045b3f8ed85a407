//! What the manager tells its callers of each server: its status, and the snapshot its card
//! and the loop read.

use serde::Serialize;
use serde_json::Value;

use toolgate_mcp_client::{PromptInfo, ResourceInfo, ResourceTemplateInfo, ToolInfo};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum ServerStatus {
    Stopped,
    Starting,
    Ready,
    /// Exited on its own; waiting `retry_in_ms` before start-up attempt `attempt`.
    #[serde(rename_all = "camelCase")]
    Restarting {
        attempt: u32,
        retry_in_ms: u64,
        reason: String,
    },
    Failed {
        reason: String,
    },
    /// A remote server that asks for a sign-in: never signed in (`again` false), or its sign-in
    /// ended (expired, revoked, signed out): nothing is sent to it until the user signs in.
    #[serde(rename_all = "camelCase")]
    SignIn {
        reason: String,
        again: bool,
    },
}

impl std::fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerStatus::Stopped => f.write_str("stopped"),
            ServerStatus::Starting => f.write_str("starting"),
            ServerStatus::Ready => f.write_str("ready"),
            ServerStatus::Restarting {
                attempt, reason, ..
            } => write!(f, "restarting (attempt {attempt}) after: {reason}"),
            ServerStatus::Failed { reason } => write!(f, "failed: {reason}"),
            ServerStatus::SignIn { reason, .. } => write!(f, "sign-in needed: {reason}"),
        }
    }
}

/// What the UI and the loop see of one server.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerSnapshot {
    pub id: String,
    pub name: String,
    pub enabled: bool,
    pub status: ServerStatus,
    /// `serverInfo` from the handshake, e.g. `mcp-servers/everything 2.0.0`.
    pub implementation: Option<String>,
    pub protocol_version: Option<String>,
    pub tools: Vec<ToolInfo>,
    pub resources: Vec<ResourceInfo>,
    pub resource_templates: Vec<ResourceTemplateInfo>,
    pub prompts: Vec<PromptInfo>,
    /// The folders the server is offered as its roots.
    pub roots: Vec<std::path::PathBuf>,
    /// A remote server's sign-in (issuer, expiry, scopes), never a token; `None` when it has none.
    pub signed_in: Option<toolgate_oauth::SignedInInfo>,
    /// The scopes a call was refused for (403 `insufficient_scope`): the user may sign in again
    /// to grant them.
    pub needs_scope: Option<String>,
    /// Tools the server listed that Toolgate refused, with the reason (2026-07-28: an invalid
    /// `x-mcp-header` annotation).
    pub refused_tools: Vec<RefusedTool>,
    /// What is launched or dialled, for binding approval grants to it. Never sent to the window:
    /// arguments and URLs may hold secrets.
    #[serde(skip)]
    pub launch: Launch,
    /// A local server's sandbox: what it may change and reach, and what is not enforced. As
    /// applied at its last start, else as its settings say.
    pub sandbox: Option<crate::confine::SandboxReport>,
    /// Its results bring text from outside into a chat (the user's mark, or what it is).
    pub reads_untrusted: bool,
    /// Its results (of tools not marked open-world) are the user's own data: the user's mark
    /// (its trust settings; for the gate only).
    #[serde(skip)]
    pub trusted_source: bool,
    /// Its calls can send data out of this computer: remote, unconfined, with network access,
    /// on a kernel that cannot confine its network, or marked so by the user.
    pub sends_out: bool,
    /// Tools whose results wait for the user's review before the model sees them (`*`: all).
    pub review_results: Vec<String>,
    /// Whether its calls' arguments and results are scanned for secrets (its trust settings;
    /// on unless turned off).
    #[serde(skip)]
    pub scan_secrets: bool,
    /// Tools held since they changed, until the user accepts them (`baseline.rs`): not in
    /// `tools`, so neither offered nor callable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ToolChange>>", optional)]
    pub held_tools: Vec<ToolChange>,
    /// Names its proxy refused (network "hosts") that wait for the user: allow once, always,
    /// or deny.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub wanted_hosts: Vec<String>,
    /// The exact version Toolgate installed for it and runs (an npx or uvx server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub installed: Option<Installed>,
}

/// A package Toolgate installed for a server, as its card shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    pub package: String,
    pub version: String,
    /// `npm` or `PyPI`.
    pub registry: String,
}

/// A tool's words and hints as the user accepts them: what a change is judged by.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolText {
    #[serde(default)]
    pub title: Option<String>,
    pub description: String,
    #[ts(type = "JsonValue")]
    pub input_schema: Value,
    #[serde(default)]
    #[ts(type = "JsonValue | null")]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub read_only: bool,
    #[serde(default)]
    pub destructive: bool,
    #[serde(default)]
    pub idempotent: bool,
    #[serde(default)]
    pub open_world: bool,
}

/// A tool held since it changed (or appeared): what was accepted (`None` for a new tool) and
/// what the server says now. Untrusted text, shown side by side.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolChange {
    pub name: String,
    pub before: Option<ToolText>,
    pub after: ToolText,
}

/// A tool a server offered that Toolgate will not call, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RefusedTool {
    pub name: String,
    pub reason: String,
}

/// What a server runs: its command and arguments, or its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    Stdio { command: String, args: Vec<String> },
    Http { url: String },
}
