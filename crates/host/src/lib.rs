//! The running Toolgate without a window: the one composition root that the app, the CLI and
//! the gateway build on, and the only place a gated agent is made ([`Host::agent`]).
//!
//! A [`Host`] owns, set up once and the same way for every front end:
//! - the settings file (read at open, re-read before each change so that the app and the CLI
//!   never undo each other's edits, saved atomically by `toolgate_settings::file`);
//! - the keychain, the history and audit database, and the [`ServerManager`] with its logs and
//!   its records of running process groups;
//! - the approval [`Gate`], and the servers' own requests (sampling, elicitation) wired through it
//!   by a [`ServerRequestGate`] whose rules and model are the host's;
//! - the approval rules as a [`PolicyStore`] (the saved rules, plus grants for this process only);
//! - the provider set-up: the user's provider, with its key from the keychain or the environment.
//!
//! What differs between front ends is passed in [`HostOptions`]: where logs go, which PATH the
//! servers get, whether first-run defaults are written, whether anyone can answer the gate. The
//! crate never depends on `tauri`: windows, trays and terminals answer the gate from outside.

mod agent;
mod bundles;
mod chat;
mod door;
mod managed;
mod options;
mod policy;
mod registry;
mod sign_in;
mod stop;
mod telemetry;
mod tool_changes;
pub use agent::{Caller, ClientView, Connection};
pub use bundles::{BundleInstallError, BundlePreview, InstalledBundle, BUNDLES};
pub use chat::Chat;
pub use door::{
    check_client_name, door_url, DoorSettingsError, DoorTokenError, DoorTokens, DoorView,
    IssuedToken,
};
pub use managed::{ManagedOrigin, ManagedView};
pub use options::HostOptions;
pub use packages::{PackageError, PackageView};
pub use registry::RegistryAddError;
pub use sign_in::{ClientSecretError, ServerSignInError, SIGN_IN_WAIT};
pub use stop::StopRequests;
pub use telemetry::STOP_GRACE;
pub use toolgate_bundle::BundleError;
pub use toolgate_managed::Source as ManagedSource;
pub use toolgate_oauth::SignedInInfo;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};

use toolgate_agent::{Exposure, Gate, ModelSource, NoModel, Offers, ServerRequestGate};
use toolgate_history::History;
use toolgate_llm::{HttpProvider, LlmError};
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_policy::{PolicySettings, Rule};
use toolgate_secrets::{SecretError, SecretStore};
use toolgate_settings::file::{FileError, Loaded};
use toolgate_settings::{ProviderKind, ProviderSettings, Settings};

mod rules;
pub use rules::{RuleEditError, RulePreview};
mod services;
pub use services::{Approvals, Servers};
// What the app's commands do beyond one call, tauri-free so any front end can use them.
mod approval_settings;
mod history;
mod import;
mod other_hosts;
mod packages;
mod provider_setup;
mod reach;
mod server_edits;
mod server_secrets;
pub use approval_settings::RevokeError;
pub use history::HistoryAccessError;
pub use import::{import_sources, ImportSource, ImportSourceError, ImportSources};
pub use other_hosts::{HostConnectError, HostPreview, HostView};
pub use provider_setup::{provider_presets, PresetView, ProviderView, SecretChangeError};
pub use server_edits::{ServerEditError, ToolCatalogView};
pub use server_secrets::SecretView;

/// The settings file, in the data folder.
pub const SETTINGS_FILE: &str = "settings.json";
/// The history and audit database, in the data folder.
pub const HISTORY_FILE: &str = "history.sqlite3";
/// Each local server's own data folder is `<data folder>/servers/<id>`.
pub const SERVER_DATA: &str = "servers";

/// The app's identifier: its data folder is `$XDG_DATA_HOME/<this>` (Tauri's `app_data_dir`).
pub const APP_IDENTIFIER: &str = "dev.toolgate.desktop";

