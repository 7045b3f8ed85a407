//! How each host's file holds its servers: where the server map is, how one of its entries reads
//! as the import's `mcpServers` entry, and how Toolgate's own entry is written there.
//!
//! Kept apart from planning and applying so that the per-host differences (Zed's
//! `context_servers`, Goose's YAML `extensions`) are in one place.

use crate::host_paths::HostKind;
use serde_json::{json, Map, Value};

/// The name of Toolgate's entry in a host's config.
pub const ENTRY: &str = "toolgate";

/// The command a host runs to reach Toolgate: `toolgate connect --profile HOST`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectCommand {
    pub command: String,
    pub args: Vec<String>,
}

/// How a host's file holds its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// JSON(C) with `mcpServers` at the top (Claude Desktop, Claude Code, Cursor).
    McpServers,
    /// VS Code's `mcp.json`: `servers`, and `inputs` for the values it asks for.
    VsCode,
    /// Zed's `settings.json`: `context_servers`.
    Zed,
    /// Goose's `config.yaml`: `extensions`.
    Goose,
    /// Codex CLI's `config.toml`: `[mcp_servers.NAME]` tables.
    Codex,
    /// Gemini CLI's `settings.json`: `mcpServers`, with `httpUrl` for Streamable HTTP and `url`
    /// for SSE.
    Gemini,
}

/// The syntax of a host's file, for reading it and editing it in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// JSON with comments and trailing commas allowed.
    Jsonc,
    Yaml,
    Toml,
}

pub(crate) fn syntax(host: HostKind) -> Syntax {
    match shape(host) {
        Shape::Goose => Syntax::Yaml,
        Shape::Codex => Syntax::Toml,
        Shape::McpServers | Shape::VsCode | Shape::Zed | Shape::Gemini => Syntax::Jsonc,
    }
}

/// Which of those shapes `host`'s file has.
pub(crate) fn shape(host: HostKind) -> Shape {
    match host {
        HostKind::ClaudeDesktop | HostKind::ClaudeCode | HostKind::Cursor => Shape::McpServers,
        HostKind::VsCode => Shape::VsCode,
        HostKind::Zed => Shape::Zed,
        HostKind::Goose => Shape::Goose,
        HostKind::Codex => Shape::Codex,
        HostKind::Gemini => Shape::Gemini,
    }
}

/// The key of the server map in the host's file.
pub(crate) fn servers_key(host: HostKind) -> &'static str {
    match shape(host) {
        Shape::McpServers | Shape::Gemini => "mcpServers",
        Shape::VsCode => "servers",
        Shape::Zed => "context_servers",
        Shape::Goose => "extensions",
        Shape::Codex => "mcp_servers",
    }
}

/// Toolgate's entry, as this host writes a server.
pub(crate) fn entry(host: HostKind, connect: &ConnectCommand) -> Value {
    let (command, args) = (&connect.command, &connect.args);
    match host {
        HostKind::ClaudeCode => {
            json!({"type": "stdio", "command": command, "args": args, "env": {}})
        }
        HostKind::ClaudeDesktop | HostKind::Cursor | HostKind::Codex | HostKind::Gemini => {
            json!({"command": command, "args": args})
        }
        HostKind::VsCode => json!({"type": "stdio", "command": command, "args": args}),
        HostKind::Zed => json!({"source": "custom", "command": command, "args": args, "env": {}}),
        HostKind::Goose => json!({
            "enabled": true,
            "type": "stdio",
            "name": ENTRY,
            "description": "Your MCP servers through Toolgate: every tool call passes your approval",
            "cmd": command,
            "args": args,
            "envs": {},
            "timeout": 300,
        }),
    }
}

