//! What a local server may reach (its sandbox) and what the gate should know of it (its trust
//! marks), as the user set them.
//!
//! The sandbox itself is `toolgate-sandbox`'s; this is the user's side of it: on or off, the
//! network mode, extra folders. A server's roots and its own data folder are always writable in
//! its sandbox, so they are not listed here. The defaults for a server that sets none, by what
//! it is, are in `server_kind.rs`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How far a confined server reaches on the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum NetworkAccess {
    /// No sockets at all.
    #[default]
    None,
    /// TCP to this computer only (127.0.0.0/8, `::1`).
    Loopback,
    /// Anywhere.
    Any,
    /// Only the host names on its list, through Toolgate's proxy (its `HTTPS_PROXY`); nothing
    /// else, this computer included.
    Hosts,
}

impl NetworkAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkAccess::None => "none",
            NetworkAccess::Loopback => "loopback",
            NetworkAccess::Any => "any",
            NetworkAccess::Hosts => "hosts",
        }
    }

    /// Whether the server reaches beyond this computer.
    pub fn reaches_out(self) -> bool {
        matches!(self, NetworkAccess::Any | NetworkAccess::Hosts)
    }

    /// Whether what the server is sent could leave this computer through its network: beyond
    /// it, or through a service on it. "Loopback" counts: Toolgate cannot know what listens on
    /// this computer's loopback (a local proxy, an SSH tunnel, a browser's debugging port,
    /// another program's server), and any of it may pass data on. Only the user, who knows,
    /// can say otherwise (the server's `sendsOut` mark).
    pub fn carries_out(self) -> bool {
        self != NetworkAccess::None
    }
}

/// A local server's sandbox, as the user set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxSettings {
    /// Confine the server. Off: it runs with everything your account can reach.
    #[serde(default = "crate::server::yes")]
    pub enabled: bool,
    #[serde(default)]
    pub network: NetworkAccess,
    /// Folders it may also read (besides the system, its runtime and its own files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<PathBuf>,
    /// Folders it may also change (besides its roots and its data folder).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<PathBuf>,
    /// With network "hosts": the names it may reach (`api.github.com`, `*.notion.so`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// With network "hosts": a listed name may resolve to a private, loopback or link-local
    /// address (off: such a name is refused, so no name can be turned into the local network).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub private_addresses: bool,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            network: NetworkAccess::None,
            read: Vec::new(),
            write: Vec::new(),
            hosts: Vec::new(),
            private_addresses: false,
        }
    }
}

/// What the gate should know of a server beyond what its tools' hints say. `None` fields take
/// the default for what the server is ([`ServerKind`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustMarks {
    /// Its results bring text from outside into the chat (web pages, mail, issues): once a
    /// chat has read one, calls that can send data out are asked even where a rule allows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_untrusted: Option<bool>,
    /// Its calls can send data out of this computer, whatever its tools' hints and its sandbox
    /// say (a remote server, a server that reaches the network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sends_out: Option<bool>,
    /// Tools whose results wait for the user's review before the model (or a connected client)
    /// sees them, by their own name; `*` for every tool of the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub review_results: Vec<String>,
    /// Accept its tools' changes as they come, instead of holding a changed or new tool until
    /// the user has looked at it (off unless set).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accept_tool_changes: bool,
    /// Look for secrets in its calls' arguments (a call carrying one is asked, whatever the
    /// rules allow) and in its results (removed before the model sees them). Absent: on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_secrets: Option<bool>,
    /// Its results are the user's own data (the user's mark): a recipient, an address or an
    /// account read from one of its tools that is not marked open-world counts as the user's,
    /// as if typed, when the gate looks at where a call's values came from. Off unless set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trusted_source: bool,
}

impl TrustMarks {
    pub fn is_default(&self) -> bool {
        self == &Self::default()
    }

    /// Whether results of `tool` are reviewed before the model sees them.
    pub fn reviews(&self, tool: &str) -> bool {
        self.review_results.iter().any(|t| t == "*" || t == tool)
    }
}
