//! Model providers behind one trait.
//!
//! The conversation is held in provider-neutral types ([`Message`], [`ToolCall`], [`ToolSpec`]);
//! each wire format has one module that maps those types to its serde request and response types
//! and back: [`anthropic`] for the Messages API, [`openai`] for Chat Completions and every
//! endpoint compatible with it ([`presets`] lists the known ones and their quirks). Each also has
//! a stream assembler that turns server-sent events into the same [`Reply`] a non-streaming call
//! gives. Mapping and assembling are pure and unit-tested; only [`HttpProvider`] touches the
//! network, and only through the base URL the user configured.
//!
//! Errors are typed ([`LlmError`]) so the loop can decide what to do, and never carry the API key.
//! Retrying is the loop's decision; [`LlmError::is_retryable`] and [`LlmError::retry_after`] tell
//! it what the provider said.

pub mod anthropic;
mod error;
mod http;
pub mod local;
pub mod openai;
pub mod presets;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use error::LlmError;
pub use http::{HttpProvider, WireFormat};
pub use presets::Preset;
pub use tokio_util::sync::CancellationToken;

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments. When the model sent text that is not JSON, this is that text as a
    /// `Value::String`, so the loop can answer with an error result instead of failing.
    pub arguments: Value,
}

/// One piece of a tool result. MCP tools return text and images; both go back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ContentPart {
    Text {
        text: String,
    },
    Image {
        mime_type: String,
        /// Base64, without a `data:` prefix (as MCP sends it).
        data: String,
    },
}

impl ContentPart {
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }
}

/// One entry of the conversation. Its JSON (camelCase, tagged by `role`) is what the history
/// stores and what the UI receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "role",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Message {
    User {
        text: String,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        content: Vec<ContentPart>,
        is_error: bool,
    },
}

impl Message {
    /// A tool result that is only text: denials, errors, and most tools' output.
    pub fn tool_text(call_id: impl Into<String>, text: impl Into<String>, is_error: bool) -> Self {
        Message::ToolResult {
            call_id: call_id.into(),
            content: vec![ContentPart::text(text)],
            is_error,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    /// Constrains the final answer to JSON valid against this schema, with the provider's own
    /// structured output (Anthropic's `output_config.format`, OpenAI's `response_format`). Set
    /// only for providers that have it; others are asked in words (see `toolgate-agent`).
    pub response_schema: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    Other,
}

/// What the model answered in one generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub stop: StopReason,
    pub usage: Usage,
}

/// Something a streaming reply announced before it was complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamDelta {
    /// More text. Concatenated in order, the pieces are exactly [`Reply::text`].
    Text(String),
    /// The model began a tool call; its arguments are still arriving. `index` is the call's
    /// position in [`Reply::tool_calls`].
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
}

/// Something that completes a conversation.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// One whole reply, without streaming.
    async fn complete(&self, request: &ChatRequest) -> Result<Reply, LlmError>;

    /// One whole reply, calling `on_delta` as it arrives. Cancelling `cancel` ends the request
    /// at once with [`LlmError::Cancelled`].
    ///
    /// The default calls [`Provider::complete`] and reports its text as one delta, so a fake
    /// provider for tests only needs `complete`.
    async fn stream(
        &self,
        request: &ChatRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Reply, LlmError> {
        let reply = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(LlmError::Cancelled),
            reply = self.complete(request) => reply?,
        };
        replay(&reply, on_delta);
        Ok(reply)
    }

    /// The model ids the endpoint offers. The default (for fakes) offers none.
    async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        Ok(Vec::new())
    }
}

/// Reports a whole reply as deltas, for replies that did not arrive as a stream.
pub(crate) fn replay(reply: &Reply, on_delta: &(dyn Fn(StreamDelta) + Send + Sync)) {
    if !reply.text.is_empty() {
        on_delta(StreamDelta::Text(reply.text.clone()));
    }
    for (index, call) in reply.tool_calls.iter().enumerate() {
        on_delta(StreamDelta::ToolCallStarted {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
    }
}

/// Parses tool-call arguments sent as a JSON string (OpenAI, and Anthropic's streamed input)
/// without failing on bad JSON: the loop answers bad arguments with an error result instead.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// Checks the reply says something; an empty reply is an error, not a silent blank message.
pub(crate) fn non_empty(reply: Reply) -> Result<Reply, LlmError> {
    if reply.text.trim().is_empty() && reply.tool_calls.is_empty() {
        Err(LlmError::Empty { stop: reply.stop })
    } else {
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_parts_use_the_mcp_shape() {
        let parts = vec![
            ContentPart::text("hi"),
            ContentPart::Image {
                mime_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            },
        ];
        assert_eq!(
            serde_json::to_value(&parts).expect("serializes"),
            json!([
                {"type": "text", "text": "hi"},
                {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
            ])
        );
    }

    #[test]
    fn tool_text_is_one_text_part() {
        assert_eq!(
            Message::tool_text("c1", "denied", true),
            Message::ToolResult {
                call_id: "c1".into(),
                content: vec![ContentPart::text("denied")],
                is_error: true
            }
        );
    }

    #[test]
    fn arguments_that_are_not_json_stay_a_string() {
        assert_eq!(parse_arguments("{\"a\": 1}"), json!({"a": 1}));
        assert_eq!(parse_arguments("  "), json!({}));
        assert_eq!(parse_arguments("{oops"), json!("{oops"));
    }
}
