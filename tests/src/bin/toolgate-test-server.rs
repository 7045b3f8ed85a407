//! A small MCP server in Rust for the suites that run on every platform, Windows under Wine
//! included (`tests/tests/portable.rs`), where the Python and Node servers of the other suites
//! are not installed. stdio, newline-delimited JSON-RPC, the `initialize` handshake.
//!
//! Tools:
//! - `echo {text}`: the text back.
//! - `sleep {ms}`: answers after `ms` milliseconds (a call that times out).
//! - `crash`: exits with code 3 without answering (a crash to restart from).
//! - `family`: starts a child, which starts a grandchild; each writes its pid and a heartbeat
//!   (a counter, rewritten every 100 ms) to `<TOOLGATE_TEST_BEATS>/<role>.beat`. A heartbeat
//!   that stops changing is a process that is gone, seen the same way on every platform.
//!
//! With `TOOLGATE_TEST_BEATS` set the server beats too (`server.beat`), and with
//! `TOOLGATE_TEST_FAMILY=1` it starts its family at once, for a host that makes no calls.
//!
//! `toolgate-test-server --linger DIR ROLE` is how the child and grandchild run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use toolgate_tests::line_server::Answer;

const VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

fn tools() -> Value {
    let object = |properties: Value| json!({"type": "object", "properties": properties});
    json!({"tools": [
        {"name": "echo", "description": "Returns the text.",
         "inputSchema": object(json!({"text": {"type": "string"}}))},
        {"name": "sleep", "description": "Answers after ms milliseconds.",
         "inputSchema": object(json!({"ms": {"type": "integer"}}))},
        {"name": "crash", "description": "Exits without answering.", "inputSchema": object(json!({}))},
        {"name": "family", "description": "Starts a child and a grandchild that keep running.",
         "inputSchema": object(json!({}))},
    ]})
}

fn text(text: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": text.into()}], "isError": false})
}

/// Runs forever as `role`, first starting the grandchild when it is the child.
fn linger(dir: &Path, role: &str) -> ! {
    if role == "child" {
        let _ = spawn_linger(dir, "grandchild");
    }
    beat(dir, role)
}

/// Rewrites `<dir>/<role>.beat` every 100 ms, forever.
fn beat(dir: &Path, role: &str) -> ! {
    let beat = dir.join(format!("{role}.beat"));
    let pid = std::process::id();
    for n in 0u64.. {
        let _ = std::fs::write(&beat, format!("{pid} {n}"));
        std::thread::sleep(Duration::from_millis(100));
    }
    unreachable!()
}

fn spawn_linger(dir: &Path, role: &str) -> std::io::Result<()> {
    Command::new(std::env::current_exe()?)
        .arg("--linger")
        .arg(dir)
        .arg(role)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
}

fn family() -> Result<Value, (i64, String)> {
    let dir = std::env::var_os("TOOLGATE_TEST_BEATS")
        .map(PathBuf::from)
        .ok_or((-32603, "TOOLGATE_TEST_BEATS is not set".to_owned()))?;
    spawn_linger(&dir, "child").map_err(|e| (-32603, e.to_string()))?;
    for _ in 0..100 {
        if dir.join("child.beat").exists() && dir.join("grandchild.beat").exists() {
            return Ok(text("started"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err((-32603, "the child and grandchild did not start".to_owned()))
}

fn answer(method: &str, params: &Value) -> Answer {
    let arguments = &params["arguments"];
    match (method, params["name"].as_str()) {
        ("initialize", _) => {
            let wanted = params["protocolVersion"].as_str().unwrap_or_default();
            let version = VERSIONS.into_iter().find(|v| *v == wanted);
            Ok(json!({
                "protocolVersion": version.unwrap_or(VERSIONS[0]),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "toolgate-test-server", "version": "1"},
            }))
        }
        ("ping", _) => Ok(json!({})),
        ("tools/list", _) => Ok(tools()),
        ("tools/call", Some("echo")) => Ok(text(arguments["text"].as_str().unwrap_or_default())),
        ("tools/call", Some("sleep")) => {
            let ms = arguments["ms"].as_u64().unwrap_or(0);
            std::thread::sleep(Duration::from_millis(ms));
            Ok(text(format!("slept {ms} ms")))
        }
        ("tools/call", Some("crash")) => std::process::exit(3),
        ("tools/call", Some("family")) => family(),
        ("tools/call", name) => Err((-32602, format!("Unknown tool: {name:?}"))),
        _ => Err((-32601, format!("Method not found: {method}"))),
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir, role] = args.as_slice() {
        if flag == "--linger" {
            linger(Path::new(dir), role);
        }
    }
    if let Some(dir) = std::env::var_os("TOOLGATE_TEST_BEATS").map(PathBuf::from) {
        let beats = dir.clone();
        std::thread::spawn(move || beat(&beats, "server"));
        if std::env::var_os("TOOLGATE_TEST_FAMILY").is_some() {
            spawn_linger(&dir, "child")?;
        }
    }
    toolgate_tests::line_server::serve(|method, params| Ok(answer(method, params)))
}
