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
pub(crate) fn in_arguments(arguments: &Value) -> Option<String> {
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

/// `output` with what looks like a secret removed from its text, its text blocks and the
/// strings of its structured content; returns how many were removed. The text as it was is
/// kept under `call_id` for [`original`] when something was removed from it.
pub(crate) fn redact(output: &mut ToolOutput, call_id: &str) -> usize {
    let known = toolgate_mcp::known_secrets();
    let (text, found) = SCANNER.redact_with(&output.text, &known);
    let mut removed = found.len();
    if removed > 0 {
        keep(call_id, std::mem::replace(&mut output.text, text));
    }
    for block in output.result.content.iter_mut() {
        if let ContentBlock::Text(t) = block {
            let (text, found) = SCANNER.redact_with(&t.text, &known);
            removed += found.len();
            t.text = text;
        }
    }
    if let Some(structured) = output.result.structured_content.as_mut() {
        removed += redact_json(structured, &known);
    }
    removed
}

fn redact_json(value: &mut Value, known: &[(String, String)]) -> usize {
    match value {
        Value::String(s) => {
            let (text, found) = SCANNER.redact_with(s, known);
            *s = text;
            found.len()
        }
        Value::Array(items) => items.iter_mut().map(|v| redact_json(v, known)).sum(),
        Value::Object(map) => map.values_mut().map(|v| redact_json(v, known)).sum(),
        _ => 0,
    }
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
        assert_eq!(removed, 3, "text, block and structured content");
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
