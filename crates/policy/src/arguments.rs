//! A first check of arguments the user edited before approving.
//!
//! This is not a JSON Schema validator and does not try to be one: the server validates its own
//! input, and a call it refuses comes back to the model as an error like any other. The point
//! is to catch a slip in the approval prompt (a deleted required field, `"3"` typed for a
//! number) while the user can still fix it, with a message that says where. So it checks the
//! keywords that catch such slips (`type`, `enum`, `const`, `required`, `properties`,
//! `additionalProperties`, `items`) and ignores the rest, including `$ref` and the `anyOf`
//! family, rather than guess at them.
//!
//! The `jsonschema` crate would check everything, but it brings a regex engine, URL and
//! e-mail parsing and optional HTTP fetching of remote `$ref`s into a crate that promises no
//! I/O, for a check whose job is a quick, explainable first look.

use serde_json::{Map, Value};

/// Checks `args` against the parts of `schema` listed in the module docs. Each problem is
/// reported as "`pointer`: what is wrong", with `(arguments)` standing for the whole object.
pub fn validate_arguments(schema: &Value, args: &Value) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    if !args.is_object() {
        // MCP sends tool arguments as an object, whatever the schema says.
        problems.push(format!(
            "{}: expected object, found {}",
            shown(""),
            kind_of(args)
        ));
        return Err(problems);
    }
    check(schema, args, "", &mut problems);
    // Sorted so the order does not depend on how `serde_json` keeps object keys.
    problems.sort();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn check(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    let schema = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => {
            problems.push(format!("{}: no value is allowed here", shown(at)));
            return;
        }
        Value::Object(schema) => schema,
        // Not a schema at all: nothing to check against.
        _ => return,
    };

    if let Some(expected) = schema.get("type") {
        let names: Vec<&str> = match expected {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|name| has_type(value, name)) {
            problems.push(format!(
                "{}: expected {}, found {}",
                shown(at),
                names.join(" or "),
                kind_of(value)
            ));
            // The other keywords would only repeat the same mistake in other words.
            return;
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.iter().any(|a| same(a, value)) {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            problems.push(format!(
                "{}: {} is not one of {}",
                shown(at),
                value,
                list.join(", ")
            ));
        }
    }
    if let Some(expected) = schema.get("const") {
        if !same(expected, value) {
            problems.push(format!("{}: must be {}", shown(at), expected));
        }
    }
    match value {
        Value::Object(object) => check_object(schema, object, at, problems),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| !s.is_array()) {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{at}/{i}"), problems);
                }
            }
        }
        _ => {}
    }
}

fn check_object(
    schema: &Map<String, Value>,
    object: &Map<String, Value>,
    at: &str,
    problems: &mut Vec<String>,
) {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                problems.push(format!("{}/{}: is required but missing", at, escape(name)));
            }
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    for (name, item) in object {
        let here = format!("{at}/{}", escape(name));
        match (properties.and_then(|p| p.get(name)), additional) {
            (Some(property), _) => check(property, item, &here, problems),
            (None, Some(Value::Bool(false))) => {
                problems.push(format!("{here}: is not a known property"));
            }
            (None, Some(extra)) => check(extra, item, &here, problems),
            (None, None) => {}
        }
    }
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => is_integer(value),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        // A type this check does not know: let the server judge it.
        _ => true,
    }
}

/// JSON Schema counts `2.0` as an integer: it is the value that matters, not its spelling.
fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        _ => false,
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`), as JSON Schema does.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y || x.as_f64().is_some_and(|x| y.as_f64() == Some(x)),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if is_integer(value) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A property name as one JSON pointer segment (RFC 6901).
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn shown(at: &str) -> &str {
    if at.is_empty() {
        "(arguments)"
    } else {
        at
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
            (json!({}), vec!["/path: is required but missing"]),
            (
                json!({"path": 5}),
                vec!["/path: expected string, found integer"],
            ),
            (
                json!({"path": "a", "count": 1.5}),
                vec!["/count: expected integer, found number"],
            ),
            (
                json!({"path": "a", "count": "3"}),
                vec!["/count: expected integer, found string"],
            ),
            (
                json!({"path": "a", "force": "yes"}),
                vec!["/force: expected boolean, found string"],
            ),
            (
                json!({"path": "a", "tags": ["x", 2]}),
                vec!["/tags/1: expected string, found integer"],
            ),
            (
                json!({"path": "a", "mode": "slow"}),
                vec![r#"/mode: "slow" is not one of "fast", "safe""#],
            ),
            (
                json!({"path": "a", "note": 1}),
                vec!["/note: expected string or null, found integer"],
            ),
            (
                json!({"path": "a", "options": {}}),
                vec!["/options/depth: is required but missing"],
            ),
            (
                json!({"path": "a", "options": {"depth": 1, "a/b": 0}}),
                vec!["/options/a~1b: expected boolean, found integer"],
            ),
            (
                json!({"path": "a", "options": []}),
                vec!["/options: expected object, found array"],
            ),
            (
                json!({"path": null, "count": true}),
                vec![
                    "/count: expected integer, found boolean",
                    "/path: expected string, found null",
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
                r#"/kind: must be "file""#.to_owned(),
                "/never: no value is allowed here".to_owned(),
                "/x: is not a known property".to_owned(),
            ])
        );
        let typed_extra = json!({"type": "object", "additionalProperties": {"type": "number"}});
        assert_eq!(
            validate_arguments(&typed_extra, &json!({"a": 1, "b": "x"})),
            Err(vec!["/b: expected number, found string".to_owned()])
        );
    }

    #[test]
    fn keywords_it_does_not_know_are_left_to_the_server() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"anyOf": [{"type": "string"}]}, "b": {"$ref": "#/x"}, "c": {"type": "uuid"}}
        });
        assert_eq!(
            validate_arguments(&schema, &json!({"a": 1, "b": 2, "c": 3})),
            Ok(())
        );
    }

    #[test]
    fn enum_compares_numbers_by_value() {
        let schema = json!({"type": "object", "properties": {"n": {"enum": [1, 2]}}});
        assert_eq!(validate_arguments(&schema, &json!({"n": 2.0})), Ok(()));
        assert!(validate_arguments(&schema, &json!({"n": 3})).is_err());
    }
}
