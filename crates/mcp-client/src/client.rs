//! Toolgate's side of an MCP connection: what it tells a server about itself, and how it answers
//! the server's requests and notifications.
//!
//! Roots, sampling and logging are deprecated for the 2026-07-28 protocol era (SEP-2577), but they
//! are how every server of the 2025-11-25 era (all Node servers on npm today) works, so we keep
//! offering them.
#![allow(deprecated)]

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorData, Implementation,
    ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam, Root,
    RootsCapabilities, SamplingCapability,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::{broadcast, mpsc};

use crate::asker::{question_of, Question, ServerRequests};
use crate::types::{LogLevel, ServerEvent};

/// Which list a server said has changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    Tools,
    Resources,
    Prompts,
}

/// One connection's handler. Cheap: it holds channels and shared state only.
#[derive(Clone)]
pub struct Client {
    pub server: String,
    pub roots: Arc<RwLock<Vec<PathBuf>>>,
    pub events: broadcast::Sender<ServerEvent>,
    pub list_changed: mpsc::UnboundedSender<ListKind>,
    pub requests: Arc<dyn ServerRequests>,
    /// The calls running on this server: a question during the only one goes to its asker.
    pub in_flight: Arc<crate::asker::InFlight>,
    /// The version `initialize` offers, when the server's settings pin one.
    pub protocol: Option<rmcp::model::ProtocolVersion>,
    /// Tools the server offered that Toolgate refuses (a remote server's invalid `x-mcp-header`).
    pub refused: crate::http::Refused,
}

/// What Toolgate tells every server about itself: its name and version, and that it offers
/// roots (with change notifications), sampling and elicitation (answered by [`ServerRequests`]).
pub fn client_info() -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    let mut roots = RootsCapabilities::default();
    roots.list_changed = Some(true);
    capabilities.roots = Some(roots);
    capabilities.sampling = Some(SamplingCapability::default());
    // Both kinds of question: forms (filled in the window or at the terminal) and URLs (shown
    // with their domain, opened in the browser only when the user says so).
    capabilities.elicitation = Some(
        ElicitationCapability::new()
            .with_form(Default::default())
            .with_url(Default::default()),
    );
    // Long calls a server runs as a task are polled (`tasks/get`) and cancelled (`tasks/cancel`)
    // by the manager; on 2026-07-28 connections this goes with every request.
    let mut extensions = rmcp::model::ExtensionCapabilities::new();
    extensions.insert(
        rmcp::model::TASKS_EXTENSION_ID.to_owned(),
        Default::default(),
    );
    // MCP Apps: a tool's `ui://` resource is shown in a sandboxed frame in the window.
    let mut apps = rmcp::model::JsonObject::new();
    apps.insert(
        "mimeTypes".to_owned(),
        serde_json::json!([crate::APP_MIME_TYPE]),
    );
    extensions.insert(crate::UI_EXTENSION_ID.to_owned(), apps);
    capabilities.extensions = Some(extensions);
    let mut implementation = Implementation::new("toolgate", env!("CARGO_PKG_VERSION"));
    implementation.title = Some("Toolgate".to_owned());
    ClientConfig::new(capabilities, implementation)
}

/// The answer to `roots/list`: each folder as a `file://` URI, named by its last component.
pub fn roots_result(roots: &[PathBuf]) -> ListRootsResult {
    let roots = roots
        .iter()
        .map(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            Root::new(root_uri(path)).with_name(name)
        })
        .collect();
    ListRootsResult::new(roots)
}

pub fn root_uri(path: &std::path::Path) -> String {
    // Paths are absolute (settings validation ensures it); a URI needs its spaces and the like
    // escaped.
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(char::from(byte))
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut info = client_info();
        if let Some(version) = &self.protocol {
            info.protocol_version = version.clone();
        }
        info
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self.roots.read().unwrap_or_else(|p| p.into_inner()).clone();
        Ok(roots_result(&roots))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.in_flight
            .asker(&self.server, Question::Sampling)
            .unwrap_or_else(|| self.requests.clone())
            .create_message(&self.server, params, context.ct)
            .await
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.in_flight
            .asker(&self.server, question_of(&params))
            .unwrap_or_else(|| self.requests.clone())
            .elicit(&self.server, params, context.ct)
            .await
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(ServerEvent::Progress {
            server: self.server.clone(),
            token: params.progress_token.0.to_string(),
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.server, level = ?params.level, "log: {}", params.data);
        let _ = self.events.send(ServerEvent::Log {
            server: self.server.clone(),
            level: LogLevel::from(params.level),
            logger: params.logger,
            data: params.data,
        });
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        // A 2026-07-28 server sends updates only on listen streams, and a live stream's reach
        // its own subscription (`manager/updates.rs`): one that arrives here is from a stream
        // already replaced or closed, whose subscriber has left (or the newer stream tells).
        let modern = context.peer.peer_info().is_some_and(|info| {
            info.protocol_version >= rmcp::model::ProtocolVersion::V_2026_07_28
        });
        if modern {
            return;
        }
        let _ = self.events.send(ServerEvent::ResourceUpdated {
            server: self.server.clone(),
            uri: params.uri,
        });
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(ListKind::Tools);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(ListKind::Resources);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(ListKind::Prompts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_uris_escape_what_a_uri_cannot_hold() {
        assert_eq!(
            root_uri(std::path::Path::new("/home/a b/projects/é")),
            "file:///home/a%20b/projects/%C3%A9"
        );
    }

    #[test]
    fn client_info_is_truthful() {
        let info = serde_json::to_value(client_info()).expect("serializes");
        assert_eq!(info["clientInfo"]["name"], "toolgate");
        assert_eq!(info["clientInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(info["capabilities"]["roots"]["listChanged"], true);
        assert!(info["capabilities"]["sampling"].is_object());
        assert!(info["capabilities"]["elicitation"]["form"].is_object());
        assert!(info["capabilities"]["elicitation"]["url"].is_object());
        assert!(info["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object());
        assert_eq!(
            info["capabilities"]["extensions"]["io.modelcontextprotocol/ui"]["mimeTypes"],
            serde_json::json!(["text/html;profile=mcp-app"])
        );
    }
}
