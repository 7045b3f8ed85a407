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

/// One provider's limits. What each needs changed in a schema is [`Provider::schema_fixes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderRules {
    /// Most tools accepted in one request.
    pub max_tools: usize,
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
            Provider::Anthropic => ProviderRules { max_tools: 1_000 },
            // Chat Completions: "tools" has maxItems 128 in OpenAI's published API spec, and the
            // API answers more with "You may not include more than 128 tools".
            Provider::OpenAi | Provider::OpenAiCompatible => ProviderRules { max_tools: 128 },
            // Uncertain: the Gemini API currently rejects more than 512 ("At most 512 function
            // declarations can be specified"), while older Vertex AI reference pages said 64.
            // We follow what the service enforces today.
            Provider::Gemini => ProviderRules { max_tools: 512 },
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

/// One change a provider needs made to a server's input schema before it accepts the tool.
/// Each provider gets only the changes it needs ([`Provider::schema_fixes`]), so a model sees
/// the schema as the server wrote it wherever its provider takes it as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaFix {
    /// The schema must be an object schema: Anthropic answers "input_schema.type: Input should
    /// be 'object'", OpenAI "schema must be a JSON Schema of 'type: \"object\"'". MCP requires
    /// it too, so only a broken server's schema changes: a missing or non-object schema becomes
    /// `{"type":"object","properties":{}}` (arguments are always an object, so another type
    /// cannot be honoured anyway), `["object","null"]` becomes `"object"`, and `properties` or
    /// `required` of the wrong JSON type are replaced or dropped (an invalid schema is refused
    /// by every provider).
    ObjectType,
    /// OpenAI (and the endpoints that copy it) answers `{"type":"object"}` with "object schema
    /// missing properties": an empty `properties` is added.
    MissingProperties,
    /// Anthropic answers "input_schema does not support oneOf, allOf, or anyOf at the top
    /// level", OpenAI likewise. Their branches' properties join the top-level ones (the top
    /// level wins a conflict), `allOf` branches also add their `required`; the model loses only
    /// the cross-field rule ("exactly one of a, b"), which the server still checks.
    TopLevelCombinators,
    /// OpenAI also refuses `enum` and `not` at the top level; they are dropped.
    TopLevelEnumNot,
    /// Gemini's `parameters` take an OpenAPI 3.0 subset and answer `Unknown name "$schema"` or
    /// `"additionalProperties"` with a 400, at any depth: both keywords are removed everywhere
    /// (never an argument of that name).
    OpenApiSubset,
}

impl Provider {
    /// The changes this provider needs, in the order they are made. Anthropic and OpenAI take
    /// `$schema`, `additionalProperties`, `$defs` and the rest as the server wrote them.
    pub fn schema_fixes(self) -> &'static [SchemaFix] {
        use SchemaFix::*;
        match self {
            Provider::Anthropic => &[ObjectType, TopLevelCombinators],
            Provider::OpenAi | Provider::OpenAiCompatible => &[
                ObjectType,
                MissingProperties,
                TopLevelCombinators,
                TopLevelEnumNot,
            ],
            Provider::Gemini => &[
                ObjectType,
                MissingProperties,
                TopLevelCombinators,
                TopLevelEnumNot,
                OpenApiSubset,
            ],
        }
    }
}

const COMBINATORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const ENUM_NOT: [&str; 2] = ["enum", "not"];

impl SchemaFix {
    /// Whether the fix would change `schema`.
    fn needed(self, schema: &Value) -> bool {
        let Some(map) = schema.as_object() else {
            return self == SchemaFix::ObjectType;
        };
        match self {
            SchemaFix::ObjectType => {
                map.get("type").is_none_or(|t| t != "object")
                    || map.get("properties").is_some_and(|p| !p.is_object())
                    || map.get("required").is_some_and(|r| !is_string_array(r))
            }
            SchemaFix::MissingProperties => !map.contains_key("properties"),
            SchemaFix::TopLevelCombinators => COMBINATORS.iter().any(|k| map.contains_key(*k)),
            SchemaFix::TopLevelEnumNot => ENUM_NOT.iter().any(|k| map.contains_key(*k)),
            SchemaFix::OpenApiSubset => {
                has_key(schema, "$schema") || has_key(schema, "additionalProperties")
            }
        }
    }

    fn apply(self, schema: &mut Value) {
        match self {
            SchemaFix::ObjectType => {
                let object = match schema.as_object().and_then(|m| m.get("type")) {
                    None => schema.is_object(),
                    Some(Value::String(t)) => t == "object",
                    // `["object", "null"]`: arguments still arrive as an object when present.
                    Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
                    Some(_) => false,
                };
                if !object {
                    *schema = empty_object_schema();
                    return;
                }
                if let Some(map) = schema.as_object_mut() {
                    map.insert("type".into(), Value::String("object".into()));
                    if map.get("properties").is_some_and(|p| !p.is_object()) {
                        map.insert("properties".into(), Value::Object(Map::new()));
                    }
                    if map.get("required").is_some_and(|r| !is_string_array(r)) {
                        map.remove("required");
                    }
                }
            }
            SchemaFix::MissingProperties => {
                if let Some(map) = schema.as_object_mut() {
                    map.entry("properties")
                        .or_insert_with(|| Value::Object(Map::new()));
                }
            }
            SchemaFix::TopLevelCombinators => {
                let Some(map) = schema.as_object_mut() else {
                    return;
                };
                for keyword in COMBINATORS {
                    let Some(Value::Array(branches)) = map.remove(keyword) else {
                        continue;
                    };
                    if !map.get("properties").is_some_and(Value::is_object) {
                        map.insert("properties".into(), Value::Object(Map::new()));
                    }
                    for branch in &branches {
                        merge_branch(map, branch, keyword == "allOf");
                    }
                }
            }
            SchemaFix::TopLevelEnumNot => {
                if let Some(map) = schema.as_object_mut() {
                    for keyword in ENUM_NOT {
                        map.remove(keyword);
                    }
                }
            }
            SchemaFix::OpenApiSubset => {
                strip_key(schema, "additionalProperties");
                strip_key(schema, "$schema");
            }
        }
    }
}

