//! One configured server's record: its settings, status and lists, the connection or start in
//! progress, and what a stop takes out of it.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use rmcp::service::Peer;
use rmcp::RoleClient;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;
use toolgate_settings::ServerConfig;

use super::backoff::Backoff;
use crate::confine::SandboxReport;
use crate::logs::ServerLog;
use crate::{PromptInfo, ResourceInfo, ResourceTemplateInfo, ServerStatus, ToolInfo};

pub(super) struct Entry {
    pub(super) config: ServerConfig,
    pub(super) status: ServerStatus,
    pub(super) implementation: Option<String>,
    pub(super) protocol_version: Option<String>,
    pub(super) tools: Vec<ToolInfo>,
    /// Tools held since they changed, with what was accepted of each (`baseline.rs`).
    pub(super) held: Vec<(ToolInfo, Option<crate::types::ToolText>)>,
    pub(super) resources: Vec<ResourceInfo>,
    pub(super) resource_templates: Vec<ResourceTemplateInfo>,
    pub(super) prompts: Vec<PromptInfo>,
    pub(super) conn: Option<Conn>,
    /// A start in progress, so a stop can cut it short and wait for its process to be gone.
    pub(super) starting: Option<Starting>,
    pub(super) generation: u64,
    /// Crashes in a row, and so when the next restart is.
    pub(super) backoff: Backoff,
    pub(super) log: ServerLog,
    pub(super) roots: Arc<RwLock<Vec<PathBuf>>>,
    /// The sandbox as applied at the last start.
    pub(super) sandbox: Option<SandboxReport>,
    /// The exact version installed for it and run at the last start (an npx or uvx server).
    pub(super) installed: Option<toolgate_install::Record>,
    /// A remote server's sign-in while connected.
    pub(super) session: Option<toolgate_oauth::Session>,
    /// The scope a call was refused for (403 `insufficient_scope`), until the next start.
    pub(super) needs_scope: Option<String>,
    pub(super) refused: toolgate_mcp_client::http::Refused,
    /// Refused by the manager's admission at its last start (not a failure of its own).
    pub(super) blocked: bool,
}

pub(super) struct Conn {
    pub(super) peer: Peer<RoleClient>,
    pub(super) stop: oneshot::Sender<()>,
    pub(super) task: tokio::task::JoinHandle<()>,
}

impl Conn {
    async fn shut(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

pub(super) struct Starting {
    pub(super) cancel: CancellationToken,
    /// Closed when the start has finished, its process stopped if it was cancelled.
    pub(super) done: watch::Receiver<()>,
}

/// What a stop took from an entry: to be shut down without holding the lock.
#[derive(Default)]
pub(super) struct Retired {
    conn: Option<Conn>,
    starting: Option<Starting>,
}

impl Retired {
    pub(super) async fn finish(self) {
        if let Some(mut starting) = self.starting {
            starting.cancel.cancel();
            while starting.done.changed().await.is_ok() {}
        }
        if let Some(conn) = self.conn {
            conn.shut().await;
        }
    }
}

impl Entry {
    /// Ends whatever runs or starts for this entry (to be finished outside the lock), with a new
    /// generation so tasks of the old one leave the entry alone.
    pub(super) fn retire(&mut self, generation: u64, status: ServerStatus) -> Retired {
        self.generation = generation;
        self.status = status;
        self.tools.clear();
        self.held.clear();
        self.resources.clear();
        self.resource_templates.clear();
        self.prompts.clear();
        let starting = self.starting.take();
        if let Some(s) = &starting {
            s.cancel.cancel();
        }
        Retired {
            conn: self.conn.take(),
            starting,
        }
    }
}
