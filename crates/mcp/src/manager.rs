//! The supervisor: one entry per configured server, one task per live connection.
//!
//! Each start bumps the entry's `generation`. A connection task only ever changes its entry while
//! the generation is still its own, so a stop, restart or reconfiguration that happened meanwhile
//! always wins and stale tasks cannot resurrect a server.

mod calls;
mod connect;
mod listen;
mod tasks;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, RwLock, Weak};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use rmcp::service::{Peer, QuitReason};
use rmcp::RoleClient;
use serde_json::Value;
use tokio::sync::{broadcast, oneshot, watch, Mutex};
use tokio_util::sync::CancellationToken;
use toolgate_secrets::SecretStore;
use toolgate_settings::ServerConfig;

use self::connect::Connected;
use crate::client::{DeclineServerRequests, ListKind, ServerRequests};
use crate::confine::{self, Protected, SandboxReport};
use crate::host_env::{HostEnv, LoginPath};
use crate::logs::ServerLog;
use crate::orphans::{self, Registry};
use crate::stdio::{self, StdioProcess};
use crate::types::{
    CallOptions, PromptInfo, ResourceInfo, ResourceTemplateInfo, ServerEvent, ServerSnapshot,
    ServerStatus, ToolInfo, ToolOutput,
};
use crate::McpError;

/// A server that crashes this many times in a row, each within [`STABLE_AFTER`] of starting,
/// stays failed until the user restarts it.
const MAX_RESTARTS: u32 = 5;
/// A server up this long has recovered: its next crash starts the backoff afresh.
const STABLE_AFTER: Duration = Duration::from_secs(60);
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
            protected: Vec::new(),
        }
    }
}

struct Entry {
    config: ServerConfig,
    status: ServerStatus,
    implementation: Option<String>,
    protocol_version: Option<String>,
    tools: Vec<ToolInfo>,
    resources: Vec<ResourceInfo>,
    resource_templates: Vec<ResourceTemplateInfo>,
    prompts: Vec<PromptInfo>,
    conn: Option<Conn>,
    /// A start in progress, so a stop can cut it short and wait for its process to be gone.
    starting: Option<Starting>,
    generation: u64,
    /// Crashes in a row, for the backoff.
    crashes: u32,
    log: ServerLog,
    roots: Arc<RwLock<Vec<PathBuf>>>,
    /// The sandbox as applied at the last start.
    sandbox: Option<SandboxReport>,
    /// A remote server's sign-in while connected.
    session: Option<toolgate_oauth::Session>,
    /// The scope a call was refused for (403 `insufficient_scope`), until the next start.
    needs_scope: Option<String>,
    refused: crate::http::Refused,
}

/// What a change of roots did to a running server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootsChange {
    /// It was told (`notifications/roots/list_changed`), or is not running.
    Told,
    /// Its sandbox is built from its roots, so it was restarted with the new ones.
    Restarted,
}

