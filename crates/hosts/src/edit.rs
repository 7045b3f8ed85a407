//! Reading a host's file, and changing entries of its server map in the file as the host wrote
//! it.
//!
//! The file belongs to another app, which may keep its own state in it (Claude Code's
//! `~/.claude.json` is rewritten at every start). So Toolgate never rewrites it whole: connecting
//! and undoing remove and add entries under the servers key and leave every other byte as it
//! was. JSON with comments goes through `jsonc-parser`'s concrete syntax tree and TOML through
//! `toml_edit`, both of which keep comments, order and spacing. YAML has no such editor in Rust:
//! Goose's file is rewritten from its parsed form, keeping the order of its keys but not its
//! comments (the backup keeps those, and the preview says so).

use crate::import::parse_jsonc;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::{Map, Value};

use crate::format::Syntax;

/// The whole document as JSON, whatever the file's syntax; an empty file is an empty object.
pub(crate) fn read(syntax: Syntax, text: &str) -> Result<Value, String> {
    let doc = match syntax {
        Syntax::Jsonc => parse_jsonc(text).map_err(|e| e.to_string())?,
        Syntax::Yaml => {
            let yaml: yaml_serde::Value = yaml_serde::from_str(text).map_err(|e| e.to_string())?;
            serde_json::to_value(yaml).map_err(|e| e.to_string())?
        }
        Syntax::Toml => {
            let doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
            toml_table(doc.as_table())
        }
    };
    match doc {
        Value::Object(_) => Ok(doc),
        // An empty YAML or JSON file.
        Value::Null => Ok(Value::Object(Map::new())),
        Value::Array(_) => Err("the top level is a list, not an object".into()),
        _ => Err("the top level is a single value, not an object".into()),
    }
}

/// `text` with the entries named in `remove` taken out of the map under `key`, then `add`
/// appended to it (creating the map when there is none). Everything else is kept as written.
pub(crate) fn servers(
    syntax: Syntax,
    text: &str,
    key: &str,
    remove: &[&str],
    add: &[(&str, &Value)],
) -> Result<String, String> {
    match syntax {
        Syntax::Jsonc => jsonc(text, key, remove, add),
        Syntax::Toml => toml(text, key, remove, add),
        Syntax::Yaml => yaml(text, key, remove, add),
    }
}

fn jsonc(text: &str, key: &str, remove: &[&str], add: &[(&str, &Value)]) -> Result<String, String> {
    let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| e.to_string())?;
    let top = root
        .object_value_or_create()
        .ok_or("the top level is not an object")?;
    let map = match top.get(key) {
        Some(prop) => match prop.value() {
            Some(node) if node.as_object().is_some() => node.as_object(),
            Some(node) if node.as_null_keyword().is_some() => None,
            Some(_) => return Err(format!("`{key}` is not an object")),
            None => None,
        },
        None => None,
    };
    let map = match map {
        Some(map) => map,
        None => top.object_value_or_set(key),
    };
    for name in remove {
        if let Some(prop) = map.get(name) {
            prop.remove();
        }
    }
    for (name, value) in add {
        map.append(name, cst_value(value));
    }
    Ok(root.to_string())
}

fn cst_value(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect())
        }
    }
}

fn toml(text: &str, key: &str, remove: &[&str], add: &[(&str, &Value)]) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    let root = doc.as_table_mut();
    if !root.contains_key(key) {
        let mut map = toml_edit::Table::new();
        // `[mcp_servers.NAME]` headers only, no empty `[mcp_servers]` above them.
        map.set_implicit(true);
        root.insert(key, toml_edit::Item::Table(map));
    }
    let map = root
        .get_mut(key)
        .and_then(toml_edit::Item::as_table_like_mut)
        .ok_or_else(|| format!("`{key}` is not a table"))?;
    for name in remove {
        map.remove(name);
    }
    for (name, value) in add {
        let Value::Object(fields) = value else {
            return Err(format!("the entry for {name} is not a table"));
        };
        let mut table = toml_edit::Table::new();
        for (field, v) in fields {
            if let Some(v) = toml_value(v) {
                table.insert(field, toml_edit::Item::Value(v));
            }
        }
        map.insert(name, toml_edit::Item::Table(table));
    }
    Ok(doc.to_string())
}

/// A JSON value as a TOML value; `None` for null, which TOML cannot hold.
fn toml_value(value: &Value) -> Option<toml_edit::Value> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            toml_edit::Value::Array(items.iter().filter_map(toml_value).collect())
        }
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in map {
                if let Some(v) = toml_value(v) {
                    table.insert(k, v);
                }
            }
            toml_edit::Value::InlineTable(table)
        }
    })
}

fn toml_table(table: &dyn toml_edit::TableLike) -> Value {
    Value::Object(
        table
            .iter()
            .filter_map(|(k, item)| toml_item(item).map(|v| (k.to_owned(), v)))
            .collect(),
    )
}

fn toml_item(item: &toml_edit::Item) -> Option<Value> {
    match item {
        toml_edit::Item::None => None,
        toml_edit::Item::Value(v) => Some(toml_json(v)),
        toml_edit::Item::Table(t) => Some(toml_table(t)),
        toml_edit::Item::ArrayOfTables(a) => {
            Some(Value::Array(a.iter().map(|t| toml_table(t)).collect()))
        }
    }
}

fn toml_json(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => Value::from(*f.value()),
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(toml_json).collect()),
        toml_edit::Value::InlineTable(t) => toml_table(t),
    }
}

