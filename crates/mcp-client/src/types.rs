//! What a server offers and sends, in Toolgate's terms: its tools, resources and prompts, a
//! call's result, options and progress, and the events a subscriber may show as they happen.

use std::time::Duration;

use rmcp::model::{
    CallToolResult, ContentBlock, Prompt, Resource, ResourceContents, ResourceTemplate, Tool,
};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::asker::Asker;

/// A tool as a server describes it, with its annotations (hints, never guarantees).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    /// The `ui://` resource an MCP App shows this tool's result in (`_meta.ui.resourceUri`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ui_resource: Option<String>,
    /// Only the server's app may call it (`_meta.ui.visibility` is `["app"]`): never offered to
    /// the model.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional = nullable)]
    pub app_only: bool,
}

impl ToolInfo {
    /// A tool with no annotations.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema,
            output_schema: None,
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: false,
            ui_resource: None,
            app_only: false,
        }
    }
}

impl From<Tool> for ToolInfo {
    fn from(t: Tool) -> Self {
        let a = t.annotations.as_ref();
        Self {
            name: t.name.to_string(),
            title: t.title.clone().or_else(|| a.and_then(|a| a.title.clone())),
            description: t.description.as_deref().unwrap_or("").to_owned(),
            input_schema: Value::Object((*t.input_schema).clone()),
            output_schema: t
                .output_schema
                .as_ref()
                .map(|s| Value::Object((**s).clone())),
            read_only: a.and_then(|a| a.read_only_hint).unwrap_or(false),
            // The spec's default for destructiveHint is true, but only when readOnlyHint is false;
            // we show a badge only for what the server states.
            destructive: a.and_then(|a| a.destructive_hint).unwrap_or(false),
            idempotent: a.and_then(|a| a.idempotent_hint).unwrap_or(false),
            open_world: a.and_then(|a| a.open_world_hint).unwrap_or(false),
            ui_resource: t.meta.as_ref().and_then(|meta| {
                let ui = meta.0.get("ui");
                ui.and_then(|ui| ui.get("resourceUri"))
                    .or_else(|| meta.0.get("ui/resourceUri"))
                    .and_then(Value::as_str)
                    .filter(|uri| uri.starts_with("ui://"))
                    .map(str::to_owned)
            }),
            app_only: t
                .meta
                .as_ref()
                .and_then(|meta| meta.0.get("ui")?.get("visibility")?.as_array().cloned())
                .is_some_and(|v| !v.is_empty() && v.iter().all(|x| x == "app")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

impl From<Resource> for ResourceInfo {
    fn from(r: Resource) -> Self {
        Self {
            uri: r.uri,
            name: r.name,
            description: r.description,
            mime_type: r.mime_type,
        }
    }
}

/// A resource template: an RFC 6570 URI template the user fills to read a resource.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateInfo {
    pub uri_template: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// The template's variables, in order of first use (for a form to fill).
    pub variables: Vec<String>,
}

impl From<ResourceTemplate> for ResourceTemplateInfo {
    fn from(t: ResourceTemplate) -> Self {
        Self {
            variables: crate::templates::variables(&t.uri_template),
            uri_template: t.uri_template,
            name: t.name,
            description: t.description,
            mime_type: t.mime_type,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptInfo {
    pub name: String,
    pub description: Option<String>,
    /// The arguments' names, in order.
    pub arguments: Vec<String>,
    /// Each argument with what the server says of it, for a form to fill.
    pub argument_info: Vec<PromptArgumentInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgumentInfo {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

impl From<Prompt> for PromptInfo {
    fn from(p: Prompt) -> Self {
        let argument_info: Vec<PromptArgumentInfo> = p
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|a| PromptArgumentInfo {
                description: a.description.or(a.title),
                required: a.required.unwrap_or(false),
                name: a.name,
            })
            .collect();
        Self {
            name: p.name,
            description: p.description,
            arguments: argument_info.iter().map(|a| a.name.clone()).collect(),
            argument_info,
        }
    }
}

/// The result of a tool call: rmcp's typed `CallToolResult` exactly as the server sent it
/// (every content block — text, image, audio, embedded resource, resource link —
/// `structuredContent`, `isError`, `_meta`), with a text rendering for the model. JSON only at
/// the window's edge (serialized as `raw`) and in the history.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    pub is_error: bool,
    /// Text blocks joined; other blocks named by kind, so the model knows they exist.
    pub text: String,
    #[serde(rename = "raw")]
    #[ts(as = "serde_json::Value")]
    pub result: CallToolResult,
}

impl ToolOutput {
    /// The result, with its text rendering.
    pub fn new(result: CallToolResult) -> Self {
        let mut parts = Vec::new();
        for block in &result.content {
            match block {
                ContentBlock::Text(text) => parts.push(text.text.clone()),
                ContentBlock::ResourceLink(link) => {
                    parts.push(format!("[resource link {}]", link.uri));
                }
                ContentBlock::Resource(embedded) => match &embedded.resource {
                    ResourceContents::TextResourceContents { text, .. } => {
                        parts.push(text.clone());
                    }
                    ResourceContents::BlobResourceContents { uri, .. } => {
                        parts.push(format!("[resource {uri}]"));
                    }
                    _ => parts.push("[resource]".to_owned()),
                },
                ContentBlock::Image(image) => parts.push(format!("[image {}]", image.mime_type)),
                ContentBlock::Audio(audio) => parts.push(format!("[audio {}]", audio.mime_type)),
                // A kind of block a later protocol adds: named, so the model knows it is there.
                _ => parts.push("[content]".to_owned()),
            }
        }
        if parts.is_empty() {
            if let Some(structured) = &result.structured_content {
                parts.push(structured.to_string());
            }
        }
        Self {
            is_error: result.is_error.unwrap_or(false),
            text: parts.join("\n"),
            result,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// The protocol's name for it (deprecated with logging at 2026-07-28, still how both eras
    /// name a level).
    #[allow(deprecated)]
    pub fn protocol(self) -> rmcp::model::LoggingLevel {
        use rmcp::model::LoggingLevel;
        match self {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }
}

/// A level as the protocol names it, in Toolgate's terms (the other way from
/// [`LogLevel::protocol`]).
#[allow(deprecated)]
impl From<rmcp::model::LoggingLevel> for LogLevel {
    fn from(level: rmcp::model::LoggingLevel) -> Self {
        use rmcp::model::LoggingLevel;
        match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        }
    }
}

/// Something a server did that a subscriber may want to show as it happens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ServerEvent {
    /// A server's status, tools, resources or prompts changed; read a fresh snapshot.
    #[serde(rename_all = "camelCase")]
    Changed { server: String },
    #[serde(rename_all = "camelCase")]
    Progress {
        server: String,
        /// The progress token of the request, as the server sent it.
        token: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A `notifications/message` log entry.
    #[serde(rename_all = "camelCase")]
    Log {
        server: String,
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    },
    /// One line the server wrote to stderr (or to stdout that was not JSON-RPC).
    #[serde(rename_all = "camelCase")]
    Output { server: String, line: String },
    /// A resource a client subscribed to changed (`notifications/resources/updated`).
    #[serde(rename_all = "camelCase")]
    ResourceUpdated { server: String, uri: String },
}

/// Per-call options. The defaults come from the server's configuration.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Overrides the server's call timeout; progress notifications reset it.
    pub timeout: Option<Duration>,
    /// Overrides the server's limit on one call however much progress it reports.
    pub max_timeout: Option<Duration>,
    /// Cancelling it cancels the call: the server is sent `notifications/cancelled`.
    pub cancel: Option<CancellationToken>,
    /// Receives this call's progress notifications (and only this call's).
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<CallProgress>>,
    /// The conversation the call belongs to, sent in the call's `_meta` to servers whose tool
    /// context settings ask for it.
    pub conversation: Option<String>,
    /// Who answers the server's questions during this call, instead of the manager's handler:
    /// a connected client that can (see [`Asker`]).
    pub asker: Option<Asker>,
    /// The least severe log message the caller wants during the call. A 2026-07-28 server
    /// sends none unless the request asks (`_meta` `logLevel`), so it is asked at this level;
    /// an older server sends what it sends.
    pub logs: Option<LogLevel>,
}

/// One progress notification of a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
    /// Set when the server runs the call as a task (the tasks extension): its id and status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskState>,
}

/// A call the server runs as a task, as last polled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskState {
    pub id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn from_json(value: Value) -> ToolOutput {
        ToolOutput::new(serde_json::from_value(value).expect("a tool result"))
    }

    #[test]
    fn a_rich_result_is_kept_as_sent() {
        let sent = json!({
            "content": [
                {"type": "text", "text": "hi", "_meta": {"k": 1}},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "demo://r/1", "name": "r1"}
            ],
            "structuredContent": {"a": [1, 2]},
            "isError": false,
            "_meta": {"trace": "t-1"}
        });
        let out = from_json(sent.clone());
        assert_eq!(serde_json::to_value(&out.result).expect("json"), sent);
        assert_eq!(serde_json::to_value(&out).expect("json")["raw"], sent);
    }

    #[test]
    fn tool_output_joins_text_and_names_other_blocks() {
        let out = from_json(json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "demo://r/1", "name": "r1"},
                {"type": "resource", "resource": {"uri": "demo://r/2", "text": "inner text"}},
                {"type": "resource", "resource": {"uri": "demo://r/3", "blob": "AAAA"}}
            ],
            "isError": false
        }));
        assert_eq!(
            out.text,
            "hello\n[image image/png]\n[audio audio/wav]\n[resource link demo://r/1]\ninner text\n[resource demo://r/3]"
        );
        assert!(!out.is_error);
    }

    #[test]
    fn tool_output_falls_back_to_structured_content() {
        let out = from_json(json!({
            "content": [], "structuredContent": {"sum": 3}, "isError": true
        }));
        assert_eq!(out.text, r#"{"sum":3}"#);
        assert!(out.is_error);
    }
}
