//! The Anthropic Messages API wire format (`POST /v1/messages`). [`stream`] assembles its
//! server-sent events.

pub mod stream;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    non_empty, ChatRequest, ContentPart, LlmError, Message, Reply, StopReason, ToolCall, Usage,
};

pub use stream::StreamAssembler;

pub const API_VERSION: &str = "2023-06-01";

#[derive(Debug, Serialize)]
pub struct Request<'a> {
    pub model: &'a str,
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<&'a str>,
    pub messages: Vec<WireMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Structured output: `{"format": {"type": "json_schema", "schema": …}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig<'a>>,
}

#[derive(Debug, Serialize)]
pub struct OutputConfig<'a> {
    pub format: OutputFormat<'a>,
}

#[derive(Debug, Serialize)]
pub struct OutputFormat<'a> {
    /// Always `json_schema`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub schema: &'a Value,
}

#[derive(Debug, Serialize)]
pub struct Tool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub input_schema: &'a Value,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct WireMessage {
    pub role: &'static str,
    pub content: Vec<Block>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolResultContent,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// Blocks this host does not use (thinking, server tools…) are accepted and ignored.
    #[serde(other)]
    Unknown,
}

/// The content of a `tool_result` block: the API takes a plain string or a list of text and
/// image blocks.
#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// One text part goes as the plain string, the simplest form every compatible endpoint takes.
    Text(String),
    Blocks(Vec<ResultBlock>),
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultBlock {
    Text { text: String },
    Image { source: ImageSource },
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
pub struct ImageSource {
    /// Always `base64`: MCP tools return image bytes, not URLs.
    #[serde(rename = "type")]
    pub kind: String,
    pub media_type: String,
    pub data: String,
}

fn tool_result_content(parts: &[ContentPart]) -> ToolResultContent {
    match parts {
        [] => ToolResultContent::Text(String::new()),
        [ContentPart::Text { text }] => ToolResultContent::Text(text.clone()),
        parts => ToolResultContent::Blocks(
            parts
                .iter()
                .map(|part| match part {
                    ContentPart::Text { text } => ResultBlock::Text { text: text.clone() },
                    ContentPart::Image { mime_type, data } => ResultBlock::Image {
                        source: ImageSource {
                            kind: "base64".into(),
                            media_type: mime_type.clone(),
                            data: data.clone(),
                        },
                    },
                })
                .collect(),
        ),
    }
}

#[derive(Debug, Deserialize)]
pub struct Response {
    #[serde(default)]
    pub content: Vec<Block>,
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub usage: WireUsage,
}

#[derive(Debug, Deserialize, Default)]
pub struct WireUsage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
}

/// Error bodies: `{"type":"error","error":{"type":"…","message":"…"}}`.
#[derive(Debug, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
pub struct ErrorDetail {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

/// Maps the neutral conversation to Anthropic messages. Consecutive tool results become one user
/// message of `tool_result` blocks, as the API requires after an assistant's `tool_use` blocks.
pub fn to_wire(request: &ChatRequest) -> Request<'_> {
    let mut messages: Vec<WireMessage> = Vec::new();
    for message in &request.messages {
        match message {
            Message::User { text } => messages.push(WireMessage {
                role: "user",
                content: vec![Block::Text { text: text.clone() }],
            }),
            Message::Assistant { text, tool_calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(Block::Text { text: text.clone() });
                }
                content.extend(tool_calls.iter().map(|c| Block::ToolUse {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    input: match &c.arguments {
                        Value::Object(_) => c.arguments.clone(),
                        // Anthropic requires an object; bad arguments were answered with an error.
                        _ => Value::Object(Default::default()),
                    },
                }));
                messages.push(WireMessage {
                    role: "assistant",
                    content,
                });
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let block = Block::ToolResult {
                    tool_use_id: call_id.clone(),
                    content: tool_result_content(content),
                    is_error: *is_error,
                };
                match messages.last_mut() {
                    Some(last)
                        if last.role == "user"
                            && matches!(last.content.first(), Some(Block::ToolResult { .. })) =>
                    {
                        last.content.push(block)
                    }
                    _ => messages.push(WireMessage {
                        role: "user",
                        content: vec![block],
                    }),
                }
            }
        }
    }
    Request {
        model: &request.model,
        max_tokens: request.max_tokens,
        system: request.system.as_deref(),
        messages,
        tools: request
            .tools
            .iter()
            .map(|t| Tool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.input_schema,
            })
            .collect(),
        stream: false,
        output_config: request.response_schema.as_ref().map(|schema| OutputConfig {
            format: OutputFormat {
                kind: "json_schema",
                schema,
            },
        }),
    }
}

/// Maps a response body to a [`Reply`]: every text block joined, every `tool_use` collected.
pub fn from_wire(body: &str) -> Result<Reply, LlmError> {
    let response: Response =
        serde_json::from_str(body).map_err(|e| LlmError::Malformed(e.to_string()))?;
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for block in response.content {
        match block {
            Block::Text { text } if !text.is_empty() => texts.push(text),
            Block::ToolUse { id, name, input } => tool_calls.push(ToolCall {
                id,
                name,
                arguments: input,
            }),
            _ => {}
        }
    }
    let stop = stop_reason(response.stop_reason.as_deref());
    non_empty(Reply {
        text: texts.join("\n"),
        tool_calls,
        stop,
        usage: Usage {
            input_tokens: response.usage.input_tokens,
            output_tokens: response.usage.output_tokens,
        },
    })
}

pub(crate) fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("end_turn") | Some("stop_sequence") => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

/// The message of an error body, or the body itself when it is not Anthropic's error shape.
pub fn error_message(body: &str) -> (String, String) {
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(e) => (e.error.kind, e.error.message),
        Err(_) => (String::new(), body.chars().take(300).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolSpec;
    use serde_json::json;

    #[test]
    fn tool_results_are_grouped_after_the_assistant_turn() {
        let req = ChatRequest {
            model: "m".into(),
            system: Some("be brief".into()),
            messages: vec![
                Message::User { text: "hi".into() },
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![
                        ToolCall {
                            id: "a".into(),
                            name: "echo".into(),
                            arguments: json!({"x": 1}),
                        },
                        ToolCall {
                            id: "b".into(),
                            name: "echo".into(),
                            arguments: json!("not json"),
                        },
                    ],
                },
                Message::tool_text("a", "ok", false),
                Message::tool_text("b", "denied", true),
            ],
            tools: vec![ToolSpec {
                name: "echo".into(),
                description: "d".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: 100,
            response_schema: None,
        };
        let wire = serde_json::to_value(to_wire(&req)).expect("serializes");
        assert_eq!(
            wire,
            json!({
                "model": "m", "max_tokens": 100, "system": "be brief",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [
                        {"type": "tool_use", "id": "a", "name": "echo", "input": {"x": 1}},
                        {"type": "tool_use", "id": "b", "name": "echo", "input": {}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "a", "content": "ok"},
                        {"type": "tool_result", "tool_use_id": "b", "content": "denied", "is_error": true}
                    ]}
                ],
                "tools": [{"name": "echo", "description": "d", "input_schema": {"type": "object"}}]
            })
        );
    }

    #[test]
    fn reads_text_and_tool_use_from_the_documented_response() {
        // The shape of the tool-use example in Anthropic's documentation.
        let reply = from_wire(
            r#"{
            "id": "msg_01Aq9w938a90dw8q", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "stop_reason": "tool_use", "stop_sequence": null,
            "content": [
                {"type": "text", "text": "I'll check the weather."},
                {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
                 "input": {"location": "San Francisco, CA"}}
            ],
            "usage": {"input_tokens": 472, "output_tokens": 91}
        }"#,
        )
        .expect("parses");
        assert_eq!(reply.text, "I'll check the weather.");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(
            reply.tool_calls[0].arguments,
            json!({"location": "San Francisco, CA"})
        );
        assert_eq!(reply.usage.input_tokens, 472);
    }

    #[test]
    fn empty_reply_is_an_error() {
        let err = from_wire(r#"{"content": [], "stop_reason": "end_turn"}"#).unwrap_err();
        assert_eq!(
            err,
            LlmError::Empty {
                stop: StopReason::EndTurn
            }
        );
    }

    #[test]
    fn images_go_inside_the_tool_result() {
        let req = ChatRequest {
            model: "m".into(),
            system: None,
            messages: vec![Message::ToolResult {
                call_id: "a".into(),
                content: vec![
                    ContentPart::text("a chart"),
                    ContentPart::Image {
                        mime_type: "image/png".into(),
                        data: "iVBORw0KGgo=".into(),
                    },
                ],
                is_error: false,
            }],
            tools: vec![],
            max_tokens: 10,
            response_schema: None,
        };
        let wire = serde_json::to_value(to_wire(&req)).expect("serializes");
        assert_eq!(
            wire["messages"][0],
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": [
                {"type": "text", "text": "a chart"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
            ]}]})
        );
        assert!(
            wire.get("stream").is_none(),
            "stream is only sent when true"
        );
    }
}
