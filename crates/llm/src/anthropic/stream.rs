//! Assembles a streamed Messages reply (`"stream": true`) from its server-sent events.
//!
//! The event sequence Anthropic documents: `message_start`, then for each content block a
//! `content_block_start`, its `content_block_delta`s (`text_delta`, or `input_json_delta` pieces
//! of a tool call's input) and a `content_block_stop`; then `message_delta` (stop reason and
//! output usage) and `message_stop`. `ping` may come at any point, an `error` event may end the
//! stream early, and new event and delta types may be added, so unknown ones are skipped.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::classify_stream_error;
use crate::{non_empty, parse_arguments, LlmError, Reply, StreamDelta, ToolCall, Usage};

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: ContentDelta,
    },
    ContentBlockStop,
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<DeltaUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: super::ErrorDetail,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: DeltaUsage,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Thinking, server tools and anything newer: not part of the reply this host keeps.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Usage fields as they appear in `message_start` and `message_delta`; either may be absent.
#[derive(Debug, Deserialize, Default)]
struct DeltaUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl DeltaUsage {
    /// Sets each count this event gives (they are totals for the whole message, not
    /// increments).
    fn apply(&self, usage: &mut Usage) {
        for (given, field) in [
            (self.input_tokens, &mut usage.input_tokens),
            (self.output_tokens, &mut usage.output_tokens),
            (
                self.cache_creation_input_tokens,
                &mut usage.cache_write_tokens,
            ),
            (self.cache_read_input_tokens, &mut usage.cache_read_tokens),
        ] {
            if let Some(given) = given {
                *field = given;
            }
        }
    }
}

#[derive(Debug)]
enum Block {
    Text,
    /// A tool call, by its position in the reply's calls.
    Tool(usize),
    Ignored,
}

#[derive(Debug)]
struct PartialCall {
    id: String,
    name: String,
    /// The input given in `content_block_start` (`{}` in practice): used when no delta follows.
    start_input: Value,
    json: String,
}

/// Feeds on the events of one streamed reply and yields the [`Reply`].
#[derive(Debug, Default)]
pub struct StreamAssembler {
    blocks: BTreeMap<usize, Block>,
    text: String,
    last_text_block: Option<usize>,
    calls: Vec<PartialCall>,
    stop: Option<String>,
    usage: Usage,
    complete: bool,
}

