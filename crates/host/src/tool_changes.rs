//! Tools held since they changed (`toolgate_mcp`'s baselines): what is held, and the user's
//! acceptance, which the audit log records (`tools/accept` with the tool and its new text).

use serde_json::json;
use toolgate_history::{AuditDecision, AuditEntry, DecidedBy};
use toolgate_mcp::{McpError, ToolChange};

use crate::Host;

impl Host {
    /// Every held tool, by server.
    pub async fn held_tools(&self) -> Vec<(String, Vec<ToolChange>)> {
        self.servers
            .manager
            .snapshot()
            .await
            .into_iter()
            .filter(|s| !s.held_tools.is_empty())
            .map(|s| (s.id, s.held_tools))
            .collect()
    }

    /// Accepts held tools of `server` (`names`, or all of them): offered from now on, and each
    /// acceptance written to the audit log.
    pub async fn accept_tool_changes(
        &self,
        server: &str,
        names: Option<&[String]>,
    ) -> Result<Vec<ToolChange>, McpError> {
        let accepted = self
            .servers
            .manager
            .accept_tool_changes(server, names)
            .await?;
        if let Ok(history) = &self.history {
            for change in &accepted {
                let mut entry = AuditEntry::new(
                    server,
                    "tools/accept",
                    json!({
                        "tool": change.name,
                        "new": change.before.is_none(),
                        "description": change.after.description,
                    }),
                    AuditDecision::Allowed,
                    DecidedBy::User,
                );
                entry.reason = Some(format!(
                    "accepted the {} tool {}",
                    if change.before.is_none() {
                        "new"
                    } else {
                        "changed"
                    },
                    change.name
                ));
                if let Err(e) = history.record_audit(&entry) {
                    tracing::warn!(server, tool = %change.name, "the acceptance could not be written to the audit log: {e}");
                }
            }
        }
        tracing::info!(
            server,
            tools = ?accepted.iter().map(|c| &c.name).collect::<Vec<_>>(),
            "tool changes accepted"
        );
        Ok(accepted)
    }

    /// Looks every two seconds for acceptances another process made on this data folder, so a
    /// `toolgate tools accept` reaches a running app (and the window's reaches `serve`).
    pub(crate) async fn watch_accepted_tools(host: std::sync::Weak<Host>) {
        loop {
            let Some(strong) = host.upgrade() else {
                return;
            };
            strong.servers.manager.refresh_accepted_tools().await;
            drop(strong);
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        }
    }
}
