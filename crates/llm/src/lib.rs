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
pub mod pricing;
mod wire_format;

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

pub use error::LlmError;
pub use http::HttpProvider;
pub use presets::Preset;
pub use tokio_util::sync::CancellationToken;
pub use wire_format::WireFormat;

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// Kept out of the model's context until a tool result names it (Anthropic's
    /// `defer_loading`, with `tool_reference` blocks: see [`ContentPart::ToolReference`]). Only
    /// the Anthropic format is ever given a deferred tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
    /// The tool as each wire format writes it, made once: a catalog of a thousand tools is sent
    /// with every request, and these never change.
    #[serde(skip)]
    rendered: Rendered,
}

impl ToolSpec {
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
            defer_loading: false,
            rendered: Rendered::default(),
        }
    }

    /// The same tool, deferred (see [`ToolSpec::defer_loading`]).
    pub fn deferred(mut self) -> Self {
        self.defer_loading = true;
        self.rendered = Rendered::default();
        self
    }

    /// This tool's JSON for `format`, rendered on first use.
    pub(crate) fn rendered(&self, format: WireFormat) -> &RawValue {
        type Render = fn(&ToolSpec) -> Result<String, serde_json::Error>;
        let (slot, render): (_, Render) = match format {
            WireFormat::Anthropic => (&self.rendered.anthropic, anthropic::render_tool),
            WireFormat::OpenAi => (&self.rendered.openai, openai::render_tool),
        };
        slot.get_or_init(|| {
            // Names, descriptions and JSON values always serialize; the fallback is never met.
            let text = render(self).unwrap_or_else(|_| "{}".to_owned());
            RawValue::from_string(text).unwrap_or_else(|_| empty_object())
        })
    }
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!("`{{}}` is JSON"))
}

/// A [`ToolSpec`]'s rendered JSON. It never takes part in comparing, printing or cloning a spec.
#[derive(Default)]
struct Rendered {
    anthropic: OnceLock<Box<RawValue>>,
    openai: OnceLock<Box<RawValue>>,
}

impl Clone for Rendered {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for Rendered {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Rendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rendered")
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments. When the model sent text that is not JSON, this is that text as a
    /// `Value::String`, so the loop can answer with an error result instead of failing.
    pub arguments: Value,
}

/// One piece of a tool result. MCP tools return text and images; both go back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
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
    /// A tool the result loads (Toolgate's `search_tools` found it): Anthropic expands it into
    /// the tool's definition, from the deferred tools of the request. Other formats leave it
    /// out: they get the found tools in the request's tool list instead.
    ToolReference {
        tool_name: String,
    },
}

impl ContentPart {
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }
}

/// One entry of the conversation. Its JSON (camelCase, tagged by `role`) is what the history
/// stores and what the UI receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
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
    /// Shared, not copied: the same specs go with every request of a conversation.
    pub tools: Vec<Arc<ToolSpec>>,
    pub max_tokens: u32,
    /// Mark the stable parts of the prompt for the provider's cache: Anthropic's
    /// `cache_control` breakpoints on the tools, the system prompt and the conversation so
    /// far. (OpenAI caches the longest prefix it has seen by itself.)
    pub cache: bool,
    /// Constrains the final answer to JSON valid against this schema, with the provider's own
    /// structured output (Anthropic's `output_config.format`, OpenAI's `response_format`). Set
    /// only for providers that have it; others are asked in words (see `toolgate-agent`).
    pub response_schema: Option<serde_json::Value>,
}

/// The tokens of one model call (or of several, summed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens not read from or written to the prompt cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache (Anthropic bills these at a premium).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
    }
}

impl Usage {
    /// Every input token, cached or not.
    pub fn total_input(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }
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
