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

    /// A reply asking for one tool call, and nothing else.
    pub fn tool_use(id: &str, name: &str, input: Value) -> Value {
        message(vec![tool_use_block(id, name, input)], "tool_use")
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

/// Anthropic Messages streaming events (`"stream": true`), in the shapes of the streaming
/// examples in Anthropic's documentation. Each function returns the events of one part of the
/// stream; a whole reply is `message_start`, its blocks, then [`anthropic_stream::end`].
pub mod anthropic_stream {
    use super::*;

    pub fn message_start(input_tokens: u64) -> Value {
        json!({"type": "message_start", "message": {
            "id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", "type": "message", "role": "assistant",
            "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1}}})
    }

    pub fn ping() -> Value {
        json!({"type": "ping"})
    }

    /// A text block at `index`, its text arriving in `pieces`.
    pub fn text_block(index: usize, pieces: &[&str]) -> Vec<Value> {
        let mut events = vec![json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}})];
        events.extend(pieces.iter().map(|text| {
            json!({"type": "content_block_delta", "index": index,
                   "delta": {"type": "text_delta", "text": text}})
        }));
        events.push(json!({"type": "content_block_stop", "index": index}));
        events
    }

    /// A tool_use block at `index`, its input arriving as `input_json_delta` pieces (the first,
    /// as documented, is empty).
    pub fn tool_use_block(index: usize, id: &str, name: &str, json_pieces: &[&str]) -> Vec<Value> {
        let mut events = vec![json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})];
        events.extend(
            std::iter::once("")
                .chain(json_pieces.iter().copied())
                .map(|piece| {
                    json!({"type": "content_block_delta", "index": index,
                   "delta": {"type": "input_json_delta", "partial_json": piece}})
                }),
        );
        events.push(json!({"type": "content_block_stop", "index": index}));
        events
    }

    /// `message_delta` with the stop reason and output usage, then `message_stop`.
    pub fn end(stop_reason: &str, output_tokens: u64) -> Vec<Value> {
        vec![
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": output_tokens}}),
            json!({"type": "message_stop"}),
        ]
    }

    /// An error event, as sent mid-stream (for example `overloaded_error`).
    pub fn error(kind: &str, message: &str) -> Value {
        json!({"type": "error", "error": {"type": kind, "message": message}})
    }

    /// A whole streamed text reply.
    pub fn text(pieces: &[&str]) -> Vec<Value> {
        let mut events = vec![message_start(25), ping()];
        events.extend(text_block(0, pieces));
        events.extend(end("end_turn", 15));
        events
    }
}

/// OpenAI Chat Completions streaming chunks (`"stream": true`), in the shapes of the streaming
/// examples in OpenAI's API reference and function-calling guide. `data: [DONE]` is added by the
/// scripted provider.
pub mod openai_stream {
    use super::*;

    /// A `chat.completion.chunk` with these choices.
    pub fn chunk(choices: Value) -> Value {
        json!({"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1694268190,
               "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices": choices})
    }

    /// The first chunk of a choice: the role, and `content` (`""` from OpenAI, `null` from some
    /// compatible servers).
    pub fn role(choice: usize, content: Option<&str>) -> Value {
        chunk(
            json!([{"index": choice, "delta": {"role": "assistant", "content": content},
                      "logprobs": null, "finish_reason": null}]),
        )
    }

    pub fn content(choice: usize, text: &str) -> Value {
        chunk(
            json!([{"index": choice, "delta": {"content": text}, "logprobs": null,
                      "finish_reason": null}]),
        )
    }

    /// The first fragment of a tool call: index, id, name, and empty arguments.
    pub fn tool_call_start(choice: usize, index: usize, id: &str, name: &str) -> Value {
        chunk(
            json!([{"index": choice, "delta": {"tool_calls": [{"index": index, "id": id,
            "type": "function", "function": {"name": name, "arguments": ""}}]},
            "logprobs": null, "finish_reason": null}]),
        )
    }

