//! The supervisor: one entry per configured server, one task per live connection.
//!
//! Each start bumps the entry's `generation`. A connection task only ever changes its entry while
//! the generation is still its own, so a stop, restart or reconfiguration that happened meanwhile
//! always wins and stale tasks cannot resurrect a server.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex as StdMutex, RwLock, Weak};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, ProtocolVersion, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, QuitReason, RunningService, ServiceError};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, oneshot, watch, Mutex};
use toolgate_settings::{ServerConfig, Transport};

use crate::client::{Client, DeclineServerRequests, ListKind, ServerRequests};
use crate::host_env::HostEnv;
use crate::logs::ServerLog;
use crate::orphans::{self, Registry};
use crate::stdio::{self, StdioProcess, StdioSpec};
use crate::types::{
    CallOptions, PromptInfo, ResourceInfo, ServerEvent, ServerSnapshot, ServerStatus, ToolInfo,
    ToolOutput,
};
use crate::McpError;

/// A server that crashes this many times in a row, each within [`STABLE_AFTER`] of starting,
/// stays failed until the user restarts it.
const MAX_RESTARTS: u32 = 5;
/// A server up this long has recovered: its next crash starts the backoff afresh.
const STABLE_AFTER: Duration = Duration::from_secs(60);
/// Largest HTTP response or SSE event accepted: tool results can be large.
const HTTP_MESSAGE_LIMIT: usize = stdio::MESSAGE_LIMIT;

/// How the manager is set up by the app or the CLI.
pub struct ManagerOptions {
    /// Where each server's stderr goes, as `<id>.log`, rotated. None keeps it in memory only.
    pub log_dir: Option<PathBuf>,
    /// Where running process groups are recorded, and swept from at start-up.
    pub state_dir: Option<PathBuf>,
    /// Where commands are looked for. None: the login shell's PATH, read at the first start
    /// (see [`HostEnv::detect`]).
    pub env: Option<HostEnv>,
    /// Answers sampling and elicitation requests.
    pub requests: Arc<dyn ServerRequests>,
    /// How long a server gets to exit after stdin closes, and again after SIGTERM.
    pub stop_grace: Duration,
    /// The wait before the first restart after a crash; doubled for each crash in a row.
    pub restart_delay: Duration,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        Self {
            log_dir: None,
            state_dir: None,
            env: None,
            requests: Arc::new(DeclineServerRequests),
            stop_grace: Duration::from_secs(2),
            restart_delay: Duration::from_secs(1),
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
    prompts: Vec<PromptInfo>,
    conn: Option<Conn>,
    generation: u64,
    /// Crashes in a row, for the backoff.
    crashes: u32,
    log: ServerLog,
    roots: Arc<RwLock<Vec<PathBuf>>>,
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

/// Owns every MCP server. Create it with [`ServerManager::new`]; share the `Arc`.
pub struct ServerManager {
    entries: Mutex<BTreeMap<String, Entry>>,
    /// Bumped on every status or list change, so UIs can refresh.
    changes: watch::Sender<u64>,
    events: broadcast::Sender<ServerEvent>,
    options: ManagerOptions,
    registry: StdMutex<Registry>,
    env: tokio::sync::OnceCell<HostEnv>,
    me: Weak<ServerManager>,
}

type Service = RunningService<RoleClient, Client>;

/// A connection that has finished its handshake.
struct Connected {
    service: Service,
    process: Option<StdioProcess>,
    list_changed: mpsc::UnboundedReceiver<ListKind>,
}

/// Both eras of servers: those that answer `server/discover` (2026-07-28), and those that only
/// know `initialize` (every Node server on npm today), which get 2025-11-25.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
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
        Arc::new_cyclic(|me| Self {
            entries: Mutex::new(BTreeMap::new()),
            changes: watch::channel(0).0,
            events: broadcast::channel(1024).0,
            options,
            registry,
            env: tokio::sync::OnceCell::new(),
            me: me.clone(),
        })
    }

    /// A receiver that changes whenever a server's status or lists change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
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