/// The folder the app keeps its settings, history and logs in, found the way Tauri finds it
/// (`dirs::data_dir`: `$XDG_DATA_HOME` or `~/.local/share` on Linux, `~/Library/Application
/// Support` on macOS, `%APPDATA%` on Windows), for front ends that run without Tauri (the CLI,
/// the `connect` shim): they must find the app's folder, and with it its gateway.
pub fn default_data_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|base| base.join(APP_IDENTIFIER))
}

/// Why the user's provider cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("no API key for {base_url}: set one under Provider in Toolgate's window (or `toolgate secrets`), or set {env_var}")]
    NoKey {
        base_url: String,
        env_var: &'static str,
    },
    #[error(transparent)]
    Keychain(#[from] SecretError),
    #[error(transparent)]
    Llm(#[from] LlmError),
}

/// Why an import could not be applied; nothing was saved.
#[derive(Debug, thiserror::Error)]
pub enum ApplyImportError {
    #[error(transparent)]
    Import(#[from] toolgate_hosts::import::ImportError),
    #[error(transparent)]
    Keychain(#[from] SecretError),
    #[error(transparent)]
    Settings(#[from] FileError),
}

/// Why a change to one server was not made.
#[derive(Debug, thiserror::Error)]
pub enum ServerChangeError {
    #[error("no server '{0}' is configured")]
    Unknown(String),
    #[error("'{0}' is a remote server: it runs elsewhere, so it has no sandbox here")]
    Remote(String),
    #[error(transparent)]
    Settings(#[from] FileError),
}

/// What an applied import changed.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The servers added to the settings (not started).
    pub added: Vec<toolgate_settings::ServerConfig>,
    /// The names of the secrets now in the keychain (`${secret:NAME}`).
    pub secrets: Vec<String>,
}

/// The running Toolgate without a window. Front ends use it through its methods and its
/// services ([`Host::servers`], [`Host::approvals`]), never through the parts inside it.
pub struct Host {
    data_dir: PathBuf,
    log_dir: PathBuf,
    settings_path: PathBuf,
    settings: Mutex<Settings>,
    secrets: Arc<dyn SecretStore>,
    /// Every conversation and the audit log; or why the database could not be opened (chat
    /// still works, unsaved).
    history: Result<Arc<History>, String>,
    /// The approval gate, behind what front ends may do with it.
    approvals: Approvals,
    /// The server manager, behind what front ends may do with it.
    servers: Servers,
    /// The catalog and what derives from it, kept until the servers or the tool settings
    /// change: shared by every turn of the app or the CLI and every call of the gateway.
    offers: Arc<Offers>,
    /// What the user must be told about this start (a file that could not be read and where it
    /// was kept), once.
    notices: Vec<String>,
    /// Rules for this process only (the CLI's `--approve`), on top of the saved ones.
    grants: Mutex<Vec<Rule>>,
    /// The untrusted content each conversation has read, kept across its turns.
    exposures: Mutex<std::collections::HashMap<String, Arc<Exposure>>>,
    /// The saved rules and this process's grants as one set, made when first read after a
    /// change: every call reads it, so it is shared, never copied per call.
    policy: RwLock<Option<Arc<PolicySettings>>>,
    /// The HTTP door's tokens (`door.rs`).
    door_tokens: door::DoorTokens,
    /// The door's configured port, kept from every confined server (`door.rs`).
    door_port: Mutex<Option<toolgate_sandbox::Reservation>>,
    /// The organisation's managed policy in force, and where it is read from (`managed.rs`).
    managed: RwLock<Arc<toolgate_managed::Managed>>,
    managed_source: ManagedSource,
    /// The audit exporter (`telemetry.rs`).
    telemetry: telemetry::Telemetry,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Host {
    /// Reads the settings and opens the history, and sets up the gate and the server manager.
    /// Starts no server. Fails only when an unreadable settings file cannot be set aside, or
    /// the first-run settings cannot be written.
    pub fn open(options: HostOptions) -> Result<Arc<Self>, FileError> {
        let settings_path = options.data_dir.join(SETTINGS_FILE);
        let mut notices = Vec::new();
        let defaults = || {
            Settings::first_run(toolgate_settings::example_server(
                options.example_servers.as_deref(),
            ))
        };
        let first_run = || -> Result<Settings, FileError> {
            let settings = defaults();
            if options.save_first_run {
                toolgate_settings::file::save(&settings_path, &settings)?;
            }
            Ok(settings)
        };
        let settings = match toolgate_settings::file::load(&settings_path)? {
            Loaded::Found(settings) => settings,
            Loaded::Missing => first_run()?,
            unreadable @ Loaded::Unreadable { .. } => {
                // The file was kept as a backup; start from the defaults and say so.
                if let Some(notice) = unreadable.notice() {
                    tracing::error!("{notice}");
                    notices.push(notice);
                }
                first_run()?
            }
        };
        let managed = managed::load(&options.managed, &options.data_dir);
        notices.extend(managed.warnings.iter().cloned());
        let mut settings = settings;
        toolgate_managed::locks::apply(&managed.document, &mut settings);
        let history = if options.open_history {
            open_history(&options.data_dir.join(HISTORY_FILE), &mut notices)
        } else {
            Err("the history is not opened for this command".to_owned())
        };
        let gate = Arc::new(match &options.unattended {
            Some(why) => Gate::unattended(why.clone()),
            None => Gate::default(),
        });
        // Export starts with the host, for every front end that opens the history.
        Ok(Host::with_telemetry(Arc::new_cyclic(
            |host: &Weak<Host>| {
                // Servers' sampling and elicitation requests wait at the same gate as tool calls,
                // under the host's rules and with the user's model.
                let mut requests = ServerRequestGate::new(
                    gate.clone(),
                    Arc::new(policy::HostPolicy(host.clone())),
                    Arc::new(HostModel(host.clone())),
                );
                if let Ok(history) = &history {
                    requests = requests.with_audit(history.clone());
                }
                let requests = Arc::new(requests);
                let servers = ServerManager::new(ManagerOptions {
                    requests: requests.clone(),
                    // `${secret:NAME}` in a server's env and headers is read from here at each start.
                    secrets: Some(options.secrets.clone()),
                    log_dir: Some(options.log_dir.clone()),
                    // Running server processes, so a killed Toolgate's leftovers are stopped next
                    // time; shared by every front end on this folder, which never stop each other's.
                    state_dir: Some(options.data_dir.clone()),
                    // Each local server's own folder, the one place beside its roots its sandbox
                    // lets it write; the rest of Toolgate's folder is closed to every server.
                    server_data: Some(options.data_dir.join(SERVER_DATA)),
                    protected: vec![options.data_dir.clone()],
                    env: options.env.clone(),
                    // Every start asks the organisation's policy first.
                    admit: Some({
                        let host = host.clone();
                        Arc::new(
                            move |config: &toolgate_settings::ServerConfig,
                                  env: &toolgate_mcp::HostEnv| {
                                match host.upgrade() {
                                    Some(host) => host
                                        .managed()
                                        .admit_to_run(config, &env.path_var())
                                        .map_err(Into::into),
                                    None => Ok(()),
                                }
                            },
                        )
                    }),
                    // The settings' identity provider (the organisation's when its policy sets
                    // one), read at each enterprise-managed sign-in.
                    identity_provider: Some({
                        let host = host.clone();
                        Arc::new(move || {
                            host.upgrade()
                                .and_then(|host| host.settings().identity_provider.clone())
                        })
                    }),
                    ..ManagerOptions::default()
                });
                requests.attach(&servers);
                let door_port = door::hold_port(&servers, &settings);
                Host {
                    data_dir: options.data_dir.clone(),
                    log_dir: options.log_dir.clone(),
                    settings_path: settings_path.clone(),
                    settings: Mutex::new(settings),
                    secrets: options.secrets.clone(),
                    history,
                    approvals: Approvals { gate },
                    servers: Servers { manager: servers },
                    offers: Arc::default(),
                    notices,
                    grants: Mutex::default(),
                    exposures: Mutex::default(),
                    policy: RwLock::default(),
                    door_tokens: door::DoorTokens::new(options.secrets.clone()),
                    door_port: Mutex::new(door_port),
                    managed: RwLock::new(Arc::new(managed)),
                    managed_source: options.managed.clone(),
                    telemetry: telemetry::Telemetry::default(),
                }
            },
        )))
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    pub fn settings_path(&self) -> &Path {
        &self.settings_path
    }

    /// The servers this host runs: their state, starting and stopping them, and what the user
    /// reads and calls by hand.
    pub fn servers(&self) -> &Servers {
        &self.servers
    }

    /// The requests waiting for the user's answer, and the answers.
    pub fn approvals(&self) -> &Approvals {
        &self.approvals
    }

    /// What the user must be told about this start (a file that could not be read and where
    /// it was kept), once.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The settings as last read or saved.
    pub fn settings(&self) -> MutexGuard<'_, Settings> {
        lock(&self.settings)
    }

    /// Applies a change to the settings as they are in the file now (another front end may have
    /// changed it), validates it and saves it. On any failure nothing changes, in memory or in
    /// the file.
    ///
    /// On a worker of a multi-threaded runtime (the app's) the file work runs with the worker
    /// handed over (`block_in_place`), so no other task waits behind a write and an fsync; a
    /// one-shot CLI command on its own current-thread runtime does it in place.
    pub fn update_settings(
        &self,
        change: impl FnOnce(&mut Settings),
    ) -> Result<Settings, FileError> {
        let on_worker = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if on_worker {
            tokio::task::block_in_place(|| self.update_settings_here(change))
        } else {
            self.update_settings_here(change)
        }
    }

    fn update_settings_here(
        &self,
        change: impl FnOnce(&mut Settings),
    ) -> Result<Settings, FileError> {
        let mut current = self.settings();
        let next = match toolgate_settings::file::load(&self.settings_path) {
            Ok(Loaded::Found(on_disk)) => on_disk,
            Ok(other) => {
                if let Some(notice) = other.notice() {
                    tracing::error!("{notice}");
                }
                current.clone()
            }
            Err(e) => {
                tracing::error!("could not re-read the settings before saving: {e}");
                current.clone()
            }
        };
        // Changed as the organisation has them, so a change that loosens a lock is seen.
        let before = self.as_managed(next);
        let mut next = before.clone();
        change(&mut next);
        self.keep_managed(&before, &mut next)?;
        // Validates first; the file is replaced whole or not at all.
        toolgate_settings::file::save(&self.settings_path, &next)?;
        *current = self.as_managed(next.clone());
        self.policy_changed();
        self.apply_telemetry_for(&current.telemetry);
        *lock(&self.door_port) = door::hold_port(&self.servers.manager, &current);
        Ok(current.clone())
    }

    /// [`Self::update_settings`] on the blocking pool: the file is read, written and synced
    /// there, never on an async worker.
    pub async fn change_settings(
        self: &Arc<Self>,
        change: impl FnOnce(&mut Settings) + Send + 'static,
    ) -> Result<Settings, FileError> {
        let host = self.clone();
        match tokio::task::spawn_blocking(move || host.update_settings(change)).await {
            Ok(saved) => saved,
            Err(e) => Err(FileError::Io {
                action: "save",
                path: self.settings_path.clone(),
                source: std::io::Error::other(e.to_string()),
            }),
        }
    }

    /// Starts every enabled server of the settings, each in its own task; returns at once.
    /// The one start of the app, `toolgate serve` and the CLI's commands that run servers.
    /// Watches the organisation's policy from then on.
    pub fn run(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let host = self.clone();
        tokio::spawn(async move {
            // A remote policy never fetched yet is waited for (briefly) before any start.
            host.first_remote_policy().await;
            tokio::spawn(Host::watch_managed(Arc::downgrade(&host)));
            tokio::spawn(Host::watch_accepted_tools(Arc::downgrade(&host)));
            let configs = host.settings().servers.clone();
            host.servers.manager.start_all(&configs).await
        })
    }

    /// The one stop: every request still waiting is refused with `why`, every server process
    /// stopped, and what the history queued without waiting committed before this returns.
    pub async fn shutdown(&self, why: &str) {
        self.approvals.gate.deny_all(why);
        self.servers.manager.stop_all().await;
        if let Ok(history) = self.history.clone() {
            tokio::task::spawn_blocking(move || history.flush())
                .await
                .ok();
        }
        self.stop_telemetry(telemetry::STOP_GRACE).await;
    }

    /// Saves a local server's sandbox (`None`: the defaults for what it is) and, since a
    /// sandbox applies from a start, starts the server again with it when it is on. Returns
    /// whether it was restarted.
    pub async fn set_sandbox(
        &self,
        id: &str,
        sandbox: Option<toolgate_settings::SandboxSettings>,
    ) -> Result<bool, ServerChangeError> {
        let server = self.server(id)?;
        if server.sandbox_settings().is_none() {
            return Err(ServerChangeError::Remote(id.to_owned()));
        }
        let saved = self.update_settings(|s| {
            if let Some(slot) = s.servers.iter_mut().find(|s| s.id == id) {
                slot.sandbox = sandbox;
            }
        })?;
        let Some(next) = saved.servers.into_iter().find(|s| s.id == id) else {
            return Err(ServerChangeError::Unknown(id.to_owned()));
        };
        // Only a server this host runs is restarted (the CLI keeps none running).
        if !self.servers.snapshot().await.iter().any(|s| s.id == id) {
            return Ok(false);
        }
        // A new list of hosts reaches the running proxy: no restart.
        if let Some(sandbox) = next
            .sandbox_settings()
            .filter(|_| server.differs_only_in_reach(&next))
        {
            // Known to be running: checked just above.
            let _ = self.servers.manager.set_reach(id, sandbox).await;
            return Ok(false);
        }
        let _ = self.servers.manager.remove(id).await;
        self.servers.manager.add(std::slice::from_ref(&next)).await;
        Ok(next.enabled)
    }

    /// Saves what the gate should know of a server: whether its results are untrusted content,
    /// whether its calls can send data out, which results are reviewed. Applies from the next
    /// call; the server keeps running.
    pub async fn set_trust(
        &self,
        id: &str,
        trust: toolgate_settings::TrustMarks,
    ) -> Result<(), ServerChangeError> {
        self.server(id)?;
        self.update_settings(|s| {
            if let Some(slot) = s.servers.iter_mut().find(|s| s.id == id) {
                slot.trust = trust.clone();
            }
        })?;
        // A server this host does not run has nothing to update beyond the file.
        let accept_all = trust.accept_tool_changes;
        let _ = self.servers.manager.set_trust(id, trust).await;
        if accept_all {
            // What waits is accepted now too (and audited), as later changes will be.
            let _ = self.accept_tool_changes(id, None).await;
        }
        Ok(())
    }

    fn server(&self, id: &str) -> Result<toolgate_settings::ServerConfig, ServerChangeError> {
        self.settings()
            .servers
            .iter()
            .find(|s| s.id == id)
            .cloned()
            .ok_or_else(|| ServerChangeError::Unknown(id.to_owned()))
    }

    /// What conversation `id` has read, shared by its turns (a fresh one without an id). After
    /// a restart it starts empty and the agent recalls it from the audit log.
    pub fn exposure(&self, id: Option<&str>) -> Arc<Exposure> {
        match id {
            Some(id) => lock(&self.exposures)
                .entry(id.to_owned())
                .or_insert_with(|| Arc::new(Exposure::new()))
                .clone(),
            None => Arc::new(Exposure::new()),
        }
    }

    /// The user's provider as the settings name it, with its key from the keychain (read off
    /// the async workers: Secret Service calls block), else the provider's environment
    /// variable.
    pub async fn provider(&self) -> Result<(HttpProvider, ProviderSettings), ProviderError> {
        // Cloned first: the settings' guard must not be held across the await.
        let settings = self.settings().provider.clone();
        self.provider_for(settings).await
    }
}

/// Whether the provider refuses requests without a key: Anthropic's API and the hosted
/// OpenAI-compatible ones do; local servers and custom endpoints are sent none unless one is set.
pub fn key_needed(provider: &ProviderSettings) -> bool {
    match provider.kind {
        ProviderKind::Anthropic => true,
        ProviderKind::Openai => toolgate_llm::presets::for_base_url(&provider.base_url).needs_key,
    }
}

/// Opens the history; a damaged file is moved aside (the user told where) and a new one started;
/// any other failure leaves Toolgate working without history.
fn open_history(path: &Path, notices: &mut Vec<String>) -> Result<Arc<History>, String> {
    match History::open_or_recover(path) {
        Ok((history, backup)) => {
            if let Some(backup) = backup {
                tracing::error!(
                    backup = %backup.display(),
                    "the history file was damaged; it was moved aside and a new one started"
                );
                notices.push(format!(
                    "Your conversation history could not be read. It was kept as {} and a new \
                     history was started.",
                    backup.display()
                ));
            }
            Ok(Arc::new(history))
        }
        Err(e) => {
            tracing::error!("conversations will not be saved: {e}");
            Err(e.to_string())
        }
    }
}

/// The model a server's sampling request runs on: the one the user chose for chat, with its key.
struct HostModel(Weak<Host>);

#[async_trait::async_trait]
impl ModelSource for HostModel {
    async fn model(&self) -> Result<(Box<dyn toolgate_llm::Provider>, String), NoModel> {
        let host = self.0.upgrade().ok_or(NoModel::Stopping)?;
        let (provider, settings) = host
            .provider()
            .await
            .map_err(|e| NoModel::Provider(Box::new(e)))?;
        Ok((Box::new(provider), settings.model))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_policy::{Effect, Scope, Target};
    use toolgate_secrets::MemoryStore;

    fn options(dir: &Path) -> HostOptions {
        HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir)
        }
    }

    fn rule(id: &str) -> Rule {
        let target = Target::Server {
            server_id: "s".into(),
        };
        Rule::new(id, Effect::Allow, target, Scope::Always, 0)
    }

    #[tokio::test]
    async fn a_first_run_is_saved_only_when_asked_and_changes_start_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let quiet = Host::open(options(dir.path())).unwrap();
        assert!(
            !quiet.settings_path().exists(),
            "nothing written by just looking"
        );
        drop(quiet);

        let app = Host::open(HostOptions {
            save_first_run: true,
            ..options(dir.path())
        })
        .unwrap();
        assert!(app.settings_path().exists());
        // Another front end adds a server to the file meanwhile; a change here keeps it.
        let other = Host::open(options(dir.path())).unwrap();
        other
            .update_settings(|s| s.provider.model = "from-the-other".into())
            .unwrap();
        let saved = app.update_settings(|s| s.policy.paused = true).unwrap();
        assert_eq!(saved.provider.model, "from-the-other");
        assert!(app.settings().policy.paused);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_rules_are_shared_until_they_change_and_saved_off_the_workers() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(options(dir.path())).unwrap();
        let first = host.policy_settings();
        assert!(
            Arc::ptr_eq(&first, &host.policy_settings()),
            "read twice, copied never"
        );
        // On a worker of the app's kind of runtime: the write runs with the worker handed over.
        host.update_settings(|s| s.policy.paused = true).unwrap();
        let after = host.policy_settings();
        assert!(!Arc::ptr_eq(&first, &after) && after.paused);
        host.policy().add_rule(rule("always")).await.unwrap();
        assert_eq!(host.policy_settings().rules.len(), 1);
        host.grant_for_this_run([rule("run-only")]);
        assert_eq!(host.policy_settings().rules.len(), 2);
    }

    #[tokio::test]
    async fn grants_for_this_run_are_rules_but_never_saved() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(options(dir.path())).unwrap();
        let policy = host.policy();
        host.grant_for_this_run([rule("run-only")]);
        policy.add_rule(rule("always")).await.unwrap();
        let ids: Vec<String> = policy
            .settings()
            .rules
            .iter()
            .map(|r| r.id.clone())
            .collect();
        assert_eq!(ids, ["always", "run-only"]);
        let saved = toolgate_settings::file::load(host.settings_path()).unwrap();
        let Loaded::Found(saved) = saved else {
            panic!("the rule was saved")
        };
        let saved: Vec<String> = saved.policy.rules.into_iter().map(|r| r.id).collect();
        assert_eq!(saved, ["always"]);
        assert!(
            policy.add_rule(rule("always")).await.is_err(),
            "ids stay unique"
        );
    }

    #[tokio::test]
    async fn the_provider_needs_a_key_and_says_where_to_set_one() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(options(dir.path())).unwrap();
        let var = host.settings().provider.kind.env_var();
        if std::env::var_os(var).is_none() {
            let err = host.provider().await.unwrap_err().to_string();
            assert!(err.contains("no API key") && err.contains(var), "{err}");
        }
        let item = host.settings().provider.kind.secret_name();
        host.secrets.set(item, "sk-test-key").unwrap();
        let (_, settings) = host.provider().await.unwrap();
        assert_eq!(settings, host.settings().provider);
    }

    #[tokio::test]
    async fn a_servers_sandbox_and_trust_marks_are_saved_and_a_remote_server_has_no_sandbox() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(options(dir.path())).unwrap();
        host.update_settings(|s| {
            s.servers.push(toolgate_settings::ServerConfig::http(
                "remote",
                "https://x.example/mcp",
            ))
        })
        .unwrap();
        let sandbox = toolgate_settings::SandboxSettings {
            network: toolgate_settings::NetworkAccess::Loopback,
            ..toolgate_settings::SandboxSettings::default()
        };
        let restarted = host
            .set_sandbox("everything", Some(sandbox.clone()))
            .await
            .unwrap();
        assert!(!restarted, "not running here, so nothing to restart");
        assert_eq!(host.settings().servers[0].sandbox, Some(sandbox));
        assert!(matches!(
            host.set_sandbox("remote", None).await,
            Err(ServerChangeError::Remote(_))
        ));
        assert!(matches!(
            host.set_sandbox("nope", None).await,
            Err(ServerChangeError::Unknown(_))
        ));
        let trust = toolgate_settings::TrustMarks {
            reads_untrusted: Some(true),
            review_results: vec!["*".into()],
            ..Default::default()
        };
        host.set_trust("everything", trust.clone()).await.unwrap();
        let Loaded::Found(saved) = toolgate_settings::file::load(host.settings_path()).unwrap()
        else {
            panic!("saved")
        };
        assert_eq!(saved.servers[0].trust, trust);
    }

    #[tokio::test]
    async fn a_local_model_server_needs_no_key() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(options(dir.path())).unwrap();
        host.update_settings(|s| {
            s.provider = ProviderSettings {
                kind: ProviderKind::Openai,
                base_url: "http://127.0.0.1:11434/v1".into(),
                model: "llama3.2".into(),
            }
        })
        .unwrap();
        assert!(!key_needed(&host.settings().provider));
        if std::env::var_os("OPENAI_API_KEY").is_none() {
            let (provider, _) = host.provider().await.unwrap();
            assert!(!format!("{provider:?}").contains("sk-"));
        }
        host.update_settings(|s| s.provider.base_url = "https://api.openai.com/v1".into())
            .unwrap();
        assert!(key_needed(&host.settings().provider));
    }

    #[tokio::test]
    async fn an_unattended_host_refuses_what_nobody_can_answer() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            unattended: Some("no terminal".into()),
            ..options(dir.path())
        })
        .unwrap();
        assert_eq!(host.approvals().nobody_to_ask(), Some("no terminal"));
    }
}
