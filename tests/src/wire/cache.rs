//! What the scripted provider checks about Anthropic's cache breakpoints and deferred tools, and
//! the prompt cache both providers report, as the real APIs do.
//!
//! **Anthropic** (`check_anthropic`): a request is refused with a 400 `invalid_request_error`, in
//! the API's words, when it has more than four `cache_control` breakpoints, a breakpoint that is
//! not `{"type": "ephemeral"}`, only deferred tools (`defer_loading`), or a `tool_reference` in a
//! tool result naming a tool the request does not have deferred.
//!
//! **Prompt caching** (`PromptCache`): the provider keeps the prefixes it has seen and reports
//! each reply's input in the API's own usage fields, as the services compute them:
//! - Anthropic caches the prompt (tools, then system, then messages) up to each `cache_control`
//!   breakpoint, if that prefix is at least 1,024 tokens; a later request reads the longest
//!   cached prefix that ends at one of its breakpoints or up to 20 blocks before one
//!   (`cache_read_input_tokens`), writes its breakpoints' prefixes beyond that
//!   (`cache_creation_input_tokens`), and `input_tokens` is the rest. Deferred tools are not in
//!   the prompt until loaded.
//! - OpenAI caches automatically: the longest prefix (tools, then messages) shared with an
//!   earlier request, in steps of 128 tokens from 1,024, is `prompt_tokens_details.cached_tokens`.
//!
//! Tokens are counted as the bytes of the compact JSON over 4, the usual ratio.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

/// The fewest tokens a prefix must have to be cached (Anthropic's for Sonnet and Opus; OpenAI's).
const MIN_CACHED: u64 = 1_024;
/// How many blocks before a breakpoint Anthropic looks for a cached prefix.
const LOOKBACK: usize = 20;

fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// Why Anthropic would refuse the request, in its words; `None` when it would take it.
pub fn check_anthropic(body: &Value) -> Option<String> {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let mut breakpoints = 0;
    let mut bad_breakpoint = None;
    let mut count = |block: &Value| {
        if let Some(control) = block.get("cache_control") {
            breakpoints += 1;
            if control.get("type").and_then(Value::as_str) != Some("ephemeral") {
                bad_breakpoint = Some(control.to_string());
            }
        }
    };
    tools.iter().for_each(&mut count);
    if let Some(system) = body["system"].as_array() {
        system.iter().for_each(&mut count);
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    for message in &messages {
        if let Some(content) = message["content"].as_array() {
            content.iter().for_each(&mut count);
        }
    }
    if let Some(bad) = bad_breakpoint {
        return Some(format!("cache_control: unknown type in {bad}"));
    }
    if breakpoints > 4 {
        return Some(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
        ));
    }
    let deferred: HashSet<&str> = tools
        .iter()
        .filter(|t| t["defer_loading"] == Value::Bool(true))
        .filter_map(|t| t["name"].as_str())
        .collect();
    if !tools.is_empty() && deferred.len() == tools.len() {
        return Some(
            "All tools have defer_loading set to true. At least one tool must be non-deferred."
                .to_owned(),
        );
    }
    for message in &messages {
        let results = message["content"].as_array().into_iter().flatten();
        for block in results.filter(|b| b["type"] == "tool_result") {
            let parts = block["content"].as_array().into_iter().flatten();
            for part in parts.filter(|p| p["type"] == "tool_reference") {
                let name = part["tool_name"].as_str().unwrap_or_default();
                if !deferred.contains(name) {
                    return Some(format!(
                        "tool_reference '{name}' does not name a deferred tool of this request"
                    ));
                }
            }
        }
    }
    None
}

/// One piece of the prompt, in the order the model reads it, and whether a breakpoint ends it.
struct Segment {
    text: String,
    breakpoint: bool,
}

