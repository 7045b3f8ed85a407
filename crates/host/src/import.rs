//! Importing servers from where a window offers them: text the user pasted, Claude Desktop's
//! own file, or another AI app's config (read only; connecting it is `other_hosts.rs`). Files
//! are read here, so their plain-text tokens never pass through a window.

use serde::{Deserialize, Serialize};
use toolgate_hosts::import::{ImportChoices, ImportError, ImportPlan, ImportReport};
use toolgate_settings::Settings;

use toolgate_secrets::SecretError;

use crate::{ApplyImportError, Host, Imported};

/// Where servers to import come from.
#[derive(Debug, Deserialize, ts_rs::TS)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ImportSource {
    Text {
        text: String,
        /// The name for a single server pasted alone.
        name: Option<String>,
    },
    ClaudeDesktop,
    /// The servers in another AI app's config (Cursor, VS Code…), copied: its file is only read.
    Host {
        host: String,
    },
}

/// Files the import can offer to read, where they exist.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportSources {
    pub claude_desktop: Option<String>,
}

/// Why nothing could be imported from a source; nothing was saved.
#[derive(Debug, thiserror::Error)]
pub enum ImportSourceError {
    #[error("no Claude Desktop configuration folder on this system")]
    NoClaudeDesktop,
    #[error("could not read {}: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("Toolgate does not know the host '{0}'")]
    UnknownHost(String),
    #[error("{0} has no config on this computer")]
    NoHostConfig(&'static str),
    #[error("{0} runs no server Toolgate can run")]
    NoServers(&'static str),
    #[error(transparent)]
    Hosts(#[from] toolgate_hosts::HostError),
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Apply(#[from] ApplyImportError),
}

/// The files on this computer the import can offer.
pub fn import_sources() -> ImportSources {
    ImportSources {
        claude_desktop: toolgate_hosts::import::claude_desktop_config_path()
            .filter(|p| p.is_file())
            .map(|p| p.display().to_string()),
    }
}

impl Host {
    /// Applies an import planned against the settings: the chosen secrets go to the keychain
    /// first (off the async workers), then the settings are saved with references to them.
    /// The new servers are returned, not started.
    pub async fn apply_import(
        &self,
        plan: &toolgate_hosts::import::ImportPlan,
        choices: &toolgate_hosts::import::ImportChoices,
    ) -> Result<Imported, ApplyImportError> {
        let before = self.settings().clone();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let applied = plan.apply(&before, choices, now)?;
        let names: Vec<String> = applied.secrets.iter().map(|s| s.name.clone()).collect();
        let (secrets, store) = (applied.secrets, self.secrets.clone());
        tokio::task::spawn_blocking(move || {
            secrets.iter().try_for_each(|secret| {
                store.set(&toolgate_settings::secret_item(&secret.name), &secret.value)
            })
        })
        .await
        .map_err(|e| SecretError::Other {
            detail: e.to_string(),
        })??;
        let next = applied.settings;
        let saved = self.update_settings(|s| *s = next)?;
        let added = saved
            .servers
            .iter()
            .filter(|s| !before.servers.iter().any(|b| b.id == s.id))
            .cloned()
            .collect();
        Ok(Imported {
            added,
            secrets: names,
        })
    }

    /// What importing from `source` would add, rename, skip and ask for; changes nothing.
    pub fn import_plan(&self, source: &ImportSource) -> Result<ImportPlan, ImportSourceError> {
        let settings = self.settings().clone();
        plan(&settings, source)
    }

    /// Imports: the chosen secrets go to the keychain first, then the settings are saved with
    /// references to them, then the new servers start.
    pub async fn import(
        &self,
        source: &ImportSource,
        choices: &ImportChoices,
    ) -> Result<ImportReport, ImportSourceError> {
        let plan = self.import_plan(source)?;
        let imported = self.apply_import(&plan, choices).await?;
        self.servers.manager.add(&imported.added).await;
        Ok(plan.report().clone())
    }
}

fn plan(settings: &Settings, source: &ImportSource) -> Result<ImportPlan, ImportSourceError> {
    use toolgate_hosts::import::{plan_import, ImportOptions};
    let (text, name) = match source {
        ImportSource::Host { host } => return host_servers(settings, host),
        ImportSource::Text { text, name } => (text.clone(), name.clone()),
        ImportSource::ClaudeDesktop => {
            let path = toolgate_hosts::import::claude_desktop_config_path()
                .ok_or(ImportSourceError::NoClaudeDesktop)?;
            let text = std::fs::read_to_string(&path)
                .map_err(|source| ImportSourceError::Read { path, source })?;
            (text, None)
        }
    };
    let options = ImportOptions {
        name,
        ..ImportOptions::default()
    };
    Ok(plan_import(settings, &text, &options)?)
}

/// The servers another AI app runs, planned as an import; its config is not changed.
fn host_servers(settings: &Settings, id: &str) -> Result<ImportPlan, ImportSourceError> {
    let host = toolgate_hosts::HostKind::parse(id)
        .ok_or_else(|| ImportSourceError::UnknownHost(id.to_owned()))?;
    let path = toolgate_hosts::config_path_here(host)
        .filter(|p| p.is_file())
        .ok_or(ImportSourceError::NoHostConfig(host.label()))?;
    // The plan of a connection, of which only the import is used: nothing is written.
    let command = toolgate_hosts::ConnectCommand {
        command: "toolgate".into(),
        args: Vec::new(),
    };
    toolgate_hosts::plan(host, &path, settings, &command)?
        .import
        .ok_or(ImportSourceError::NoServers(host.label()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use toolgate_secrets::MemoryStore;

    use super::*;
    use crate::HostOptions;

    fn source(json: serde_json::Value) -> ImportSource {
        serde_json::from_value(json).unwrap()
    }

    #[tokio::test]
    async fn pasted_servers_are_planned_then_saved_and_an_unknown_host_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        let pasted = source(serde_json::json!({
            "kind": "text",
            "text": r#"{"mcpServers": {"far": {"url": "http://127.0.0.1:9/mcp"}}}"#,
            "name": null,
        }));
        let before = host.settings().servers.len();
        let planned = host.import_plan(&pasted).unwrap();
        assert_eq!(planned.report().added.len(), 1);
        assert_eq!(
            host.settings().servers.len(),
            before,
            "a plan saves nothing"
        );

        let report = host
            .import(&pasted, &ImportChoices::default())
            .await
            .unwrap();
        assert_eq!(report.added.len(), 1);
        assert!(host.settings().servers.iter().any(|s| s.id == "far"));
        host.servers.manager.stop_all().await;

        let err = host
            .import_plan(&source(
                serde_json::json!({"kind": "host", "host": "notepad"}),
            ))
            .unwrap_err();
        assert!(matches!(err, ImportSourceError::UnknownHost(_)), "{err}");
    }
}
