//! The manager itself and its record of servers: the entries, the generations they are started
//! under, the change counter (`version`) and the snapshot built from them, and where commands
//! are looked for.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, RwLock, Weak};
use std::time::Duration;

use tokio::sync::{broadcast, watch, Mutex};
use toolgate_secrets::SecretStore;
use toolgate_settings::ServerConfig;

use super::entry::Entry;
use crate::confine::{self, Protected};
use crate::host_env::{HostEnv, LoginPath};
use crate::logs::ServerLog;
use crate::orphans::{self, Registry};
use crate::McpError;
use crate::{ServerEvent, ServerSnapshot, ServerStatus};
use toolgate_mcp_client::asker::{DeclineServerRequests, InFlight, ServerRequests};

/// Why an [`Admission`] refused a server: whatever error its maker has, shown in its own words
/// as the server's status.
pub type Refusal = Box<dyn std::error::Error + Send + Sync>;

/// Says whether a server may start, and why not, given the PATH its program will be found on
/// (what runs is what the organisation's policy checks, not only what the settings say).
pub type Admission = Arc<dyn Fn(&ServerConfig, &HostEnv) -> Result<(), Refusal> + Send + Sync>;

/// The organisation's identity provider as the settings (or the managed policy) say now, for
/// servers signed in to by enterprise-managed authorization.
pub type IdentityProviderSource =
    Arc<dyn Fn() -> Option<toolgate_settings::IdentityProvider> + Send + Sync>;

/// How the manager is set up by the app or the CLI.
pub struct ManagerOptions {
    /// Where each server's stderr goes, as `<id>.log`, rotated. None keeps it in memory only.
    pub log_dir: Option<PathBuf>,
    /// Where running process groups are recorded, and swept from at start-up.
    pub state_dir: Option<PathBuf>,
    /// Where commands are looked for. None: the login shell's PATH, kept in `state_dir` from an
    /// earlier start while the shell's start-up files are unchanged, else asked (see
    /// `host_env.rs`).
    pub env: Option<HostEnv>,
    /// Answers sampling and elicitation requests.
    pub requests: Arc<dyn ServerRequests>,
    /// Where `${secret:NAME}` in a server's env and headers is looked up when it starts. None:
    /// such a server fails to start, saying there is no keychain.
    pub secrets: Option<Arc<dyn SecretStore>>,
    /// How long a server gets to exit after stdin closes, and again after SIGTERM.
    pub stop_grace: Duration,
    /// The wait before the first restart after a crash; doubled for each crash in a row.
    pub restart_delay: Duration,
    /// Where each local server gets a data folder of its own (`<this>/<id>`), the only place
    /// beside its roots its sandbox lets it write. None: a temporary folder for each start.
    pub server_data: Option<PathBuf>,
    /// Whether a server may start, asked at every start (the organisation's managed policy);
    /// a refused server is shown as failed with the reason, and not retried. None: all may.
    pub admit: Option<Admission>,
    /// Where enterprise-managed sign-in goes (read at each connection). None: nowhere.
    pub identity_provider: Option<IdentityProviderSource>,
    /// Folders no sandbox grant Toolgate derives may contain (its own data folder), on top of
    /// the home folder's private places; a grant the user makes that opens one is warned about.
    pub protected: Vec<PathBuf>,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        Self {
            log_dir: None,
            state_dir: None,
            env: None,
            requests: Arc::new(DeclineServerRequests),
            secrets: None,
            stop_grace: Duration::from_secs(2),
            restart_delay: Duration::from_secs(1),
            server_data: None,
            admit: None,
            identity_provider: None,
            protected: Vec::new(),
        }
    }
}

/// Owns every MCP server. Create it with [`ServerManager::new`]; share the `Arc`.
pub struct ServerManager {
    pub(super) entries: Mutex<BTreeMap<String, Entry>>,
    /// Bumped on every status or list change, so UIs can refresh.
    changes: watch::Sender<u64>,
    pub(super) events: broadcast::Sender<ServerEvent>,
    pub(super) options: ManagerOptions,
    /// The running process groups, recorded so a killed run's can be swept up.
    groups: StdMutex<Registry>,
    paths: LoginPath,
    /// A background read of the login shell's PATH was started (the kept one is stale).
    refreshing: std::sync::atomic::AtomicBool,
    /// Generations come from one counter, so an entry replaced by `start_all` never reuses one.
    generations: AtomicU64,
    pub(super) me: Weak<ServerManager>,
    /// What no derived sandbox grant may open.
    pub(super) protected: Protected,
    /// The calls running on each server, and who answers their questions.
    pub(super) in_flight: Arc<InFlight>,
    /// Subscribers to each (server, resource URI), for `passing.rs`.
    pub(super) subscriptions: StdMutex<std::collections::HashMap<(String, String), usize>>,
    /// Each 2026-07-28 server's stream of resource updates, for `updates.rs`.
    pub(super) resource_watches:
        Mutex<std::collections::HashMap<String, tokio_util::task::AbortOnDropHandle<()>>>,
    /// What the user accepted of each server's tools (`baseline.rs`).
    pub(super) baselines: StdMutex<super::baseline::Baselines>,
    /// Each network-"hosts" server's proxy and the names it wants (`egress.rs`).
    pub(super) reaches: super::egress::Reaches,
    /// Toolgate's own loopback ports, refused to every confined server (`toolgate_sandbox::
    /// Reserved`): each proxy's, held by its server's start; the HTTP door's, held by the host.
    pub(super) reserved: toolgate_sandbox::Reserved,
}

