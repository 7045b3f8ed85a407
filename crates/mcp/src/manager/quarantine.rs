//! The manager's side of held tools (`baseline.rs`): each list a server gives split into offered
//! and held, and the user's acceptance.

use super::baseline::change;
use super::registry::ServerManager;
use crate::McpError;
use crate::{ToolChange, ToolInfo, ToolText};

impl ServerManager {
    /// Offered and held tools of a list `server` just gave.
    pub(super) fn review_tools(
        &self,
        server: &str,
        accept_all: bool,
        connected: bool,
        tools: Vec<ToolInfo>,
    ) -> (Vec<ToolInfo>, Vec<(ToolInfo, Option<ToolText>)>) {
        let (offered, held) = self
            .baselines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .review(server, tools, accept_all, connected);
        if !held.is_empty() {
            tracing::warn!(
                server,
                held = ?held.iter().map(|(t, _)| &t.name).collect::<Vec<_>>(),
                "tools changed since they were accepted: held until the user accepts them"
            );
        }
        (offered, held)
    }

    /// Accepts held tools of `server` (`names`, or all when `None`): they are offered from now
    /// on. Returns the tools accepted.
    pub async fn accept_tool_changes(
        &self,
        server: &str,
        names: Option<&[String]>,
    ) -> Result<Vec<ToolChange>, McpError> {
        let accepted = {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(server)
                .ok_or_else(|| McpError::UnknownServer(server.to_owned()))?;
            let wanted = |name: &str| names.is_none_or(|n| n.iter().any(|w| w == name));
            if let Some(missing) = names
                .into_iter()
                .flatten()
                .find(|n| !entry.held.iter().any(|(t, _)| &t.name == *n))
            {
                return Err(McpError::NotHeld {
                    server: server.to_owned(),
                    tool: missing.clone(),
                });
            }
            let (taken, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut entry.held)
                .into_iter()
                .partition(|(t, _)| wanted(&t.name));
            entry.held = kept;
            let tools: Vec<ToolInfo> = taken.iter().map(|(t, _)| t.clone()).collect();
            self.baselines
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .accept(server, &tools);
            entry.tools.extend(tools);
            taken
                .into_iter()
                .map(|(t, before)| change(&t, before))
                .collect::<Vec<_>>()
        };
        self.changed(server);
        Ok(accepted)
    }

    /// Forgets what was accepted of a removed server's tools.
    pub fn forget_tools(&self, server: &str) {
        self.baselines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .forget(server);
    }

    /// Takes in what another process on this data folder accepted (`toolgate tools accept`
    /// while the app runs): the held tools it covers are offered. Cheap when nothing changed
    /// (one look at the file's time).
    pub async fn refresh_accepted_tools(&self) {
        let changed = self
            .baselines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .reload_if_changed();
        if !changed {
            return;
        }
        let mut moved = Vec::new();
        {
            let mut entries = self.entries.lock().await;
            let baselines = self.baselines.lock().unwrap_or_else(|p| p.into_inner());
            for (id, entry) in entries.iter_mut() {
                for (tool, before) in std::mem::take(&mut entry.held) {
                    match baselines.accepted(id, &tool.name) {
                        Some(accepted) if *accepted == ToolText::of(&tool) => {
                            entry.tools.push(tool);
                            moved.push(id.clone());
                        }
                        now => {
                            let before = now.cloned().or(before);
                            entry.held.push((tool, before));
                        }
                    }
                }
            }
        }
        moved.dedup();
        for id in moved {
            tracing::info!(server = %id, "tools accepted by another process are offered");
            self.changed(&id);
        }
    }
}
