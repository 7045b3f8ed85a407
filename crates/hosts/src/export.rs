//! Exporting Toolgate's servers as the `mcpServers` JSON other hosts read.
//!
//! - A stdio server becomes `{"command", "args", "env"?, "cwd"?}`: Claude Desktop's form.
//! - A Streamable HTTP server becomes `{"type": "http", "url", "headers"?}`: the form Claude
//!   Code's `.mcp.json`, Cursor and Cline read. Claude Desktop's own file only runs stdio entries
//!   (it adds remote servers as connectors in its settings), so such entries are for those hosts.
//! - A disabled server is left out and listed in [`Export::left_out`]: `disabled` is not part of
//!   Claude Desktop's format, and a host that ignores it would start a server the user turned off.
//! - Each entry's key is the server's name when the exported names are distinct, else its id.
//! - Values are copied as written: `${secret:NAME}` and `${env:NAME}` stay references (never
//!   resolved), so no secret leaves the keychain; the other host must be given the values.
//! - Toolgate's timeouts, restart, roots and `allowEnv` settings have no common spelling and are
//!   left out; a server whose env needs `allowEnv` is skipped when the export is imported again,
//!   until the entry gets `"allowEnv"` back.
//!
//! [`crate::import`] reads this output back to the same servers.

use serde::Serialize;
use serde_json::{json, Map, Value};

use toolgate_settings::{Settings, Transport};

/// An `mcpServers` document and what it does not hold.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    /// `{"mcpServers": {...}}`.
    pub json: Value,
    pub left_out: Vec<LeftOut>,
}

/// A server the export does not include, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct LeftOut {
    pub id: String,
    pub reason: String,
}

/// The enabled servers as `{"mcpServers": {...}}`, with the servers left out; see the module
/// docs for the form of each entry.
pub fn export_mcp_servers(settings: &Settings) -> Export {
    let mut left_out = Vec::new();
    let exported: Vec<_> = settings
        .servers
        .iter()
        .filter(|server| {
            if !server.enabled {
                left_out.push(LeftOut {
                    id: server.id.clone(),
                    reason: "disabled: other hosts would start it".into(),
                });
            }
            server.enabled
        })
        .collect();
    let names_distinct = {
        let names: std::collections::BTreeSet<&str> =
            exported.iter().map(|s| s.name.trim()).collect();
        names.len() == exported.len() && !names.contains("")
    };
    let mut servers = Map::new();
    for server in exported {
        let entry = match &server.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut entry = json!({ "command": command, "args": args });
                if !env.is_empty() {
                    entry["env"] = json!(env);
                }
                if let Some(cwd) = cwd {
                    entry["cwd"] = json!(cwd.to_string_lossy());
                }
                entry
            }
            Transport::Http { url, headers, sse } => {
                let kind = if *sse { "sse" } else { "http" };
                let mut entry = json!({ "type": kind, "url": url });
                if !headers.is_empty() {
                    entry["headers"] = json!(headers);
                }
                entry
            }
        };
        let key = if names_distinct {
            server.name.trim()
        } else {
            server.id.as_str()
        };
        servers.insert(key.to_owned(), entry);
    }
    Export {
        json: json!({ "mcpServers": servers }),
        left_out,
    }
}

/// `{"mcpServers": {...}}` for Claude Desktop's `claude_desktop_config.json` (and the hosts that
/// read the same file format); [`export_mcp_servers`] also says which servers it left out.
pub fn export_claude_desktop(settings: &Settings) -> Value {
    export_mcp_servers(settings).json
}
