//! Model providers behind one trait.
//!
//! The conversation is held in provider-neutral types ([`Message`], [`ToolCall`], [`ToolSpec`]);
//! each wire format has one module that maps those types to its serde request and response types
//! and back: [`anthropic`] for the Messages API, [`openai`] for Chat Completions and every
//! endpoint compatible with it. Mapping is pure and unit-tested; only [`HttpProvider`] touches the
//! network, and only through the base URL the user configured.
//!
//! Errors are typed ([`LlmError`]) so the loop can decide what to do, and never carry the API key.

pub mod anthropic;
mod http;
pub mod openai;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use http::{HttpProvider, WireFormat};

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

/// One entry of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
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
        content: String,
        is_error: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
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

/// Why a request to the model failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("the provider rejected the API key (HTTP {status}): {message}. Check the key in Settings → Provider")]
    Auth { status: u16, message: String },
    #[error("the provider is rate limiting requests{}: {message}", retry_after.map(|s| format!(" (retry after {s} s)")).unwrap_or_default())]
    RateLimited {
        retry_after: Option<u64>,
        message: String,
    },
    #[error("the provider is overloaded (HTTP {status}); try again shortly")]
    Overloaded { status: u16 },
    #[error("the conversation is too long for this model: {0}")]
    ContextTooLong(String),
    #[error("could not reach the provider at {url}: {detail}")]
    Network { url: String, detail: String },
    #[error("the provider answered with an error (HTTP {status}): {message}")]
    Api { status: u16, message: String },
    #[error("the provider's answer could not be understood: {0}")]
    Malformed(String),
    #[error("the model answered with neither text nor a tool call")]
    Empty,
    #[error("no API key is set for this provider. Add one in Settings → Provider")]
    NoKey,
}

/// Something that completes a conversation.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    async fn complete(&self, request: &ChatRequest) -> Result<Reply, LlmError>;
}

/// Parses tool-call arguments sent as a JSON string (OpenAI) without failing on bad JSON.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// Checks the reply says something; an empty reply is an error, not a silent blank message.
pub(crate) fn non_empty(reply: Reply) -> Result<Reply, LlmError> {
    if reply.text.trim().is_empty() && reply.tool_calls.is_empty() {
        Err(LlmError::Empty)
    } else {
        Ok(reply)
    }
}
