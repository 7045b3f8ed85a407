//! Checks arguments the user edited before approving (and answers to a server's question)
//! against the tool's input schema, with the `jsonschema` crate: every keyword of the draft the
//! schema names (2020-12 when it names none), so what Toolgate accepts is what the schema says.
//! The point is to catch a slip in the approval prompt (a deleted required field, `"3"` typed for
//! a number) while the user can still fix it, with a message that says where.
//!
//! A schema the crate cannot compile (a `$ref` to another document, which is never fetched; a
//! malformed keyword) is the server's to enforce: the arguments are then passed as they are, and
//! a call the server refuses comes back to the model as an error like any other.

use serde_json::Value;

/// Checks `args` against `schema`. Each problem is reported as "`pointer`: what is wrong", with
/// `(arguments)` standing for the whole object; sorted, so the order is stable.
pub fn validate_arguments(schema: &Value, args: &Value) -> Result<(), Vec<String>> {
    if !args.is_object() {
        // MCP sends tool arguments as an object, whatever the schema says.
        return Err(vec![format!(
            "{}: expected object, found {}",
            shown(""),
            kind_of(args)
        )]);
    }
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Ok(());
    };
    let mut problems: Vec<String> = validator
        .iter_errors(args)
        .map(|error| format!("{}: {error}", shown(error.instance_path().as_str())))
        .collect();
    problems.sort();
    problems.dedup();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Checks a whole value (a structured answer) against `schema`: problems as "`pointer`: what