fn yaml(text: &str, key: &str, remove: &[&str], add: &[(&str, &Value)]) -> Result<String, String> {
    let mut doc: yaml_serde::Value = yaml_serde::from_str(text).map_err(|e| e.to_string())?;
    if doc.is_null() {
        doc = yaml_serde::Value::Mapping(yaml_serde::Mapping::new());
    }
    let top = doc
        .as_mapping_mut()
        .ok_or("the top level is not a mapping")?;
    let key = yaml_serde::Value::String(key.to_owned());
    if top.get(&key).is_none_or(yaml_serde::Value::is_null) {
        top.insert(
            key.clone(),
            yaml_serde::Value::Mapping(yaml_serde::Mapping::new()),
        );
    }
    let map = top
        .get_mut(&key)
        .and_then(yaml_serde::Value::as_mapping_mut)
        .ok_or("the servers are not a mapping")?;
    for name in remove {
        map.remove(*name);
    }
    for (name, value) in add {
        let value = yaml_serde::to_value(value).map_err(|e| e.to_string())?;
        map.insert(yaml_serde::Value::String((*name).to_owned()), value);
    }
    yaml_serde::to_string(&doc).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonc_keeps_comments_order_and_the_rest_byte_for_byte() {
        let text = "{\n  // the user's note\n  \"zeta\": 1,\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}, // keep me\n    \"b\": {\"command\": \"y\"}\n  },\n  \"alpha\": [1, 2]\n}\n";
        let entry = json!({"command": "toolgate", "args": ["connect"]});
        let out = servers(
            Syntax::Jsonc,
            text,
            "mcpServers",
            &["b"],
            &[("toolgate", &entry)],
        )
        .expect("edits");
        assert!(
            out.starts_with("{\n  // the user's note\n  \"zeta\": 1,\n"),
            "{out}"
        );
        assert!(out.contains("\"a\": {\"command\": \"x\"}"), "{out}");
        assert!(out.ends_with("  \"alpha\": [1, 2]\n}\n"), "{out}");
        let doc = read(Syntax::Jsonc, &out).expect("still JSONC");
        assert_eq!(doc["mcpServers"]["toolgate"], entry);
        assert!(doc["mcpServers"].get("b").is_none());
        let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3);
    }

    #[test]
    fn jsonc_makes_the_map_when_there_is_none() {
        let entry = json!({"command": "toolgate"});
        for text in ["{}", "{\"x\": 1}", "{\"mcpServers\": null}", ""] {
            let out = servers(
                Syntax::Jsonc,
                text,
                "mcpServers",
                &[],
                &[("toolgate", &entry)],
            )
            .expect("edits");
            let doc = read(Syntax::Jsonc, &out).expect("JSON");
            assert_eq!(doc["mcpServers"]["toolgate"], entry, "{text:?} -> {out}");
        }
        assert!(servers(Syntax::Jsonc, "{\"mcpServers\": 3}", "mcpServers", &[], &[]).is_err());
    }

    #[test]
    fn toml_keeps_comments_and_writes_a_table_per_server() {
        let text = "# Codex settings\nmodel = \"o4\"\n\n[mcp_servers.time]\ncommand = \"uvx\" # the time server\nargs = [\"mcp-server-time\"]\n\n[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\n\n[profiles.x]\nmodel = \"y\"\n";
        let entry = json!({"command": "toolgate", "args": ["connect", "--profile", "codex"], "env": {"A": "1"}});
        let out = servers(
            Syntax::Toml,
            text,
            "mcp_servers",
            &["time"],
            &[("toolgate", &entry)],
        )
        .expect("edits");
        assert!(
            out.starts_with("# Codex settings\nmodel = \"o4\"\n"),
            "{out}"
        );
        assert!(out.contains("[mcp_servers.toolgate]"), "{out}");
        assert!(out.contains("[profiles.x]"), "{out}");
        let doc = read(Syntax::Toml, &out).expect("TOML");
        assert_eq!(doc["mcp_servers"]["toolgate"], entry);
        assert_eq!(
            doc["mcp_servers"]["docs"]["url"],
            "https://docs.example/mcp"
        );
        assert!(doc["mcp_servers"].get("time").is_none());
        let fresh = servers(
            Syntax::Toml,
            "model = \"o4\"\n",
            "mcp_servers",
            &[],
            &[("toolgate", &entry)],
        )
        .expect("edits");
        assert!(!fresh.contains("[mcp_servers]\n"), "{fresh}");
        assert!(fresh.contains("[mcp_servers.toolgate]"), "{fresh}");
    }

    #[test]
    fn yaml_keeps_the_order_of_keys() {
        let text = "GOOSE_PROVIDER: anthropic\nextensions:\n  zeta:\n    type: builtin\n  alpha:\n    type: stdio\n    cmd: npx\nGOOSE_MODEL: x\n";
        let entry = json!({"type": "stdio", "cmd": "toolgate"});
        let out = servers(
            Syntax::Yaml,
            text,
            "extensions",
            &["alpha"],
            &[("toolgate", &entry)],
        )
        .expect("edits");
        let zeta = out.find("zeta").expect("zeta");
        let toolgate = out.find("toolgate").expect("toolgate");
        assert!(
            zeta < toolgate && out.starts_with("GOOSE_PROVIDER"),
            "{out}"
        );
        assert!(out.trim_end().ends_with("GOOSE_MODEL: x"), "{out}");
    }
}
