//! The Anthropic Messages API wire format (`POST /v1/messages`). [`stream`] assembles its
//! server-sent events.

pub mod stream;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::{
    non_empty, ChatRequest, ContentPart, LlmError, Message, Reply, StopReason, ToolCall, ToolSpec,
    Usage, WireFormat,
};

pub use stream::StreamAssembler;

pub const API_VERSION: &str = "2023-06-01";

#[derive(Debug, Serialize)]
pub struct Request<'a> {
    pub model: &'a str,
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<System<'a>>,
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

/// The system prompt: a plain string, or (to carry a cache breakpoint) one text block.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum System<'a> {
    Text(&'a str),
    Blocks([SystemBlock<'a>; 1]),
}

#[derive(Debug, Serialize)]
pub struct SystemBlock<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: &'a str,
    pub cache_control: CacheControl,
}

/// A prompt-cache breakpoint: everything up to and including the block that carries it is
/// cached (for five minutes, renewed by each hit).
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq, Clone, Copy)]
pub struct CacheControl {
    #[serde(rename = "type")]
    pub kind: CacheKind,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum CacheKind {
    Ephemeral,
}

const BREAKPOINT: CacheControl = CacheControl {
    kind: CacheKind::Ephemeral,
};

/// One tool of the request: as rendered once for every request ([`render_tool`]), or, for the
/// one that carries the tools' cache breakpoint, written out with it.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Tool<'a> {
    Rendered(&'a RawValue),
    Marked(WireTool<'a>),
}

#[derive(Debug, Serialize)]
pub struct WireTool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub input_schema: &'a Value,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'a> WireTool<'a> {
    fn of(spec: &'a ToolSpec) -> Self {
        Self {
            name: &spec.name,
            description: &spec.description,
            input_schema: &spec.input_schema,
            defer_loading: spec.defer_loading,
            cache_control: None,
        }
    }
}

/// One tool as this format writes it.
pub(crate) fn render_tool(spec: &ToolSpec) -> Result<String, serde_json::Error> {
    serde_json::to_string(&WireTool::of(spec))
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolResultContent,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
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
    Text {
        text: String,
    },
    Image {
        source: ImageSource,
    },
    /// Loads a deferred tool of the request: the API puts its definition in its place.
    ToolReference {
        tool_name: String,
    },
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
    // A search result that loads tools is sent as its references alone, the shape Anthropic
    // documents for a tool search of one's own: the definitions they expand to say the rest.
    let references: Vec<ResultBlock> = parts
        .iter()
        .filter_map(|part| match part {
            ContentPart::ToolReference { tool_name } => Some(ResultBlock::ToolReference {
                tool_name: tool_name.clone(),
            }),
            _ => None,
        })
        .collect();
    if !references.is_empty() {
        return ToolResultContent::Blocks(references);
    }
    match parts {
        [] => ToolResultContent::Text(String::new()),
        [ContentPart::Text { text }] => ToolResultContent::Text(text.clone()),
        parts => ToolResultContent::Blocks(
            parts
                .iter()
                .filter_map(|part| match part {
                    ContentPart::Text { text } => Some(ResultBlock::Text { text: text.clone() }),
                    ContentPart::Image { mime_type, data } => Some(ResultBlock::Image {
                        source: ImageSource {
                            kind: "base64".into(),
                            media_type: mime_type.clone(),
                            data: data.clone(),
                        },
                    }),
                    ContentPart::ToolReference { .. } => None,
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
    /// Input written to the prompt cache; `null` or absent when nothing was.
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}

impl From<&WireUsage> for Usage {
    fn from(u: &WireUsage) -> Self {
        Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_input_tokens.unwrap_or(0),
            cache_write_tokens: u.cache_creation_input_tokens.unwrap_or(0),
        }
    }
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
///
/// With [`ChatRequest::cache`], three cache breakpoints (of the four the API allows) mark what
/// stays the same from one request to the next: the last tool that is always loaded (the tools
/// come first in the prompt), the system prompt, and the last block of the conversation so far,
/// so the next round of the turn, and the next turn, read all of it from the cache.
pub fn to_wire(request: &ChatRequest) -> Request<'_> {
    let mut messages: Vec<WireMessage> = Vec::new();
    for message in &request.messages {
        match message {
            Message::User { text } => messages.push(WireMessage {
                role: "user",
                content: vec![Block::Text {
                    text: text.clone(),
                    cache_control: None,
                }],
            }),
            Message::Assistant { text, tool_calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(Block::Text {
                        text: text.clone(),
                        cache_control: None,
                    });
                }
                content.extend(tool_calls.iter().map(|c| Block::ToolUse {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    input: match &c.arguments {
                        Value::Object(_) => c.arguments.clone(),
                        // Anthropic requires an object; bad arguments were answered with an error.
                        _ => Value::Object(Default::default()),
                    },
                    cache_control: None,
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
                    cache_control: None,
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
    let mut tools: Vec<Tool<'_>> = request
        .tools
        .iter()
        .map(|t| Tool::Rendered(t.rendered(WireFormat::Anthropic)))
        .collect();
    let system = request.system.as_deref().map(|text| match request.cache {
        true => System::Blocks([SystemBlock {
            kind: "text",
            text,
            cache_control: BREAKPOINT,
        }]),
        false => System::Text(text),
    });
    if request.cache {
        // Deferred tools are not part of the prompt until loaded, so the breakpoint goes on the
        // last tool that is.
        if let Some(last) = request.tools.iter().rposition(|t| !t.defer_loading) {
            let mut marked = WireTool::of(&request.tools[last]);
            marked.cache_control = Some(BREAKPOINT);
            tools[last] = Tool::Marked(marked);
        }
        if let Some(block) = messages.last_mut().and_then(|m| m.content.last_mut()) {
            match block {
                Block::Text { cache_control, .. }
                | Block::ToolUse { cache_control, .. }
                | Block::ToolResult { cache_control, .. } => *cache_control = Some(BREAKPOINT),
                Block::Unknown => {}
            }
        }
    }
    Request {
        model: &request.model,
        max_tokens: request.max_tokens,
        system,
        messages,
        tools,
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
            Block::Text { text, .. } if !text.is_empty() => texts.push(text),
            Block::ToolUse {
                id, name, input, ..
            } => tool_calls.push(ToolCall {
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
        usage: Usage::from(&response.usage),
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
            tools: vec![std::sync::Arc::new(ToolSpec::new(
                "echo",
                "d",
                json!({"type": "object"}),
            ))],
            max_tokens: 100,
            cache: false,
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
            cache: false,
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
