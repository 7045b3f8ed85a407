//! What the real APIs refuse, so the scripted provider refuses it too, with their messages: a
//! tool whose schema a provider does not take fails the whole request there, and must fail it
//! here. Only rules the providers document or answer with are checked; a request that passes
//! here may still be refused by rules nobody wrote down. `cache.rs`: Anthropic's rules for cache
//! breakpoints and deferred tools, and the prompt cache both providers report in their usage.

mod cache;

pub use cache::{anthropic_usage, check_anthropic, openai_usage, CacheUse, PromptCache};

use serde_json::{json, Value};

/// Why Anthropic's Messages API would refuse this request body, as its 400 body.
pub fn anthropic_refusal(body: &Value) -> Option<Value> {
    let refuse = |message: String| {
        Some(
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
        )
    };
    if body.get("response_format").is_some() {
        return refuse("response_format: Extra inputs are not permitted".into());
    }
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        let schema = &tool["input_schema"];
        if schema["type"] != "object" {
            return refuse(format!(
                "tools.{i}.custom.input_schema.type: Input should be 'object'"
            ));
        }
        if ["oneOf", "allOf", "anyOf"]
            .iter()
            .any(|k| schema.get(*k).is_some())
        {
            return refuse(format!(
                "tools.{i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level"
            ));
        }
    }
    if let Some(why) = check_anthropic(body) {
        return refuse(why);
    }
    // `output_config` also carries `effort` (Claude Code sends it alone): only a format present
    // must be a JSON schema one.
    if let Some(format) = body.get("output_config").and_then(|c| c.get("format")) {
        if format["type"] != "json_schema" || !format["schema"].is_object() {
            return refuse(
                "output_config.format: expected {\"type\": \"json_schema\", \"schema\": {...}}"
                    .into(),
            );
        }
    }
    None
}

/// Why OpenAI's Chat Completions API would refuse this request body, as its 400 body.
pub fn openai_refusal(body: &Value) -> Option<Value> {
    let refuse = |message: String, param: &str| {
        Some(
            json!({"error": {"message": message, "type": "invalid_request_error",
                              "param": param, "code": null}}),
        )
    };
    if body.get("output_config").is_some() {
        return refuse(
            "Unrecognized request argument supplied: output_config".into(),
            "output_config",
        );
    }
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        let name = tool["function"]["name"].as_str().unwrap_or_default();
        let schema = &tool["function"]["parameters"];
        let param = format!("tools[{i}].function.parameters");
        if schema["type"] != "object" {
            return refuse(
                format!("Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{}\"'.", schema["type"].as_str().unwrap_or("None")),
                &param,
            );
        }
        if ["oneOf", "anyOf", "allOf", "enum", "not"]
            .iter()
            .any(|k| schema.get(*k).is_some())
        {
            return refuse(
                format!("Invalid schema for function '{name}': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level."),
                &param,
            );
        }
        if !schema["properties"].is_object() {
            return refuse(
                format!("Invalid schema for function '{name}': In context=(), object schema missing properties."),
                &param,
            );
        }
    }
    if let Some(format) = body.get("response_format") {
        let name_ok = format["json_schema"]["name"].as_str().is_some_and(|n| {
            !n.is_empty()
                && n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
        if format["type"] != "json_schema"
            || !name_ok
            || !format["json_schema"]["schema"].is_object()
        {
            return refuse(
                "Invalid 'response_format': expected type json_schema with a name matching ^[a-zA-Z0-9_-]{1,64}$ and a schema object.".into(),
                "response_format",
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_each_api_refuses() {
        let anthropic = |schema: Value| json!({"tools": [{"name": "t", "input_schema": schema}]});
        assert!(anthropic_refusal(&anthropic(json!({"type": "object"}))).is_none());
        assert!(anthropic_refusal(&anthropic(
            json!({"$schema": "x", "type": "object", "additionalProperties": false})
        ))
        .is_none());
        let refused =
            anthropic_refusal(&anthropic(json!({"type": "object", "anyOf": []}))).unwrap();
        assert!(refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at the top level"));
        assert!(anthropic_refusal(&anthropic(json!({}))).is_some());

        let openai = |schema: Value| json!({"tools": [{"type": "function", "function": {"name": "t", "parameters": schema}}]});
        assert!(openai_refusal(&openai(json!({"type": "object", "properties": {}}))).is_none());
        let missing = openai_refusal(&openai(json!({"type": "object"}))).unwrap();
        assert!(missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing properties"));
        assert!(openai_refusal(&openai(
            json!({"type": "object", "properties": {}, "enum": []})
        ))
        .is_some());
        assert!(
            openai_refusal(&json!({"response_format": {"type": "json_schema",
            "json_schema": {"name": "bad name", "schema": {}}}}))
            .is_some()
        );
    }
}