    /// A later fragment: only the index and a piece of the arguments.
    pub fn tool_call_arguments(choice: usize, index: usize, piece: &str) -> Value {
        chunk(
            json!([{"index": choice, "delta": {"tool_calls": [{"index": index,
            "function": {"arguments": piece}}]}, "logprobs": null, "finish_reason": null}]),
        )
    }

    pub fn finish(choice: usize, reason: &str) -> Value {
        chunk(json!([{"index": choice, "delta": {}, "logprobs": null, "finish_reason": reason}]))
    }

    /// The last chunk when `stream_options.include_usage` was asked for: empty choices.
    pub fn usage(prompt_tokens: u64, completion_tokens: u64) -> Value {
        let mut usage = chunk(json!([]));
        usage["usage"] = json!({"prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens});
        usage
    }

    /// A whole streamed text reply with usage.
    pub fn text(pieces: &[&str]) -> Vec<Value> {
        let mut events = vec![role(0, Some(""))];
        events.extend(pieces.iter().map(|p| content(0, p)));
        events.push(finish(0, "stop"));
        events.push(usage(9, 12));
        events
    }
}

/// OpenAI Responses API streaming events (`"stream": true`), as Codex CLI reads them: each output
/// item added and done, then `response.completed` with the usage.
pub mod responses_stream {
    use super::*;

    fn response(id: &str, status: &str, output: Value) -> Value {
        json!({"id": id, "object": "response", "created_at": 1764150000, "status": status,
               "model": "toolgate-scripted", "output": output,
               "usage": {"input_tokens": 25, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 15, "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": 40}})
    }

    fn around(id: &str, item: Value, deltas: Vec<Value>) -> Vec<Value> {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        let mut events = vec![
            json!({"type": "response.created", "sequence_number": 0,
                   "response": response(id, "in_progress", json!([]))}),
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                   "item": added}),
        ];
        events.extend(deltas);
        events.push(
            json!({"type": "response.output_item.done", "sequence_number": 3,
                           "output_index": 0, "item": item}),
        );
        events.push(json!({"type": "response.completed", "sequence_number": 4,
                           "response": response(id, "completed", json!([item]))}));
        events
    }

    /// A reply that calls `name`; `namespace` is the MCP server's namespace when the request
    /// offered the tool inside one (Codex offers `mcp__SERVER` namespaces).
    pub fn function_call(
        call_id: &str,
        namespace: Option<&str>,
        name: &str,
        arguments: &Value,
    ) -> Vec<Value> {
        let mut item = json!({"type": "function_call", "id": format!("fc_{call_id}"),
            "call_id": call_id, "name": name, "arguments": arguments.to_string(),
            "status": "completed"});
        if let Some(namespace) = namespace {
            item["namespace"] = json!(namespace);
        }
        around(&format!("resp_{call_id}"), item, Vec::new())
    }

    /// A final text reply.
    pub fn text(id: &str, text: &str) -> Vec<Value> {
        let item = json!({"type": "message", "id": format!("msg_{id}"), "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]});
        let delta = json!({"type": "response.output_text.delta", "sequence_number": 2,
            "item_id": format!("msg_{id}"), "output_index": 0, "content_index": 0, "delta": text});
        around(&format!("resp_{id}"), item, vec![delta])
    }
}

/// Gemini API `streamGenerateContent?alt=sse` chunks, as Gemini CLI reads them: one
/// `GenerateContentResponse` per event.
pub mod gemini_stream {
    use super::*;

    fn chunk(parts: Value) -> Vec<Value> {
        vec![json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 25, "candidatesTokenCount": 15,
                              "totalTokenCount": 40},
            "modelVersion": "gemini-2.5-flash"})]
    }

    pub fn function_call(name: &str, args: &Value) -> Vec<Value> {
        chunk(json!([{"functionCall": {"name": name, "args": args}}]))
    }

    pub fn text(text: &str) -> Vec<Value> {
        chunk(json!([{"text": text}]))
    }
}