impl ServerManager {
    /// Toolgate's own loopback ports, which no confined server may reach or bind: hold one
    /// (the HTTP door's) for as long as it must stay Toolgate's.
    pub fn reserved_ports(&self) -> &toolgate_sandbox::Reserved {
        &self.reserved
    }

    /// A manager with no servers yet. Sweeps up server processes a killed previous run left
    /// behind, when `options.state_dir` is set.
    pub fn new(options: ManagerOptions) -> Arc<Self> {
        if let Some(dir) = &options.state_dir {
            let swept = orphans::sweep(dir);
            if !swept.is_empty() {
                tracing::warn!(
                    count = swept.len(),
                    "stopped servers left by a previous run"
                );
            }
        }
        let groups = StdMutex::new(Registry::new(options.state_dir.as_deref()));
        let paths = LoginPath::new(options.env.clone(), options.state_dir.as_deref());
        let installed = options
            .server_data
            .as_ref()
            .and_then(|d| d.parent())
            .map(|toolgate| vec![toolgate.join("bundles"), toolgate.join("packages")])
            .unwrap_or_default();
        let protected = Protected::of_this_user(&options.protected).with_installed(installed);
        let baselines = StdMutex::new(super::baseline::Baselines::load(
            options.state_dir.as_deref(),
        ));
        let manager = Arc::new_cyclic(|me| Self {
            baselines,
            reaches: StdMutex::default(),
            reserved: toolgate_sandbox::Reserved::new(),
            protected,
            entries: Mutex::new(BTreeMap::new()),
            changes: watch::channel(0).0,
            events: broadcast::channel(1024).0,
            options,
            groups,
            paths,
            refreshing: std::sync::atomic::AtomicBool::new(false),
            generations: AtomicU64::new(1),
            me: me.clone(),
            in_flight: Arc::default(),
            subscriptions: StdMutex::default(),
            resource_watches: Mutex::default(),
        });
        // Found now, while the caller sets up the rest, rather than when the first server
        // starts: kept from the last start this is a few file checks; the first time ever it
        // is the login shell's answer.
        if tokio::runtime::Handle::try_current().is_ok() {
            let me = Arc::downgrade(&manager);
            tokio::spawn(async move {
                if let Some(me) = me.upgrade() {
                    me.host_env().await;
                }
            });
        }
        manager
    }

    /// A receiver that changes whenever a server's status or lists change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// A number that changes whenever a server's status or lists change (it never repeats), so
    /// what is built from a [`Self::snapshot`] can be kept until it does. Read it before taking
    /// the snapshot.
    pub fn version(&self) -> u64 {
        *self.changes.borrow()
    }