/// The prompt as Anthropic lays it out: tools that are loaded, system, then messages, one
/// segment per block, each without its `cache_control`.
fn anthropic_segments(body: &Value) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut push = |block: &Value, prefix: &str| {
        let mut block = block.clone();
        let breakpoint = block
            .as_object_mut()
            .is_some_and(|o| o.remove("cache_control").is_some());
        segments.push(Segment {
            text: format!("{prefix}{block}"),
            breakpoint,
        });
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        if tool["defer_loading"] != Value::Bool(true) {
            push(tool, "tool:");
        }
    }
    match &body["system"] {
        Value::String(text) => push(&Value::String(text.clone()), "system:"),
        Value::Array(blocks) => blocks.iter().for_each(|b| push(b, "system:")),
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default().to_owned();
        match &message["content"] {
            Value::Array(blocks) => blocks.iter().for_each(|b| push(b, &format!("{role}:"))),
            other => push(other, &format!("{role}:")),
        }
    }
    segments
}

/// The prefixes a provider has cached.
#[derive(Default)]
pub struct PromptCache {
    /// Anthropic: hashes of the prefixes written at breakpoints.
    anthropic: HashSet<u64>,
    /// OpenAI: the prompts seen, as text.
    openai: Vec<String>,
}

/// What the cache did for one request, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheUse {
    pub input: u64,
    pub read: u64,
    pub written: u64,
}

impl PromptCache {
    /// Reads and writes the cache for an Anthropic request.
    pub fn anthropic(&mut self, body: &Value) -> CacheUse {
        let segments = anthropic_segments(body);
        let mut hashes = Vec::with_capacity(segments.len());
        let mut ends = Vec::with_capacity(segments.len());
        let (mut hasher, mut total) = (DefaultHasher::new(), 0u64);
        for segment in &segments {
            segment.text.hash(&mut hasher);
            hashes.push(hasher.finish());
            total += tokens(segment.text.len());
            ends.push(total);
        }
        let breakpoints: Vec<usize> = (0..segments.len())
            .filter(|&i| segments[i].breakpoint)
            .collect();
        let read = breakpoints
            .iter()
            .flat_map(|&b| b.saturating_sub(LOOKBACK)..=b)
            .filter(|&i| ends[i] >= MIN_CACHED && self.anthropic.contains(&hashes[i]))
            .map(|i| ends[i])
            .max()
            .unwrap_or(0);
        let last = breakpoints.last().map_or(0, |&b| ends[b]);
        let written = if last >= MIN_CACHED {
            last.saturating_sub(read)
        } else {
            0
        };
        for &b in &breakpoints {
            if ends[b] >= MIN_CACHED {
                self.anthropic.insert(hashes[b]);
            }
        }
        CacheUse {
            input: total - read - written,
            read,
            written,
        }
    }

    /// Reads and writes the automatic cache for an OpenAI request.
    pub fn openai(&mut self, body: &Value) -> CacheUse {
        let mut prompt = body["tools"].to_string();
        for message in body["messages"].as_array().into_iter().flatten() {
            prompt.push_str(&message.to_string());
        }
        let shared = self
            .openai
            .iter()
            .map(|seen| {
                seen.bytes()
                    .zip(prompt.bytes())
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        let shared = tokens(shared);
        let read = if shared >= MIN_CACHED {
            shared / 128 * 128
        } else {
            0
        };
        let total = tokens(prompt.len());
        self.openai.push(prompt);
        CacheUse {
            input: total,
            read,
            written: 0,
        }
    }
}

/// Puts Anthropic's cache figures into a reply's usage: a JSON body's `usage`, or a stream's
/// `message_start` event.
pub fn anthropic_usage(usage: &mut Value, cache: CacheUse) {
    if let Some(usage) = usage.as_object_mut() {
        usage.insert("input_tokens".into(), cache.input.into());
        usage.insert("cache_read_input_tokens".into(), cache.read.into());
        usage.insert("cache_creation_input_tokens".into(), cache.written.into());
    }
}

/// Puts OpenAI's cache figures into a reply's usage, when it has one.
pub fn openai_usage(usage: &mut Value, cache: CacheUse) {
    if let Some(usage) = usage.as_object_mut() {
        usage.insert("prompt_tokens".into(), cache.input.into());
        usage.insert(
            "prompt_tokens_details".into(),
            serde_json::json!({"cached_tokens": cache.read}),
        );
    }
}
