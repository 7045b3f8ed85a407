//! Secrets kept out of calls and results (`toolgate-scan`): a call whose arguments carry what
//! looks like a secret is asked, whatever the rules allow (step 8 of the policy's precedence);
//! what looks like one in a result is removed before the model (or a connected client) sees
//! it, replaced by a marker naming what it looked like. Per server, on unless its trust
//! settings turn it off. Beside the rules, the values this process has read from the keychain
//! for its servers (`toolgate_mcp::known_secrets`) are matched exactly.
//!
//! The text of the last few results that had something removed is kept in this process's
//! memory (never written anywhere), so the user, and only the user, can reveal it for that one
//! result in the window ([`original`]).

use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex};

use rmcp::model::ContentBlock;
use serde_json::Value;
use toolgate_mcp::ToolOutput;
use toolgate_scan::Scanner;

/// The rule set, compiled once for the process.
static SCANNER: LazyLock<Scanner> = LazyLock::new(Scanner::new);

/// What in `arguments` looks like a secret, in words for the card and the audit ("a GitHub
/// Token at /body"); `None` when nothing does.
pub fn in_arguments(arguments: &Value) -> Option<String> {
    let found = SCANNER.scan_json_with(arguments, &toolgate_mcp::known_secrets());
    if found.is_empty() {
        return None;
    }
    let mut words: Vec<String> = found
        .iter()
        .take(3)
        .map(|l| {
            let at = if l.pointer.is_empty() {
                "the arguments".to_owned()
            } else {
                l.pointer.clone()
            };
            format!("{} at {at}", article(&l.finding.rule))
        })
        .collect();
    if found.len() > 3 {
        words.push(format!("{} more", found.len() - 3));
    }
    Some(words.join(", "))
}

/// Whether `text` holds something that looks like a secret, or a keychain value a server uses.
pub(crate) fn holds_secret(text: &str) -> bool {
    !SCANNER
        .scan_with(text, &toolgate_mcp::known_secrets())
        .is_empty()
}

/// The top-level argument names whose value (or name) holds what looks like a secret: a
/// summary shown outside the window (a notification, the tray) hides these values.
pub(crate) fn keys_in_arguments(arguments: &Value) -> Vec<String> {
    SCANNER
        .scan_json_with(arguments, &toolgate_mcp::known_secrets())
        .iter()
        .map(|l| {
            let first = l.pointer.trim_start_matches('/');
            let first = first.split('/').next().unwrap_or_default();
            first.replace("~1", "/").replace("~0", "~")
        })
        .collect()
}

fn article(rule: &str) -> String {
    if rule.starts_with("a ") {
        rule.to_owned()
    } else {
        format!("a {rule}")
    }
}

/// How many results' text is kept for revealing.
const KEPT: usize = 32;

/// The text before removal of the last [`KEPT`] results that had something removed.
#[derive(Default)]
struct Kept(VecDeque<(String, String)>);

impl Kept {
    fn keep(&mut self, call_id: &str, text: String) {
        self.0.retain(|(id, _)| id != call_id);
        if self.0.len() == KEPT {
            self.0.pop_front();
        }
        self.0.push_back((call_id.to_owned(), text));
    }

    fn get(&self, call_id: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(id, _)| id == call_id)
            .map(|(_, text)| text.clone())
    }
}

static ORIGINALS: Mutex<Kept> = Mutex::new(Kept(VecDeque::new()));

fn keep(call_id: &str, text: String) {
    ORIGINALS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .keep(call_id, text);
}

/// The text of call `call_id`'s result as the server sent it, before secrets were removed,
/// while it is among the last results that had something removed. For the user's eyes (the
/// window's *Reveal*), never for the model.
pub fn original(call_id: &str) -> Option<String> {
    ORIGINALS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(call_id)
}

/// `output` with what looks like a secret removed from every part of its result: text and
/// embedded resources (a text blob too), resource links, structured content, annotations,
/// `_meta` at every level, and the names of keys; only images' and audio's media bytes are not
/// read. Returns in how many places something was removed. The text as it was is kept under
/// `call_id` for [`original`] when something was removed.
///
/// The result is walked as JSON, the form a receiver gets, so a kind of block or field that a
/// later protocol adds is scrubbed too. A result that cannot be rebuilt from the scrubbed JSON
/// is withheld, saying why: never passed on unscrubbed.
pub fn redact(output: &mut ToolOutput, call_id: &str) -> usize {
    let known = toolgate_mcp::known_secrets();
    if plain_text(&output.result) {
        return redact_plain(output, call_id, &known);
    }
    let mut value = match serde_json::to_value(&output.result) {
        Ok(value) => value,
        Err(e) => {
            withhold(
                output,
                &format!("it could not be read to check it for secrets ({e})"),
            );
            return 1;
        }
    };
    let removed = redact_json(&mut value, &known, Place::Other);
    if removed == 0 {
        return 0;
    }
    match serde_json::from_value::<rmcp::model::CallToolResult>(value) {
        Ok(result) => {
            let scrubbed = ToolOutput::new(result);
            keep(call_id, std::mem::replace(&mut output.text, scrubbed.text));
            output.result = scrubbed.result;
        }
        Err(e) => withhold(
            output,
            &format!("what looked like a secret was removed, and the rest was no longer a valid result ({e})"),
        ),
    }
    removed
}