/// The server's input schema as `provider` needs it: unchanged (borrowed) when it takes it as
/// it is, else with exactly [`Provider::schema_fixes`] applied.
pub fn for_provider(schema: &Value, provider: Provider) -> Cow<'_, Value> {
    let fixes = provider.schema_fixes();
    // The fixes apply in order and an earlier one can make a later one needed (a schema made
    // an empty object schema has no `properties` problem, but a flattened one may gain them).
    if !fixes.iter().any(|fix| fix.needed(schema)) {
        return Cow::Borrowed(schema);
    }
    let mut out = schema.clone();
    for fix in fixes {
        if fix.needed(&out) {
            fix.apply(&mut out);
        }
    }
    Cow::Owned(out)
}

/// An input schema every provider accepts: every fix any provider needs, except Gemini's
/// OpenAPI subset. For places that serve all providers at once.
pub fn normalize(schema: &Value) -> Cow<'_, Value> {
    for_provider(schema, Provider::OpenAi)
}

/// Whether `key` is a keyword of any schema object inside `schema` (not a property name).
fn has_key(schema: &Value, key: &str) -> bool {
    match schema {
        Value::Object(map) => {
            map.contains_key(key)
                || map.iter().any(|(name, child)| match name.as_str() {
                    "properties" | "patternProperties" | "$defs" | "definitions" => child
                        .as_object()
                        .is_some_and(|named| named.values().any(|s| has_key(s, key))),
                    "enum" | "const" | "default" | "examples" => false,
                    _ => has_key(child, key),
                })
        }
        Value::Array(items) => items.iter().any(|s| has_key(s, key)),
        _ => false,
    }
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
    fn what_every_provider_needs_table() {
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
                "malformed properties and required",
                json!({"type": "object", "properties": [], "required": "x"}),
                empty.clone(),
            ),
        ];
        // What OpenAI needs, every provider needs (Gemini more, below; Anthropic less).
        for (what, input, want) in cases {
            for provider in [
                Provider::OpenAi,
                Provider::OpenAiCompatible,
                Provider::Gemini,
            ] {
                let got = for_provider(&input, provider);
                assert_eq!(*got, want, "{what} for {provider:?}");
                // Fixing is idempotent, and a fixed schema is not copied again.
                assert!(
                    matches!(for_provider(&got, provider), Cow::Borrowed(_)),
                    "{what}"
                );
            }
        }
    }

    #[test]
    fn schemas_reach_each_provider_as_written_unless_it_needs_a_change() {
        let written = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"q": {"type": "string"}, "opts": {"$ref": "#/$defs/opts"}},
            "$defs": {"opts": {"type": "object", "additionalProperties": false}},
            "required": ["q"],
            "additionalProperties": false
        });
        for provider in [
            Provider::Anthropic,
            Provider::OpenAi,
            Provider::OpenAiCompatible,
        ] {
            assert!(
                matches!(for_provider(&written, provider), Cow::Borrowed(_)),
                "{provider:?} takes $schema, $defs and additionalProperties as written"
            );
        }
        // Anthropic takes a schema without properties and a top-level enum; OpenAI does not.
        let bare = json!({"type": "object", "enum": [{}]});
        assert!(matches!(
            for_provider(&bare, Provider::Anthropic),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            *for_provider(&bare, Provider::OpenAi),
            json!({"type": "object", "properties": {}})
        );
        // Top-level combinators: nobody takes them.
        let either = json!({
            "type": "object",
            "properties": {},
            "anyOf": [{"required": ["a"]}, {"properties": {"b": {}}}]
        });
        for provider in Provider::ALL {
            assert_eq!(
                *for_provider(&either, provider),
                json!({"type": "object", "properties": {"b": {}}}),
                "{provider:?}"
            );
        }
    }

    #[test]
    fn gemini_loses_additional_properties_at_every_depth_but_not_arguments_of_that_name() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "additionalProperties": {"type": "boolean"},
                "items": {
                    "type": "array",
                    "items": {"type": "object", "additionalProperties": false, "$schema": "x"}
                }
            }
        });
        let gemini = for_provider(&schema, Provider::Gemini);
        assert_eq!(
            *gemini,
            json!({
                "type": "object",
                "properties": {
                    "additionalProperties": {"type": "boolean"},
                    "items": {"type": "array", "items": {"type": "object"}}
                }
            })
        );
        assert!(matches!(
            for_provider(&schema, Provider::OpenAi),
            Cow::Borrowed(_)
        ));
        // An argument named like the keyword is not the keyword.
        let named = json!({"type": "object", "properties": {"$schema": {"type": "string"}}});
        assert!(matches!(
            for_provider(&named, Provider::Gemini),
            Cow::Borrowed(_)
        ));
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
