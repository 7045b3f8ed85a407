//! The shape of the JSON: which [`Format`] it is (named by the caller, or detected), and where
//! its server entries are.
//!
//! Detection looks only at keys and kinds of value, never at values: `mcpServers` (Claude
//! Desktop, Cursor, Claude Code…), `servers` (VS Code, also under `mcp` in its settings), a
//! map of servers by name, or one server alone. Entries are taken in key order so the result
//! does not depend on the JSON map's order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::fields::{key_path, kind_of};
use super::inputs::{read_inputs, InputDef};
use crate::import::error::ImportError;

/// The shape of the JSON being imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ImportFormat")]
pub enum Format {
    /// `{"mcpServers": {...}}`: Claude Desktop, Cursor, Claude Code, Cline, Windsurf, Gemini CLI.
    McpServers,
    /// VS Code's `mcp.json`: `{"servers": {...}, "inputs": [...]}`.
    VsCode,
    /// The inside of `mcpServers` alone: `{"name": {"command": ...}}`.
    ServerMap,
    /// One server's entry alone: `{"command": ...}` or `{"url": ...}`.
    SingleServer,
}

/// One server entry found in the JSON, before it is read.
pub(in crate::import) struct Entry<'a> {
    /// Its key in the file; none for a single server pasted alone.
    pub name: Option<String>,
    /// Where it is, for messages: `mcpServers.github`, `servers["my server"]`, or empty.
    pub path: String,
    pub value: &'a Value,
}

/// What the JSON holds, by shape.
pub(in crate::import) struct Source<'a> {
    pub format: Format,
    /// In key order, so the result does not depend on serde_json's map ordering.
    pub entries: Vec<Entry<'a>>,
    /// VS Code's inputs, by id.
    pub inputs: BTreeMap<String, InputDef>,
}

/// Finds the servers: in the format the caller named, or the one the shape shows.
pub(in crate::import) fn find_servers(
    value: &Value,
    named: Option<Format>,
) -> Result<Source<'_>, ImportError> {
    let Some(top) = value.as_object() else {
        return Err(ImportError::NotAnObject {
            found: kind_of(value),
        });
    };
    let format = match named {
        Some(format) => format,
        None => guess_format(top)?,
    };
    let mut inputs = BTreeMap::new();
    let entries = match format {
        Format::McpServers => {
            let servers = top
                .get("mcpServers")
                .ok_or(ImportError::Missing { key: "mcpServers" })?;
            entries_of(servers, "mcpServers")?
        }
        Format::VsCode => {
            let (container, prefix) = match (top.get("servers"), top.get("mcp")) {
                (None, Some(Value::Object(mcp))) => (mcp, "mcp."),
                _ => (top, ""),
            };
            let servers = container
                .get("servers")
                .ok_or(ImportError::Missing { key: "servers" })?;
            inputs = read_inputs(container.get("inputs"), &format!("{prefix}inputs"))?;
            entries_of(servers, &format!("{prefix}servers"))?
        }
        Format::ServerMap => {
            if top.is_empty() {
                return Err(ImportError::NotRecognized);
            }
            entries_of(value, "")?
        }
        Format::SingleServer => vec![Entry {
            name: None,
            path: String::new(),
            value,
        }],
    };
    Ok(Source {
        format,
        entries,
        inputs,
    })
}

fn guess_format(top: &Map<String, Value>) -> Result<Format, ImportError> {
    let mcp_servers = top.contains_key("mcpServers");
    let vscode = top.contains_key("servers")
        || top
            .get("mcp")
            .and_then(Value::as_object)
            .is_some_and(|mcp| mcp.contains_key("servers"));
    match (mcp_servers, vscode) {
        (true, true) => return Err(ImportError::Ambiguous),
        (true, false) => return Ok(Format::McpServers),
        (false, true) => return Ok(Format::VsCode),
        (false, false) => {}
    }
    if is_single_server(top) {
        return Ok(Format::SingleServer);
    }
    let all_objects = !top.is_empty() && top.values().all(Value::is_object);
    let any_server = top
        .values()
        .filter_map(Value::as_object)
        .any(|entry| is_single_server(entry) || entry.contains_key("type"));
    if all_objects && any_server {
        Ok(Format::ServerMap)
    } else {
        Err(ImportError::NotRecognized)
    }
}

/// An object that is one server's entry: its `command` or URL is a string.
fn is_single_server(object: &Map<String, Value>) -> bool {
    ["command", "url", "httpUrl", "serverUrl"]
        .iter()
        .any(|key| object.get(*key).is_some_and(Value::is_string))
}

fn entries_of<'a>(servers: &'a Value, path: &str) -> Result<Vec<Entry<'a>>, ImportError> {
    let Some(map) = servers.as_object() else {
        return Err(ImportError::Invalid {
            at: path.to_owned(),
            problem: format!(
                "expected an object of servers by name, found {}",
                kind_of(servers)
            ),
        });
    };
    if map.is_empty() {
        return Err(ImportError::NoServers {
            at: path.to_owned(),
        });
    }
    let mut entries: Vec<Entry<'a>> = map
        .iter()
        .map(|(name, value)| Entry {
            name: Some(name.clone()),
            path: key_path(path, name),
            value,
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}