struct Conn {
    peer: Peer<RoleClient>,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Conn {
    async fn shut(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

struct Starting {
    cancel: CancellationToken,
    /// Closed when the start has finished, its process stopped if it was cancelled.
    done: watch::Receiver<()>,
}

/// What a stop took from an entry: to be shut down without holding the lock.
#[derive(Default)]
struct Retired {
    conn: Option<Conn>,
    starting: Option<Starting>,
}

impl Retired {
    async fn finish(self) {
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
    fn retire(&mut self, generation: u64, status: ServerStatus) -> Retired {
        self.generation = generation;
        self.status = status;
        self.tools.clear();
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

/// Owns every MCP server. Create it with [`ServerManager::new`]; share the `Arc`.
pub struct ServerManager {
    entries: Mutex<BTreeMap<String, Entry>>,
    /// Bumped on every status or list change, so UIs can refresh.
    changes: watch::Sender<u64>,
    events: broadcast::Sender<ServerEvent>,
    options: ManagerOptions,
    registry: StdMutex<Registry>,
    paths: LoginPath,
    /// A background read of the login shell's PATH was started (the kept one is stale).
    refreshing: std::sync::atomic::AtomicBool,
    /// Generations come from one counter, so an entry replaced by `start_all` never reuses one.
    generations: AtomicU64,
    me: Weak<ServerManager>,
    /// What no derived sandbox grant may open.
    protected: Protected,
}

impl ServerManager {
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
        let registry = StdMutex::new(Registry::new(options.state_dir.as_deref()));
        let paths = LoginPath::new(options.env.clone(), options.state_dir.as_deref());
        let protected = Protected::of_this_user(&options.protected);
        let manager = Arc::new_cyclic(|me| Self {
            protected,
            entries: Mutex::new(BTreeMap::new()),
            changes: watch::channel(0).0,
            events: broadcast::channel(1024).0,
            options,
            registry,
            paths,
            refreshing: std::sync::atomic::AtomicBool::new(false),
            generations: AtomicU64::new(1),
            me: me.clone(),
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

    fn changed(&self, server: &str) {
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

    fn next_generation(&self) -> u64 {
        self.generations.fetch_add(1, Ordering::Relaxed)
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the configured servers and starts every enabled one, concurrently. Returns when
    /// each has either started or failed.
    pub async fn start_all(&self, configs: &[ServerConfig]) {
        self.stop_all().await;
        self.entries.lock().await.clear();
        self.add(configs).await;
    }

    /// Adds servers next to the running ones (after an import, say) and starts the enabled ones;
    /// a server whose id is already configured is left as it is.
    pub async fn add(&self, configs: &[ServerConfig]) {
        let mut added: Vec<&ServerConfig> = Vec::new();
        {
            let mut entries = self.entries.lock().await;
            for config in configs {
                if !entries.contains_key(&config.id) {
                    entries.insert(config.id.clone(), self.new_entry(config));
                    added.push(config);
                }
            }
        }
        self.changed("");
        // Each start is a task of its own, so the servers' spawns (a fork each, not cheap for a
        // large app) and handshakes run on every worker at once, with nothing in series.
        let starts: Vec<_> = added
            .iter()
            .filter(|c| c.enabled)
            .map(|c| {
                let (me, id) = (self.me.upgrade(), c.id.clone());
                tokio::spawn(async move {
                    if let Some(me) = me {
                        me.start(&id).await;
                    }
                })
            })
            .collect();
        for start in starts {
            let _ = start.await;
        }
    }

    fn new_entry(&self, config: &ServerConfig) -> Entry {
        Entry {
            log: ServerLog::new(self.options.log_dir.as_deref(), &config.id),
            roots: Arc::new(RwLock::new(config.roots.clone())),
            config: config.clone(),
            status: ServerStatus::Stopped,
            implementation: None,
            protocol_version: None,
            tools: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            prompts: Vec::new(),
            conn: None,
            starting: None,
            generation: self.next_generation(),
            crashes: 0,
            sandbox: None,
            session: None,
            needs_scope: None,
            refused: Default::default(),
        }
    }

    /// Starts one configured server, stopping it first if it runs. This is also the user's
    /// "restart": it clears the crash count.
    pub async fn restart(&self, id: &str) -> Result<(), McpError> {
        self.entries
            .lock()
            .await
            .get_mut(id)
            .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?
            .crashes = 0;
        self.start(id).await;
        Ok(())
    }

    /// Starts one configured server (stopping it first if it runs) and waits until it is
    /// ready or has failed.
    pub fn start<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        self.start_if(id, None)
    }

    /// Starts a server if its generation is still `expected` (a restart scheduled after a crash
    /// must not revive a server stopped meanwhile). Boxed: a crash restarts the server from inside
    /// the task a start spawns.
    fn start_if<'a>(&'a self, id: &'a str, expected: Option<u64>) -> BoxFuture<'a, ()> {
        Box::pin(self.start_inner(id, expected))
    }

    async fn start_inner(&self, id: &str, expected: Option<u64>) {
        let cancel = CancellationToken::new();
        let (_done, done) = watch::channel(());
        let (config, log, roots, refused, generation, retired) = {
            let mut entries = self.entries.lock().await;
            let Some(entry) = entries.get_mut(id) else {
                return;
            };
            if expected.is_some_and(|g| g != entry.generation) {
                return;
            }
            let generation = self.next_generation();
            let retired = entry.retire(generation, ServerStatus::Starting);
            entry.starting = Some(Starting {
                cancel: cancel.clone(),
                done,
            });
            entry.session = None;
            entry.needs_scope = None;
            entry
                .refused
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
            (
                entry.config.clone(),
                entry.log.clone(),
                entry.roots.clone(),
                entry.refused.clone(),
                generation,
                retired,
            )
        };
        self.changed(id);
        retired.finish().await;
        // Only now: the old process's last words must not explain the new one's failure.
        log.clear();
        let mut sandbox = None;
        let outcome = self
            .connect(&config, &log, roots, refused, &cancel, &mut sandbox)
            .await;
        let mut entries = self.entries.lock().await;
        let Some(entry) = entries.get_mut(id).filter(|e| e.generation == generation) else {
            // Stopped or restarted while starting: this connection is no longer wanted.
            drop(entries);
            if let Ok((connected, ..)) = outcome {
                self.close_connected(id, connected).await;
            }
            return;
        };
        entry.starting = None;
        if sandbox.is_some() {
            entry.sandbox = sandbox;
        }
        let retry = match outcome {
            Ok((connected, listed)) => {
                tracing::info!(server = id, tools = listed.tools.len(), "server ready");
                let peer = connected.service.peer().clone();
                entry.implementation = listed.implementation;
                entry.protocol_version = listed.protocol_version;
                entry.tools = listed.tools;
                entry.resources = listed.resources;
                entry.resource_templates = listed.resource_templates;
                entry.prompts = listed.prompts;
                entry.session = connected.session.clone();
                entry.status = ServerStatus::Ready;
                let (stop, stop_rx) = oneshot::channel();
                let task = tokio::spawn(supervise(
                    self.me.clone(),
                    id.to_owned(),
                    generation,
                    connected,
                    stop_rx,
                ));
                entry.conn = Some(Conn { peer, stop, task });
                None
            }
            Err(connect::Failure {
                reason,
                sign_in: Some(again),
            }) => {
                // Nothing is retried until the user signs in: a retry would only be refused.
                tracing::info!(server = id, %reason, "server needs a sign-in");
                entry.status = ServerStatus::SignIn { reason, again };
                None
            }
            Err(connect::Failure { reason, .. }) => {
                // The reason is the server's status, which the window and the CLI show; a
                // warning too would say it twice.
                tracing::info!(server = id, %reason, "server failed to start");
                if entry.crashes > 0 {
                    // A restart after a crash that fails (a port still taken, a fetch that
                    // failed) counts as another crash and keeps backing off.
                    self.back_off(entry, reason)
                } else {
                    entry.status = ServerStatus::Failed { reason };
                    None
                }
            }
        };
        drop(entries);
        self.changed(id);
        if let Some(delay) = retry {
            self.restart_later(id, generation, delay);
        }
    }

    /// Stops one server and leaves it stopped.
    pub async fn stop(&self, id: &str) -> Result<(), McpError> {
        let retired = {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(id)
                .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?;
            entry.retire(self.next_generation(), ServerStatus::Stopped)
        };
        self.changed(id);
        retired.finish().await;
        Ok(())
    }

    /// Stops a server and forgets it (the user removed it).
    pub async fn remove(&self, id: &str) -> Result<(), McpError> {
        self.stop(id).await?;
        self.entries.lock().await.remove(id);
        self.changed(id);
        Ok(())
    }

    /// Switches a server on (starting it) or off (stopping it), and remembers the choice for
    /// the snapshot.
    pub async fn set_enabled(&self, id: &str, enabled: bool) -> Result<(), McpError> {
        {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(id)
                .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?;
            entry.config.enabled = enabled;
        }
        if enabled {
            self.start(id).await;
            Ok(())
        } else {
            self.stop(id).await
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

    /// Stops every server, starting ones included: closes stdin, waits, then terminates each
    /// process group. Returns when every process is gone.
    pub async fn stop_all(&self) {
        let retired: Vec<Retired> = {
            let mut entries = self.entries.lock().await;
            entries
                .values_mut()
                .map(|e| e.retire(self.next_generation(), ServerStatus::Stopped))
                .collect()
        };
        futures::future::join_all(retired.into_iter().map(Retired::finish)).await;
        self.changed("");
    }

    /// Changes the folders a server is offered as roots, and tells it so. A confined server's
    /// sandbox is built from its roots, so a running one is restarted to apply them (the log
    /// says why).
    pub async fn set_roots(&self, id: &str, roots: Vec<PathBuf>) -> Result<RootsChange, McpError> {
        let (peer, restart) = {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(id)
                .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?;
            *entry.roots.write().unwrap_or_else(|p| p.into_inner()) = roots.clone();
            let changed = entry.config.roots != roots;
            entry.config.roots = roots;
            let confined = entry.config.sandbox_settings().is_some_and(|s| s.enabled);
            let live = entry.conn.is_some() || entry.starting.is_some();
            if changed && confined && live {
                (None, Some(entry.log.clone()))
            } else {
                (entry.conn.as_ref().map(|c| c.peer.clone()), None)
            }
        };
        if let Some(log) = restart {
            self.start(id).await;
            // After the start, which clears the previous run's lines from the log's tail.
            log.push(
                "(toolgate) restarted: its folders changed, and its sandbox is built from them",
            );
            return Ok(RootsChange::Restarted);
        }
        if let Some(peer) = peer {
            peer.notify_roots_list_changed()
                .await
                .map_err(|e| McpError::Request {
                    server: id.to_owned(),
                    what: "be told its roots changed",
                    detail: e.to_string(),
                })?;
        }
        Ok(RootsChange::Told)
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
                sends_out: e.config.sends_out()
                    || (e.config.trust.sends_out.is_none()
                        && e.config.sandbox_settings().is_some()
                        && !confine::network_enforced()),
                review_results: e.config.trust.review_results.clone(),
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

    /// Calls a tool with the server's default timeouts. The caller is responsible for having
    /// obtained the user's approval.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<ToolOutput, McpError> {
        self.call_tool_with(server, tool, arguments, CallOptions::default())
            .await
    }

    async fn stop_process(&self, id: &str, process: StdioProcess, grace: Duration) -> String {
        let leader = process.leader;
        let status = process.stop(grace).await;
        self.registry().remove(id, leader);
        stdio::describe_exit(status)
    }

    async fn close_connected(&self, id: &str, mut connected: Connected) {
        let _ = connected
            .service
            .close_with_timeout(self.options.stop_grace)
            .await;
        if let Some(p) = connected.process {
            self.stop_process(id, p, self.options.stop_grace).await;
        }
    }

    async fn crashed(&self, id: &str, generation: u64, reason: String, uptime: Duration) {
        let retry = {
            let mut entries = self.entries.lock().await;
            let Some(entry) = entries.get_mut(id).filter(|e| e.generation == generation) else {
                return;
            };
            let reason = connect::with_last_words(reason, None, &entry.log);
            tracing::warn!(server = id, %reason, "server stopped unexpectedly");
            entry.conn = None;
            entry.tools.clear();
            entry.resources.clear();
            entry.resource_templates.clear();
            entry.prompts.clear();
            if uptime >= STABLE_AFTER {
                entry.crashes = 0;
            }
            self.back_off(entry, reason)
        };
        self.changed(id);
        if let Some(delay) = retry {
            self.restart_later(id, generation, delay);
        }
    }

    /// Counts a crash; sets the entry to restarting (returning the delay) or, past the limit or
    /// without auto-restart, to failed.
    fn back_off(&self, entry: &mut Entry, reason: String) -> Option<Duration> {
        entry.crashes += 1;
        if entry.config.auto_restart && entry.crashes <= MAX_RESTARTS {
            let delay = self.options.restart_delay * 2u32.pow(entry.crashes - 1);
            entry.status = ServerStatus::Restarting {
                attempt: entry.crashes,
                retry_in_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason,
            };
            Some(delay)
        } else {
            let reason = if entry.config.auto_restart {
                format!(
                    "{reason} (gave up after {MAX_RESTARTS} restarts; restart it by hand once fixed)"
                )
            } else {
                reason
            };
            entry.status = ServerStatus::Failed { reason };
            None
        }
    }

    fn restart_later(&self, id: &str, generation: u64, delay: Duration) {
        let me = self.me.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Some(me) = me.upgrade() {
                me.start_if(&id, Some(generation)).await;
            }
        });
    }

    /// Re-reads one list after the server said it changed.
    async fn refresh(
        self: Arc<Self>,
        id: String,
        generation: u64,
        peer: Peer<RoleClient>,
        kind: ListKind,
    ) {
        let outcome = match kind {
            ListKind::Tools => peer
                .list_all_tools()
                .await
                .map(|t| Lists::Tools(t.into_iter().map(ToolInfo::from).collect())),
            ListKind::Resources => match peer.list_all_resources().await {
                Ok(r) => {
                    // Templates are resources too: a server that changed one list may have
                    // changed the other; one that cannot list templates simply has none.
                    let templates = peer.list_all_resource_templates().await.unwrap_or_default();
                    Ok(Lists::Resources(
                        r.into_iter().map(ResourceInfo::from).collect(),
                        templates
                            .into_iter()
                            .map(ResourceTemplateInfo::from)
                            .collect(),
                    ))
                }
                Err(e) => Err(e),
            },
            ListKind::Prompts => peer
                .list_all_prompts()
                .await
                .map(|p| Lists::Prompts(p.into_iter().map(PromptInfo::from).collect())),
        };
        let lists = match outcome {
            Ok(lists) => lists,
            Err(e) => {
                tracing::warn!(server = %id, ?kind, "could not re-read a changed list: {e}");
                return;
            }
        };
        {
            let mut entries = self.entries.lock().await;
            let Some(entry) = entries.get_mut(&id).filter(|e| e.generation == generation) else {
                return;
            };
            match lists {
                Lists::Tools(t) => {
                    tracing::info!(server = %id, tools = t.len(), "tool list changed");
                    entry.tools = t;
                }
                Lists::Resources(r, t) => {
                    entry.resources = r;
                    entry.resource_templates = t;
                }
                Lists::Prompts(p) => entry.prompts = p,
            }
        }
        self.changed(&id);
    }
}

/// Runs for the life of one connection: refreshes lists when the server says they changed,
/// and when the connection ends on its own, records why and schedules a restart.
async fn supervise(
    manager: Weak<ServerManager>,
    id: String,
    generation: u64,
    connected: Connected,
    mut stop: oneshot::Receiver<()>,
) {
    let Connected {
        service,
        process,
        mut list_changed,
        list_sender,
        listening,
        ..
    } = connected;
    let started = Instant::now();
    let peer = service.peer().clone();
    // 2026-07-28 servers tell of list changes only on a stream we open; it lives as long as
    // this connection.
    let _listening = listening.map(|(filter, first)| {
        calls::AbortOnDrop::new(tokio::spawn(listen::listen_for_changes(
            id.clone(),
            peer.clone(),
            filter,
            first,
            list_sender,
        )))
    });
    let cancel = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let ended = loop {
        tokio::select! {
            _ = &mut stop => {
                // Closing the transport closes the server's stdin, unless a write to a server
                // that stopped reading holds it: then the process is stopped regardless, which
                // fails that write and lets the connection end.
                cancel.cancel();
                let grace = manager.upgrade().map_or(Duration::ZERO, |m| m.options.stop_grace);
                let closed = tokio::time::timeout(grace, &mut waiting).await.is_ok();
                if let (Some(me), Some(p)) = (manager.upgrade(), process) {
                    me.stop_process(&id, p, me.options.stop_grace).await;
                }
                if !closed {
                    let _ = tokio::time::timeout(grace, &mut waiting).await;
                }
                return;
            }
            quit = &mut waiting => break quit,
            Some(kind) = list_changed.recv() => {
                // Servers often send a burst (server-everything sends four at start-up): one
                // re-read per list covers every notice already queued.
                let mut kinds = vec![kind];
                while let Ok(more) = list_changed.try_recv() {
                    if !kinds.contains(&more) {
                        kinds.push(more);
                    }
                }
                if let Some(me) = manager.upgrade() {
                    for kind in kinds {
                        tokio::spawn(me.clone().refresh(id.clone(), generation, peer.clone(), kind));
                    }
                }
            }
        }
    };
    let Some(me) = manager.upgrade() else { return };
    // The connection ended on its own: the process exited, or the transport failed.
    let exit = match process {
        Some(p) => Some(me.stop_process(&id, p, Duration::from_millis(500)).await),
        None => None,
    };
    let reason = match (&exit, ended) {
        (Some(exit), _) => format!("the server stopped unexpectedly: {exit}"),
        (None, Ok(QuitReason::JoinError(e))) | (None, Err(e)) => {
            format!("the connection failed: {e}")
        }
        (None, Ok(_)) => "the connection to the server was closed".to_owned(),
    };
    me.crashed(&id, generation, reason, started.elapsed()).await;
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

enum Lists {
    Tools(Vec<ToolInfo>),
    Resources(Vec<ResourceInfo>, Vec<ResourceTemplateInfo>),
    Prompts(Vec<PromptInfo>),
}
