//! Other AI apps (Claude Desktop, Claude Code, Cursor…) connected to Toolgate's gateway: which
//! there are, what connecting one changes, connecting the one the user looked at, and undoing
//! it. `toolgate_hosts` edits their files; this adds the import of their servers and keeps
//! `hosts.json` in the data folder.

use std::path::PathBuf;

use serde::Serialize;
use toolgate_hosts::import::{ImportChoices, ImportReport};
use toolgate_hosts::{ConnectCommand, HostError, HostKind, Plan};

use crate::{ApplyImportError, Host};

/// Another AI app whose MCP config Toolgate can take over.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct HostView {
    pub id: &'static str,
    pub label: &'static str,
    /// Where its config is (or would be).
    pub path: Option<String>,
    /// Its config file is there.
    pub found: bool,
    /// Connected to Toolgate; its original config is kept here.
    pub backup: Option<String>,
}

/// What connecting a host would change; nothing is written until it is connected.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct HostPreview {
    pub id: &'static str,
    pub label: &'static str,
    pub path: String,
    /// The servers that move to Toolgate (`None`: it runs none).
    pub report: Option<ImportReport>,
    /// Entries that stay in the host's config, with why.
    pub kept: Vec<(String, String)>,
    pub notes: Vec<String>,
    /// What the host will run instead.
    pub command: String,
}

/// Why a host was not connected or put back; its file is unchanged.
#[derive(Debug, thiserror::Error)]
pub enum HostConnectError {
    #[error("Toolgate does not know the host '{0}'")]
    Unknown(String),
    #[error("cannot tell where {0} keeps its config on this system")]
    NoConfigPath(&'static str),
    #[error("look at what connecting {0} changes first")]
    NotPreviewed(&'static str),
    #[error(transparent)]
    Hosts(#[from] HostError),
    #[error(transparent)]
    Import(#[from] ApplyImportError),
}

fn host_kind(id: &str) -> Result<HostKind, HostConnectError> {
    HostKind::parse(id).ok_or_else(|| HostConnectError::Unknown(id.to_owned()))
}

impl Host {
    /// What Toolgate wrote into other hosts' files: `hosts.json` in the data folder.
    fn hosts_state(&self) -> PathBuf {
        self.data_dir().join("hosts.json")
    }

    /// Every host Toolgate knows, with where its config is and whether it is connected.
    pub fn other_hosts(&self) -> Vec<HostView> {
        let connected = toolgate_hosts::connected(&self.hosts_state());
        HostKind::ALL
            .into_iter()
            .map(|host| {
                let path = toolgate_hosts::config_path_here(host);
                HostView {
                    id: host.id(),
                    label: host.label(),
                    found: path.as_ref().is_some_and(|p| p.is_file()),
                    path: path.map(|p| p.display().to_string()),
                    backup: connected
                        .get(host.id())
                        .map(|c| c.backup.display().to_string()),
                }
            })
            .collect()
    }

    /// What connecting host `id` would change, its config then running `command`; and the plan
    /// to hand back to [`Host::connect_host`] if the user agrees. Nothing is written.
    pub fn preview_connection(
        &self,
        id: &str,
        command: &ConnectCommand,
    ) -> Result<(HostPreview, Plan), HostConnectError> {
        let host = host_kind(id)?;
        let path = toolgate_hosts::config_path_here(host)
            .ok_or(HostConnectError::NoConfigPath(host.label()))?;
        let settings = self.settings().clone();
        let plan = toolgate_hosts::plan(host, &path, &settings, command)?;
        let preview = HostPreview {
            id: host.id(),
            label: host.label(),
            path: path.display().to_string(),
            report: plan.import.as_ref().map(|i| i.report().clone()),
            kept: plan.kept.clone(),
            notes: plan.notes.clone(),
            command: std::iter::once(command.command.clone())
                .chain(command.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
        };
        Ok((preview, plan))
    }

    /// Connects host `id` as `previewed` showed it (refused if the user saw no plan for it):
    /// imports its servers (secrets to the keychain as chosen), starts them, then rewrites the
    /// host's config, only if it is unchanged since the preview.
    pub async fn connect_host(
        &self,
        id: &str,
        previewed: Option<Plan>,
        choices: &ImportChoices,
    ) -> Result<(), HostConnectError> {
        let host = host_kind(id)?;
        let plan = previewed
            .filter(|plan| plan.host == host)
            .ok_or(HostConnectError::NotPreviewed(host.label()))?;
        if let Some(import) = &plan.import {
            let imported = self.apply_import(import, choices).await?;
            self.servers.manager.add(&imported.added).await;
        }
        Ok(toolgate_hosts::apply(&plan, &self.hosts_state())?)
    }

    /// Gives host `id` its own config back: byte for byte when it is still what Toolgate wrote,
    /// else with Toolgate's change reversed and the host's later writes kept; returns where.
    pub fn undo_host(&self, id: &str) -> Result<PathBuf, HostConnectError> {
        let host = host_kind(id)?;
        Ok(toolgate_hosts::undo(host, &self.hosts_state(), false)?.0)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use toolgate_secrets::MemoryStore;

    use super::*;
    use crate::HostOptions;

    #[tokio::test]
    async fn every_host_is_listed_and_nothing_connects_without_a_preview_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        let listed = host.other_hosts();
        assert_eq!(listed.len(), HostKind::ALL.len());
        assert!(listed.iter().all(|h| h.backup.is_none()));

        let err = host
            .connect_host("cursor", None, &ImportChoices::default())
            .await
            .unwrap_err();
        assert!(
            matches!(err, HostConnectError::NotPreviewed("Cursor")),
            "{err}"
        );
        assert!(matches!(
            host.undo_host("notepad"),
            Err(HostConnectError::Unknown(_))
        ));
        assert!(matches!(
            host.undo_host("cursor"),
            Err(HostConnectError::Hosts(HostError::NotConnected { .. }))
        ));
    }
}
