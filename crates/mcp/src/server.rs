use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;
use toolgate_settings::ServerConfig;

use crate::McpError;

/// How long a server may take from spawn to a listed set of tools.
/// Generous because `npx` may first have to fetch the package.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Default limit for one tool call.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Lines of stderr kept per server, to explain failures.
const STDERR_LINES: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum ServerStatus {
    Stopped,
    Starting,
    Running,
    Failed { reason: String },
}

impl std::fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerStatus::Stopped => f.write_str("stopped"),
            ServerStatus::Starting => f.write_str("starting"),
            ServerStatus::Running => f.write_str("running"),
            ServerStatus::Failed { reason } => write!(f, "failed: {reason}"),
        }
    }
}

/// A tool as a server describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub read_only: bool,
    pub destructive: bool,
}

/// What the UI and the loop see of one server.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerSnapshot {
    pub id: String,
    pub name: String,
    pub enabled: bool,
    pub status: ServerStatus,
    pub tools: Vec<ToolInfo>,
}

/// The result of a tool call, kept whole, with a text rendering for the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    pub is_error: bool,
    /// Text blocks joined; other blocks named by kind, so the model knows they exist.
    pub text: String,
    /// The full `CallToolResult` as the server sent it.
    pub raw: Value,
}

impl ToolOutput {
    fn from_result(raw: Value) -> Self {
        let is_error = raw.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let mut parts = Vec::new();
        for block in raw
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => parts.push(
                    block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                ),
                Some(kind) => {
                    let mime = block
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .map(|m| format!(" {m}"))
                        .unwrap_or_default();
                    parts.push(format!("[{kind}{mime}]"));
                }
                None => {}
            }
        }
        if parts.is_empty() {
            if let Some(structured) = raw.get("structuredContent") {
                parts.push(structured.to_string());
            }
        }
        Self {
            is_error,
            text: parts.join("\n"),
            raw,
        }
    }
}

struct Entry {
    config: ServerConfig,
    status: ServerStatus,
    tools: Vec<ToolInfo>,
    peer: Option<Peer<RoleClient>>,
    service: Option<RunningService<RoleClient, ClientConfig>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// Owns every MCP server process. Cheap to share behind an `Arc`.
pub struct ServerManager {
    entries: tokio::sync::Mutex<BTreeMap<String, Entry>>,
    /// Bumped on every status or tool-list change, so UIs can refresh.
    changes: watch::Sender<u64>,
}

impl Default for ServerManager {
    fn default() -> Self {
        Self {
            entries: tokio::sync::Mutex::new(BTreeMap::new()),
            changes: watch::channel(0).0,
        }
    }
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolgate", env!("CARGO_PKG_VERSION")),
    )
}

/// Both eras of servers: those that answer `server/discover` (2026-07-28), and those that only
/// know `initialize` (every Node server on npm today), which get 2025-11-25.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

fn lock_lines(lines: &Mutex<VecDeque<String>>) -> std::sync::MutexGuard<'_, VecDeque<String>> {
    lines.lock().unwrap_or_else(|p| p.into_inner())
}

impl ServerManager {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A receiver that changes whenever a server's status or tools change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Replaces the configured servers and starts every enabled one, concurrently.
    /// Returns when each has either started or failed.
    pub async fn start_all(&self, configs: &[ServerConfig]) {
        self.stop_all().await;
        {
            let mut entries = self.entries.lock().await;
            entries.clear();
            for config in configs {
                entries.insert(
                    config.id.clone(),
                    Entry {
                        config: config.clone(),
                        status: ServerStatus::Stopped,
                        tools: Vec::new(),
                        peer: None,
                        service: None,
                        stderr: Arc::default(),
                    },
                );
            }
        }
        self.changed();
        let starts = configs
            .iter()
            .filter(|c| c.enabled)
            .map(|c| self.start(&c.id));
        futures::future::join_all(starts).await;
    }

    /// Starts one configured server (stopping it first if it runs).
    pub async fn start(&self, id: &str) {
        let (config, stderr, previous) = {
            let mut entries = self.entries.lock().await;
            let Some(entry) = entries.get_mut(id) else {
                return;
            };
            entry.peer = None;
            entry.tools.clear();
            entry.status = ServerStatus::Starting;
            // A fresh buffer: the old process's reader may still be appending to the previous one.
            entry.stderr = Arc::default();
            (
                entry.config.clone(),
                entry.stderr.clone(),
                entry.service.take(),
            )
        };
        self.changed();
        // Shut the old process down without holding the lock: it may take seconds.
        if let Some(mut service) = previous {
            let _ = service.close().await;
        }
        let outcome = tokio::time::timeout(STARTUP_TIMEOUT, connect(&config, stderr.clone())).await;
        let outcome = match outcome {
            Ok(result) => result,
            Err(_) => Err(format!(
                "no answer to the MCP handshake within {} s",
                STARTUP_TIMEOUT.as_secs()
            )),
        };
        let mut entries = self.entries.lock().await;
        if let Some(entry) = entries.get_mut(id) {
            match outcome {
                Ok((service, tools)) => {
                    tracing::info!(server = id, tools = tools.len(), "server started");
                    entry.peer = Some(service.peer().clone());
                    entry.service = Some(service);
                    entry.tools = tools;
                    entry.status = ServerStatus::Running;
                }
                Err(reason) => {
                    let tail: Vec<String> = lock_lines(&stderr)
                        .iter()
                        .rev()
                        .take(5)
                        .rev()
                        .cloned()
                        .collect();
                    let reason = if tail.is_empty() {
                        reason
                    } else {
                        format!("{reason}; its last output: {}", tail.join(" | "))
                    };
                    tracing::warn!(server = id, %reason, "server failed to start");
                    entry.status = ServerStatus::Failed { reason };
                }
            }
        }
        drop(entries);
        self.changed();
    }

