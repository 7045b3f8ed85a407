//! A 2026-07-28 server's questions inside a call (`input_required`) and its tasks, on the CLI's
//! and the gateway's paths: `toolgate call` asks them at the terminal (a form answered in
//! `$EDITOR`, a page to open answered no), and another host's call through the gateway has its
//! question held at the host's gate and its task followed to the end, and a 2026-07-28 host
//! (the Python SDK) that listens for a resource's updates is told of them. The server is
//! `tests/modern_server.py` on the official Python SDK.
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolgate_agent::{Decision, RequestKind};
use toolgate_gateway::Gateway;
use toolgate_host::{Host, HostOptions};
use toolgate_mcp::{HostEnv, ServerStatus};
use toolgate_policy::{Effect, Rule, Scope, Target};
use toolgate_settings::Settings;
use toolgate_tests::{
    at_a_terminal, example_servers_dir, json_lines, modern_server, repo_root, temp_dir, TestDir,
};

/// Toolgate's data folder in the test's folder. The server's log sits in a folder of its own
/// beside it: the sandbox rightly keeps a server out of Toolgate's own folder and out of any
/// folder holding it.
fn data(dir: &Path) -> std::path::PathBuf {
    dir.join("data")
}

fn server_log(dir: &Path) -> std::path::PathBuf {
    dir.join("server").join("server.jsonl")
}

fn data_dir(tag: &str) -> (TestDir, Settings) {
    let dir = temp_dir(&format!("cli-2026-{tag}"));
    std::fs::create_dir_all(data(&dir)).expect("data folder");
    std::fs::create_dir_all(dir.join("server")).expect("server folder");
    let mut settings = Settings::first_run(modern_server("m", &server_log(&dir)));
    for tool in ["book_table", "slow_report"] {
        settings.policy.rules.push(Rule::new(
            format!("allow-{tool}"),
            Effect::Allow,
            Target::Tool {
                server_id: "m".into(),
                tool: tool.into(),
            },
            Scope::Always,
            0,
        ));
    }
    toolgate_settings::file::save(&data(&dir).join("settings.json"), &settings).expect("settings");
    (dir, settings)
}

/// `toolgate call …` in a real terminal (`script`), typing `typed`.
fn call_at_a_terminal(dir: &Path, args: &str, typed: &[u8], editor: &Path) -> (i32, String) {
    let command = format!(
        "{} --data-dir {} call {args}",
        env!("CARGO_BIN_EXE_toolgate"),
        data(dir).display()
    );
    let out = at_a_terminal(&command, typed, |c| {
        c.env("EDITOR", editor).env_remove("VISUAL");
    });
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn toolgate_call_asks_a_servers_questions_inside_the_call_at_the_terminal() {
    let (dir, _) = data_dir("terminal");
    // The "editor" writes the answer into the file it is given, as a user would.
    let editor = dir.join("answer-editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf '{\"name\": \"Grace\"}' > \"$1\"\n",
    )
    .expect("editor");
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("executable");

    let (code, screen) = call_at_a_terminal(&dir, "book_table '{\"people\": 2}'", b"e\n", &editor);
    assert_eq!(code, 0, "{screen}");
    // The server's question, behind the gutter that marks what a server said.
    assert!(
        screen.contains("m asks you a question:")
            && screen.contains("  │ Whose name is the table for 2 under?"),
        "{screen}"
    );
    assert!(
        screen.contains("Booked a table for 2 under Grace (state people=2)"),
        "{screen}"
    );

    // A page to open: its domain alone on a line, opened only on "o"; here, "n".
    let (code, screen) = call_at_a_terminal(&dir, "sign_in '{}'", b"n\n", &editor);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("asks you to open a page on\r\n\r\n    accounts.example.com"),
        "{screen}"
    );
    assert!(
        screen.contains("Open it in your browser? [o]pen, [n]o"),
        "{screen}"
    );
    assert!(screen.contains("sign-in answered: decline"), "{screen}");
    let signins: Vec<Value> = json_lines(&server_log(&dir))
        .into_iter()
        .filter(|e| e["event"] == "signin")
        .collect();
    assert_eq!(signins, [json!({"event": "signin", "action": "decline"})]);
}

/// A raw MCP client on the gateway's socket.
struct Raw {
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::net::unix::OwnedReadHalf>>,
    write: tokio::net::unix::OwnedWriteHalf,
}