/// Whether the result is text blocks and nothing else (no `_meta`, annotations, structured
/// content or other blocks): the common result, scanned in place without the walk (which would
/// cost the per-call path a JSON copy of every result). It names every field rmcp 3.11's
/// `CallToolResult` and `TextContent` can carry text in; both are `non_exhaustive`, so an rmcp
/// update must look here again (`plain_results_are_only_text` lists the fields).
pub fn plain_text(result: &rmcp::model::CallToolResult) -> bool {
    result.meta.is_none()
        && result.structured_content.is_none()
        && result.content.iter().all(|block| match block {
            ContentBlock::Text(t) => t.meta.is_none() && t.annotations.is_none(),
            _ => false,
        })
}

/// [`redact`] for a result of text blocks only.
fn redact_plain(output: &mut ToolOutput, call_id: &str, known: &[(String, String)]) -> usize {
    let mut removed = 0;
    for block in output.result.content.iter_mut() {
        if let ContentBlock::Text(t) = block {
            let (text, found) = SCANNER.redact_with(&t.text, known);
            if !found.is_empty() {
                t.text = text;
                removed += 1;
            }
        }
    }
    if removed > 0 {
        let scrubbed = ToolOutput::new(std::mem::take(&mut output.result));
        keep(call_id, std::mem::replace(&mut output.text, scrubbed.text));
        output.result = scrubbed.result;
    }
    removed
}

/// Replaces `output` by an error result saying why it was withheld. Nothing is kept for
/// revealing: what could not be checked may hold a secret that was never found.
fn withhold(output: &mut ToolOutput, why: &str) {
    *output = ToolOutput::new(rmcp::model::CallToolResult::error(vec![
        ContentBlock::text(format!("Toolgate withheld this result: {why}.")),
    ]));
}

/// What a JSON value is, where that changes how it is scrubbed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// An image's or audio's base64 bytes: media, not text.
    Media,
    /// A resource's base64 `blob`: scrubbed when it decodes to text.
    Blob,
    Other,
}

fn redact_json(value: &mut Value, known: &[(String, String)], place: Place) -> usize {
    match value {
        Value::String(_) if place == Place::Media => 0,
        Value::String(s) if place == Place::Blob => redact_blob(s, known),
        Value::String(s) => {
            let (text, found) = SCANNER.redact_with(s, known);
            if !found.is_empty() {
                *s = text;
            }
            usize::from(!found.is_empty())
        }
        Value::Array(items) => items
            .iter_mut()
            .map(|v| redact_json(v, known, Place::Other))
            .sum(),
        Value::Object(map) => {
            let media = matches!(
                map.get("type").and_then(Value::as_str),
                Some("image" | "audio")
            );
            let mut removed = 0;
            for (key, v) in map.iter_mut() {
                let place = match key.as_str() {
                    "data" if media => Place::Media,
                    "blob" => Place::Blob,
                    _ => Place::Other,
                };
                removed += redact_json(v, known, place);
            }
            removed + redact_keys(map, known)
        }
        _ => 0,
    }
}

/// Keys that look like a secret (`{"ghp_…": true}`) are renamed to their marker.
fn redact_keys(map: &mut serde_json::Map<String, Value>, known: &[(String, String)]) -> usize {
    let renamed: Vec<(String, String)> = map
        .keys()
        .filter_map(|key| {
            let (text, found) = SCANNER.redact_with(key, known);
            (!found.is_empty()).then(|| (key.clone(), text))
        })
        .collect();
    for (from, to) in &renamed {
        if let Some(v) = map.remove(from) {
            map.insert(to.clone(), v);
        }
    }
    renamed.len()
}

