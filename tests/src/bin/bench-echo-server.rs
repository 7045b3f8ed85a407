//! The instant MCP server of the per-call benchmark (`benches/per_call.rs`): stdio,
//! newline-delimited JSON-RPC, one tool, `echo`, answered as soon as it is read. Written in Rust
//! so that the server adds as little as possible to each call, and the clients compared (Toolgate,
//! raw rmcp, the TypeScript SDK) differ only by their own work.
//!
//! It speaks the `initialize` handshake (2025-11-25 and earlier) and answers `server/discover`
//! with "method not found", as every server before 2026-07-28 does.
//!
//! With `TOOLGATE_ECHO_LOG` set to a file, it appends each echoed text to it, one line per call,
//! as it reads the call (before answering): the audit kill test (`tests/audit_kill.rs`) learns
//! from it which calls reached the server.

use std::io::Write;

use serde_json::{json, Value};
use toolgate_tests::line_server::Answer;

const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

fn answer(method: &str, params: &Value) -> Answer {
    match method {
        "initialize" => {
            let wanted = params["protocolVersion"].as_str().unwrap_or_default();
            let version = VERSIONS
                .into_iter()
                .find(|v| *v == wanted)
                .unwrap_or(VERSIONS[0]);
            Ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench-echo-server", "version": "1"},
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": [{
            "name": "echo",
            "description": "Returns the `text` argument.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }]})),
        "tools/call" if params["name"] == "echo" => {
            let text = params["arguments"]["text"].as_str().unwrap_or_default();
            Ok(json!({"content": [{"type": "text", "text": text}], "isError": false}))
        }
        "tools/call" => Err((-32602, format!("Unknown tool: {}", params["name"]))),
        _ => Err((-32601, format!("Method not found: {method}"))),
    }
}

fn main() -> std::io::Result<()> {
    let mut log = match std::env::var_os("TOOLGATE_ECHO_LOG") {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        ),
        None => None,
    };
    toolgate_tests::line_server::serve(|method, params| {
        if let (Some(log), "tools/call") = (log.as_mut(), method) {
            // One write per line, unbuffered: a line in the file is a call that arrived.
            let text = params["arguments"]["text"].as_str().unwrap_or_default();
            log.write_all(format!("{text}\n").as_bytes())?;
        }
        Ok(answer(method, params))
    })
}
