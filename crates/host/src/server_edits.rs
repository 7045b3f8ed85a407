//! Changes to the servers a window makes: each saved to the settings first, then applied to
//! the running servers. Also what a window shows of them besides their status: the log tail,
//! the settings for the edit form, the tools the model would see, and what servers need to
//! start.

use std::path::PathBuf;

use serde::Serialize;
use toolgate_mcp::McpError;
use toolgate_settings::file::FileError;
use toolgate_settings::{ServerConfig, SettingsError};

use crate::Host;

/// How many of a server's last stderr lines a window gets.
const LOG_LINES: usize = 500;

/// Why a change to a server was not made, or made only in the settings.
#[derive(Debug, thiserror::Error)]
pub enum ServerEditError {
    #[error(transparent)]
    Settings(#[from] FileError),
    /// The edited settings were refused (an environment variable that would hijack the
    /// process); nothing was saved.
    #[error(transparent)]
    Refused(#[from] SettingsError),
    #[error(transparent)]
    Server(#[from] McpError),
}

/// Every tool of the ready servers: the name the model sees, or why it is hidden; and how much of
/// the current provider's allowance the visible ones use.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCatalogView {
    pub tools: Vec<toolgate_catalog::ListedTool>,
    pub budget: Option<toolgate_catalog::Budget>,
    /// Why no tool list can be sent as the settings stand, if so.
    pub problem: Option<String>,
}

impl Host {
    /// Switches a server on (it starts) or off (it stops), and saves the choice.
    pub async fn set_server_enabled(&self, id: &str, enabled: bool) -> Result<(), ServerEditError> {
        self.update_settings(|s| {
            if let Some(server) = s.servers.iter_mut().find(|server| server.id == id) {
                server.enabled = enabled;
            }
        })?;
        Ok(self.servers.manager.set_enabled(id, enabled).await?)
    }

    /// Removes a server: it stops, and its tool settings and approval rules go with it, so a
    /// later server given the same id starts with none of them.
    pub async fn remove_server(&self, id: &str) -> Result<(), ServerEditError> {
        self.update_settings(|s| {
            s.servers.retain(|server| server.id != id);
            s.tools.servers.remove(id);
            s.policy.rules.retain(|rule| rule.server_id() != id);
        })?;
        // A server added again under this id has its first tool list accepted as new.
        self.servers.manager.forget_tools(id);
        // And runs no files of an earlier bundle.
        self.forget_bundle(id);
        Ok(self.servers.manager.remove(id).await?)
    }

    /// The server's recent stderr, oldest first.
    pub async fn server_log(&self, id: &str) -> Vec<String> {
        let mut lines = self.servers.manager.stderr_tail(id).await;
        lines.drain(..lines.len().saturating_sub(LOG_LINES));
        lines
    }

    /// The folders a server may work in (its MCP roots), saved; the server is told at once, or
    /// restarted when its sandbox is built from them. Returns whether it was restarted.
    pub async fn set_server_roots(
        &self,
        id: &str,
        roots: Vec<PathBuf>,
    ) -> Result<bool, ServerEditError> {
        self.update_settings(|s| {
            if let Some(server) = s.servers.iter_mut().find(|server| server.id == id) {
                server.roots = roots.clone();
            }
        })?;
        Ok(match self.servers.manager.set_roots(id, roots).await? {
            toolgate_mcp::RootsChange::Told => false,
            toolgate_mcp::RootsChange::Restarted => true,
        })
    }

    fn configured(&self, id: &str) -> Result<ServerConfig, McpError> {
        self.settings()
            .servers
            .iter()
            .find(|s| s.id == id)
            .cloned()
            .ok_or_else(|| McpError::UnknownServer(id.to_owned()))
    }

    /// A server's settings for an edit form; values that look like secrets are hidden.
    pub fn server_config_for_window(&self, id: &str) -> Result<ServerConfig, ServerEditError> {
        Ok(toolgate_settings::edit::for_window(&self.configured(id)?))
    }

    /// Saves a server edited in a form (hidden values kept, its id kept) and restarts it with
    /// the new settings.
    pub async fn update_server(
        &self,
        id: &str,
        edited: ServerConfig,
    ) -> Result<(), ServerEditError> {
        let old = self.configured(id)?;
        let mut next = toolgate_settings::edit::apply(&old, edited);
        next.id = id.to_owned();
        if let Some(refused) = next.unsafe_env() {
            return Err(refused.into());
        }
        self.update_settings(|s| {
            if let Some(slot) = s.servers.iter_mut().find(|s| s.id == id) {
                *slot = next.clone();
            }
        })?;
        if old.differs_only_in_reach(&next) {
            if let Some(sandbox) = next.sandbox_settings() {
                self.servers.manager.set_reach(id, sandbox).await?;
                return Ok(());
            }
        }
        self.servers.manager.remove(id).await?;
        self.servers.manager.add(std::slice::from_ref(&next)).await;
        Ok(())
    }

    /// The tools of the ready servers under the tool settings, as the current provider would
    /// get them.
    pub async fn tool_catalog(&self) -> ToolCatalogView {
        let (tools, target) = {
            let all = self.settings();
            (all.tools.clone(), all.provider.tool_target())
        };
        match toolgate_agent::catalog_of(&self.servers.manager.snapshot().await, &tools) {
            Ok(catalog) => ToolCatalogView {
                tools: catalog.listing().to_vec(),
                budget: Some(catalog.budget(target)),
                problem: catalog.check(target).err().map(|e| e.to_string()),
            },
            Err(e) => ToolCatalogView {
                tools: Vec::new(),
                budget: None,
                problem: Some(e.to_string()),
            },
        }
    }

    /// What servers need to start (the PATH's runtimes, the keychain…), checked off the async
    /// workers, and whether the audit export keeps up.
    pub async fn doctor(&self) -> Result<Vec<toolgate_mcp::doctor::Check>, tokio::task::JoinError> {
        let env = self.servers.manager.host_env().await.clone();
        let secrets = self.secrets.clone();
        let (history, destination) = (self.history.clone().ok(), self.telemetry_destination());
        let (mut checks, waiting) = tokio::task::spawn_blocking(move || {
            let waiting = history
                .zip(destination)
                .and_then(|(h, d)| h.export_backlog(&d).ok().flatten())
                .map(|b| b.waiting);
            (
                toolgate_mcp::doctor::doctor(&env, secrets.as_ref()),
                waiting,
            )
        })
        .await?;
        checks.extend(self.telemetry_checks(waiting));
        checks.extend(self.remote_policy_check());
        Ok(checks)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use toolgate_secrets::MemoryStore;

    use super::*;
    use crate::HostOptions;

    #[tokio::test]
    async fn a_removed_server_takes_its_tool_settings_and_rules_and_an_edit_keeps_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        let mut far = ServerConfig::http("far", "http://127.0.0.1:9/mcp");
        far.enabled = false;
        host.update_settings(|s| {
            s.servers.push(far.clone());
            s.tools.set_tool_enabled("far", "echo", false);
        })
        .unwrap();
        // Known to the manager, switched off: nothing starts.
        host.servers.manager.add(std::slice::from_ref(&far)).await;

        assert!(matches!(
            host.server_config_for_window("nope"),
            Err(ServerEditError::Server(McpError::UnknownServer(_)))
        ));
        let mut edited = host.server_config_for_window("far").unwrap();
        edited.id = "renamed".into();
        edited.name = "Far away".into();
        edited.enabled = false;
        host.update_server("far", edited).await.unwrap();
        let saved = host.server_config_for_window("far").unwrap();
        assert_eq!(saved.name, "Far away");

        host.remove_server("far").await.unwrap();
        let settings = host.settings().clone();
        assert!(!settings.servers.iter().any(|s| s.id == "far"));
        assert!(!settings.tools.servers.contains_key("far"));
        assert!(host.server_log("far").await.is_empty());
    }

    #[tokio::test]
    async fn a_catalog_with_no_ready_server_is_empty_and_fits() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        let view = host.tool_catalog().await;
        assert!(view.tools.is_empty());
        assert!(view.problem.is_none(), "{:?}", view.problem);
    }
}
