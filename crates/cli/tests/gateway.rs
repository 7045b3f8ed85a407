//! The gateway with clients nobody here wrote: the official TypeScript and Python SDK clients
//! and the MCP Inspector's CLI, each launching `toolgate connect` as a host would. Behind the
//! socket runs the real host (settings, keychain, gate, rules, audit log) with real servers
//! (server-everything, server-filesystem); the test answers the gate where the window would.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use toolgate_agent::{Decision, PendingCall};
use toolgate_gateway::Gateway;
use toolgate_history::{AuditDecision, AuditFilter, DecidedBy};
use toolgate_host::{Host, HostOptions};
use toolgate_mcp::{HostEnv, ServerStatus};
use toolgate_policy::{Effect, Rule, Scope, Target};
use toolgate_settings::{GatewayProfile, Settings};
use toolgate_tests::{
    everything_server, example_servers_dir, filesystem_server, repo_root, temp_dir, TestDir,
};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

fn allow_echo() -> Rule {
    Rule {
        id: "allow-echo".into(),
        effect: Effect::Allow,
        scope: Scope::Always,
        target: Target::Tool {
            server_id: "everything".into(),
            tool: "echo".into(),
        },
        conditions: Vec::new(),
        bound_to: None,
        created_at: 0,
        expires_at: None,
        note: None,
        client: None,
    }
}

/// A data folder with server-everything and a filesystem server on `<dir>/root`, a rule that
/// allows `echo`, and a profile `py-client` that hides the filesystem's `list_*` tools.
fn data_dir(tag: &str) -> (TestDir, PathBuf, Settings) {
    let dir = temp_dir(&format!("gateway-{tag}"));
    let root = dir.join("root");
    std::fs::create_dir_all(&root).expect("root");
    let mut settings = Settings::first_run(everything_server("everything"));
    settings.servers.push(filesystem_server("files", &root));
    settings.policy.rules.push(allow_echo());
    settings.gateway.profiles.insert(
        "py-client".into(),
        GatewayProfile {
            servers: None,
            exclude: [("files".to_owned(), vec!["list_*".to_owned()])].into(),
        },
    );
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
    (dir, root, settings)
}