impl Raw {
    async fn connect(dir: &Path) -> Self {
        use tokio::io::AsyncBufReadExt;
        let stream = tokio::net::UnixStream::connect(toolgate_gateway::socket_path(dir))
            .await
            .expect("connects");
        let (read, write) = stream.into_split();
        let mut raw = Raw {
            lines: tokio::io::BufReader::new(read).lines(),
            write,
        };
        raw.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw-client", "version": "1"}}}),
        )
        .await;
        raw.answer(0).await;
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    async fn send(&mut self, value: Value) {
        use tokio::io::AsyncWriteExt;
        self.write
            .write_all(format!("{value}\n").as_bytes())
            .await
            .expect("write");
    }

    /// The answer to request `id`, and the notifications before it.
    async fn answer(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .expect("an answer in time")
                .expect("reads")
                .expect("a line");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == id {
                return (message, notes);
            }
            notes.push(message);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_hosts_call_has_its_question_asked_at_the_gate_and_its_task_followed() {
    let (dir, settings) = data_dir("gateway");
    let host = Host::open(HostOptions {
        env: Some(HostEnv::inherited()),
        ..HostOptions::new(data(&dir))
    })
    .expect("host");
    host.servers().start_all(&settings.servers).await;
    assert!(host
        .servers()
        .snapshot()
        .await
        .iter()
        .all(|s| s.status == ServerStatus::Ready));
    let gateway =
        Gateway::bind(host.clone(), toolgate_gateway::socket_path(&data(&dir))).expect("binds");
    let stop = gateway.stopper();
    tokio::spawn(gateway.serve());
    // The user at the window answers the server's questions.
    let gate = host.approvals().clone();
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    tokio::spawn(async move {
        let mut changes = gate.changes();
        loop {
            for call in gate.waiting() {
                let answer = match call.message.as_deref() {
                    Some(m) if m.starts_with("Whose name") => json!({"name": "Ada"}),
                    _ => json!({"include": false}),
                };
                if gate
                    .answer(&call.id, Decision::ApproveEdited { arguments: answer })
                    .is_ok()
                {
                    seen.lock().expect("lock").push(call);
                }
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    });

    let mut raw = Raw::connect(&data(&dir)).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "book_table", "arguments": {"people": 2}}}))
        .await;
    let (booked, _) = raw.answer(1).await;
    assert_eq!(
        booked["result"]["content"][0]["text"], "Booked a table for 2 under Ada (state people=2)",
        "{booked}"
    );

    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow_report", "arguments": {"steps": 4, "ask": true},
                   "_meta": {"progressToken": "report"}}}))
        .await;
    let (report, notes) = raw.answer(2).await;
    assert_eq!(
        report["result"]["content"][0]["text"], "Report of 4 steps; appendix: False",
        "{report}"
    );
    // The task's status reached the client as progress on its own token.
    assert!(
        notes
            .iter()
            .any(|n| n["method"] == "notifications/progress"
                && n["params"]["progressToken"] == "report"),
        "{notes:?}"
    );
    let asked = asked.lock().expect("lock").clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked
        .iter()
        .all(|c| c.request == RequestKind::Elicitation && c.server_id == "m"));

    // A 2026-07-28 host listens for a resource's updates; the server says it changed.
    let mut listener = std::process::Command::new(example_servers_dir().join(".venv/bin/python"))
        .arg(repo_root().join("tests/clients/gateway_listen.py"))
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg(data(&dir))
        .arg("notes://rust")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the Python client starts");
    let stdout = listener.stdout.take().expect("stdout");
    let heard = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(stdout).lines();
        let listening = lines.next().and_then(Result::ok).unwrap_or_default();
        let event = lines.next().and_then(Result::ok).unwrap_or_default();
        (listening, event)
    });
    // Told once the subscription reached the server: until then, touch again.
    let servers = host.servers().clone();
    let toucher = tokio::spawn(async move {
        loop {
            let _ = servers
                .call_tool("m", "touch", json!({"uri": "notes://other"}))
                .await;
            let _ = servers
                .call_tool("m", "touch", json!({"uri": "notes://rust"}))
                .await;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    let (listening, event) = tokio::time::timeout(Duration::from_secs(60), heard)
        .await
        .expect("in time")
        .expect("joins");
    toucher.abort();
    let status = listener.wait().expect("ends");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut listener.stderr.take().expect("stderr"), &mut err)
        .expect("read");
    assert_eq!(listening, "listening", "{err}");
    let event: Value = serde_json::from_str(&event).unwrap_or_else(|_| panic!("{event}\n{err}"));
    assert_eq!(event["event"], "ResourceUpdated", "{event}");
    assert_eq!(event["uri"], "notes://rust", "{event}");
    assert!(status.success(), "{err}");
    stop.cancel();
    host.servers().stop_all().await;
}
