//! What each model provider accepts: how many tools, and which input schemas.
//!
//! Tool *names* are not here: [`crate::naming`] makes names valid for every provider at once.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A provider whose request limits the catalog checks against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Anthropic,
    #[serde(rename = "openai")]
    OpenAi,
    Gemini,
    /// Any other OpenAI-compatible endpoint (Ollama, LM Studio, vLLM, OpenRouter, …): held to
    /// OpenAI's rules, which such servers copy or are at least never stricter than, as far as we
    /// know.
    #[serde(rename = "openai-compatible")]
    OpenAiCompatible,
}

/// One provider's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderRules {
    /// Most tools accepted in one request.
    pub max_tools: usize,
    /// Gemini's `parameters` field takes an OpenAPI 3.0 subset and answers
    /// `Unknown name "additionalProperties"` with a 400, at any depth.
    pub strip_additional_properties: bool,
}

impl Provider {
    pub const ALL: [Provider; 4] = [
        Provider::Anthropic,
        Provider::OpenAi,
        Provider::Gemini,
        Provider::OpenAiCompatible,
    ];

    pub fn rules(self) -> ProviderRules {
        match self {
            // No tool-count limit is documented for the Messages API; the context window is the
            // real bound, which `Budget::estimated_tokens` shows. 1,000 is far beyond what models
            // choose among well, and only guards against sending something absurd.
            Provider::Anthropic => ProviderRules {
                max_tools: 1_000,
                strip_additional_properties: false,
            },
            // Chat Completions: "tools" has maxItems 128 in OpenAI's published API spec, and the
            // API answers more with "You may not include more than 128 tools".
            Provider::OpenAi | Provider::OpenAiCompatible => ProviderRules {
                max_tools: 128,
                strip_additional_properties: false,
            },
            // Uncertain: the Gemini API currently rejects more than 512 ("At most 512 function
            // declarations can be specified"), while older Vertex AI reference pages said 64.
            // We follow what the service enforces today.
            Provider::Gemini => ProviderRules {
                max_tools: 512,
                strip_additional_properties: true,
            },
        }
    }

    /// The name used in messages to the user ("OpenAI accepts at most 128 tools").
    pub fn display_name(self) -> &'static str {
        match self {
            Provider::Anthropic => "Anthropic",
            Provider::OpenAi => "OpenAI",
            Provider::Gemini => "Gemini",
            Provider::OpenAiCompatible => "This OpenAI-compatible endpoint",
        }
    }
}

/// Top-level keywords that providers refuse on a tool's input schema. Anthropic answers
/// "input_schema does not support oneOf, allOf, or anyOf at the top level"; OpenAI refuses those
/// and also `enum` and `not`. A tool's arguments are always an object, so at the top level these
/// only express cross-field rules ("exactly one of a, b"), which the server still enforces when
/// the call arrives.
const COMBINATORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const DROPPED_AT_TOP: [&str; 2] = ["enum", "not"];

/// An input schema every provider accepts, as close to the server's as that allows.
///
/// - Missing, non-object, or non-`object`-typed schema → `{"type":"object","properties":{}}`
///   (MCP tool arguments are always an object, so a different type cannot be honoured anyway).
/// - Missing `type` → `"object"`; missing or malformed `properties` → `{}`; malformed
///   `required` is dropped.
/// - Top-level `$schema` is removed (Gemini rejects it, and it tells the model nothing).
/// - Top-level `allOf`/`anyOf`/`oneOf` are flattened: their branches' properties join the
///   top-level ones (the top level wins a conflict), `allOf` branches also add their `required`;
///   then the keywords are removed, as are top-level `enum` and `not`. The model sees every
///   argument it may pass, loses only the cross-field rule, and the server still checks it.
///
/// Nested schemas are left as they are, apart from [`for_provider`]'s Gemini rule. A schema that
/// needs no change is returned borrowed.
pub fn normalize(schema: &Value) -> Cow<'_, Value> {
    if is_normal(schema) {
        return Cow::Borrowed(schema);
    }
    Cow::Owned(normalized(schema))
}

/// True when [`normalize`] would change nothing.
fn is_normal(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    map.get("type").is_some_and(|t| t == "object")
        && map.get("properties").is_some_and(Value::is_object)
        && map.get("required").is_none_or(is_string_array)
        && !map.contains_key("$schema")
        && !COMBINATORS
            .iter()
            .chain(&DROPPED_AT_TOP)
            .any(|k| map.contains_key(*k))
}

fn normalized(schema: &Value) -> Value {
    let Some(source) = schema.as_object() else {
        return empty_object_schema();
    };
    match source.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        // `["object", "null"]`: nullable arguments still arrive as an object when present.
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => {}
        Some(_) => return empty_object_schema(),
    }

    let mut out = source.clone();
    out.remove("$schema");
    out.insert("type".into(), Value::String("object".into()));
    if !out.get("properties").is_some_and(Value::is_object) {
        out.insert("properties".into(), Value::Object(Map::new()));
    }
    if out.get("required").is_some_and(|r| !is_string_array(r)) {
        out.remove("required");
    }

    for keyword in COMBINATORS {
        let Some(Value::Array(branches)) = out.remove(keyword) else {
            continue;
        };
        for branch in &branches {
            merge_branch(&mut out, branch, keyword == "allOf");
        }
    }
    for keyword in DROPPED_AT_TOP {
        out.remove(keyword);
    }
    Value::Object(out)
}

