//! The OpenAI Chat Completions wire format (`POST {base}/chat/completions`), also spoken by
//! Ollama, LM Studio, vLLM, OpenRouter, DeepSeek, Groq and others.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    non_empty, parse_arguments, ChatRequest, LlmError, Message, Reply, StopReason, ToolCall, Usage,
};

#[derive(Debug, Serialize)]
pub struct Request<'a> {
    pub model: &'a str,
    pub messages: Vec<WireMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    pub max_completion_tokens: u32,
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

#[derive(Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct WireMessage {
    pub role: String,
    /// `null` beside tool calls: some providers (DeepSeek) send it, some reject `""`.
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<WireToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
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
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
}

#[derive(Debug, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
pub struct ErrorDetail {
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub code: Option<Value>,
}

pub fn to_wire(request: &ChatRequest) -> Request<'_> {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(WireMessage {
            role: "system".into(),
            content: Some(system.clone()),
            ..Default::default()
        });
    }
    for message in &request.messages {
        messages.push(match message {
            Message::User { text } => WireMessage {
                role: "user".into(),
                content: Some(text.clone()),
                ..Default::default()
            },
            Message::Assistant { text, tool_calls } => WireMessage {
                role: "assistant".into(),
                content: (!text.is_empty() || tool_calls.is_empty()).then(|| text.clone()),
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
            } => WireMessage {
                role: "tool".into(),
                // Chat Completions has no error flag on tool results; say it in the text.
                content: Some(if *is_error {
                    format!("Error: {content}")
                } else {
                    content.clone()
                }),
                tool_call_id: Some(call_id.clone()),
                ..Default::default()
            },
        });
    }
    Request {
        model: &request.model,
        messages,
        tools: request
            .tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                function: Function {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.input_schema,
                },
            })
            .collect(),
        max_completion_tokens: request.max_tokens,
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
        if let Some(text) = choice.message.content.filter(|t| !t.is_empty()) {
            texts.push(text);
        }
        tool_calls.extend(choice.message.tool_calls.into_iter().map(|c| ToolCall {
            id: c.id,
            arguments: parse_arguments(&c.function.arguments),
            name: c.function.name,
        }));
        stop = match choice.finish_reason.as_deref() {
            Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some("stop") if stop == StopReason::Other => StopReason::EndTurn,
            _ => stop,
        };
    }
    if !tool_calls.is_empty() {
        stop = StopReason::ToolUse;
    }
    let usage = response.usage.unwrap_or_default();
    non_empty(Reply {
        text: texts.join("\n"),
        tool_calls,
        stop,
        usage: Usage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
        },
    })
}

pub fn error_message(body: &str) -> (String, String) {
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(e) => (
            e.error
                .code
                .map(|c| {
                    c.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| c.to_string())
                })
                .unwrap_or_default(),
            e.error.message,
        ),
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
        assert_eq!(err, LlmError::Empty);
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
                Message::ToolResult {
                    call_id: "c1".into(),
                    content: "denied by user".into(),
                    is_error: true,
                },
            ],
            tools: vec![],
            max_tokens: 10,
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
}
