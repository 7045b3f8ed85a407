//! VS Code's `inputs`: the values its `mcp.json` asks the user for (`${input:id}`), read so the
//! import can ask for them too, and keep a password's answer in the keychain.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::{field_path, kind_of, Fields};
use crate::import::error::ImportError;

/// A VS Code input (`inputs[]`).
#[derive(Debug, Clone)]
pub(in crate::import) struct InputDef {
    pub kind: String,
    pub description: String,
    pub password: bool,
    pub default: Option<String>,
    pub options: Vec<String>,
}

pub(super) fn read_inputs(
    inputs: Option<&Value>,
    path: &str,
) -> Result<BTreeMap<String, InputDef>, ImportError> {
    let items = match inputs {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(ImportError::Invalid {
                at: path.to_owned(),
                problem: format!("expected a list of inputs, found {}", kind_of(other)),
            })
        }
    };
    let mut out = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let Some(object) = item.as_object() else {
            return Err(ImportError::Invalid {
                at,
                problem: format!("expected an object, found {}", kind_of(item)),
            });
        };
        let fields = Fields { object, path: &at };
        let id = fields.string("id")?.ok_or_else(|| ImportError::Invalid {
            at: field_path(&at, "id"),
            problem: "missing: every input needs an id".into(),
        })?;
        let password = fields.boolean("password")?.unwrap_or(false);
        let options = match object.get("options") {
            Some(Value::Array(options)) => options
                .iter()
                .filter_map(|o| match o {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(o) => o.get("value").and_then(Value::as_str).map(str::to_owned),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        out.insert(
            id.to_owned(),
            InputDef {
                kind: fields.string("type")?.unwrap_or("promptString").to_owned(),
                description: fields.string("description")?.unwrap_or_default().to_owned(),
                password,
                // A password input's default would be a secret written in the file: not kept.
                default: if password {
                    None
                } else {
                    fields.string("default")?.map(str::to_owned)
                },
                options,
            },
        );
    }
    Ok(out)
}