impl StreamAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one event (its `event:` name and `data:` text), reporting deltas through `emit`.
    /// Returns whether the reply is complete (`message_stop`).
    pub fn push(
        &mut self,
        name: &str,
        data: &str,
        emit: &mut dyn FnMut(StreamDelta),
    ) -> Result<bool, LlmError> {
        let event: Event = serde_json::from_str(data).map_err(|e| {
            LlmError::Malformed(format!(
                "a `{name}` stream event is not valid: {e}; it began: {}",
                data.chars().take(200).collect::<String>()
            ))
        })?;
        match event {
            Event::MessageStart { message } => {
                self.usage = Usage::default();
                message.usage.apply(&mut self.usage);
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    StartBlock::Text { text } => {
                        self.add_text(index, &text, emit);
                        Block::Text
                    }
                    StartBlock::ToolUse { id, name, input } => {
                        let position = self.calls.len();
                        emit(StreamDelta::ToolCallStarted {
                            index: position,
                            id: id.clone(),
                            name: name.clone(),
                        });
                        self.calls.push(PartialCall {
                            id,
                            name,
                            start_input: input,
                            json: String::new(),
                        });
                        Block::Tool(position)
                    }
                    StartBlock::Other => Block::Ignored,
                };
                self.blocks.insert(index, block);
            }
            Event::ContentBlockDelta { index, delta } => match (self.blocks.get(&index), delta) {
                (None, _) => {
                    return Err(LlmError::Malformed(format!(
                        "a delta arrived for content block {index}, which never started"
                    )))
                }
                (Some(Block::Text), ContentDelta::TextDelta { text }) => {
                    self.add_text(index, &text, emit)
                }
                (Some(Block::Tool(call)), ContentDelta::InputJsonDelta { partial_json }) => {
                    let call = *call;
                    if let Some(call) = self.calls.get_mut(call) {
                        call.json.push_str(&partial_json);
                    }
                }
                // Deltas of ignored blocks, and delta kinds this host does not use.
                _ => {}
            },
            // Arguments are parsed once, in `finish`: a call is complete only when its block is.
            Event::ContentBlockStop | Event::Ping | Event::Unknown => {}
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop = delta.stop_reason;
                }
                if let Some(usage) = usage {
                    // Every count is cumulative for the whole message when present.
                    usage.apply(&mut self.usage);
                }
            }
            Event::MessageStop => self.complete = true,
            Event::Error { error } => {
                return Err(classify_stream_error(&error.kind, error.message))
            }
        }
        Ok(self.complete)
    }

    /// Whether `message_stop` arrived: without it the stream was cut off.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The assembled reply. Fails when the stream was cut off or said nothing.
    pub fn finish(self) -> Result<Reply, LlmError> {
        if !self.complete {
            return Err(LlmError::Malformed(
                "the stream ended before `message_stop`; the reply is incomplete".into(),
            ));
        }
        let tool_calls = self
            .calls
            .into_iter()
            .map(|call| ToolCall {
                arguments: if call.json.trim().is_empty() {
                    call.start_input
                } else {
                    parse_arguments(&call.json)
                },
                id: call.id,
                name: call.name,
            })
            .collect();
        non_empty(Reply {
            text: self.text,
            tool_calls,
            stop: super::stop_reason(self.stop.as_deref()),
            usage: self.usage,
        })
    }

    /// Appends text, separating text blocks with a newline as the non-streaming mapping joins
    /// them, so the deltas always add up to the reply's text.
    fn add_text(&mut self, block: usize, text: &str, emit: &mut dyn FnMut(StreamDelta)) {
        if text.is_empty() {
            return;
        }
        if self.last_text_block != Some(block) && !self.text.is_empty() {
            self.text.push('\n');
            emit(StreamDelta::Text("\n".into()));
        }
        self.last_text_block = Some(block);
        self.text.push_str(text);
        emit(StreamDelta::Text(text.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StopReason;
    use serde_json::json;

    /// Feeds `(event, data)` pairs; returns the deltas and the result of `finish`.
    fn run(events: &[Value]) -> (Vec<StreamDelta>, Result<Reply, LlmError>) {
        let mut assembler = StreamAssembler::new();
        let mut deltas = Vec::new();
        for event in events {
            let name = event["type"].as_str().unwrap_or("message");
            if let Err(e) = assembler.push(name, &event.to_string(), &mut |d| deltas.push(d)) {
                return (deltas, Err(e));
            }
        }
        (deltas, assembler.finish())
    }

    fn start() -> Value {
        json!({"type": "message_start", "message": {"id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
            "type": "message", "role": "assistant", "content": [], "model": "claude-opus-4-6",
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}})
    }

    fn end(stop: &str, output_tokens: u64) -> [Value; 2] {
        [
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": output_tokens}}),
            json!({"type": "message_stop"}),
        ]
    }

    #[test]
    fn assembles_the_documented_text_stream() {
        let mut events = vec![
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"}}),
            json!({"type": "content_block_stop", "index": 0}),
        ];
        events.extend(end("end_turn", 15));
        let (deltas, reply) = run(&events);
        let reply = reply.expect("assembles");
        assert_eq!(
            deltas,
            vec![
                StreamDelta::Text("Hello".into()),
                StreamDelta::Text("!".into())
            ]
        );
        assert_eq!(reply.text, "Hello!");
        assert_eq!(reply.stop, StopReason::EndTurn);
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 25,
                output_tokens: 15,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn assembles_text_then_tool_use_from_json_pieces() {
        let mut events = vec![
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Okay, let me check."}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use",
                   "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"location\":"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": " \"San Francisco, CA\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use",
                   "id": "toolu_2", "name": "get_time", "input": {}}}),
            json!({"type": "content_block_stop", "index": 2}),
        ];
        events.extend(end("tool_use", 89));
        let (deltas, reply) = run(&events);
        let reply = reply.expect("assembles");
        assert_eq!(
            deltas[1],
            StreamDelta::ToolCallStarted {
                index: 0,
                id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                name: "get_weather".into()
            }
        );
        assert_eq!(reply.text, "Okay, let me check.");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(
            reply.tool_calls[0].arguments,
            json!({"location": "San Francisco, CA"})
        );
        assert_eq!(reply.tool_calls[1].arguments, json!({}));
        assert_eq!(reply.usage.output_tokens, 89);
    }

    #[test]
    fn bad_json_input_is_kept_as_a_string() {
        let mut events = vec![
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use",
                   "id": "t", "name": "echo", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": tru"}}),
            json!({"type": "content_block_stop", "index": 0}),
        ];
        events.extend(end("tool_use", 5));
        let reply = run(&events).1.expect("assembles");
        assert_eq!(reply.tool_calls[0].arguments, json!("{\"a\": tru"));
    }

    #[test]
    fn text_blocks_are_joined_with_a_newline_in_the_deltas_too() {
        let mut events = vec![start()];
        for (i, text) in ["one", "two"].iter().enumerate() {
            events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}));
            events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": text}}));
            events.push(json!({"type": "content_block_stop", "index": i}));
        }
        events.extend(end("end_turn", 2));
        let (deltas, reply) = run(&events);
        let streamed: String = deltas
            .iter()
            .map(|d| match d {
                StreamDelta::Text(t) => t.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(reply.expect("assembles").text, "one\ntwo");
        assert_eq!(streamed, "one\ntwo");
    }

    #[test]
    fn thinking_and_unknown_events_are_skipped() {
        let mut events = vec![
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "x"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "some_future_event", "payload": 1}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "Hi"}}),
            json!({"type": "content_block_stop", "index": 1}),
        ];
        events.extend(end("end_turn", 2));
        assert_eq!(run(&events).1.expect("assembles").text, "Hi");
    }

    #[test]
    fn an_error_event_ends_the_stream_with_a_typed_error() {
        let events = vec![
            start(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ];
        assert_eq!(run(&events).1, Err(LlmError::Overloaded { status: 529 }));
    }

    #[test]
    fn an_empty_reply_and_a_cut_off_stream_are_errors() {
        let mut events = vec![start()];
        events.extend(end("max_tokens", 0));
        assert_eq!(
            run(&events).1,
            Err(LlmError::Empty {
                stop: StopReason::MaxTokens
            })
        );
        let cut = vec![
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "Hel"}}),
        ];
        assert!(matches!(run(&cut).1, Err(LlmError::Malformed(m)) if m.contains("message_stop")));
    }

    #[test]
    fn malformed_data_says_what_was_wrong() {
        let mut assembler = StreamAssembler::new();
        let err = assembler
            .push("content_block_delta", "{not json", &mut |_| {})
            .unwrap_err();
        assert!(
            matches!(&err, LlmError::Malformed(m) if m.contains("content_block_delta") && m.contains("{not json")),
            "{err}"
        );
        let err = assembler
            .push(
                "content_block_delta",
                r#"{"type": "content_block_delta", "index": 4, "delta": {"type": "text_delta", "text": "x"}}"#,
                &mut |_| {},
            )
            .unwrap_err();
        assert!(matches!(err, LlmError::Malformed(m) if m.contains("block 4")));
    }
}
