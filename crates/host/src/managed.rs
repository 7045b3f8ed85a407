//! The organisation's managed policy in the host: read at open from the places
//! [`HostOptions::managed`](crate::HostOptions) names, read again while running (a file
//! changed, or the remote document fetched every 15 minutes), and applied to everything the
//! host does: the settings the user sees and changes (locked keys, the organisation's servers),
//! every server start (allowed and denied servers), and the rules the gate decides by.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, UNIX_EPOCH};

use serde::Serialize;
use toolgate_managed::{locks, remote, Locks, Managed, RemoteFetchError, Source};
use toolgate_settings::file::FileError;
use toolgate_settings::Settings;

use crate::Host;

/// How often the policy's files are looked at for a change.
const LOOK_EVERY: Duration = Duration::from_secs(2);
/// How long the first start waits for a remote policy that was never fetched.
const FIRST_FETCH: Duration = Duration::from_secs(10);

/// The remote document's last good copy as this user keeps it, in the data folder. The user
/// can delete it: then the system's copy (`Source::remote_copy`) is used, or no server runs.
pub(crate) fn cache_path(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("managed-remote.json")
}

/// What the window, the CLI and the doctor show of the managed policy.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ManagedView {
    /// Whether any place set a policy.
    pub active: bool,
    /// Where it came from, in the order merged, with when each was last changed.
    pub origins: Vec<ManagedOrigin>,
    /// What was refused or could not be fetched.
    pub warnings: Vec<String>,
    /// The locked settings, each key present locked to its value.
    pub locks: Locks,
    /// The servers the organisation adds, by id: they cannot be removed or loosened.
    pub required_servers: Vec<String>,
    /// Whether the user may add servers of their own.
    pub allow_user_servers: bool,
    /// Whether servers may be added only from the organisation's registry.
    pub registry_only: bool,
    /// The organisation's rules, ranked with the user's (a deny or ask here is never undone).
    pub rules: Vec<toolgate_policy::Rule>,
    /// The collector the organisation streams the audit to, when it names one (never its
    /// headers).
    pub telemetry_endpoint: Option<String>,
    /// Whether the organisation sets the identity provider (the user cannot change it).
    pub identity_provider_locked: bool,
    /// When it was last read, in Unix milliseconds.
    #[ts(type = "number | null")]
    pub read_at_ms: Option<u64>,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ManagedOrigin {
    pub place: String,
    #[ts(type = "number | null")]
    pub modified_ms: Option<u64>,
}

fn ms(time: Option<std::time::SystemTime>) -> Option<u64> {
    time.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64)
}

