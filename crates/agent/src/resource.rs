//! A connected client's `resources/read` and `prompts/get`, on the gated path a tool call takes.
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
//!
//! A prompt is fetched the same way, as the pseudo-tool [`PROMPT_GET`] with the arguments
//! `{"name": …, "arguments": {…}}`: a prompt's messages go into the client's model as they are,
//! so they are the server's words put in the user's mouth, and pass the gate, the review and the
//! scrubbing like a result (the whole `GetPromptResult` travels as the result's structured
//! content, which redaction walks completely).

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, EmbeddedResource, GetPromptResult, ReadResourceResult,
    ResourceContents,
};
use serde_json::json;
use toolgate_catalog::{Annotations, Entry, SourceTool};
use toolgate_llm::ToolCall;
use toolgate_mcp::{McpError, ToolOutput};

use crate::offer::Offer;

/// The name a resource read has at the gate, in rules, the audit and the question.
pub const RESOURCE_READ: &str = "resources/read";

/// The name a prompt get has at the gate.
pub const PROMPT_GET: &str = "prompts/get";

/// What one run step does once the gate has let it through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Calls the entry's tool.
    Call,
    /// Reads the resource named by the arguments' `uri`.
    Read,
    /// Gets the prompt named by the arguments' `name`, with their `arguments`.
    Prompt,
}

/// The gate's view of reading `uri` from `server_id`: a catalog entry of the pseudo-tool, named
/// as the server is named in the offer, and the call that carries the URI.
pub(crate) fn entry_and_call(offer: &Offer, server_id: &str, uri: &str) -> (Entry, ToolCall) {
    let entry = pseudo_entry(
        offer,
        server_id,
        RESOURCE_READ,
        "Reads one of the server's resources for a connected client.",
        json!({
            "type": "object",
            "properties": {"uri": {"type": "string"}},
            "required": ["uri"]
        }),
    );
    let call = ToolCall {
        id: format!("read-{}", uuid::Uuid::new_v4()),
        name: RESOURCE_READ.to_owned(),
        arguments: json!({ "uri": uri }),
    };
    (entry, call)
}

/// The gate's view of getting prompt `name` of `server_id` with `arguments`.
pub(crate) fn prompt_entry_and_call(
    offer: &Offer,
    server_id: &str,
    name: &str,
    arguments: Option<&serde_json::Map<String, serde_json::Value>>,
) -> (Entry, ToolCall) {
    let entry = pseudo_entry(
        offer,
        server_id,
        PROMPT_GET,
        "Gets one of the server's prompts for a connected client.",
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"]
        }),
    );
    let call = ToolCall {
        id: format!("prompt-{}", uuid::Uuid::new_v4()),
        name: PROMPT_GET.to_owned(),
        arguments: json!({ "name": name, "arguments": arguments.cloned().unwrap_or_default() }),
    };
    (entry, call)
}

/// A catalog entry for one of the pseudo-tools, read-only, named as the server is in the offer.
fn pseudo_entry(
    offer: &Offer,
    server_id: &str,
    name: &str,
    description: &str,
    input_schema: serde_json::Value,
) -> Entry {
    let server_name = offer
        .catalog
        .entries()
        .iter()
        .find(|e| e.server_id == server_id)
        .map_or_else(|| server_id.to_owned(), |e| e.server_name.clone());
    Entry {
        model_name: name.to_owned(),
        server_id: server_id.to_owned(),
        server_name,
        tool: Arc::new(SourceTool {
            name: name.to_owned(),
            title: None,
            description: description.to_owned(),
            input_schema,
            annotations: Annotations {
                read_only_hint: Some(true),
                ..Annotations::default()
            },
        }),
        imitates: None,
    }
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

/// A prompt in the form the gate reviews and scrubs: its messages as text, and the whole result
/// as structured content.
pub(crate) fn prompt_as_output(got: &GetPromptResult) -> ToolOutput {
    let text = got
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                rmcp::model::Role::User => "user",
                rmcp::model::Role::Assistant => "assistant",
            };
            let content = match &m.content {
                ContentBlock::Text(text) => text.text.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            };
            format!("[{role}] {content}")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = serde_json::to_value(got).ok();
    ToolOutput::new(result)
}

/// The prompt again, from what the gate let through: the scrubbed result, or (after a review's
/// edit, which is text) one user message of that text.
pub fn as_prompt(output: ToolOutput) -> GetPromptResult {
    if let Some(got) = output
        .result
        .structured_content
        .and_then(|v| serde_json::from_value::<GetPromptResult>(v).ok())
    {
        return got;
    }
    GetPromptResult::new(vec![rmcp::model::PromptMessage::new_text(
        rmcp::model::Role::User,
        output.text,
    )])
}

/// Runs an allowed prompt get on its server, passing the server's questions on through `asker`.
pub(crate) async fn get_prompt(
    servers: &toolgate_mcp::ServerManager,
    server_id: &str,
    arguments: &serde_json::Value,
    asker: Option<&toolgate_mcp::Asker>,
) -> Result<ToolOutput, McpError> {
    let name = arguments
        .get("name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let values = arguments
        .get("arguments")
        .and_then(serde_json::Value::as_object)
        .filter(|m| !m.is_empty())
        .cloned();
    let got = servers
        .get_prompt_for(server_id, name, values, asker)
        .await?;
    Ok(prompt_as_output(&got))
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
