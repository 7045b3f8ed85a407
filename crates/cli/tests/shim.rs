//! `toolgate connect`'s two ways to carry a host's messages, against the real host and gateway:
//! handing the host's own stdin and stdout to the gateway (the default on Linux and macOS), and
//! copying them (`--relay`). Which way ran is read from the shim's own I/O counters
//! (`/proc/<pid>/io`): a shim that handed its pipes over reads none of the host's messages.
// /proc, signals and Unix sockets: Linux only (the Windows shim always relays; see
// `tests/tests/portable.rs`).
#![cfg(target_os = "linux")]

use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolgate_gateway::Gateway;
use toolgate_host::{Host, HostOptions};
use toolgate_mcp::{HostEnv, ServerStatus};
use toolgate_policy::{Effect, Rule, Scope, Target};
use toolgate_settings::Settings;
use toolgate_tests::line_client::LineClient;
use toolgate_tests::{temp_dir, TestDir};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// The fault server as `fault`, `echo` and `hang` allowed by a rule; the host running it and
/// its gateway listening.
async fn gateway(tag: &str) -> (TestDir, Arc<Host>, tokio_util::sync::CancellationToken) {
    let dir = temp_dir(&format!("shim-{tag}"));
    let mut settings = Settings::first_run(toolgate_tests::fault_server("fault", "ok"));
    for tool in ["echo", "hang"] {
        let target = Target::Tool {
            server_id: "fault".into(),
            tool: tool.into(),
        };
        let rule = Rule::new(
            format!("allow-{tool}"),
            Effect::Allow,
            target,
            Scope::Always,
            0,
        );
        settings.policy.rules.push(rule);
    }
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
    let host = Host::open(HostOptions {
        env: Some(HostEnv::inherited()),
        secrets: Arc::new(toolgate_secrets::MemoryStore::default()),
        ..HostOptions::new(dir.to_path_buf())
    })
    .expect("host");
    host.servers().start_all(&settings.servers).await;
    for _ in 0..600 {
        if host.servers().snapshot().await[0].status == ServerStatus::Ready {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let gateway =
        Gateway::bind(host.clone(), toolgate_gateway::socket_path(&dir)).expect("gateway binds");
    let stop = gateway.stopper();
    tokio::spawn(gateway.serve());
    (dir, host, stop)
}

/// A shim as a host runs it (its stdin and stdout this test's pipes), initialized.
fn start_shim(dir: &Path, relay: bool) -> LineClient {
    let mut command = Command::new(TOOLGATE);
    command
        .arg("--data-dir")
        .arg(dir)
        .args(["connect", "--no-start"])
        .stderr(Stdio::inherit());
    if relay {
        command.arg("--relay");
    }
    let mut shim = LineClient::start(command);
    let init = ask(
        &mut shim,
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "shim-test", "version": "1"}}),
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    shim.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    shim
}

fn ask(shim: &mut LineClient, id: u64, method: &str, params: Value) -> Value {
    shim.ask_within(Duration::from_secs(30), id, method, params)
        .unwrap_or_else(|| panic!("no answer to {method} ({id})"))
}

/// Bytes `shim` has read with `read(2)` and its kin so far.
fn bytes_read(shim: &LineClient) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{}/io", shim.child.id())).expect("io");
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("rchar")
}

