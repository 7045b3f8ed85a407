//! Provider replies in the shapes the Anthropic and OpenAI API references document.

use serde_json::{json, Value};

pub mod anthropic {
    use super::*;

    /// A content block of a Messages response.
    pub fn text_block(text: &str) -> Value {
        json!({"type": "text", "text": text})
    }

    pub fn tool_use_block(id: &str, name: &str, input: Value) -> Value {
        json!({"type": "tool_use", "id": id, "name": name, "input": input})
    }

    /// A whole Messages response with the given blocks.
    pub fn message(content: Vec<Value>, stop_reason: &str) -> Value {
        json!({
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": {"input_tokens": 25, "output_tokens": 12}
        })
    }

    pub fn text(text: &str) -> Value {
        message(vec![text_block(text)], "end_turn")
    }
}

pub mod openai {
    use super::*;

    pub fn tool_call(id: &str, name: &str, arguments: &Value) -> Value {
        json!({"id": id, "type": "function",
               "function": {"name": name, "arguments": arguments.to_string()}})
    }

    /// A whole Chat Completions response with one choice.
    pub fn completion(content: Option<&str>, tool_calls: Vec<Value>) -> Value {
        let finish = if tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let mut message = json!({"role": "assistant", "content": content, "refusal": null});
        if !tool_calls.is_empty() {
            message["tool_calls"] = Value::Array(tool_calls);
        }
        json!({
            "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
            "object": "chat.completion",
            "created": 1741569952,
            "model": "gpt-4.1-2025-04-14",
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}
        })
    }

    pub fn text(text: &str) -> Value {
        completion(Some(text), vec![])
    }
}
