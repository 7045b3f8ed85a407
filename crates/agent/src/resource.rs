//! A connected client's `resources/read`, on the gated path a tool call takes.
//!
//! A resource can be anything a server can read (`file:///…/.env`), and clients such as Claude
//! Code let their model read resources; so a read is held at the gate like a call: the user's
//! rules decide (asking when they say to), the decision is audited, and what comes back is
//! reviewed when the user asked to and scrubbed of secrets before the client sees it.
//!
//! At the gate a read is the server's pseudo-tool [`RESOURCE_READ`] with the arguments
//! `{"uri": …}` and the read-only mark: rules target it by that name (with conditions on `/uri`),
//! "read-only tools run without asking" covers it (a setting, never silently: it is audited),
//! and an "always" answer saves a rule for it. The name has a `/`, which MCP's tool names should
//! not have; should a server still offer a tool of that name, a grant for reads does not carry
//! over to it (grants are bound to the tool's description and schema, which differ), while a
//! restriction on reads also restricts it.
//!
//! What passes on is the server's result as read, less what the gate took out; its freshness
//! hints (`ttlMs`, `cacheScope`) are not passed on, so a client reads again rather than cache.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, EmbeddedResource, ReadResourceResult, ResourceContents,
};
use serde_json::json;
use toolgate_catalog::{Annotations, Entry, SourceTool};
use toolgate_llm::ToolCall;
use toolgate_mcp::{McpError, ToolOutput};

use crate::offer::Offer;

/// The name a resource read has at the gate, in rules, the audit and the question.
pub const RESOURCE_READ: &str = "resources/read";

/// What one run step does once the gate has let it through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Calls the entry's tool.
    Call,
    /// Reads the resource named by the arguments' `uri`.
    Read,
}

/// The gate's view of reading `uri` from `server_id`: a catalog entry of the pseudo-tool, named
/// as the server is named in the offer, and the call that carries the URI.
pub(crate) fn entry_and_call(offer: &Offer, server_id: &str, uri: &str) -> (Entry, ToolCall) {
    let server_name = offer
        .catalog
        .entries()
        .iter()
        .find(|e| e.server_id == server_id)
        .map_or_else(|| server_id.to_owned(), |e| e.server_name.clone());
    let entry = Entry {
        model_name: RESOURCE_READ.to_owned(),
        server_id: server_id.to_owned(),
        server_name,
        tool: Arc::new(SourceTool {
            name: RESOURCE_READ.to_owned(),
            title: Some("Read a resource".to_owned()),
            description: "Reads one of the server's resources for a connected client.".to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {"uri": {"type": "string"}},
                "required": ["uri"]
            }),
            annotations: Annotations {
                read_only_hint: Some(true),
                ..Annotations::default()
            },
        }),
        imitates: None,
    };
    let call = ToolCall {
        id: format!("read-{}", uuid::Uuid::new_v4()),
        name: RESOURCE_READ.to_owned(),
        arguments: json!({ "uri": uri }),
    };
    (entry, call)
}

/// A read's result in the form the gate reviews and scrubs: each content an embedded resource,
/// the result's `_meta` kept.
pub(crate) fn as_output(read: ReadResourceResult) -> ToolOutput {
    let mut result = CallToolResult::success(
        read.contents
            .into_iter()
            .map(|resource| ContentBlock::Resource(EmbeddedResource::new(resource)))
            .collect(),
    );
    result.meta = read.meta;
    ToolOutput::new(result)
}

/// The read's result again, from what the gate let through: its embedded resources (a review's
/// edit, which is text, becomes one text resource at `uri`).
pub fn as_read(output: ToolOutput, uri: &str) -> ReadResourceResult {
    let contents = output
        .result
        .content
        .into_iter()
        .map(|block| match block {
            ContentBlock::Resource(embedded) => embedded.resource,
            ContentBlock::Text(text) => ResourceContents::text(text.text, uri),
            other => ResourceContents::text(serde_json::to_string(&other).unwrap_or_default(), uri),
        })
        .collect();
    let mut read = ReadResourceResult::new(contents);
    read.meta = output.result.meta;
    read
}

/// Runs an allowed read on its server.
pub(crate) async fn run(
    servers: &toolgate_mcp::ServerManager,
    server_id: &str,
    arguments: &serde_json::Value,
) -> Result<ToolOutput, McpError> {
    let uri = arguments
        .get("uri")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    servers.read_resource(server_id, uri).await.map(as_output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_goes_through_the_gates_form_and_back_unchanged() {
        let read: ReadResourceResult = serde_json::from_value(json!({
            "contents": [
                {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"},
                {"uri": "file:///b.bin", "blob": "AAEC"}
            ],
            "_meta": {"note": "kept"}
        }))
        .expect("a read result");
        let mut read = read;
        read.result_type = Some(rmcp::model::ResultType::COMPLETE);
        let back = as_read(as_output(read.clone()), "file:///a.txt");
        assert_eq!(
            serde_json::to_value(&back).expect("json"),
            serde_json::to_value(&read).expect("json")
        );
    }
}