/// The running host on `dir`, its servers ready, and its gateway listening.
async fn gateway_on(
    dir: &Path,
    settings: &Settings,
) -> (Arc<Host>, tokio_util::sync::CancellationToken) {
    let host = Host::open(HostOptions {
        env: Some(HostEnv::inherited()),
        ..HostOptions::new(dir)
    })
    .expect("host");
    host.servers.start_all(&settings.servers).await;
    for _ in 0..600 {
        let snapshot = host.servers.snapshot().await;
        if snapshot.iter().all(|s| s.status == ServerStatus::Ready) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let gateway =
        Gateway::bind(host.clone(), toolgate_gateway::socket_path(dir)).expect("gateway binds");
    let stop = gateway.stopper();
    tokio::spawn(gateway.serve());
    (host, stop)
}

/// Answers the gate as the user at the window would: approves writes to `approved.txt`,
/// denies the rest with a reason. Returns every request it saw.
fn answer_gate(host: &Arc<Host>) -> Arc<Mutex<Vec<PendingCall>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (gate, record) = (host.gate.clone(), seen.clone());
    tokio::spawn(async move {
        let mut changes = gate.subscribe();
        loop {
            for call in gate.waiting() {
                let path = call.arguments["path"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let decision = if path.ends_with("approved.txt") {
                    Decision::Approve
                } else {
                    Decision::Deny {
                        reason: Some("not that file".into()),
                    }
                };
                if gate.answer(&call.id, decision).is_ok() {
                    record.lock().expect("lock").push(call);
                }
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    });
    seen
}

/// Runs a client script and returns its JSON lines by step.
fn run_client(mut command: Command) -> serde_json::Map<String, Value> {
    let out = command
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the client failed: {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .map(|v| (v["step"].as_str().unwrap_or_default().to_owned(), v))
        .collect()
}

fn check_steps(steps: &serde_json::Map<String, Value>, who: &str) {
    assert_eq!(steps["echo"]["isError"], false, "{who}: {steps:?}");
    assert!(
        steps["echo"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("through the gateway"),
        "{who}: {steps:?}"
    );
    assert_eq!(steps["approved"]["isError"], false, "{who}: {steps:?}");
    assert_eq!(steps["denied"]["isError"], true, "{who}: {steps:?}");
    let told = steps["denied"]["text"].as_str().unwrap_or_default();
    assert!(
        told.contains("denied") && told.contains("not that file"),
        "{who} reads why: {told}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn official_sdk_clients_call_through_the_gate_in_both_eras() {
    let (dir, root, settings) = data_dir("sdk");
    let (host, stop) = gateway_on(&dir, &settings).await;
    let seen = answer_gate(&host);

    // TypeScript: `initialize` (2025-11-25); its profile is its own name, which has none.
    let mut ts = Command::new("node");
    ts.arg(repo_root().join("tests/clients/gateway_ts.cjs"))
        .arg(example_servers_dir())
        .arg(TOOLGATE)
        .arg(&*dir)
        .arg(&root);
    let ts = tokio::task::spawn_blocking(move || run_client(ts))
        .await
        .expect("joins");
    check_steps(&ts, "TypeScript SDK");
    let ts_tools = ts["list"]["tools"].as_array().expect("tools").clone();
    assert!(ts_tools.contains(&json!("echo")) && ts_tools.contains(&json!("list_directory")));

    // The denied file was never written: counted at the real server, the approved one was.
    assert_eq!(
        std::fs::read_to_string(root.join("approved.txt"))
            .ok()
            .as_deref(),
        Some("yes")
    );
    assert!(!root.join("denied.txt").exists());
    std::fs::remove_file(root.join("approved.txt")).expect("remove");

    // Python: `server/discover` (2026-07-28), with `--profile py-client`.
    let mut py = Command::new(example_servers_dir().join(".venv/bin/python"));
    py.arg(repo_root().join("tests/clients/gateway_py.py"))
        .arg(TOOLGATE)
        .arg(&*dir)
        .arg(&root)
        .arg("py-client");
    let py = tokio::task::spawn_blocking(move || run_client(py))
        .await
        .expect("joins");
    check_steps(&py, "Python SDK");
    assert_eq!(py["era"]["version"], "2026-07-28", "{py:?}");
    let py_tools = py["list"]["tools"].as_array().expect("tools").clone();
    assert!(py_tools.contains(&json!("write_file")));
    assert!(
        !py_tools
            .iter()
            .any(|t| t.as_str().unwrap_or_default().starts_with("list_")),
        "the profile hides list_*: {py_tools:?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("approved.txt"))
            .ok()
            .as_deref(),
        Some("yes")
    );
    assert!(!root.join("denied.txt").exists());

    // The gate named each client, and only the writes were asked: echo passed by the rule.
    let seen = seen.lock().expect("lock").clone();
    let asked: Vec<(Option<&str>, &str)> = seen
        .iter()
        .map(|c| (c.client.as_deref(), c.tool.as_str()))
        .collect();
    assert_eq!(
        asked,
        [
            (Some("ts-sdk-client"), "write_file"),
            (Some("ts-sdk-client"), "write_file"),
            (Some("py-client"), "write_file"),
            (Some("py-client"), "write_file"),
        ]
    );
    assert!(seen[0]
        .summary()
        .starts_with("ts-sdk-client wants to run write_file"));

    // The audit log has every call with its client.
    let history = host.history.clone().expect("history");
    let audit = history.audit(&AuditFilter::default()).expect("audit");
    let rows: Vec<(Option<&str>, &str, AuditDecision, DecidedBy)> = audit
        .iter()
        .rev()
        .map(|r| {
            (
                r.entry.client.as_deref(),
                r.entry.tool.as_str(),
                r.entry.decision,
                r.entry.decided_by,
            )
        })
        .collect();
    use AuditDecision::{Allowed, Denied};
    use DecidedBy::{Rule, User};
    assert_eq!(
        rows,
        [
            (Some("ts-sdk-client"), "echo", Allowed, Rule),
            (Some("ts-sdk-client"), "write_file", Allowed, User),
            (Some("ts-sdk-client"), "write_file", Denied, User),
            (Some("py-client"), "echo", Allowed, Rule),
            (Some("py-client"), "write_file", Allowed, User),
            (Some("py-client"), "write_file", Denied, User),
        ]
    );
    stop.cancel();
    host.servers.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_inspector_cli_lists_and_calls_through_toolgate_serve() {
    let (dir, _root, _) = data_dir("inspector");
    // Headless, no terminal: only rules decide.
    let mut serve = Command::new(TOOLGATE)
        .arg("--data-dir")
        .arg(&*dir)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let socket = toolgate_gateway::socket_path(&dir);
    for _ in 0..300 {
        if socket.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let inspector = example_servers_dir().join("node_modules/.bin/mcp-inspector");
    let inspect = |args: &[&str]| {
        let out = Command::new(&inspector)
            .arg("--cli")
            .args([TOOLGATE, "--data-dir"])
            .arg(&*dir)
            .args(["connect", "--no-start", "--"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("the inspector runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (
            out.status.success(),
            text,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Servers start in the background: the list fills once they are ready.
    let mut listed = String::new();
    for _ in 0..120 {
        let (ok, text, _) = inspect(&["--method", "tools/list"]);
        if ok && text.contains("\"echo\"") && text.contains("\"write_file\"") {
            listed = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(listed.contains("\"echo\""), "the inspector lists the tools");
    let (ok, called, err) = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "message=from the inspector",
    ]);
    assert!(
        ok && called.contains("from the inspector"),
        "{called}\n{err}"
    );
    // Nobody can be asked: a write is refused, and says why.
    let (_, refused, err) = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "write_file",
        "--tool-arg",
        "path=/tmp/never.txt",
        "--tool-arg",
        "content=x",
    ]);
    assert!(refused.contains("\"isError\": true"), "{refused}\n{err}");
    assert!(refused.contains("nobody could be asked"), "{refused}");
    assert!(!Path::new("/tmp/never.txt").exists());

    // SIGTERM: the gateway and its servers stop, and the socket is gone.
    let pid = serve.id().to_string();
    Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    let status = serve.wait().expect("serve ends");
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_host_reaches_the_gateway_with_the_line_toolgate_wrote_and_undo_restores_it() {
    let (dir, _root, _) = data_dir("hosts");
    let home = dir.join("home");
    let cursor = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().expect("parent")).expect("folder");
    // Cursor runs its own copy of server-everything (the same command Toolgate runs).
    let everything = everything_server("x");
    let toolgate_settings::Transport::Stdio { command, args, .. } = &everything.transport else {
        panic!("stdio")
    };
    let original = serde_json::to_vec_pretty(&json!({
        "mcpServers": {"everything": {"command": command, "args": args}}
    }))
    .expect("json");
    std::fs::write(&cursor, &original).expect("cursor config");
    let toolgate = |args: &[&str]| {
        Command::new(TOOLGATE)
            .arg("--data-dir")
            .arg(&*dir)
            .args(args)
            .env("HOME", &home)
            .stdin(Stdio::null())
            .output()
            .expect("toolgate runs")
    };

    let listed = toolgate(&["hosts", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(
        listed.contains("cursor") && listed.contains("1 server(s)"),
        "{listed}"
    );
    let refused = toolgate(&["hosts", "connect", "cursor"]);
    assert_eq!(
        refused.status.code(),
        Some(1),
        "no terminal, no --yes: nothing changes"
    );
    assert_eq!(std::fs::read(&cursor).expect("read"), original);

    let out = toolgate(&["hosts", "connect", "cursor", "--yes"]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("skipped") || said.contains("Skipped"),
        "the same server is not added twice: {said}"
    );
    let rewritten: Value =
        serde_json::from_slice(&std::fs::read(&cursor).expect("read")).expect("json");
    let entry = &rewritten["mcpServers"]["toolgate"];
    let command = entry["command"].as_str().expect("command").to_owned();
    let args: Vec<String> = serde_json::from_value(entry["args"].clone()).expect("args");
    assert_eq!(
        rewritten["mcpServers"].as_object().map(|m| m.len()),
        Some(1)
    );

    // The gateway headless, and a call made by exactly the line Cursor now runs.
    let mut serve = Command::new(TOOLGATE)
        .arg("--data-dir")
        .arg(&*dir)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut call = Command::new("node");
    call.arg(repo_root().join("tests/clients/one_call.cjs"))
        .arg(example_servers_dir())
        .args([
            "echo",
            r#"{"message": "from cursor's entry"}"#,
            "--",
            &command,
        ])
        .args(&args);
    let mut answer = Value::Null;
    // Its servers start in the background; until echo is there the call is refused.
    for _ in 0..120 {
        let out = call.output().expect("the client runs");
        if let Ok(value) = serde_json::from_slice::<Value>(&out.stdout) {
            if value["isError"] == false {
                answer = value;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Command::new("kill")
        .args(["-TERM", &serve.id().to_string()])
        .status()
        .expect("kill");
    let _ = serve.wait();
    assert!(
        answer["text"]
            .as_str()
            .unwrap_or_default()
            .contains("from cursor's entry"),
        "{answer}"
    );
    // Audited under the host's profile.
    let history = toolgate_history::History::open(&dir.join("history.sqlite3")).expect("history");
    let audit = history.audit(&AuditFilter::default()).expect("audit");
    assert_eq!(audit[0].entry.client.as_deref(), Some("cursor"));

    let out = toolgate(&["hosts", "undo", "cursor"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&cursor).expect("read"),
        original,
        "byte for byte"
    );
}