    /// Progress, log messages and output lines as servers send them, plus change notices.
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.events.subscribe()
    }

    pub(super) fn changed(&self, server: &str) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
        let _ = self.events.send(ServerEvent::Changed {
            server: server.to_owned(),
        });
    }

    /// Where commands are looked for now: given, kept from an earlier start, or the login
    /// shell's answer. When the kept one is stale, the shell is asked in the background.
    pub async fn host_env(&self) -> &HostEnv {
        let (env, fresh) = self.paths.now().await;
        if !fresh && !self.refreshing.swap(true, Ordering::AcqRel) {
            let me = self.me.clone();
            tokio::spawn(async move {
                if let Some(me) = me.upgrade() {
                    me.paths.fresh().await;
                }
            });
        }
        env
    }

    /// [`Self::host_env`] when it is known already; `None` before the first start asked for it.
    pub fn known_host_env(&self) -> Option<&HostEnv> {
        self.paths.known()
    }

    /// Where a command is looked for: [`Self::host_env`], or, when the command is not there and
    /// that PATH is a stale one, the login shell's answer of this run (waited for).
    pub(crate) async fn host_env_for(
        &self,
        command: &str,
        cwd: Option<&std::path::Path>,
    ) -> &HostEnv {
        let (env, fresh) = self.paths.now().await;
        if fresh || env.resolve(command, cwd).is_ok() {
            return self.host_env().await;
        }
        self.paths.fresh().await
    }

    pub(super) fn next_generation(&self) -> u64 {
        self.generations.fetch_add(1, Ordering::Relaxed)
    }

    pub(super) fn groups(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn new_entry(&self, config: &ServerConfig) -> Entry {
        Entry {
            log: ServerLog::new(self.options.log_dir.as_deref(), &config.id),
            roots: Arc::new(RwLock::new(config.roots.clone())),
            config: config.clone(),
            status: ServerStatus::Stopped,
            implementation: None,
            protocol_version: None,
            tools: Vec::new(),
            held: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            prompts: Vec::new(),
            conn: None,
            starting: None,
            generation: self.next_generation(),
            backoff: Default::default(),
            sandbox: None,
            installed: None,
            session: None,
            needs_scope: None,
            refused: Default::default(),
            blocked: false,
        }
    }

    /// Changes what the gate knows of a server (its trust marks), for the next snapshot.
    pub async fn set_trust(
        &self,
        id: &str,
        trust: toolgate_settings::TrustMarks,
    ) -> Result<(), McpError> {
        self.entries
            .lock()
            .await
            .get_mut(id)
            .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?
            .config
            .trust = trust;
        self.changed(id);
        Ok(())
    }

    pub async fn snapshot(&self) -> Vec<ServerSnapshot> {
        self.entries
            .lock()
            .await
            .values()
            .map(|e| ServerSnapshot {
                id: e.config.id.clone(),
                name: e.config.name.clone(),
                enabled: e.config.enabled,
                status: e.status.clone(),
                implementation: e.implementation.clone(),
                protocol_version: e.protocol_version.clone(),
                tools: e.tools.clone(),
                resources: e.resources.clone(),
                resource_templates: e.resource_templates.clone(),
                prompts: e.prompts.clone(),
                roots: e.roots.read().unwrap_or_else(|p| p.into_inner()).clone(),
                signed_in: e.session.as_ref().and_then(toolgate_oauth::Session::info),
                needs_scope: e.needs_scope.clone(),
                refused_tools: e
                    .refused
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .iter()
                    .map(|(name, reason)| crate::types::RefusedTool {
                        name: name.clone(),
                        reason: reason.clone(),
                    })
                    .collect(),
                launch: launch_of(&e.config),
                sandbox: e
                    .sandbox
                    .clone()
                    .or_else(|| confine::report_of(&e.config, &self.protected)),
                reads_untrusted: e.config.reads_untrusted(),
                trusted_source: e.config.trust.trusted_source && !e.config.reads_untrusted(),
                sends_out: e.config.sends_out()
                    || (e.config.trust.sends_out.is_none()
                        && e.config.sandbox_settings().is_some()
                        && !confine::network_enforced()),
                review_results: e.config.trust.review_results.clone(),
                scan_secrets: e.config.trust.scan_secrets.unwrap_or(true),
                held_tools: e
                    .held
                    .iter()
                    .map(|(t, before)| super::baseline::change(t, before.clone()))
                    .collect(),
                wanted_hosts: self.wanted_hosts(&e.config.id),
                installed: e.installed.as_ref().map(|r| crate::types::Installed {
                    package: r.package.clone(),
                    version: r.version.clone(),
                    registry: match r.ecosystem {
                        toolgate_install::Ecosystem::Npm => "npm".into(),
                        toolgate_install::Ecosystem::Pypi => "PyPI".into(),
                    },
                }),
            })
            .collect()
    }

    /// The last lines a server wrote to stderr (and stray stdout lines), oldest first.
    pub async fn stderr_tail(&self, id: &str) -> Vec<String> {
        match self.entries.lock().await.get(id) {
            Some(e) => e.log.tail(usize::MAX),
            None => Vec::new(),
        }
    }
}

/// The identity of what a server runs: its command and arguments, or its URL.
fn launch_of(config: &ServerConfig) -> crate::types::Launch {
    match &config.transport {
        toolgate_settings::Transport::Stdio { command, args, .. } => crate::types::Launch::Stdio {
            command: command.clone(),
            args: args.clone(),
        },
        toolgate_settings::Transport::Http { url, .. } => {
            crate::types::Launch::Http { url: url.clone() }
        }
    }
}