    async fn host_env(&self) -> &HostEnv {
        self.env
            .get_or_init(|| async {
                match &self.options.env {
                    Some(env) => env.clone(),
                    None => HostEnv::detect().await,
                }
            })
            .await
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the configured servers and starts every enabled one, concurrently. Returns when
    /// each has either started or failed.
    pub async fn start_all(&self, configs: &[ServerConfig]) {
        self.stop_all().await;
        {
            let mut entries = self.entries.lock().await;
            entries.clear();
            for config in configs {
                entries.insert(
                    config.id.clone(),
                    Entry {
                        log: ServerLog::new(self.options.log_dir.as_deref(), &config.id),
                        roots: Arc::new(RwLock::new(config.roots.clone())),
                        config: config.clone(),
                        status: ServerStatus::Stopped,
                        implementation: None,
                        protocol_version: None,
                        tools: Vec::new(),
                        resources: Vec::new(),
                        prompts: Vec::new(),
                        conn: None,
                        generation: 0,
                        crashes: 0,
                    },
                );
            }
        }
        self.changed("");
        let starts = configs
            .iter()
            .filter(|c| c.enabled)
            .map(|c| self.start(&c.id));
        futures::future::join_all(starts).await;
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
        // Boxed: a crash restarts the server from inside the task this spawns.
        Box::pin(self.start_inner(id))
    }

    async fn start_inner(&self, id: &str) {
        let (config, log, roots, generation, previous) = {
            let mut entries = self.entries.lock().await;
            let Some(entry) = entries.get_mut(id) else {
                return;
            };
            entry.generation += 1;
            entry.status = ServerStatus::Starting;
            entry.tools.clear();
            entry.resources.clear();
            entry.prompts.clear();
            entry.log.clear();
            (
                entry.config.clone(),
                entry.log.clone(),
                entry.roots.clone(),
                entry.generation,
                entry.conn.take(),
            )
        };
        self.changed(id);
        if let Some(conn) = previous {
            conn.shut().await;
        }
        let timeout = Duration::from_secs(config.startup_timeout_secs);
        let outcome = self.connect(&config, &log, roots, timeout).await;
        let mut entries = self.entries.lock().await;
        let Some(entry) = entries.get_mut(id).filter(|e| e.generation == generation) else {
            // Stopped or restarted while starting: this connection is no longer wanted.
            drop(entries);
            if let Ok((connected, ..)) = outcome {
                self.close_connected(id, connected).await;
            }
            return;
        };
        match outcome {
            Ok((connected, listed)) => {
                tracing::info!(server = id, tools = listed.tools.len(), "server ready");
                let peer = connected.service.peer().clone();
                entry.implementation = listed.implementation;
                entry.protocol_version = listed.protocol_version;
                entry.tools = listed.tools;
                entry.resources = listed.resources;
                entry.prompts = listed.prompts;
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
            }
            Err(reason) => {
                tracing::warn!(server = id, %reason, "server failed to start");
                entry.status = ServerStatus::Failed { reason };
            }
        }
        drop(entries);
        self.changed(id);
    }

    /// Stops one server and leaves it stopped.
    pub async fn stop(&self, id: &str) -> Result<(), McpError> {
        let conn = {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(id)
                .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?;
            entry.generation += 1;
            entry.status = ServerStatus::Stopped;
            entry.tools.clear();
            entry.resources.clear();
            entry.prompts.clear();
            entry.conn.take()
        };
        self.changed(id);
        if let Some(conn) = conn {
            conn.shut().await;
        }
        Ok(())
    }

    /// Stops every server: closes stdin, waits, then terminates each process group.
    pub async fn stop_all(&self) {
        let conns: Vec<Conn> = {
            let mut entries = self.entries.lock().await;
            entries
                .values_mut()
                .filter_map(|e| {
                    e.generation += 1;
                    e.status = ServerStatus::Stopped;
                    e.tools.clear();
                    e.resources.clear();
                    e.prompts.clear();
                    e.conn.take()
                })
                .collect()
        };
        futures::future::join_all(conns.into_iter().map(Conn::shut)).await;
        self.changed("");
    }

    /// Changes the folders a server is offered as roots, and tells it so.
    pub async fn set_roots(&self, id: &str, roots: Vec<PathBuf>) -> Result<(), McpError> {
        let peer = {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(id)
                .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?;
            *entry.roots.write().unwrap_or_else(|p| p.into_inner()) = roots.clone();
            entry.config.roots = roots;
            entry.conn.as_ref().map(|c| c.peer.clone())
        };
        if let Some(peer) = peer {
            peer.notify_roots_list_changed()
                .await
                .map_err(|e| McpError::Request {
                    server: id.to_owned(),
                    what: "be told its roots changed",
                    detail: e.to_string(),
                })?;
        }
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
                prompts: e.prompts.clone(),
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

    /// Calls a tool. The timeout is reset by each progress notification, up to the maximum; on
    /// timeout or cancellation the server is sent `notifications/cancelled`. If the server exits
    /// meanwhile, the call fails at once.
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<ToolOutput, McpError> {
        let (peer, timeout, max_timeout) = {
            let entries = self.entries.lock().await;
            let entry = entries
                .get(server)
                .ok_or_else(|| McpError::UnknownServer(server.to_owned()))?;
            let peer = entry.conn.as_ref().map(|c| c.peer.clone()).ok_or_else(|| {
                McpError::NotRunning {
                    server: server.to_owned(),
                    status: entry.status.to_string(),
                }
            })?;
            if !entry.tools.iter().any(|t| t.name == tool) {
                return Err(McpError::UnknownTool {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                });
            }
            let timeout = options
                .timeout
                .unwrap_or(Duration::from_secs(entry.config.call_timeout_secs));
            let max = options
                .max_timeout
                .unwrap_or(Duration::from_secs(entry.config.max_call_timeout_secs))
                .max(timeout);
            (peer, timeout, max)
        };
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => return Err(McpError::BadArguments(other.to_string())),
        };
        let failed = |detail: String| McpError::Call {
            server: server.to_owned(),
            tool: tool.to_owned(),
            detail,
        };
        let exited = || McpError::ServerExited {
            server: server.to_owned(),
            tool: tool.to_owned(),
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
        ));
        let request_options = PeerRequestOptions::with_timeout(timeout)
            .reset_timeout_on_progress()
            .with_max_total_timeout(max_timeout);
        let handle = peer
            .send_cancellable_request(request, request_options)
            .await
            .map_err(|_| exited())?;
        let mut guard = CancelOnDrop {
            peer: Some(peer.clone()),
            id: handle.id.clone(),
        };
        let cancel = options.cancel.unwrap_or_default();
        let response = tokio::select! {
            response = handle.await_response() => response,
            () = cancel.cancelled() => {
                guard.send("cancelled by the user");
                return Err(McpError::Cancelled { tool: tool.to_owned() });
            }
        };
        guard.peer = None;
        let result = match response {
            Ok(ServerResult::CallToolResult(result)) => result,
            Ok(other) => {
                return Err(failed(format!(
                    "it answered with something other than a tool result: {}",
                    serde_json::to_string(&other).unwrap_or_default()
                )))
            }
            Err(ServiceError::Timeout { timeout }) => {
                return Err(McpError::Timeout {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    seconds: timeout.as_secs(),
                })
            }
            Err(ServiceError::TransportClosed) | Err(ServiceError::TransportSend(_)) => {
                return Err(exited())
            }
            Err(ServiceError::McpError(error)) => return Err(failed(error.message.into_owned())),
            Err(other) => return Err(failed(other.to_string())),
        };
        let raw = serde_json::to_value(&result).map_err(|e| failed(e.to_string()))?;
        Ok(ToolOutput::from_result(raw))
    }

