//! Assembles a streamed Chat Completions reply (`"stream": true`) from its chunks.
//!
//! Each `data:` line is a `chat.completion.chunk` whose `choices[].delta` carries a piece of
//! `content` (possibly `null`) and `tool_calls` fragments: the first fragment of a call has its
//! `index`, `id` and `function.name`, later ones only the `index` and a piece of
//! `function.arguments`. A choice ends with a `finish_reason`; with `stream_options.include_usage`
//! a last chunk has empty `choices` and the `usage`; `data: [DONE]` ends the stream.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use super::{merge_finish, ErrorDetail, WireUsage};
use crate::error::classify;
use crate::{
    non_empty, parse_arguments, LlmError, Reply, StopReason, StreamDelta, ToolCall, Usage,
};

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// Groq reports usage here on the last chunk, whether or not it was asked for.
    #[serde(default)]
    x_groq: Option<XGroq>,
    /// OpenRouter and vLLM report a failure after the stream started as a chunk with `error`.
    #[serde(default)]
    error: Option<ErrorDetail>,
}

#[derive(Debug, Deserialize)]
struct XGroq {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: usize,
    #[serde(default)]
    delta: Option<ChunkDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
struct ChunkDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<Fragment>>,
}

#[derive(Debug, Deserialize)]
struct Fragment {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionFragment>,
}

