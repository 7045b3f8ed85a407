//! The OpenAI Chat Completions wire format (`POST {base}/chat/completions`), also spoken by
//! Ollama, LM Studio, vLLM, OpenRouter, DeepSeek, Groq and others. [`stream`] assembles its
//! server-sent chunks.

pub mod stream;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    non_empty, parse_arguments, ChatRequest, ContentPart, LlmError, Message, Reply, StopReason,
    ToolCall, ToolSpec, Usage, WireFormat,
};
use serde_json::value::RawValue;

pub use stream::StreamAssembler;

#[derive(Debug, Serialize)]
pub struct Request<'a> {
    pub model: &'a str,
    pub messages: Vec<WireMessage>,
    /// Each tool as rendered once for every request ([`render_tool`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<&'a RawValue>,
    pub max_completion_tokens: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Only sent to endpoints known to accept it: some reject unknown fields with a 400.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Structured output: `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat<'a>>,
}

#[derive(Debug, Serialize)]
pub struct ResponseFormat<'a> {
    /// Always `json_schema`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub json_schema: JsonSchemaFormat<'a>,
}

#[derive(Debug, Serialize)]
pub struct JsonSchemaFormat<'a> {
    /// `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: &'static str,
    pub schema: &'a Value,
    /// Strict mode accepts only a subset of JSON Schema (every object closed, every property
    /// required), which a user's schema rarely is; the answer is validated here either way.
    pub strict: bool,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct StreamOptions {
    /// Asks for a last chunk with empty `choices` and the whole request's `usage`.
    pub include_usage: bool,
}

#[derive(Debug, Serialize)]
pub struct Tool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: Function<'a>,
}

#[derive(Debug, Serialize)]
pub struct Function<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a Value,
}