/// One of the host's servers in the `mcpServers` shape the import reads, or why it stays.
pub(crate) fn as_import_entry(host: HostKind, value: &Value) -> Result<Value, String> {
    match shape(host) {
        Shape::McpServers | Shape::VsCode => Ok(value.clone()),
        Shape::Zed => {
            if value.get("source").and_then(Value::as_str) == Some("extension") {
                return Err("a Zed extension provides it".into());
            }
            let mut out = Map::new();
            match value.get("command") {
                // Older Zed: {"command": {"path", "args", "env"}}.
                Some(Value::Object(command)) => {
                    for (from, to) in [("path", "command"), ("args", "args"), ("env", "env")] {
                        if let Some(v) = command.get(from) {
                            out.insert(to.into(), v.clone());
                        }
                    }
                }
                Some(command) => {
                    out.insert("command".into(), command.clone());
                    for key in ["args", "env"] {
                        if let Some(v) = value.get(key) {
                            out.insert(key.into(), v.clone());
                        }
                    }
                }
                None => {
                    for key in ["url", "headers"] {
                        if let Some(v) = value.get(key) {
                            out.insert(key.into(), v.clone());
                        }
                    }
                }
            }
            Ok(Value::Object(out))
        }
        Shape::Codex => {
            let mut out = Map::new();
            if let Some(url) = value.get("url") {
                out.insert("type".into(), json!("http"));
                out.insert("url".into(), url.clone());
                if let Some(headers) = value.get("http_headers") {
                    out.insert("headers".into(), headers.clone());
                }
                if value.get("bearer_token_env_var").is_some() {
                    return Err(
                        "its token comes from an environment variable of Codex's; sign in to it in Toolgate instead"
                            .into(),
                    );
                }
            } else {
                for key in ["command", "args", "env", "cwd"] {
                    if let Some(v) = value.get(key) {
                        out.insert(key.into(), v.clone());
                    }
                }
            }
            if value.get("enabled") == Some(&Value::Bool(false)) {
                out.insert("disabled".into(), json!(true));
            }
            Ok(Value::Object(out))
        }
        Shape::Gemini => {
            let mut out = Map::new();
            let remote = [("httpUrl", "http"), ("url", "sse")]
                .into_iter()
                .find_map(|(key, kind)| value.get(key).map(|url| (url, kind)));
            match remote {
                Some((url, kind)) => {
                    out.insert("type".into(), json!(kind));
                    out.insert("url".into(), url.clone());
                    if let Some(headers) = value.get("headers") {
                        out.insert("headers".into(), headers.clone());
                    }
                }
                None => {
                    for key in ["command", "args", "env", "cwd"] {
                        if let Some(v) = value.get(key) {
                            out.insert(key.into(), v.clone());
                        }
                    }
                }
            }
            Ok(Value::Object(out))
        }
        Shape::Goose => {
            let kind = value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mut out = Map::new();
            match kind {
                "stdio" => {
                    out.insert(
                        "command".into(),
                        value.get("cmd").cloned().unwrap_or_default(),
                    );
                    for (from, to) in [("args", "args"), ("envs", "env")] {
                        if let Some(v) = value.get(from).filter(|v| !v.is_null()) {
                            out.insert(to.into(), v.clone());
                        }
                    }
                }
                "streamable_http" => {
                    out.insert("type".into(), json!("http"));
                    out.insert("url".into(), value.get("uri").cloned().unwrap_or_default());
                    if let Some(headers) = value.get("headers").filter(|v| !v.is_null()) {
                        out.insert("headers".into(), headers.clone());
                    }
                }
                other => {
                    return Err(format!(
                        "a Goose {other} extension, not an MCP server Toolgate can run"
                    ))
                }
            }
            if let Some(timeout) = value.get("timeout").filter(|v| v.is_number()) {
                out.insert("timeout".into(), timeout.clone());
            }
            if value.get("enabled") == Some(&Value::Bool(false)) {
                out.insert("disabled".into(), json!(true));
            }
            Ok(Value::Object(out))
        }
    }
}

/// Whether the map is already just Toolgate.
pub(crate) fn is_connected(servers: &Map<String, Value>) -> bool {
    servers.len() == 1
        && servers.get(ENTRY).is_some_and(|e| {
            let args = e.get("args").and_then(Value::as_array);
            args.is_some_and(|a| a.iter().any(|v| v == "connect"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zed_and_goose_entries_read_as_the_import_reads_servers() {
        let zed_new =
            json!({"source": "custom", "command": "npx", "args": ["-y", "x"], "env": {"A": "1"}});
        assert_eq!(
            as_import_entry(HostKind::Zed, &zed_new),
            Ok(json!({"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}}))
        );
        let zed_old =
            json!({"command": {"path": "uvx", "args": ["mcp-server-time"]}, "settings": {}});
        assert_eq!(
            as_import_entry(HostKind::Zed, &zed_old),
            Ok(json!({"command": "uvx", "args": ["mcp-server-time"]}))
        );
        assert!(as_import_entry(HostKind::Zed, &json!({"source": "extension"})).is_err());
        let goose = json!({"type": "stdio", "cmd": "npx", "args": ["a"], "envs": {}, "enabled": false, "timeout": 300});
        assert_eq!(
            as_import_entry(HostKind::Goose, &goose),
            Ok(
                json!({"command": "npx", "args": ["a"], "env": {}, "timeout": 300, "disabled": true})
            )
        );
        assert!(as_import_entry(HostKind::Goose, &json!({"type": "builtin"})).is_err());
    }

    #[test]
    fn codex_and_gemini_entries_read_as_the_import_reads_servers() {
        let codex = json!({"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}, "enabled": false, "startup_timeout_sec": 20});
        assert_eq!(
            as_import_entry(HostKind::Codex, &codex),
            Ok(json!({"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}, "disabled": true}))
        );
        assert_eq!(
            as_import_entry(
                HostKind::Codex,
                &json!({"url": "https://mcp.example/mcp", "http_headers": {"X": "y"}})
            ),
            Ok(json!({"type": "http", "url": "https://mcp.example/mcp", "headers": {"X": "y"}}))
        );
        assert!(as_import_entry(
            HostKind::Codex,
            &json!({"url": "https://a", "bearer_token_env_var": "TOKEN"})
        )
        .is_err());
        assert_eq!(
            as_import_entry(
                HostKind::Gemini,
                &json!({"httpUrl": "https://a/mcp", "trust": true})
            ),
            Ok(json!({"type": "http", "url": "https://a/mcp"}))
        );
        assert_eq!(
            as_import_entry(HostKind::Gemini, &json!({"url": "https://a/sse"})),
            Ok(json!({"type": "sse", "url": "https://a/sse"}))
        );
        assert_eq!(
            as_import_entry(
                HostKind::Gemini,
                &json!({"command": "uvx", "args": ["t"], "timeout": 5000})
            ),
            Ok(json!({"command": "uvx", "args": ["t"]}))
        );
    }
}