    /// Spawns or dials the server, performs the handshake and lists what it offers, all within
    /// `timeout`. On failure the reason includes the server's last words on stderr.
    async fn connect(
        &self,
        config: &ServerConfig,
        log: &ServerLog,
        roots: Arc<RwLock<Vec<PathBuf>>>,
        timeout: Duration,
    ) -> Result<(Connected, Listed), String> {
        let (tx, list_changed) = mpsc::unbounded_channel();
        let client = Client {
            server: config.id.clone(),
            roots,
            events: self.events.clone(),
            list_changed: tx,
            requests: self.options.requests.clone(),
        };
        let deadline = tokio::time::Instant::now() + timeout;
        let handshake = match &config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let spec = StdioSpec {
                    server: &config.id,
                    command,
                    args,
                    env,
                    cwd: cwd.as_deref(),
                };
                let spawned = stdio::spawn(&spec, self.host_env().await, log, &self.events)?;
                self.registry().insert(&config.id, spawned.process.leader);
                let process = spawned.process;
                let served = tokio::time::timeout_at(
                    deadline,
                    client.serve_with_lifecycle(
                        AsyncRwTransport::new_client(spawned.reader, spawned.writer)
                            .with_max_line_length(stdio::MESSAGE_LIMIT),
                        lifecycle(),
                    ),
                )
                .await;
                match served {
                    Ok(Ok(service)) => Ok((service, Some(process))),
                    Ok(Err(e)) => Err((format!("the MCP handshake failed: {e}"), Some(process))),
                    Err(_) => Err((
                        format!(
                            "no answer to the MCP handshake within {} s",
                            timeout.as_secs()
                        ),
                        Some(process),
                    )),
                }
            }
            Transport::Http { url, headers } => {
                let transport = http_transport(url, headers)?;
                match tokio::time::timeout_at(
                    deadline,
                    client.serve_with_lifecycle(transport, lifecycle()),
                )
                .await
                {
                    Ok(Ok(service)) => Ok((service, None)),
                    Ok(Err(e)) => Err((format!("connecting to {url} failed: {e}"), None)),
                    Err(_) => Err((
                        format!(
                            "{url} did not answer the MCP handshake within {} s",
                            timeout.as_secs()
                        ),
                        None,
                    )),
                }
            }
        };
        let (mut service, process) = match handshake {
            Ok(ok) => ok,
            Err((reason, process)) => {
                let exit = match process {
                    // A short grace: a server that failed its handshake has nothing to finish.
                    Some(p) => Some(
                        self.stop_process(&config.id, p, Duration::from_millis(300))
                            .await,
                    ),
                    None => None,
                };
                return Err(with_last_words(reason, exit, log));
            }
        };
        match tokio::time::timeout_at(deadline, list_everything(service.peer())).await {
            Ok(Ok(listed)) => Ok((
                Connected {
                    service,
                    process,
                    list_changed,
                },
                listed,
            )),
            outcome => {
                let reason = match outcome {
                    Ok(Err(e)) => format!("listing its tools failed: {e}"),
                    _ => format!("it did not list its tools within {} s", timeout.as_secs()),
                };
                let _ = service.close().await;
                let exit = match process {
                    Some(p) => Some(
                        self.stop_process(&config.id, p, self.options.stop_grace)
                            .await,
                    ),
                    None => None,
                };
                Err(with_last_words(reason, exit, log))
            }
        }
    }

    async fn stop_process(&self, id: &str, process: StdioProcess, grace: Duration) -> String {
        let leader = process.leader;
        let status = process.stop(grace).await;
        self.registry().remove(id, leader);
        stdio::describe_exit(status)
    }

    async fn close_connected(&self, id: &str, mut connected: Connected) {
        let _ = connected.service.close().await;
        if let Some(p) = connected.process {
            self.stop_process(id, p, self.options.stop_grace).await;
        }
    }

    async fn crashed(&self, id: &str, generation: u64, reason: String, uptime: Duration) {
        let restart_in = {
            let mut entries = self.entries.lock().await;
            let Some(entry) = entries.get_mut(id).filter(|e| e.generation == generation) else {
                return;
            };
            let reason = with_last_words(reason, None, &entry.log);
            tracing::warn!(server = id, %reason, "server stopped unexpectedly");
            entry.conn = None;
            entry.tools.clear();
            entry.resources.clear();
            entry.prompts.clear();
            if uptime >= STABLE_AFTER {
                entry.crashes = 0;
            }
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
                    format!("{reason} (gave up after {MAX_RESTARTS} restarts; restart it by hand once fixed)")
                } else {
                    reason
                };
                entry.status = ServerStatus::Failed { reason };
                None
            }
        };
        self.changed(id);
        if let Some(delay) = restart_in {
            let me = self.me.clone();
            let id = id.to_owned();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let Some(me) = me.upgrade() else { return };
                let still_waiting = me
                    .entries
                    .lock()
                    .await
                    .get(&id)
                    .is_some_and(|e| e.generation == generation);
                if still_waiting {
                    me.start(&id).await;
                }
            });
        }
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
            ListKind::Resources => peer
                .list_all_resources()
                .await
                .map(|r| Lists::Resources(r.into_iter().map(ResourceInfo::from).collect())),
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
                Lists::Resources(r) => entry.resources = r,
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
    } = connected;
    let started = Instant::now();
    let peer = service.peer().clone();
    let cancel = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let ended = loop {
        tokio::select! {
            _ = &mut stop => {
                cancel.cancel();
                let _ = waiting.await;
                if let (Some(me), Some(p)) = (manager.upgrade(), process) {
                    me.stop_process(&id, p, me.options.stop_grace).await;
                }
                return;
            }
            quit = &mut waiting => break quit,
            Some(kind) = list_changed.recv() => {
                if let Some(me) = manager.upgrade() {
                    tokio::spawn(me.refresh(id.clone(), generation, peer.clone(), kind));
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

enum Lists {
    Tools(Vec<ToolInfo>),
    Resources(Vec<ResourceInfo>),
    Prompts(Vec<PromptInfo>),
}

/// What a server offers, read once it is connected.
struct Listed {
    implementation: Option<String>,
    protocol_version: Option<String>,
    tools: Vec<ToolInfo>,
    resources: Vec<ResourceInfo>,
    prompts: Vec<PromptInfo>,
}

async fn list_everything(peer: &Peer<RoleClient>) -> Result<Listed, ServiceError> {
    let info = peer.peer_info();
    let capabilities = info
        .as_ref()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    let tools = peer.list_all_tools().await?;
    // Resources and prompts are extras: a server that fails to list them still serves tools.
    let resources = if capabilities.resources.is_some() {
        peer.list_all_resources().await.unwrap_or_else(|e| {
            tracing::info!("listing resources failed: {e}");
            Vec::new()
        })
    } else {
        Vec::new()
    };
    let prompts = if capabilities.prompts.is_some() {
        peer.list_all_prompts().await.unwrap_or_else(|e| {
            tracing::info!("listing prompts failed: {e}");
            Vec::new()
        })
    } else {
        Vec::new()
    };
    Ok(Listed {
        implementation: info
            .as_ref()
            .and_then(|i| i.server_info.as_ref())
            .map(|s| format!("{} {}", s.name, s.version)),
        protocol_version: info.as_ref().map(|i| i.protocol_version.to_string()),
        tools: tools.into_iter().map(ToolInfo::from).collect(),
        resources: resources.into_iter().map(ResourceInfo::from).collect(),
        prompts: prompts.into_iter().map(PromptInfo::from).collect(),
    })
}

fn http_transport(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::try_from(name.as_str())
            .map_err(|_| format!("'{name}' is not a valid HTTP header name"))?;
        // The value may hold a secret: never repeat it in an error.
        let value = reqwest::header::HeaderValue::try_from(value.as_str()).map_err(|_| {
            format!("the value of header '{name}' is not a valid HTTP header value")
        })?;
        custom.insert(name, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    config.max_json_response_size = HTTP_MESSAGE_LIMIT;
    config.max_sse_event_size = HTTP_MESSAGE_LIMIT;
    Ok(StreamableHttpClientTransport::with_client(
        reqwest::Client::new(),
        config,
    ))
}

/// Adds how the process ended and its last lines of output to a failure reason.
fn with_last_words(reason: String, exit: Option<String>, log: &ServerLog) -> String {
    let mut reason = reason;
    if let Some(exit) = exit {
        if !reason.contains(&exit) {
            reason = format!("{reason} ({exit})");
        }
    }
    let tail = log.tail(5);
    if tail.is_empty() {
        reason
    } else {
        format!("{reason}; its last output: {}", tail.join(" | "))
    }
}

/// Sends `notifications/cancelled` for a request whose caller went away before it finished (a
/// turn stopped, a window closed), so the server can stop working on it.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: rmcp::model::RequestId,
}

impl CancelOnDrop {
    fn send(&mut self, reason: &str) {
        let Some(peer) = self.peer.take() else { return };
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some(reason.to_owned()),
        ));
        tokio::spawn(async move {
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.peer.is_some() && tokio::runtime::Handle::try_current().is_ok() {
            self.send("the caller stopped waiting");
        }
    }
}