/// One tool as this format writes it.
pub(crate) fn render_tool(spec: &ToolSpec) -> Result<String, serde_json::Error> {
    serde_json::to_string(&Tool {
        kind: "function",
        function: Function {
            name: &spec.name,
            description: &spec.description,
            parameters: &spec.input_schema,
        },
    })
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct WireMessage {
    pub role: String,
    /// `null` beside tool calls: some providers (DeepSeek) send it, some reject `""`.
    #[serde(default)]
    pub content: Option<WireContent>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<WireToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// Message content: a string, or a list of parts (only user messages carry images).
#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
#[serde(untagged)]
pub enum WireContent {
    Text(String),
    Parts(Vec<WirePart>),
}

impl WireContent {
    /// The text of the content; parts that are not text are left out.
    pub fn text(&self) -> String {
        match self {
            WireContent::Text(text) => text.clone(),
            WireContent::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    WirePart::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(""),
        }
    }
}

impl From<String> for WireContent {
    fn from(text: String) -> Self {
        WireContent::Text(text)
    }
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WirePart {
    Text {
        text: String,
    },
    ImageUrl {
        image_url: ImageUrl,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
pub struct ImageUrl {
    /// A `data:` URI for images a tool returned.
    pub url: String,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
pub struct WireToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    pub function: WireFunctionCall,
}

fn function_kind() -> String {
    "function".to_owned()
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
pub struct WireFunctionCall {
    pub name: String,
    /// A JSON document encoded as a string.
    #[serde(default)]
    pub arguments: String,
}

#[derive(Debug, Deserialize)]
pub struct Response {
    #[serde(default)]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub struct Choice {
    pub message: WireMessage,
    pub finish_reason: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
pub struct WireUsage {
    /// Every input token, cached ones included.
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Debug, Deserialize, Default)]
pub struct PromptTokensDetails {
    /// The input tokens read from OpenAI's automatic prefix cache.
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

impl From<&WireUsage> for Usage {
    fn from(u: &WireUsage) -> Self {
        let cached = u
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0)
            .min(u.prompt_tokens);
        Usage {
            input_tokens: u.prompt_tokens - cached,
            output_tokens: u.completion_tokens,
            cache_read_tokens: cached,
            cache_write_tokens: 0,
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
pub struct ErrorDetail {
    #[serde(default)]
    pub message: String,
    /// A string (`context_length_exceeded`), or a number on some compatible servers.
    #[serde(default)]
    pub code: Option<Value>,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

impl ErrorDetail {
    /// The code when it is a word, else the type: what names the kind of failure.
    pub fn kind(&self) -> String {
        match &self.code {
            Some(Value::String(code)) => code.clone(),
            _ => self.kind.clone().unwrap_or_default(),
        }
    }
}

pub fn to_wire(request: &ChatRequest) -> Request<'_> {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(WireMessage {
            role: "system".into(),
            content: Some(system.clone().into()),
            ..Default::default()
        });
    }
    // Images of a run of tool results, sent in one user message after the run: every `tool`
    // message must directly follow the assistant message whose calls it answers.
    let mut images: Vec<WirePart> = Vec::new();
    for message in &request.messages {
        if !matches!(message, Message::ToolResult { .. }) {
            flush_images(&mut messages, &mut images);
        }
        messages.push(match message {
            Message::User { text } => WireMessage {
                role: "user".into(),
                content: Some(text.clone().into()),
                ..Default::default()
            },
            Message::Assistant { text, tool_calls } => WireMessage {
                role: "assistant".into(),
                content: (!text.is_empty() || tool_calls.is_empty()).then(|| text.clone().into()),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| WireToolCall {
                        id: c.id.clone(),
                        kind: function_kind(),
                        function: WireFunctionCall {
                            name: c.name.clone(),
                            arguments: match &c.arguments {
                                Value::String(raw) => raw.clone(),
                                other => other.to_string(),
                            },
                        },
                    })
                    .collect(),
                tool_call_id: None,
            },
            Message::ToolResult {
                call_id,
                content,
                is_error,
            } => tool_message(call_id, content, *is_error, &mut images),
        });
    }
    flush_images(&mut messages, &mut images);
    Request {
        model: &request.model,
        messages,
        // A deferred tool is Anthropic's: this format only ever gets the tools to send.
        tools: request
            .tools
            .iter()
            .filter(|t| !t.defer_loading)
            .map(|t| t.rendered(WireFormat::OpenAi))
            .collect(),
        max_completion_tokens: request.max_tokens,
        stream: false,
        stream_options: None,
        response_format: request
            .response_schema
            .as_ref()
            .map(|schema| ResponseFormat {
                kind: "json_schema",
                json_schema: JsonSchemaFormat {
                    name: "answer",
                    schema,
                    strict: false,
                },
            }),
    }
}

/// The `tool` role takes text only, so a result's images are set aside for the user message
/// that follows, and the text says so, so the model connects the two.
fn tool_message(
    call_id: &str,
    parts: &[ContentPart],
    is_error: bool,
    images: &mut Vec<WirePart>,
) -> WireMessage {
    let mut texts = Vec::new();
    let mut own_images = Vec::new();
    for part in parts {
        match part {
            ContentPart::Text { text } => texts.push(text.as_str()),
            ContentPart::Image { mime_type, data } => own_images.push(WirePart::ImageUrl {
                image_url: ImageUrl {
                    url: format!("data:{mime_type};base64,{data}"),
                },
            }),
            // The found tools are in the request's tool list; the text names them.
            ContentPart::ToolReference { .. } => {}
        }
    }
    let mut text = texts.join("\n");
    if !own_images.is_empty() {
        let note = format!(
            "[The result includes {} image{}; {} in the next user message.]",
            own_images.len(),
            if own_images.len() == 1 { "" } else { "s" },
            if own_images.len() == 1 {
                "it follows"
            } else {
                "they follow"
            }
        );
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&note);
        images.push(WirePart::Text {
            text: format!("Images returned by tool call {call_id}:"),
        });
        images.extend(own_images);
    }
    WireMessage {
        role: "tool".into(),
        // Chat Completions has no error flag on tool results; say it in the text.
        content: Some(
            if is_error {
                format!("Error: {text}")
            } else {
                text
            }
            .into(),
        ),
        tool_call_id: Some(call_id.to_owned()),
        ..Default::default()
    }
}

fn flush_images(messages: &mut Vec<WireMessage>, images: &mut Vec<WirePart>) {
    if !images.is_empty() {
        messages.push(WireMessage {
            role: "user".into(),
            content: Some(WireContent::Parts(std::mem::take(images))),
            ..Default::default()
        });
    }
}

/// Maps a response to a [`Reply`], merging every choice: some providers spread text and tool
/// calls over several choices.
pub fn from_wire(body: &str) -> Result<Reply, LlmError> {
    let response: Response =
        serde_json::from_str(body).map_err(|e| LlmError::Malformed(e.to_string()))?;
    if response.choices.is_empty() {
        return Err(LlmError::Malformed("the response has no choices".into()));
    }
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    let mut stop = StopReason::Other;
    for choice in response.choices {
        if let Some(text) = choice
            .message
            .content
            .map(|c| c.text())
            .filter(|t| !t.is_empty())
        {
            texts.push(text);
        }
        tool_calls.extend(choice.message.tool_calls.into_iter().map(|c| ToolCall {
            id: c.id,
            arguments: parse_arguments(&c.function.arguments),
            name: c.function.name,
        }));
        stop = merge_finish(stop, choice.finish_reason.as_deref());
    }
    if !tool_calls.is_empty() {
        stop = StopReason::ToolUse;
    }
    let usage = response.usage.unwrap_or_default();
    non_empty(Reply {
        text: texts.join("\n"),
        tool_calls,
        stop,
        usage: Usage::from(&usage),
    })
}

/// Folds one choice's `finish_reason` into the reply's: a tool call or the token limit in any
/// choice outranks a plain stop in another.
pub(crate) fn merge_finish(stop: StopReason, finish_reason: Option<&str>) -> StopReason {
    match finish_reason {
        Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
        Some("length") if stop != StopReason::ToolUse => StopReason::MaxTokens,
        Some("stop") if stop == StopReason::Other => StopReason::EndTurn,
        _ => stop,
    }
}

/// The error code (or type) and message of an error body, or the start of the body itself when
/// it is not OpenAI's error shape.
pub fn error_message(body: &str) -> (String, String) {
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(e) => (e.error.kind(), e.error.message),
        Err(_) => (String::new(), body.chars().take(300).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_parallel_tool_calls_with_null_content() {
        // The shape of the function-calling example in OpenAI's documentation.
        let reply = from_wire(r#"{
            "id": "chatcmpl-abc123", "object": "chat.completion", "created": 1699896916,
            "model": "gpt-4.1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{oops"}}
                ]}, "logprobs": null, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
        }"#).expect("parses");
        assert_eq!(reply.text, "");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.tool_calls[0].arguments, json!({"location": "Paris"}));
        assert_eq!(reply.tool_calls[1].arguments, json!("{oops"));
        assert_eq!(reply.usage.output_tokens, 17);
    }

    #[test]
    fn merges_text_and_calls_spread_over_choices() {
        let reply = from_wire(
            r#"{"choices": [
            {"message": {"role": "assistant", "content": "Let me check"}, "finish_reason": "stop"},
            {"message": {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "t", "arguments": ""}}]},
             "finish_reason": "tool_calls"}
        ]}"#,
        )
        .expect("parses");
        assert_eq!(reply.text, "Let me check");
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].arguments, json!({}));
    }

    #[test]
    fn neither_text_nor_calls_is_an_error() {
        let err = from_wire(r#"{"choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}"#).unwrap_err();
        assert_eq!(
            err,
            LlmError::Empty {
                stop: StopReason::EndTurn
            }
        );
    }

    #[test]
    fn tool_results_use_the_tool_role_and_string_arguments() {
        let req = ChatRequest {
            model: "m".into(),
            system: None,
            messages: vec![
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "echo".into(),
                        arguments: json!({"a": 1}),
                    }],
                },
                Message::tool_text("c1", "denied by user", true),
            ],
            tools: vec![],
            max_tokens: 10,
            cache: false,
            response_schema: None,
        };
        let wire = serde_json::to_value(to_wire(&req)).expect("serializes");
        assert_eq!(wire["messages"][0]["content"], Value::Null);
        assert_eq!(
            wire["messages"][0]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(
            wire["messages"][1],
            json!({"role": "tool", "content": "Error: denied by user", "tool_call_id": "c1"})
        );
    }

    #[test]
    fn tool_images_follow_the_run_of_tool_messages_as_a_user_message() {
        let png = ContentPart::Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        let req = ChatRequest {
            model: "m".into(),
            system: None,
            messages: vec![
                Message::Assistant {
                    text: "Let me look".into(),
                    tool_calls: vec![
                        ToolCall {
                            id: "c1".into(),
                            name: "shot".into(),
                            arguments: json!({}),
                        },
                        ToolCall {
                            id: "c2".into(),
                            name: "echo".into(),
                            arguments: json!({}),
                        },
                    ],
                },
                Message::ToolResult {
                    call_id: "c1".into(),
                    content: vec![ContentPart::text("the screen"), png.clone()],
                    is_error: false,
                },
                Message::tool_text("c2", "hi", false),
                Message::User {
                    text: "thanks".into(),
                },
            ],
            tools: vec![],
            max_tokens: 10,
            cache: false,
            response_schema: None,
        };
        let wire = serde_json::to_value(to_wire(&req)).expect("serializes");
        let messages = wire["messages"].as_array().expect("messages");
        let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(roles, ["assistant", "tool", "tool", "user", "user"]);
        assert_eq!(
            messages[1]["content"],
            "the screen\n[The result includes 1 image; it follows in the next user message.]"
        );
        assert_eq!(messages[2]["content"], "hi");
        assert_eq!(
            messages[3]["content"],
            json!([
                {"type": "text", "text": "Images returned by tool call c1:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
            ])
        );
        assert_eq!(messages[4]["content"], "thanks");
        assert!(wire.get("stream").is_none() && wire.get("stream_options").is_none());
    }

    #[test]
    fn error_bodies_name_their_code() {
        let (kind, message) = error_message(
            r#"{"error": {"message": "This model's maximum context length is 128000 tokens.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}"#,
        );
        assert_eq!(kind, "context_length_exceeded");
        assert!(message.starts_with("This model's"));
        assert_eq!(
            error_message("<html>bad gateway</html>").1,
            "<html>bad gateway</html>"
        );
    }
}