/// A base64 blob that decodes to UTF-8 text (an `.env` file served as a blob) is scrubbed as
/// text and encoded again; other bytes are left as they are.
fn redact_blob(blob: &mut String, known: &[(String, String)]) -> usize {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let Ok(bytes) = engine.decode(blob.as_bytes()) else {
        return 0;
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return 0;
    };
    let (scrubbed, found) = SCANNER.redact_with(&text, known);
    if found.is_empty() {
        return 0;
    }
    *blob = engine.encode(scrubbed);
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    const KEY: &str = "ghp_0123456789abcdefABCDEF0123456789abcd";

    #[test]
    fn a_secret_in_the_arguments_is_named_with_where_it_is() {
        let words = in_arguments(&json!({"url": "https://x.example", "body": format!("k={KEY}")}));
        assert!(
            words.as_deref().is_some_and(|w| w.contains("at /body")),
            "{words:?}"
        );
        assert_eq!(in_arguments(&json!({"body": "hello"})), None);
    }

    #[test]
    fn a_result_reaches_the_model_without_the_secret_everywhere_it_was() {
        let mut result =
            CallToolResult::success(vec![ContentBlock::text(format!("the key is {KEY}"))]);
        result.structured_content = Some(json!({"token": KEY}));
        let mut output = ToolOutput::new(result);
        let removed = redact(&mut output, "call-1");
        assert_eq!(removed, 2, "the text block and the structured content");
        let all = serde_json::to_string(&output).unwrap();
        assert!(!all.contains(KEY), "{all}");
        assert!(
            output.text.contains("[secret removed: GitHub Token]"),
            "{}",
            output.text
        );
        assert_eq!(
            original("call-1").as_deref(),
            Some(format!("the key is {KEY}").as_str()),
            "kept for the user to reveal"
        );
        assert_eq!(original("another call"), None);
        let mut clean = ToolOutput::new(CallToolResult::success(vec![ContentBlock::text("hi")]));
        assert_eq!(redact(&mut clean, "call-2"), 0);
        assert_eq!(
            original("call-2"),
            None,
            "nothing kept when nothing was removed"
        );
    }

    /// The review's finding: the same token in an embedded resource and in `_meta` reached the
    /// client raw. Every place a result can carry text is scrubbed; media bytes are left alone.
    #[test]
    fn every_block_and_every_meta_is_scrubbed() {
        use base64::Engine as _;
        let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
        let image = b64("not text \u{0} at all");
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "weather: sunny", "_meta": {"note": KEY},
                 "annotations": {"audience": ["user"], "priority": 0.5}},
                {"type": "resource", "resource": {"uri": "file:///app/.env", "mimeType": "text/plain",
                    "text": format!("GITHUB_TOKEN={KEY}"), "_meta": {"k": KEY}}},
                {"type": "resource", "resource": {"uri": "file:///app/.env.b64",
                    "blob": b64(&format!("GITHUB_TOKEN={KEY}\n"))}},
                {"type": "resource_link", "uri": format!("https://x.example/?t={KEY}"),
                    "name": "link", "description": format!("token {KEY}")},
                {"type": "image", "data": image, "mimeType": "image/png"}
            ],
            "structuredContent": {"note": KEY, KEY: "as a key"},
            "_meta": {"note": format!("also {KEY}")},
            "isError": false
        }))
        .unwrap();
        let mut output = ToolOutput::new(result);
        let removed = redact(&mut output, "call-every");
        assert!(removed >= 9, "{removed}");
        let all = serde_json::to_string(&output).unwrap();
        assert!(!all.contains(KEY), "{all}");
        assert!(
            !all.contains(&b64(&format!("GITHUB_TOKEN={KEY}\n"))),
            "{all}"
        );
        let ContentBlock::Resource(embedded) = &output.result.content[2] else {
            panic!("still a resource");
        };
        let rmcp::model::ResourceContents::BlobResourceContents { blob, .. } = &embedded.resource
        else {
            panic!("still a blob");
        };
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .unwrap();
        assert!(
            String::from_utf8(decoded)
                .unwrap()
                .contains("[secret removed: GitHub Token]"),
            "the blob keeps its text without the token"
        );
        assert!(all.contains(&image), "media bytes are not touched");
        assert!(output.text.contains("weather: sunny"), "{}", output.text);
    }

    /// What `plain_text` lets through unwalked serializes to text blocks and nothing else; a
    /// field rmcp adds that serializes shows here (and must be checked in `plain_text`).
    #[test]
    fn plain_results_are_only_text() {
        let plain = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        assert!(plain_text(&plain));
        let value = serde_json::to_value(&plain).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["content", "isError", "resultType"], "{value}");
        for block in value["content"].as_array().unwrap() {
            let keys: Vec<&str> = block
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, ["text", "type"], "{block}");
        }
        let mut with_meta = plain.clone();
        with_meta.meta = Some(Default::default());
        assert!(!plain_text(&with_meta));
        let mut structured = plain;
        structured.structured_content = Some(json!({}));
        assert!(!plain_text(&structured));
        // A plain result is scrubbed in place, and kept for revealing.
        let mut output = ToolOutput::new(CallToolResult::success(vec![
            ContentBlock::text("one"),
            ContentBlock::text(format!("two {KEY}")),
        ]));
        assert_eq!(redact(&mut output, "call-plain"), 1);
        assert_eq!(output.text, "one\ntwo [secret removed: GitHub Token]");
        assert_eq!(
            original("call-plain").as_deref(),
            Some(format!("one\ntwo {KEY}").as_str())
        );
    }

    #[test]
    fn only_the_last_results_are_kept() {
        let mut kept = Kept::default();
        for i in 0..=KEPT {
            kept.keep(&format!("kept-{i}"), format!("text {i}"));
        }
        assert_eq!(kept.get("kept-0"), None, "the oldest is forgotten");
        assert_eq!(kept.get("kept-1").as_deref(), Some("text 1"));
        kept.keep("kept-1", "again".into());
        assert_eq!(
            kept.get("kept-1").as_deref(),
            Some("again"),
            "one entry a call"
        );
    }
}
