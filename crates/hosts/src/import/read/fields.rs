//! Typed access to an entry's fields, and the paths that name them in messages
//! (`mcpServers.github.args[1]`, `servers["my server"]`).
//!
//! Strict about types: a wrong type is an error naming the field and the kind of value found,
//! never the value, which may be a secret.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::import::error::ImportError;

/// Typed access to one object's fields; errors name the field.
pub(super) struct Fields<'a> {
    pub(super) object: &'a Map<String, Value>,
    pub(super) path: &'a str,
}

impl<'a> Fields<'a> {
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key).filter(|v| !v.is_null())
    }

    pub(super) fn wrong(&self, key: &str, expected: &str, found: &Value) -> ImportError {
        ImportError::Invalid {
            at: field_path(self.path, key),
            problem: format!("expected {expected}, found {}", kind_of(found)),
        }
    }

    pub(super) fn string(&self, key: &str) -> Result<Option<&'a str>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    pub(super) fn boolean(&self, key: &str) -> Result<Option<bool>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "true or false", other)),
        }
    }

    pub(super) fn number(&self, key: &str) -> Result<Option<f64>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(self.wrong(key, "a number", other)),
        }
    }

    pub(super) fn strings(&self, key: &str) -> Result<Vec<String>, ImportError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(ImportError::Invalid {
                        at: format!("{}[{i}]", field_path(self.path, key)),
                        problem: format!("expected a string, found {}", kind_of(other)),
                    }),
                })
                .collect(),
            Some(other) => Err(self.wrong(key, "a list of strings", other)),
        }
    }

    pub(super) fn string_map(&self, key: &str) -> Result<BTreeMap<String, String>, ImportError> {
        match self.get(key) {
            None => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, item)| match item {
                    Value::String(s) => Ok((name.clone(), s.clone())),
                    other => Err(ImportError::Invalid {
                        at: key_path(&field_path(self.path, key), name),
                        problem: format!("expected a string, found {}", kind_of(other)),
                    }),
                })
                .collect(),
            Some(other) => Err(self.wrong(key, "an object of names to strings", other)),
        }
    }
}

pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// `path.key`, or `key` at the top.
pub(super) fn field_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// `path.name` for a plain name, `path["my name"]` for any other.
pub(super) fn key_path(path: &str, name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    if plain {
        field_path(path, name)
    } else {
        let quoted = serde_json::to_string(name).unwrap_or_else(|_| format!("\"{name}\""));
        format!("{path}[{quoted}]")
    }
}

pub(super) fn display_path(path: &str) -> String {
    if path.is_empty() {
        "the server".to_owned()
    } else {
        path.to_owned()
    }
}