impl Host {
    /// The managed policy in force now.
    pub fn managed(&self) -> Arc<Managed> {
        self.managed
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The managed policy as the window and the CLI show it.
    pub fn managed_view(&self) -> ManagedView {
        let managed = self.managed();
        let document = &managed.document;
        ManagedView {
            active: managed.is_active(),
            origins: managed
                .origins
                .iter()
                .map(|o| ManagedOrigin {
                    place: o.place.clone(),
                    modified_ms: ms(o.modified),
                })
                .collect(),
            warnings: managed.warnings.clone(),
            locks: document.settings.clone(),
            required_servers: document
                .servers
                .required
                .iter()
                .map(|s| s.id.clone())
                .collect(),
            allow_user_servers: document.servers.allow_user_servers,
            registry_only: document.registry.as_ref().is_some_and(|r| r.registry_only),
            rules: managed.rules(),
            telemetry_endpoint: document
                .telemetry
                .as_ref()
                .and_then(|t| t.otlp.as_ref())
                .and_then(|o| o.endpoint.clone()),
            identity_provider_locked: document.identity_provider.is_some(),
            read_at_ms: ms(managed.read_at),
        }
    }

    /// `disk` as the organisation has it: locked keys at their values, its servers present.
    pub(crate) fn as_managed(&self, mut disk: Settings) -> Settings {
        locks::apply(&self.managed().document, &mut disk);
        disk
    }

    /// Refuses a change (made to [`Self::as_managed`]'s settings) that loosens what the
    /// organisation set; otherwise takes its servers out again, for the user's file.
    /// A server the change adds must be one the organisation lets run (with `registryOnly`,
    /// one from its registry), so it is refused here rather than at its start.
    pub(crate) fn keep_managed(
        &self,
        before: &Settings,
        next: &mut Settings,
    ) -> Result<(), FileError> {
        let managed = self.managed();
        let mut broken: Vec<String> = locks::violations(&managed.document, next)
            .iter()
            .map(ToString::to_string)
            .collect();
        for added in next
            .servers
            .iter()
            .filter(|s| !before.servers.iter().any(|b| b.id == s.id))
        {
            if let Err(why) = managed.admit(added) {
                broken.push(format!("servers.{}: {why}", added.id));
            }
        }
        if !broken.is_empty() {
            return Err(FileError::Managed(broken));
        }
        locks::strip(&managed.document, next);
        Ok(())
    }

    /// Reads the policy again; when it changed, applies it: the settings shown, the rules,
    /// and every server (one it now refuses is stopped, one it lets through again started).
    pub async fn reload_managed(&self) {
        let (source, cache) = (self.managed_source.clone(), cache_path(self.data_dir()));
        let fresh = tokio::task::spawn_blocking(move || Managed::load(&source, Some(&cache)))
            .await
            .unwrap_or_default();
        let old = self.managed();
        if fresh.document == old.document
            && fresh.warnings == old.warnings
            && fresh.origins == old.origins
        {
            return;
        }
        for warning in fresh.warnings.iter().filter(|w| !old.warnings.contains(w)) {
            tracing::warn!("{warning}");
        }
        tracing::info!(
            places = ?fresh.origins.iter().map(|o| &o.place).collect::<Vec<_>>(),
            "the managed policy changed"
        );
        *self.managed.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(fresh);
        let disk = match toolgate_settings::file::load(self.settings_path()) {
            Ok(toolgate_settings::file::Loaded::Found(s)) => s,
            _ => {
                let mut current = self.settings().clone();
                locks::strip(&old.document, &mut current);
                current
            }
        };
        let applied = self.as_managed(disk);
        let added: Vec<_> = applied
            .servers
            .iter()
            .filter(|s| !self.settings().servers.iter().any(|c| c.id == s.id))
            .cloned()
            .collect();
        *self.settings() = applied;
        self.policy_changed();
        self.apply_telemetry();
        self.servers.manager.add(&added).await;
        self.servers.manager.enforce_admission().await;
    }

    /// When the policy names a remote document and no copy of it is kept yet (a first start),
    /// fetches it before any server starts, for at most a few seconds.
    pub(crate) async fn first_remote_policy(&self) {
        let Some(remote) = self.managed().document.remote.clone() else {
            return;
        };
        let cache = cache_path(self.data_dir());
        if cache.exists() {
            return;
        }
        match tokio::time::timeout(
            FIRST_FETCH,
            toolgate_managed::refresh_remote(&remote, &cache),
        )
        .await
        {
            Ok(Ok(())) => self.reload_managed().await,
            Ok(Err(e)) => self.note_remote_failure(e.to_string()).await,
            Err(_) => {
                self.note_remote_failure(format!("{} did not answer in time", remote.url))
                    .await
            }
        }
    }

    /// Fetches the organisation's remote document now (as every 15 minutes) and applies it;
    /// a failure keeps the last good copy and is noted in the policy's warnings.
    pub async fn fetch_remote_policy(&self) -> Result<(), RemoteFetchError> {
        let Some(remote) = self.managed().document.remote.clone() else {
            return Err(RemoteFetchError::NoneNamed);
        };
        match toolgate_managed::refresh_remote(&remote, &cache_path(self.data_dir())).await {
            Ok(()) => {
                self.reload_managed().await;
                Ok(())
            }
            Err(e) => {
                self.note_remote_failure(e.to_string()).await;
                Err(e)
            }
        }
    }

    /// For the doctor: whether the organisation's remote policy is applied, or why no server
    /// runs. `None` when the policy names no remote document.
    pub fn remote_policy_check(&self) -> Option<toolgate_mcp::doctor::Check> {
        let managed = self.managed();
        let remote = managed.document.remote.as_ref()?;
        let (ok, detail, fix) = match &managed.remote_unavailable {
            None => (true, format!("applied from {}", remote.url), None),
            Some(why) => (
                false,
                why.clone(),
                Some(format!(
                    "Let Toolgate reach {} (or ask your administrator to keep a verified copy where the system keeps it)",
                    remote.url
                )),
            ),
        };
        Some(toolgate_mcp::doctor::Check {
            name: "organisation's remote policy".to_owned(),
            ok,
            detail,
            fix,
        })
    }

    async fn note_remote_failure(&self, why: String) {
        tracing::warn!("the organisation's remote policy was not updated: {why}");
        let mut managed = (*self.managed()).clone();
        let warning = format!("the organisation's remote policy was not updated: {why}");
        if !managed.warnings.contains(&warning) {
            managed
                .warnings
                .retain(|w| !w.starts_with("the organisation's remote policy was not updated"));
            managed.warnings.push(warning);
            *self.managed.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(managed);
        }
    }

    /// Looks at the policy's files every two seconds and fetches the remote document every 15
    /// minutes, for as long as the host lives.
    pub(crate) async fn watch_managed(host: Weak<Host>) {
        let mut stamp = match host.upgrade() {
            Some(h) => h.managed_source.stamp(),
            None => return,
        };
        // Fetched at once (at start), then every 15 minutes.
        let mut fetched: Option<Instant> = None;
        loop {
            let Some(host) = host.upgrade() else {
                return;
            };
            let now = host.managed_source.stamp();
            if now != stamp {
                stamp = now;
                host.reload_managed().await;
            }
            let remote = host.managed().document.remote.is_some();
            if remote && fetched.is_none_or(|at| at.elapsed() >= remote::REFRESH) {
                fetched = Some(Instant::now());
                let _ = host.fetch_remote_policy().await;
            }
            drop(host);
            tokio::time::sleep(LOOK_EVERY).await;
        }
    }
}

/// The policy a host opens with.
pub(crate) fn load(source: &Source, data_dir: &std::path::Path) -> Managed {
    let managed = Managed::load(source, Some(&cache_path(data_dir)));
    for warning in &managed.warnings {
        tracing::warn!("{warning}");
    }
    managed
}