    /// Stops every server: closes stdin, waits, then terminates its process group.
    pub async fn stop_all(&self) {
        let services: Vec<_> = {
            let mut entries = self.entries.lock().await;
            entries
                .values_mut()
                .filter_map(|e| {
                    e.peer = None;
                    e.tools.clear();
                    e.status = ServerStatus::Stopped;
                    e.service.take()
                })
                .collect()
        };
        futures::future::join_all(services.into_iter().map(|mut s| async move {
            let _ = s.close().await;
        }))
        .await;
        self.changed();
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
                tools: e.tools.clone(),
            })
            .collect()
    }

    /// The last lines a server wrote to stderr.
    pub async fn stderr_tail(&self, id: &str) -> Vec<String> {
        match self.entries.lock().await.get(id) {
            Some(e) => lock_lines(&e.stderr).iter().cloned().collect(),
            None => Vec::new(),
        }
    }

    /// Calls a tool. The caller is responsible for having obtained the user's approval.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<ToolOutput, McpError> {
        let peer = {
            let entries = self.entries.lock().await;
            let entry = entries
                .get(server)
                .ok_or_else(|| McpError::UnknownServer(server.to_owned()))?;
            let peer = entry.peer.clone().ok_or_else(|| McpError::NotRunning {
                server: server.to_owned(),
                status: entry.status.to_string(),
            })?;
            if !entry.tools.iter().any(|t| t.name == tool) {
                return Err(McpError::UnknownTool {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                });
            }
            peer
        };
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => return Err(McpError::BadArguments(other.to_string())),
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let result = tokio::time::timeout(CALL_TIMEOUT, peer.call_tool(params))
            .await
            .map_err(|_| McpError::Timeout {
                server: server.to_owned(),
                tool: tool.to_owned(),
                seconds: CALL_TIMEOUT.as_secs(),
            })?
            .map_err(|e| McpError::Call {
                server: server.to_owned(),
                tool: tool.to_owned(),
                detail: e.to_string(),
            })?;
        let raw = serde_json::to_value(&result).map_err(|e| McpError::Call {
            server: server.to_owned(),
            tool: tool.to_owned(),
            detail: e.to_string(),
        })?;
        Ok(ToolOutput::from_result(raw))
    }
}

type Connected = (RunningService<RoleClient, ClientConfig>, Vec<ToolInfo>);

async fn connect(
    config: &ServerConfig,
    stderr_lines: Arc<Mutex<VecDeque<String>>>,
) -> Result<Connected, String> {
    let mut command = tokio::process::Command::new(&config.command);
    command.args(&config.args).envs(&config.env);
    if let Some(cwd) = &config.cwd {
        command.current_dir(cwd);
    }
    let mut wrapped = CommandWrap::from(command);
    wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let (transport, stderr) = TokioChildProcess::builder(wrapped)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "the command '{}' was not found; install it or give its full path",
                config.command
            ),
            _ => format!("could not start '{}': {e}", config.command),
        })?;
    if let Some(stderr) = stderr {
        let id = config.id.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %id, "stderr: {line}");
                let mut buf = lock_lines(&stderr_lines);
                if buf.len() == STDERR_LINES {
                    buf.pop_front();
                }
                buf.push_back(line);
            }
        });
    }
    let service = client_config()
        .serve_with_lifecycle(transport, lifecycle())
        .await
        .map_err(|e| format!("the MCP handshake failed: {e}"))?;
    let tools = service
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| format!("listing its tools failed: {e}"))?;
    let tools = tools
        .into_iter()
        .map(|t| {
            let annotations = t.annotations.as_ref();
            ToolInfo {
                name: t.name.to_string(),
                description: t.description.as_deref().unwrap_or("").to_owned(),
                input_schema: Value::Object((*t.input_schema).clone()),
                read_only: annotations.and_then(|a| a.read_only_hint).unwrap_or(false),
                destructive: annotations
                    .and_then(|a| a.destructive_hint)
                    .unwrap_or(false),
            }
        })
        .collect();
    Ok((service, tools))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_output_joins_text_and_names_other_blocks() {
        let out = ToolOutput::from_result(json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"}
            ],
            "isError": false
        }));
        assert_eq!(out.text, "hello\n[image image/png]");
        assert!(!out.is_error);
    }

    #[test]
    fn tool_output_falls_back_to_structured_content() {
        let out = ToolOutput::from_result(json!({
            "content": [], "structuredContent": {"sum": 3}, "isError": true
        }));
        assert_eq!(out.text, r#"{"sum":3}"#);
        assert!(out.is_error);
    }

    #[tokio::test]
    async fn a_missing_command_fails_with_a_clear_reason() {
        let manager = ServerManager::new();
        let config = ServerConfig {
            id: "ghost".into(),
            name: "Ghost".into(),
            command: "toolgate-no-such-command".into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
            enabled: true,
        };
        manager.start_all(&[config]).await;
        let snap = manager.snapshot().await;
        match &snap[0].status {
            ServerStatus::Failed { reason } => {
                assert!(
                    reason.contains("'toolgate-no-such-command' was not found"),
                    "{reason}"
                )
            }
            other => panic!("expected failure, got {other:?}"),
        }
        let err = manager
            .call_tool("ghost", "x", json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, McpError::NotRunning { .. }));
    }
}