/// `schema` (already [`normalize`]d) adjusted for one provider.
pub fn for_provider(schema: &Value, provider: Provider) -> Option<Value> {
    if !provider.rules().strip_additional_properties {
        return None;
    }
    let mut schema = schema.clone();
    strip_key(&mut schema, "additionalProperties");
    strip_key(&mut schema, "$schema");
    Some(schema)
}

fn empty_object_schema() -> Value {
    let mut map = Map::new();
    map.insert("type".into(), Value::String("object".into()));
    map.insert("properties".into(), Value::Object(Map::new()));
    Value::Object(map)
}

fn is_string_array(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|items| items.iter().all(Value::is_string))
}

fn merge_branch(out: &mut Map<String, Value>, branch: &Value, add_required: bool) {
    let Some(branch) = branch.as_object() else {
        return;
    };
    if let (Some(Value::Object(extra)), Some(Value::Object(props))) =
        (branch.get("properties"), out.get_mut("properties"))
    {
        for (name, schema) in extra {
            props.entry(name.clone()).or_insert_with(|| schema.clone());
        }
    }
    if !add_required {
        return;
    }
    let Some(Value::Array(extra)) = branch.get("required") else {
        return;
    };
    let required = out
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(required) = required {
        for name in extra.iter().filter(|n| n.is_string()) {
            if !required.contains(name) {
                required.push(name.clone());
            }
        }
    }
}

/// Removes `key` from every schema object, without touching property *names*: a tool may well
/// have an argument called `additionalProperties`.
fn strip_key(schema: &mut Value, key: &str) {
    match schema {
        Value::Object(map) => {
            map.remove(key);
            for (name, child) in map.iter_mut() {
                match name.as_str() {
                    // Maps from a name to a schema: recurse into the schemas only.
                    "properties" | "patternProperties" | "$defs" | "definitions" => {
                        if let Value::Object(named) = child {
                            named.values_mut().for_each(|s| strip_key(s, key));
                        }
                    }
                    // Data, not schemas.
                    "enum" | "const" | "default" | "examples" => {}
                    _ => strip_key(child, key),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|s| strip_key(s, key)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalization_table() {
        let empty = json!({"type": "object", "properties": {}});
        let cases = [
            ("missing", Value::Null, empty.clone()),
            ("empty object", json!({}), empty.clone()),
            ("not an object", json!("string"), empty.clone()),
            ("scalar type", json!({"type": "string"}), empty.clone()),
            (
                "object without properties",
                json!({"type": "object"}),
                empty.clone(),
            ),
            (
                "$schema removed, rest kept",
                json!({
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "required": ["q"],
                    "additionalProperties": false
                }),
                json!({
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "required": ["q"],
                    "additionalProperties": false
                }),
            ),
            (
                "nullable object",
                json!({"type": ["object", "null"], "properties": {}}),
                empty.clone(),
            ),
            (
                "oneOf flattened, required of branches dropped",
                json!({
                    "type": "object",
                    "properties": {"mode": {"type": "string"}},
                    "oneOf": [
                        {"properties": {"id": {"type": "string"}}, "required": ["id"]},
                        {"properties": {"path": {"type": "string"}, "mode": {"type": "number"}}}
                    ]
                }),
                json!({
                    "type": "object",
                    "properties": {
                        "mode": {"type": "string"},
                        "id": {"type": "string"},
                        "path": {"type": "string"}
                    }
                }),
            ),
            (
                "allOf flattened with required",
                json!({
                    "allOf": [
                        {"type": "object", "properties": {"a": {}}, "required": ["a"]},
                        {"properties": {"b": {}}, "required": ["b", "a"]}
                    ]
                }),
                json!({
                    "type": "object",
                    "properties": {"a": {}, "b": {}},
                    "required": ["a", "b"]
                }),
            ),
            (
                "enum and not dropped",
                json!({
                    "type": "object",
                    "properties": {},
                    "enum": [{}],
                    "not": {"required": ["x"]}
                }),
                empty.clone(),
            ),
            (
                "malformed properties and required",
                json!({"type": "object", "properties": [], "required": "x"}),
                empty.clone(),
            ),
        ];
        for (what, input, want) in cases {
            let got = normalize(&input);
            assert_eq!(*got, want, "{what}");
            // Normalizing is idempotent, and a normal schema is not copied.
            assert!(matches!(normalize(&got), Cow::Borrowed(_)), "{what}");
        }
    }

    #[test]
    fn gemini_loses_additional_properties_at_every_depth_but_not_arguments_of_that_name() {
        let schema = normalized(&json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "additionalProperties": {"type": "boolean"},
                "items": {
                    "type": "array",
                    "items": {"type": "object", "additionalProperties": false, "$schema": "x"}
                }
            }
        }));
        let gemini = for_provider(&schema, Provider::Gemini).unwrap();
        assert_eq!(
            gemini,
            json!({
                "type": "object",
                "properties": {
                    "additionalProperties": {"type": "boolean"},
                    "items": {"type": "array", "items": {"type": "object"}}
                }
            })
        );
        assert!(for_provider(&schema, Provider::OpenAi).is_none());
    }

    #[test]
    fn limits_are_what_the_providers_enforce() {
        assert_eq!(Provider::OpenAi.rules().max_tools, 128);
        assert_eq!(Provider::OpenAiCompatible.rules().max_tools, 128);
        assert!(Provider::ALL
            .iter()
            .all(|p| p.rules().max_tools >= 128 && !p.display_name().is_empty()));
    }
}