#[derive(Debug, Deserialize)]
struct FunctionFragment {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Feeds on the chunks of one streamed reply and yields the [`Reply`].
#[derive(Debug, Default)]
pub struct StreamAssembler {
    text: String,
    last_text_choice: Option<usize>,
    /// Calls in the order they started, across every choice: some providers spread one reply's
    /// calls over several choices, and all of them belong to the reply.
    calls: Vec<PartialCall>,
    /// `(choice, fragment index)` → position in `calls`.
    slots: HashMap<(usize, usize), usize>,
    /// The call a fragment without an `index` continues, per choice.
    last_call: HashMap<usize, usize>,
    finish: BTreeMap<usize, String>,
    usage: Usage,
    done: bool,
}

impl StreamAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one event (its `data:` text), reporting deltas through `emit`. Returns whether the
    /// stream is complete (`[DONE]`).
    pub fn push(
        &mut self,
        _name: &str,
        data: &str,
        emit: &mut dyn FnMut(StreamDelta),
    ) -> Result<bool, LlmError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            LlmError::Malformed(format!(
                "a stream chunk is not valid: {e}; it began: {}",
                data.chars().take(200).collect::<String>()
            ))
        })?;
        if let Some(error) = chunk.error {
            let status = match &error.code {
                Some(serde_json::Value::Number(n)) => n
                    .as_u64()
                    .and_then(|n| u16::try_from(n).ok())
                    .filter(|n| (400..600).contains(n))
                    .unwrap_or(500),
                _ => 500,
            };
            return Err(classify(status, &error.kind(), error.message, None));
        }
        for usage in [chunk.usage, chunk.x_groq.and_then(|x| x.usage)]
            .into_iter()
            .flatten()
        {
            self.usage = Usage::from(&usage);
        }
        for choice in chunk.choices {
            let delta = choice.delta.unwrap_or_default();
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.add_text(choice.index, &text, emit);
            }
            for (position, fragment) in delta.tool_calls.into_iter().flatten().enumerate() {
                self.add_fragment(choice.index, position, fragment, emit);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish.insert(choice.index, reason);
            }
        }
        Ok(false)
    }

    /// Whether the stream ended as it should. A server that closes the stream without `[DONE]`
    /// after a finish reason has said all it had (a cautious leniency for compatible servers).
    pub fn is_complete(&self) -> bool {
        self.done || !self.finish.is_empty()
    }

    /// The assembled reply. Fails when the stream was cut off or said nothing.
    pub fn finish(self) -> Result<Reply, LlmError> {
        if !self.is_complete() {
            return Err(LlmError::Malformed(
                "the stream ended before `[DONE]` or a finish reason; the reply is incomplete"
                    .into(),
            ));
        }
        let mut stop = self
            .finish
            .values()
            .fold(StopReason::Other, |stop, reason| {
                merge_finish(stop, Some(reason))
            });
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .map(|call| ToolCall {
                // A call needs an id for its result to refer to; a few servers omit it.
                id: if call.id.is_empty() {
                    made_up_id()
                } else {
                    call.id
                },
                name: call.name,
                arguments: parse_arguments(&call.arguments),
            })
            .collect();
        if !tool_calls.is_empty() {
            stop = StopReason::ToolUse;
        }
        non_empty(Reply {
            text: self.text,
            tool_calls,
            stop,
            usage: self.usage,
        })
    }

    /// Appends text; text from another choice starts on a new line, so the deltas always add up
    /// to the reply's text.
    fn add_text(&mut self, choice: usize, text: &str, emit: &mut dyn FnMut(StreamDelta)) {
        if self.last_text_choice.is_some_and(|c| c != choice) && !self.text.is_empty() {
            self.text.push('\n');
            emit(StreamDelta::Text("\n".into()));
        }
        self.last_text_choice = Some(choice);
        self.text.push_str(text);
        emit(StreamDelta::Text(text.to_owned()));
    }

    fn add_fragment(
        &mut self,
        choice: usize,
        position: usize,
        fragment: Fragment,
        emit: &mut dyn FnMut(StreamDelta),
    ) {
        let id = fragment.id.filter(|id| !id.is_empty());
        let (name, arguments) = fragment
            .function
            .map(|f| (f.name.filter(|n| !n.is_empty()), f.arguments))
            .unwrap_or((None, None));
        let existing = match fragment.index {
            Some(index) => self.slots.get(&(choice, index)).copied(),
            // Older Ollama builds leave `index` out (ollama/ollama#7881): such a fragment
            // continues the choice's last call.
            None => self.last_call.get(&choice).copied(),
        };
        // Ollama gives every parallel call `index` 0 (ollama/ollama#15457), so a fragment whose
        // id differs from its slot's call is a new call, not more of the old one.
        let existing = existing.filter(|&at| match (&id, self.calls.get(at)) {
            (Some(id), Some(call)) => call.id.is_empty() || call.id == *id,
            _ => true,
        });
        let at = match existing {
            Some(at) => at,
            None => {
                self.calls.push(PartialCall {
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                    announced: false,
                });
                self.calls.len() - 1
            }
        };
        self.slots
            .insert((choice, fragment.index.unwrap_or(position)), at);
        self.last_call.insert(choice, at);
        let Some(call) = self.calls.get_mut(at) else {
            return;
        };
        if let Some(id) = id {
            call.id = id;
        }
        if let Some(name) = name {
            // The name comes whole in the first fragment; a repeat is not a continuation.
            if call.name.is_empty() {
                call.name = name;
            }
        }
        if let Some(arguments) = arguments {
            call.arguments.push_str(&arguments);
        }
        if !call.announced && !call.name.is_empty() {
            call.announced = true;
            if call.id.is_empty() {
                call.id = made_up_id();
            }
            emit(StreamDelta::ToolCallStarted {
                index: at,
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
    }
}

/// An id for a call whose server sent none. Unique across the conversation, so a result (and the
/// window's card) can never be matched to a call of an earlier round.
fn made_up_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn chunk(choices: Value) -> Value {
        json!({"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1694268190,
               "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices": choices})
    }

    fn run(events: &[Value]) -> (Vec<StreamDelta>, Result<Reply, LlmError>) {
        let mut assembler = StreamAssembler::new();
        let mut deltas = Vec::new();
        for event in events {
            let data = match event {
                Value::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            if let Err(e) = assembler.push("message", &data, &mut |d| deltas.push(d)) {
                return (deltas, Err(e));
            }
        }
        (deltas, assembler.finish())
    }

    fn done() -> Value {
        json!("[DONE]")
    }

    #[test]
    fn assembles_the_documented_text_stream_with_usage() {
        let events = [
            chunk(
                json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}]),
            ),
            chunk(
                json!([{"index": 0, "delta": {"content": "Hello"}, "logprobs": null, "finish_reason": null}]),
            ),
            chunk(
                json!([{"index": 0, "delta": {"content": " there"}, "logprobs": null, "finish_reason": null}]),
            ),
            chunk(json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": "stop"}])),
            json!({"id": "chatcmpl-123", "object": "chat.completion.chunk", "choices": [],
                   "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}}),
            done(),
        ];
        let (deltas, reply) = run(&events);
        let reply = reply.expect("assembles");
        assert_eq!(
            deltas,
            vec![
                StreamDelta::Text("Hello".into()),
                StreamDelta::Text(" there".into())
            ]
        );
        assert_eq!(reply.text, "Hello there");
        assert_eq!(reply.stop, StopReason::EndTurn);
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 9,
                output_tokens: 12,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn assembles_parallel_tool_calls_by_index_with_null_content() {
        let events = [
            chunk(
                json!([{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": [
                {"index": 0, "id": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "type": "function",
                 "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": null}]),
            ),
            chunk(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": null, "type": null, "function": {"name": null, "arguments": "{\"location\": \"Paris"}}]}, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\""}}]}, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": "\"}"}}]}, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "function": {"arguments": ": \"CET\"}"}}]}, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])),
            done(),
        ];
        let (deltas, reply) = run(&events);
        let reply = reply.expect("assembles");
        assert_eq!(
            deltas,
            vec![
                StreamDelta::ToolCallStarted {
                    index: 0,
                    id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".into(),
                    name: "get_weather".into()
                },
                StreamDelta::ToolCallStarted {
                    index: 1,
                    id: "call_2".into(),
                    name: "get_time".into()
                },
            ]
        );
        assert_eq!(reply.text, "");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.tool_calls[0].arguments, json!({"location": "Paris"}));
        assert_eq!(reply.tool_calls[1].arguments, json!({"tz": "CET"}));
    }

    #[test]
    fn merges_calls_spread_over_several_choices() {
        let events = [
            chunk(
                json!([{"index": 0, "delta": {"content": "Let me check"}, "finish_reason": null}]),
            ),
            chunk(json!([{"index": 0, "delta": {}, "finish_reason": "stop"},
                         {"index": 1, "delta": {"content": "", "tool_calls": [
                            {"index": 0, "id": "a", "function": {"name": "t", "arguments": "{}"}}]}, "finish_reason": null}])),
            chunk(json!([{"index": 1, "delta": {"tool_calls": [
                            {"index": 0, "id": "b", "function": {"name": "u", "arguments": "{\"x\":1}"}}]}, "finish_reason": "tool_calls"}])),
            done(),
        ];
        let reply = run(&events).1.expect("assembles");
        assert_eq!(reply.text, "Let me check");
        let ids: Vec<&str> = reply.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            ["a", "b"],
            "index 0 reused with a new id is a new call"
        );
        assert_eq!(reply.stop, StopReason::ToolUse);
    }

    #[test]
    fn fragments_without_index_continue_the_last_call() {
        let events = [
            chunk(
                json!([{"index": 0, "delta": {"tool_calls": [{"id": "a", "function": {"name": "t", "arguments": "{\"q\":"}}]}}]),
            ),
            chunk(
                json!([{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": "2}"}}]}}]),
            ),
            chunk(json!([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])),
        ];
        let reply = run(&events)
            .1
            .expect("ends without [DONE] after a finish reason");
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].arguments, json!({"q": 2}));
    }

    #[test]
    fn bad_arguments_stay_a_string_and_missing_ids_are_made_up() {
        let events = [
            chunk(
                json!([{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "t", "arguments": "{oops"}}]}, "finish_reason": "tool_calls"}]),
            ),
            done(),
        ];
        let reply = run(&events).1.expect("assembles");
        assert_eq!(reply.tool_calls[0].arguments, json!("{oops"));
        // Made up, and unique: a later round's call can never share it.
        let id = &reply.tool_calls[0].id;
        assert!(id.starts_with("call_") && id.len() > 20, "{id}");
        assert_ne!(id, &run(&events).1.expect("assembles").tool_calls[0].id);
    }

    #[test]
    fn groq_usage_is_read_from_x_groq() {
        let events = [
            chunk(json!([{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}])),
            json!({"choices": [], "x_groq": {"usage": {"prompt_tokens": 3, "completion_tokens": 1}}}),
            done(),
        ];
        let reply = run(&events).1.expect("assembles");
        assert_eq!(reply.usage.input_tokens, 3);
    }

    #[test]
    fn neither_text_nor_calls_is_an_error_and_so_is_a_cut_off_stream() {
        let events = [
            chunk(
                json!([{"index": 0, "delta": {"role": "assistant", "content": null}, "finish_reason": null}]),
            ),
            chunk(json!([{"index": 0, "delta": {"content": ""}, "finish_reason": "length"}])),
            done(),
        ];
        assert_eq!(
            run(&events).1,
            Err(LlmError::Empty {
                stop: StopReason::MaxTokens
            })
        );
        let cut = [chunk(json!([{"index": 0, "delta": {"content": "Hel"}}]))];
        assert!(matches!(run(&cut).1, Err(LlmError::Malformed(m)) if m.contains("[DONE]")));
    }

    #[test]
    fn an_error_chunk_is_a_typed_error() {
        let events = [json!({"error": {"message": "Provider returned error", "code": 429}})];
        assert!(matches!(run(&events).1, Err(LlmError::RateLimited { .. })));
        let events = [json!("{not json")];
        assert!(matches!(run(&events).1, Err(LlmError::Malformed(m)) if m.contains("{not json")));
    }
}
