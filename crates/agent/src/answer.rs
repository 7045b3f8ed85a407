//! Structured answers (`toolgate run --schema`): the final answer must be one JSON value valid
//! against the user's schema. Providers with structured output get the schema in the request
//! (see `toolgate-llm`); the others get it in words, here. Every answer is checked with the
//! `jsonschema` crate, and an invalid one is sent back once with what is wrong.

use serde_json::Value;

/// The system prompt with the schema added, for providers without structured output.
pub fn instruction(system: Option<&str>, schema: &Value) -> String {
    let schema = serde_json::to_string_pretty(schema).unwrap_or_else(|_| schema.to_string());
    let rule = format!(
        "Your final answer (the message in which you call no tool) must be exactly one JSON value that is valid against this JSON Schema, and nothing else: no prose, no Markdown code fence.\n\n{schema}"
    );
    match system {
        Some(system) if !system.is_empty() => format!("{system}\n\n{rule}"),
        _ => rule,
    }
}

/// The answer as compact JSON when it is a value valid against `schema`; else what is wrong.
/// A Markdown code fence around the value is forgiven (models add one however asked).
pub fn check(schema: &Value, text: &str) -> Result<String, Vec<String>> {
    let trimmed = unfenced(text.trim());
    let value: Value =
        serde_json::from_str(trimmed).map_err(|e| vec![format!("(answer): not JSON ({e})")])?;
    toolgate_policy::validate_value(schema, &value)?;
    Ok(value.to_string())
}

/// What the model is told when its answer did not fit.
pub fn repair_request(problems: &[String]) -> String {
    format!(
        "Your answer is not valid against the required JSON Schema:\n- {}\nReply again with only the corrected JSON value.",
        problems.join("\n- ")
    )
}

fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "required": ["city", "days"],
               "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}}})
    }

    #[test]
    fn a_valid_answer_is_kept_as_compact_json_with_or_without_a_fence() {
        assert_eq!(
            check(&schema(), " {\"city\": \"Oslo\", \"days\": 2} ").unwrap(),
            r#"{"city":"Oslo","days":2}"#
        );
        assert_eq!(
            check(&schema(), "```json\n{\"city\": \"Oslo\", \"days\": 2}\n```").unwrap(),
            r#"{"city":"Oslo","days":2}"#
        );
    }

    #[test]
    fn an_invalid_answer_says_where_and_why() {
        let problems = check(&schema(), r#"{"city": "Oslo", "days": 0}"#).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("/days:"), "{problems:?}");
        let not_json = check(&schema(), "Oslo for two days").unwrap_err();
        assert!(not_json[0].contains("not JSON"), "{not_json:?}");
        let request = repair_request(&problems);
        assert!(request.contains("/days") && request.contains("only the corrected JSON value"));
    }

    #[test]
    fn the_instruction_carries_the_schema_after_the_system_prompt() {
        let text = instruction(Some("Be brief."), &schema());
        assert!(text.starts_with("Be brief.\n\n"));
        assert!(text.contains("\"minimum\": 1"));
    }
}