/// is wrong", `(answer)` standing for the value itself. A schema that does not compile is an
/// error here, unlike for arguments: the user gave it, and should hear what is wrong with it.
pub fn validate_value(schema: &Value, value: &Value) -> Result<(), Vec<String>> {
    let validator = compile(schema).map_err(|e| vec![e.to_string()])?;
    let mut problems: Vec<String> = validator
        .iter_errors(value)
        .map(|error| {
            let at = error.instance_path().as_str().to_owned();
            let at = if at.is_empty() {
                "(answer)".to_owned()
            } else {
                at
            };
            format!("{at}: {error}")
        })
        .collect();
    problems.sort();
    problems.dedup();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// A schema the user gave that does not compile, and what the `jsonschema` crate said of it.
#[derive(Debug, thiserror::Error)]
#[error("not a usable JSON Schema: {0}")]
pub struct SchemaError(pub jsonschema::ValidationError<'static>);

/// Compiles a schema the user gave (`toolgate run --schema`), or says why it is not one.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    jsonschema::validator_for(schema).map_err(SchemaError)
}

fn shown(at: &str) -> &str {
    if at.is_empty() {
        "(arguments)"
    } else {
        at
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "force": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": "string", "enum": ["fast", "safe"]},
                "note": {"type": ["string", "null"]},
                "options": {
                    "type": "object",
                    "properties": {
                        "depth": {"type": "integer"},
                        "a/b": {"type": "boolean"}
                    },
                    "required": ["depth"]
                }
            },
            "required": ["path"]
        })
    }

    fn problems(args: Value) -> Vec<String> {
        match validate_arguments(&schema(), &args) {
            Ok(()) => Vec::new(),
            Err(problems) => problems,
        }
    }

    #[test]
    fn good_arguments_pass() {
        let args = json!({
            "path": "/tmp/a", "count": 3, "ratio": 0.5, "force": false, "tags": ["x"],
            "mode": "safe", "note": null, "options": {"depth": 2.0, "a/b": true}, "extra": 1
        });
        assert_eq!(problems(args), Vec::<String>::new());
        assert_eq!(
            problems(json!({"path": "", "ratio": 2})),
            Vec::<String>::new()
        );
    }

    #[test]
    fn each_problem_is_named_by_pointer() {
        let cases = [
            (
                json!({}),
                vec![r#"(arguments): "path" is a required property"#],
            ),
            (
                json!({"path": 5}),
                vec![r#"/path: 5 is not of type "string""#],
            ),
            (
                json!({"path": "a", "count": 1.5}),
                vec![r#"/count: 1.5 is not of type "integer""#],
            ),
            (
                json!({"path": "a", "count": "3"}),
                vec![r#"/count: "3" is not of type "integer""#],
            ),
            (
                json!({"path": "a", "tags": ["x", 2]}),
                vec![r#"/tags/1: 2 is not of type "string""#],
            ),
            (
                json!({"path": "a", "mode": "slow"}),
                vec![r#"/mode: "slow" is not one of "fast" or "safe""#],
            ),
            (
                json!({"path": "a", "note": 1}),
                vec![r#"/note: 1 is not of types "null", "string""#],
            ),
            (
                json!({"path": "a", "options": {}}),
                vec![r#"/options: "depth" is a required property"#],
            ),
            (
                json!({"path": "a", "options": {"depth": 1, "a/b": 0}}),
                vec![r#"/options/a~1b: 0 is not of type "boolean""#],
            ),
            (
                json!({"path": null, "count": true}),
                vec![
                    r#"/count: true is not of type "integer""#,
                    r#"/path: null is not of type "string""#,
                ],
            ),
        ];
        for (args, expected) in cases {
            assert_eq!(problems(args.clone()), expected, "{args}");
        }
    }

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(
            validate_arguments(&json!({}), &json!([1])),
            Err(vec!["(arguments): expected object, found array".to_owned()])
        );
    }

    #[test]
    fn additional_properties_and_const_and_boolean_schemas() {
        let schema = json!({
            "type": "object",
            "properties": {"kind": {"const": "file"}, "never": false},
            "additionalProperties": false
        });
        assert_eq!(
            validate_arguments(&schema, &json!({"kind": "dir", "x": 1, "never": 0})),
            Err(vec![
                "(arguments): Additional properties are not allowed ('x' was unexpected)"
                    .to_owned(),
                r#"/kind: "file" was expected"#.to_owned(),
                "/never: False schema does not allow 0".to_owned(),
            ])
        );
        let typed_extra = json!({"type": "object", "additionalProperties": {"type": "number"}});
        assert_eq!(
            validate_arguments(&typed_extra, &json!({"a": 1, "b": "x"})),
            Err(vec![r#"/b: "x" is not of type "number""#.to_owned()])
        );
    }

    #[test]
    fn every_keyword_of_the_schemas_draft_is_checked() {
        // `anyOf`, formats of numbers and lengths: the hand-written check ignored these.
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "n": {"type": "integer", "minimum": 1, "maximum": 10},
                "s": {"type": "string", "maxLength": 3}
            }
        });
        assert_eq!(
            validate_arguments(&schema, &json!({"a": 1, "n": 11, "s": "long"})),
            Err(vec![
                "/a: 1 is not valid under any of the schemas listed in the 'anyOf' keyword"
                    .to_owned(),
                "/n: 11 is greater than the maximum of 10".to_owned(),
                r#"/s: "long" is longer than 3 characters"#.to_owned(),
            ])
        );
        assert_eq!(
            validate_arguments(&schema, &json!({"a": null, "n": 3, "s": "ok"})),
            Ok(())
        );
    }

    #[test]
    fn a_schema_that_cannot_be_compiled_is_left_to_the_server() {
        // A `$ref` to a place that is not there, which would need fetching or guessing.
        let schema = json!({
            "type": "object",
            "properties": {"b": {"$ref": "https://example.com/schema.json"}}
        });
        assert_eq!(validate_arguments(&schema, &json!({"b": 2})), Ok(()));
    }

    #[test]
    fn enum_compares_numbers_by_value() {
        let schema = json!({"type": "object", "properties": {"n": {"enum": [1, 2]}}});
        assert_eq!(validate_arguments(&schema, &json!({"n": 2.0})), Ok(()));
        assert!(validate_arguments(&schema, &json!({"n": 3})).is_err());
    }
}
