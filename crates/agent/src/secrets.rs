//! Secrets kept out of calls and results (`toolgate-scan`): a call whose arguments carry what
//! looks like a secret is asked, whatever the rules allow (step 8 of the policy's precedence);
//! what looks like one in a result is removed before the model (or a connected client) sees
//! it, replaced by a marker naming what it looked like. Per server, on unless its trust
//! settings turn it off. Beside the rules, the values this process has read from the keychain
//! for its servers (`toolgate_mcp::known_secrets`) are matched exactly.

use std::sync::LazyLock;

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

/// `output` with what looks like a secret removed from its text, its text blocks and the
/// strings of its structured content; returns how many were removed.
pub(crate) fn redact(output: &mut ToolOutput) -> usize {
    let known = toolgate_mcp::known_secrets();
    let (text, found) = SCANNER.redact_with(&output.text, &known);
    let mut removed = found.len();
    output.text = text;
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
        let removed = redact(&mut output);
        assert_eq!(removed, 3, "text, block and structured content");
        let all = serde_json::to_string(&output).unwrap();
        assert!(!all.contains(KEY), "{all}");
        assert!(
            output.text.contains("[secret removed: GitHub Token]"),
            "{}",
            output.text
        );
    }
}