/// 40 echo calls of 32 kB each through `shim`: 1.3 MB of the host's messages.
fn echo_a_lot(shim: &mut LineClient) -> u64 {
    let text = "x".repeat(32 * 1024);
    let mut sent = 0;
    for id in 1..=40 {
        let params = json!({"name": "echo", "arguments": {"text": format!("{id} {text}")}});
        sent += params.to_string().len() as u64;
        let answer = ask(shim, id, "tools/call", params);
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let said = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(said.starts_with(&format!("{id} x")), "{said:.80}");
    }
    sent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shim_hands_the_hosts_pipes_over_and_relays_only_when_asked() {
    let (dir, host, stop) = gateway("ways").await;
    let path = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        // Handed over: the answers come, and the shim read none of the calls.
        let mut shim = start_shim(&path, false);
        let before = bytes_read(&shim);
        let sent = echo_a_lot(&mut shim);
        let read = bytes_read(&shim) - before;
        assert!(
            read < 64 * 1024,
            "a shim that handed its pipes over read {read} of the {sent} bytes sent"
        );
        assert_eq!(
            shim.close_within(Duration::from_secs(20)).code(),
            Some(0),
            "the host ended it: exit 0"
        );

        // Relayed: the same answers, every byte through the shim.
        let mut shim = start_shim(&path, true);
        let before = bytes_read(&shim);
        let sent = echo_a_lot(&mut shim);
        let read = bytes_read(&shim) - before;
        assert!(read >= sent, "a relaying shim read {read} of {sent} bytes");
        assert_eq!(shim.close_within(Duration::from_secs(20)).code(), Some(0));
    })
    .await
    .expect("joins");
    stop.cancel();
    host.servers().stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_kills_its_shim_without_closing_stdin_ends_the_session_and_its_calls() {
    let (dir, host, stop) = gateway("killed").await;
    let path = dir.to_path_buf();
    let mut shim = tokio::task::spawn_blocking(move || {
        let mut shim = start_shim(&path, false);
        shim.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                          "params": {"name": "hang", "arguments": {}}}));
        shim
    })
    .await
    .expect("joins");
    let running = |host: Arc<Host>| async move {
        host.servers()
            .stderr_tail("fault")
            .await
            .iter()
            .filter(|l| l.starts_with("cancelled"))
            .count()
    };
    for _ in 0..200 {
        if host
            .servers()
            .stderr_tail("fault")
            .await
            .iter()
            .any(|l| l.contains("recv tools/call"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = running(host.clone()).await;
    // SIGKILL: the shim can say nothing, and this test still holds the host's end of stdin,
    // so the gateway never reads the end of it: only the shim's socket closing tells.
    shim.child.kill().expect("kill");
    shim.child.wait().expect("reaped");
    let mut cancelled = false;
    for _ in 0..200 {
        if running(host.clone()).await > before {
            cancelled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        cancelled,
        "the call of a host whose shim was killed was cancelled at the server"
    );
    drop(shim);
    stop.cancel();
    host.servers().stop_all().await;
}

/// Codex starts its MCP servers with HOME, PATH, LANG, SHELL and TERM and nothing else: a shim
/// started so must find the gateway that `toolgate serve` (or the app) opened in a desktop
/// session, `XDG_RUNTIME_DIR` and all, and so must one given a runtime folder of its own.
#[test]
fn a_shim_with_only_what_codex_passes_on_finds_the_gateway_of_a_desktop_session() {
    let dir = temp_dir("bare-env");
    let runtime = dir.join("runtime");
    let elsewhere = dir.join("elsewhere");
    for folder in [&runtime, &elsewhere] {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(folder)
            .expect("runtime folder");
    }
    let data = dir.join("data");
    let log = dir.join("serve.log");
    let serving = Command::new(TOOLGATE)
        .arg("--data-dir")
        .arg(&data)
        .arg("serve")
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("serve.log"))
        .spawn()
        .expect("serve starts");
    let serving = Killed(serving);
    let listening = (0..400).any(|_| {
        std::thread::sleep(Duration::from_millis(25));
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("the gateway is listening"))
    });
    assert!(
        listening,
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let five = [
        ("HOME", dir.join("home").into_os_string()),
        ("PATH", std::env::var_os("PATH").unwrap_or_default()),
        ("LANG", "C.UTF-8".into()),
        ("SHELL", "/bin/sh".into()),
        ("TERM", "dumb".into()),
    ];
    let runtimes = [None, Some(&runtime), Some(&elsewhere)];
    for (id, given) in (1..).zip(runtimes) {
        let mut command = Command::new(TOOLGATE);
        command
            .env_clear()
            .envs(five.iter().cloned())
            .arg("--data-dir")
            .arg(&data)
            .args(["connect", "--no-start"])
            .stderr(Stdio::inherit());
        if let Some(given) = given {
            command.env("XDG_RUNTIME_DIR", given);
        }
        let mut shim = LineClient::start(command);
        let init = shim.ask_within(
            Duration::from_secs(30),
            id,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "codex-like", "version": "1"}}),
        );
        let init = init.unwrap_or_else(|| {
            panic!("a shim with XDG_RUNTIME_DIR {given:?} did not reach the gateway")
        });
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        assert_eq!(shim.close_within(Duration::from_secs(20)).code(), Some(0));
    }
    drop(serving);
}

/// `toolgate serve`, stopped however the test ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
