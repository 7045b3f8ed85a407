//! MCP server supervision against real servers: the npm reference servers over stdio and
//! Streamable HTTP, `mcp-server-time` from PyPI (the 2026-07-28 era), and `tests/fault_server.py`,
//! which crashes, hangs, prints junk and answers slowly on request.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::broadcast;
use toolgate_mcp::{
    CallOptions, LogLevel, ManagerOptions, McpError, ServerEvent, ServerManager, ServerSnapshot,
    ServerStatus,
};
use toolgate_settings::{ServerConfig, Transport};
use toolgate_tests::{
    everything_server as everything, fault_server, filesystem_server, free_port, npm_server_entry,
    processes_with, python_server_bin, temp_dir, wait_until_none, ProcField,
};

fn manager() -> Arc<ServerManager> {
    ServerManager::new(ManagerOptions {
        restart_delay: Duration::from_millis(200),
        stop_grace: Duration::from_millis(500),
        ..ManagerOptions::default()
    })
}

/// The fault server in `mode`, tagged so its processes can be found by their environment.
fn fault(id: &str, mode: &str) -> ServerConfig {
    let mut config = fault_server(id, mode);
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("TOOLGATE_TEST_TAG".into(), tag(id));
    }
    config
}

fn tag(id: &str) -> String {
    format!("sup-{id}-{}", std::process::id())
}

/// The fault server processes of a test server: tagged, and running the script. (Launchers such
/// as pyenv's shims briefly run helper processes that inherit the tag; those are not servers.)
fn fault_pids(id: &str) -> Vec<u32> {
    processes_with(&tag(id), ProcField::Environ)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("fault_server.py"))
        })
        .collect()
}

async fn snapshot_of(servers: &ServerManager, id: &str) -> ServerSnapshot {
    servers
        .snapshot()
        .await
        .into_iter()
        .find(|s| s.id == id)
        .expect("configured")
}

/// Waits until the server's snapshot satisfies `done`, for up to `seconds`.
async fn wait_for(
    servers: &ServerManager,
    id: &str,
    seconds: u64,
    done: impl Fn(&ServerSnapshot) -> bool,
) -> ServerSnapshot {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        let snap = snapshot_of(servers, id).await;
        if done(&snap) || tokio::time::Instant::now() > deadline {
            return snap;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn tool_names(snap: &ServerSnapshot) -> Vec<&str> {
    snap.tools.iter().map(|t| t.name.as_str()).collect()
}

/// A result as the JSON the server sent (the window's and the history's view of it).
trait Raw {
    fn raw(&self) -> serde_json::Value;
}

impl Raw for toolgate_mcp::ToolOutput {
    fn raw(&self) -> serde_json::Value {
        serde_json::to_value(&self.result).expect("json")
    }
}

fn text_of(result: &Result<toolgate_mcp::ToolOutput, McpError>) -> String {
    match result {
        Ok(out) => out.text.clone(),
        Err(e) => format!("error: {e}"),
    }
}

/// Collects events for `window`, keeping those `keep` accepts.
async fn collect_events(
    events: &mut broadcast::Receiver<ServerEvent>,
    window: Duration,
    keep: impl Fn(&ServerEvent) -> bool,
) -> Vec<ServerEvent> {
    let mut kept = Vec::new();
    let deadline = tokio::time::Instant::now() + window;
    while let Ok(Ok(event)) = tokio::time::timeout_at(deadline, events.recv()).await {
        if keep(&event) {
            kept.push(event);
        }
    }
    kept
}

#[tokio::test]
async fn the_reference_server_over_stdio_offers_everything_a_host_uses() {
    let root = temp_dir("roots");
    let mut config = everything("everything");
    config.roots = vec![root.to_path_buf()];
    let servers = manager();
    servers.start_all(&[config]).await;
    let snap = snapshot_of(&servers, "everything").await;
    assert_eq!(snap.status, ServerStatus::Ready, "{:?}", snap.status);
    assert_eq!(snap.protocol_version.as_deref(), Some("2025-11-25"));
    assert!(snap
        .implementation
        .as_deref()
        .unwrap_or("")
        .starts_with("mcp-servers/everything"));
    assert_eq!(snap.resources.len(), 7, "static resources listed");
    assert_eq!(snap.prompts.len(), 4, "prompts listed");
    // A listed resource can be read, for browsing.
    let first = &snap.resources[0];
    let read = servers
        .read_resource(&snap.id, &first.uri)
        .await
        .expect("read");
    let read = serde_json::to_value(read).expect("json");
    assert_eq!(read["contents"][0]["uri"], first.uri.as_str(), "{read}");
    let missing = servers
        .read_resource(&snap.id, "demo://nothing/here")
        .await
        .expect_err("no such resource");
    assert!(
        missing.to_string().contains("could not read the resource"),
        "{missing}"
    );

    // The server adds tools for the capabilities we offer and says so with list_changed: the
    // list is re-read live.
    let snap = wait_for(&servers, "everything", 10, |s| {
        tool_names(s).contains(&"get-roots-list")
    })
    .await;
    let names = tool_names(&snap);
    for tool in [
        "get-roots-list",
        "trigger-sampling-request",
        "trigger-elicitation-request",
    ] {
        assert!(
            names.contains(&tool),
            "{tool} added after list_changed: {names:?}"
        );
    }

    // Roots: the folders configured for the server.
    let roots = servers
        .call_tool("everything", "get-roots-list", json!({}))
        .await;
    assert!(
        text_of(&roots).contains(&format!("file://{}", root.display())),
        "{}",
        text_of(&roots)
    );

    // Progress notifications reach subscribers while the call runs.
    let mut events = servers.events();
    let call = servers.call_tool(
        "everything",
        "trigger-long-running-operation",
        json!({"duration": 1, "steps": 4}),
    );
    let (result, progress) = tokio::join!(
        call,
        collect_events(&mut events, Duration::from_secs(3), |e| matches!(
            e,
            ServerEvent::Progress { .. }
        ))
    );
    assert!(result.is_ok(), "{}", text_of(&result));
    assert!(progress.len() >= 3, "progress events: {progress:?}");

    // Log messages too.
    let mut events = servers.events();
    let toggled = servers
        .call_tool("everything", "toggle-simulated-logging", json!({}))
        .await;
    assert!(toggled.is_ok(), "{}", text_of(&toggled));
    let logs = collect_events(
        &mut events,
        Duration::from_secs(2),
        |e| matches!(e, ServerEvent::Log { server, .. } if server == "everything"),
    )
    .await;
    assert!(!logs.is_empty(), "a notifications/message arrived");
    if let ServerEvent::Log { level, .. } = &logs[0] {
        assert!(matches!(
            level,
            LogLevel::Debug
                | LogLevel::Info
                | LogLevel::Notice
                | LogLevel::Warning
                | LogLevel::Error
                | LogLevel::Critical
                | LogLevel::Alert
                | LogLevel::Emergency
        ));
    }

    // The whole CallToolResult is kept: structured content, images, embedded resources, links.
    let structured = servers
        .call_tool(
            "everything",
            "get-structured-content",
            json!({"location": "Chicago"}),
        )
        .await
        .expect("structured");
    assert!(
        structured.raw()["structuredContent"].is_object(),
        "{}",
        structured.raw()
    );
    let image = servers
        .call_tool("everything", "get-tiny-image", json!({}))
        .await
        .expect("image");
    let image_raw = image.raw();
    let blocks = image_raw["content"].as_array().expect("content");
    assert!(blocks
        .iter()
        .any(|b| b["type"] == "image" && b["mimeType"] == "image/png" && b["data"].is_string()));
    let embedded = servers
        .call_tool(
            "everything",
            "get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 1}),
        )
        .await
        .expect("embedded resource");
    assert!(embedded.raw()["content"]
        .as_array()
        .expect("content")
        .iter()
        .any(|b| b["type"] == "resource"));
    let links = servers
        .call_tool("everything", "get-resource-links", json!({"count": 2}))
        .await
        .expect("links");
    assert!(
        links.text.contains("[resource link demo://"),
        "{}",
        links.text
    );

    // Sampling and elicitation are declined cleanly, and the connection stays up.
    let sampling = servers
        .call_tool(
            "everything",
            "trigger-sampling-request",
            json!({"prompt": "hi"}),
        )
        .await
        .expect("the tool answers");
    assert!(
        sampling.is_error && sampling.text.contains("declined"),
        "{}",
        sampling.text
    );
    let elicitation = servers
        .call_tool("everything", "trigger-elicitation-request", json!({}))
        .await
        .expect("the tool answers");
    assert!(
        elicitation.text.contains("declined"),
        "{}",
        elicitation.text
    );
    assert_eq!(
        snapshot_of(&servers, "everything").await.status,
        ServerStatus::Ready
    );

    // With simulated logging on, this server ignores stdin closing: stop must still end it.
    let script = npm_server_entry("@modelcontextprotocol/server-everything");
    let needle = script.to_string_lossy().into_owned();
    servers.stop_all().await;
    let left = wait_until_none(5, || processes_with(&needle, ProcField::Cmdline)).await;
    assert!(left.is_empty(), "server processes left: {left:?}");
}

#[tokio::test]
async fn the_reference_server_over_streamable_http() {
    let port = free_port();
    let entry = npm_server_entry("@modelcontextprotocol/server-everything");
    let mut http_server = tokio::process::Command::new("node")
        .arg(&entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    // Wait for it to listen.
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut config = ServerConfig::http("remote", format!("http://127.0.0.1:{port}/mcp"));
    let roots = temp_dir("http-roots");
    config.roots = vec![roots.to_path_buf()];
    if let Transport::Http { headers, .. } = &mut config.transport {
        headers.insert("X-Toolgate-Test".into(), "1".into());
    }
    let servers = manager();
    servers.start_all(&[config]).await;
    let snap = snapshot_of(&servers, "remote").await;
    assert_eq!(snap.status, ServerStatus::Ready, "{:?}", snap.status);
    let echo = servers
        .call_tool("remote", "echo", json!({"message": "over http"}))
        .await;
    assert!(text_of(&echo).contains("over http"), "{}", text_of(&echo));

    let mut events = servers.events();
    let (result, progress) = tokio::join!(
        servers.call_tool(
            "remote",
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3})
        ),
        collect_events(&mut events, Duration::from_secs(3), |e| matches!(
            e,
            ServerEvent::Progress { .. }
        ))
    );
    assert!(result.is_ok(), "{}", text_of(&result));
    assert!(progress.len() >= 2, "progress over SSE: {progress:?}");

    // list_changed and roots/list arrive on the GET stream.
    let snap = wait_for(&servers, "remote", 10, |s| {
        tool_names(s).contains(&"get-roots-list")
    })
    .await;
    assert!(
        tool_names(&snap).contains(&"get-roots-list"),
        "{:?}",
        tool_names(&snap)
    );

    servers.stop_all().await;
    let _ = http_server.kill().await;
}

#[tokio::test]
async fn mcp_server_time_from_pypi_speaks_the_2026_protocol() {
    let mut config = ServerConfig::stdio(
        "time",
        python_server_bin("mcp-server-time").to_string_lossy(),
        ["--local-timezone", "UTC"],
    );
    config.name = "Time".into();
    let servers = manager();
    servers.start_all(&[config]).await;
    let snap = snapshot_of(&servers, "time").await;
    assert_eq!(snap.status, ServerStatus::Ready, "{:?}", snap.status);
    assert_eq!(snap.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(tool_names(&snap), ["get_current_time", "convert_time"]);
    let now = servers
        .call_tool("time", "get_current_time", json!({"timezone": "UTC"}))
        .await
        .expect("answers");
    assert_eq!(
        now.raw()["structuredContent"]["timezone"],
        "UTC",
        "{}",
        now.raw()
    );
    let bad = servers
        .call_tool(
            "time",
            "get_current_time",
            json!({"timezone": "Mars/Olympus"}),
        )
        .await;
    assert!(
        matches!(&bad, Ok(out) if out.is_error) || matches!(&bad, Err(McpError::Call { .. })),
        "{bad:?}"
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn an_older_server_that_answers_discover_with_nothing_is_started_again_with_initialize() {
    let servers = manager();
    servers.start_all(&[fault("older", "discover-empty")]).await;
    let snap = snapshot_of(&servers, "older").await;
    assert_eq!(snap.status, ServerStatus::Ready, "{:?}", snap.status);
    assert_eq!(snap.protocol_version.as_deref(), Some("2025-11-25"));
    let answered = servers
        .call_tool("older", "echo", json!({"text": "after the fallback"}))
        .await;
    assert_eq!(text_of(&answered), "after the fallback");
    // The first process, which got `server/discover`, was stopped: one is left.
    assert_eq!(fault_pids("older").len(), 1, "{:?}", fault_pids("older"));
    let said = servers.stderr_tail("older").await;
    let discover = said.iter().position(|l| l == "recv server/discover");
    let initialize = said.iter().rposition(|l| l == "recv initialize");
    assert!(
        discover.is_some() && initialize > discover,
        "discover first, then initialize: {said:?}"
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn a_pinned_protocol_version_is_the_only_one_tried() {
    let mut older = fault("pinned", "ok");
    older.protocol_version = Some("2025-06-18".into());
    let mut modern_only = fault("modern-only", "ok");
    modern_only.protocol_version = Some("2026-07-28".into());
    modern_only.auto_restart = false;
    let mut time = ServerConfig::stdio(
        "time",
        python_server_bin("mcp-server-time").to_string_lossy(),
        ["--local-timezone", "UTC"],
    );
    time.protocol_version = Some("2026-07-28".into());
    let servers = manager();
    servers.start_all(&[older, modern_only, time]).await;
    let pinned = snapshot_of(&servers, "pinned").await;
    assert_eq!(pinned.status, ServerStatus::Ready, "{:?}", pinned.status);
    assert_eq!(pinned.protocol_version.as_deref(), Some("2025-06-18"));
    assert_eq!(
        snapshot_of(&servers, "time")
            .await
            .protocol_version
            .as_deref(),
        Some("2026-07-28")
    );
    // A server that knows only `initialize`, pinned to the discover era: no fallback, a reason.
    let refused = wait_for(&servers, "modern-only", 10, |s| {
        matches!(s.status, ServerStatus::Failed { .. })
    })
    .await;
    let ServerStatus::Failed { reason } = &refused.status else {
        panic!("{:?}", refused.status)
    };
    assert!(reason.contains("MCP handshake"), "{reason}");
    servers.stop_all().await;
}

#[tokio::test]
async fn the_filesystem_server_takes_its_folders_from_roots() {
    let (a, b) = (temp_dir("fs-a"), temp_dir("fs-b"));
    let mut config = filesystem_server("files", &a);
    config.roots = vec![b.to_path_buf()];
    let servers = manager();
    servers.start_all(&[config]).await;
    let allowed = || async {
        text_of(
            &servers
                .call_tool("files", "list_allowed_directories", json!({}))
                .await,
        )
    };
    // The server asks for roots after start-up; give it a moment to have asked.
    let mut text = String::new();
    for _ in 0..50 {
        text = allowed().await;
        if text.contains(&*b.to_string_lossy()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(text.contains(&*b.to_string_lossy()), "{text}");
    assert!(!text.contains(&*a.to_string_lossy()), "{text}");

    // Changing the roots tells the server, which asks again.
    servers
        .set_roots("files", vec![a.to_path_buf()])
        .await
        .expect("notified");
    for _ in 0..50 {
        text = allowed().await;
        if text.contains(&*a.to_string_lossy()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(text.contains(&*a.to_string_lossy()), "{text}");
    servers.stop_all().await;
}

#[tokio::test]
async fn tools_are_listed_across_pages_and_refreshed_when_they_change() {
    let servers = manager();
    servers
        .start_all(&[fault("paged", "ok"), fault("late", "list-changed")])
        .await;
    let snap = snapshot_of(&servers, "paged").await;
    assert_eq!(
        tool_names(&snap),
        ["echo", "crash", "hang", "big", "slow", "junk", "wedge"],
        "all four pages of two"
    );
    let snap = wait_for(&servers, "late", 5, |s| {
        tool_names(s).contains(&"late_tool")
    })
    .await;
    assert!(
        tool_names(&snap).contains(&"late_tool"),
        "{:?}",
        tool_names(&snap)
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn a_crash_fails_calls_in_flight_at_once_and_the_server_comes_back() {
    let servers = ServerManager::new(ManagerOptions {
        restart_delay: Duration::from_secs(1),
        ..ManagerOptions::default()
    });
    servers.start_all(&[fault("crashy", "ok")]).await;
    let started = std::time::Instant::now();
    let (hung, crashed) = tokio::join!(servers.call_tool("crashy", "hang", json!({})), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        servers.call_tool("crashy", "crash", json!({})).await
    });
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "not held until a timeout"
    );
    assert!(
        matches!(crashed, Err(McpError::ServerExited { .. })),
        "{crashed:?}"
    );
    assert!(
        matches!(hung, Err(McpError::ServerExited { .. })),
        "{hung:?}"
    );
    let err = crashed.unwrap_err().to_string();
    assert!(
        err.contains("stopped while the call to 'crash' was running"),
        "{err}"
    );

    // It restarts on its own, after a delay, and says why it had stopped.
    let snap = wait_for(&servers, "crashy", 1, |s| {
        matches!(s.status, ServerStatus::Restarting { .. })
    })
    .await;
    let ServerStatus::Restarting {
        attempt, reason, ..
    } = &snap.status
    else {
        panic!("restarting expected: {:?}", snap.status)
    };
    assert_eq!(*attempt, 1);
    assert!(reason.contains("exited with code 3"), "{reason}");
    let snap = wait_for(&servers, "crashy", 10, |s| s.status == ServerStatus::Ready).await;
    assert_eq!(snap.status, ServerStatus::Ready, "{:?}", snap.status);
    let echo = servers
        .call_tool("crashy", "echo", json!({"text": "back"}))
        .await;
    assert_eq!(text_of(&echo), "back");
    servers.stop_all().await;
}

#[tokio::test]
async fn a_crashed_server_without_auto_restart_stays_failed_with_the_reason() {
    let servers = manager();
    let mut config = fault("once", "ok");
    config.auto_restart = false;
    servers.start_all(&[config]).await;
    let _ = servers.call_tool("once", "crash", json!({})).await;
    let snap = wait_for(&servers, "once", 5, |s| {
        matches!(s.status, ServerStatus::Failed { .. })
    })
    .await;
    let ServerStatus::Failed { reason } = &snap.status else {
        panic!("failed expected: {:?}", snap.status)
    };
    assert!(reason.contains("exited with code 3"), "{reason}");
    // The user restarts it by hand.
    servers.restart("once").await.expect("configured");
    assert_eq!(
        snapshot_of(&servers, "once").await.status,
        ServerStatus::Ready
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn hung_calls_time_out_and_the_server_is_told_to_cancel() {
    let servers = manager();
    servers.start_all(&[fault("hangs", "ok")]).await;
    let timed_out = servers
        .call_tool_with(
            "hangs",
            "hang",
            json!({}),
            CallOptions {
                timeout: Some(Duration::from_millis(500)),
                ..CallOptions::default()
            },
        )
        .await;
    assert!(
        matches!(timed_out, Err(McpError::Timeout { .. })),
        "{timed_out:?}"
    );

    // Cancelling by hand sends notifications/cancelled too.
    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let cancelled = servers
        .call_tool_with(
            "hangs",
            "slow",
            json!({"seconds": 30}),
            CallOptions {
                cancel: Some(cancel),
                ..CallOptions::default()
            },
        )
        .await;
    assert!(
        matches!(cancelled, Err(McpError::Cancelled { .. })),
        "{cancelled:?}"
    );

    // The server's stderr shows both cancellations arrived.
    let mut log = Vec::new();
    for _ in 0..40 {
        log = servers.stderr_tail("hangs").await;
        if log.iter().filter(|l| l.starts_with("cancelled ")).count() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        log.iter().filter(|l| l.starts_with("cancelled ")).count(),
        2,
        "{log:?}"
    );
    // The server is still fine.
    let echo = servers
        .call_tool("hangs", "echo", json!({"text": "ok"}))
        .await;
    assert_eq!(text_of(&echo), "ok");
    servers.stop_all().await;
}

#[tokio::test]
async fn progress_keeps_a_slow_call_alive_up_to_the_maximum() {
    let servers = manager();
    servers.start_all(&[fault("slow", "ok")]).await;
    let options = |max: u64| CallOptions {
        timeout: Some(Duration::from_millis(700)),
        max_timeout: Some(Duration::from_secs(max)),
        ..CallOptions::default()
    };
    // 2 s of work, progress every 0.2 s: the 0.7 s timeout keeps being reset.
    let done = servers
        .call_tool_with(
            "slow",
            "slow",
            json!({"seconds": 2, "interval": 0.2}),
            options(10),
        )
        .await;
    assert!(done.is_ok(), "{}", text_of(&done));
    // The same call with a 1 s maximum is cut off however much progress it reports.
    let capped = servers
        .call_tool_with(
            "slow",
            "slow",
            json!({"seconds": 3, "interval": 0.2}),
            options(1),
        )
        .await;
    assert!(
        matches!(capped, Err(McpError::Timeout { .. })),
        "{capped:?}"
    );
    // Without progress (no interval shorter than the call) the timeout applies.
    let silent = servers
        .call_tool_with(
            "slow",
            "slow",
            json!({"seconds": 2, "interval": 5}),
            options(10),
        )
        .await;
    assert!(
        matches!(silent, Err(McpError::Timeout { .. })),
        "{silent:?}"
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn junk_on_stdout_is_logged_and_skipped_and_big_results_arrive_whole() {
    let servers = manager();
    servers
        .start_all(&[fault("junky", "junk-start"), fault("plain", "ok")])
        .await;
    assert_eq!(
        snapshot_of(&servers, "junky").await.status,
        ServerStatus::Ready
    );
    let echo = servers
        .call_tool("junky", "echo", json!({"text": "still fine"}))
        .await;
    assert_eq!(text_of(&echo), "still fine");
    let junk = servers.call_tool("plain", "junk", json!({})).await;
    assert!(junk.is_ok(), "{}", text_of(&junk));
    let log = servers.stderr_tail("plain").await;
    assert!(
        log.iter()
            .any(|l| l == "(stdout, not JSON-RPC, skipped) hello from a debug print"),
        "{log:?}"
    );

    let big = servers
        .call_tool("plain", "big", json!({"bytes": 20_000_000}))
        .await
        .expect("a 20 MB result");
    assert_eq!(big.text.len(), 20_000_000);
    servers.stop_all().await;
}

#[tokio::test]
async fn start_up_failures_say_why() {
    let servers = manager();
    let mut slow = fault("slow-start", "slow-start");
    if let Transport::Stdio { env, .. } = &mut slow.transport {
        env.insert("SLOW_START_SECONDS".into(), "1.5".into());
    }
    let mut hangs = fault("hang-start", "hang-start");
    hangs.startup_timeout_secs = 1;
    let missing = ServerConfig::stdio("missing", "toolgate-no-such-command", Vec::<String>::new());
    let started = std::time::Instant::now();
    servers
        .start_all(&[slow, hangs, fault("exits", "exit-at-once"), missing])
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "servers start concurrently"
    );
    let status = |id: &str| {
        let servers = servers.clone();
        let id = id.to_owned();
        async move { snapshot_of(&servers, &id).await.status }
    };
    assert_eq!(status("slow-start").await, ServerStatus::Ready);
    let reason = |s: ServerStatus| match s {
        ServerStatus::Failed { reason } => reason,
        other => panic!("failure expected, got {other:?}"),
    };
    let hang = reason(status("hang-start").await);
    assert!(
        hang.contains("no answer to the MCP handshake within 1 s"),
        "{hang}"
    );
    let exits = reason(status("exits").await);
    assert!(
        exits.contains("fatal: config file /nope missing"),
        "{exits}"
    );
    assert!(exits.contains("exited with code 1"), "{exits}");
    for internal in ["Transport", "DuplexStream", "::"] {
        assert!(!exits.contains(internal), "{exits}");
    }
    let missing = reason(status("missing").await);
    assert!(
        missing.contains("'toolgate-no-such-command' was not found in any of:"),
        "{missing}"
    );
    servers.stop_all().await;
    for id in ["slow-start", "hang-start", "exits"] {
        let left = wait_until_none(5, || processes_with(&tag(id), ProcField::Environ)).await;
        assert!(left.is_empty(), "{id} left {left:?}");
    }
}

#[tokio::test]
async fn unknown_servers_and_tools_are_clear_errors() {
    let servers = manager();
    servers.start_all(&[fault("f", "ok")]).await;
    let err = servers
        .call_tool("nope", "echo", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "no server 'nope' is configured");
    let err = servers.call_tool("f", "nope", json!({})).await.unwrap_err();
    assert_eq!(err.to_string(), "server 'f' has no tool named 'nope'");
    let err = servers
        .call_tool("f", "echo", json!([1]))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::BadArguments(_)));
    servers.stop("f").await.expect("configured");
    let err = servers.call_tool("f", "echo", json!({})).await.unwrap_err();
    assert_eq!(err.to_string(), "server 'f' is not running (stopped)");
}

#[tokio::test]
async fn stop_ends_a_server_that_ignores_stdin_and_sigterm() {
    let servers = ServerManager::new(ManagerOptions {
        stop_grace: Duration::from_millis(300),
        ..ManagerOptions::default()
    });
    servers.start_all(&[fault("stubborn", "stubborn")]).await;
    assert_eq!(
        snapshot_of(&servers, "stubborn").await.status,
        ServerStatus::Ready
    );
    let pids = fault_pids("stubborn");
    assert_eq!(pids.len(), 1, "{pids:?}");
    // stdin closed, a grace period, SIGTERM (ignored), another grace period, then SIGKILL.
    servers.stop("stubborn").await.expect("configured");
    assert!(
        !toolgate_tests::is_alive(pids[0]),
        "stopped for sure once stop returns"
    );
    assert_eq!(
        snapshot_of(&servers, "stubborn").await.status,
        ServerStatus::Stopped
    );
}

#[tokio::test]
async fn a_wedged_server_cannot_hang_its_calls_or_its_stop() {
    let servers = ServerManager::new(ManagerOptions {
        stop_grace: Duration::from_millis(300),
        ..ManagerOptions::default()
    });
    servers.start_all(&[fault("wedged", "ok")]).await;
    let pids = fault_pids("wedged");
    // The call never answers, and from then on the server reads nothing.
    let wedge = servers.call_tool_with(
        "wedged",
        "wedge",
        json!({}),
        CallOptions {
            timeout: Some(Duration::from_millis(300)),
            max_timeout: Some(Duration::from_millis(300)),
            ..CallOptions::default()
        },
    );
    assert!(matches!(wedge.await, Err(McpError::Timeout { .. })));
    // Arguments far larger than a pipe's buffer: this write blocks for good.
    let big = "x".repeat(1024 * 1024);
    let stuck = servers.call_tool_with(
        "wedged",
        "echo",
        json!({"text": big}),
        CallOptions {
            timeout: Some(Duration::from_millis(300)),
            max_timeout: Some(Duration::from_millis(300)),
            ..CallOptions::default()
        },
    );
    let outcome = tokio::time::timeout(Duration::from_secs(20), stuck).await;
    assert!(
        matches!(outcome, Ok(Err(McpError::Timeout { .. }))),
        "the call ends: {outcome:?}"
    );
    let stopped = tokio::time::timeout(Duration::from_secs(20), servers.stop_all()).await;
    assert!(stopped.is_ok(), "stop_all returned");
    let left = wait_until_none(5, || {
        pids.iter()
            .copied()
            .filter(|p| toolgate_tests::is_alive(*p))
            .collect()
    })
    .await;
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn stopping_a_server_while_it_starts_stops_its_process() {
    let servers = manager();
    servers.start_all(&[]).await;
    let mut config = fault("starting", "hang-start");
    config.startup_timeout_secs = 600;
    config.enabled = false;
    servers.start_all(&[config]).await;
    let start = {
        let servers = servers.clone();
        tokio::spawn(async move { servers.start("starting").await })
    };
    // Wait for its process, then stop it mid-handshake.
    let found = loop {
        let pids = fault_pids("starting");
        if !pids.is_empty() {
            break pids;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // A restart while starting replaces the process: never two at once.
    let restart = {
        let servers = servers.clone();
        tokio::spawn(async move { servers.restart("starting").await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = fault_pids("starting");
    assert_eq!(during.len(), 1, "one process at a time: {during:?}");
    assert!(
        !during.contains(&found[0]),
        "the first start's process is gone"
    );
    let stopped = tokio::time::timeout(Duration::from_secs(10), servers.stop("starting")).await;
    assert!(
        stopped.is_ok(),
        "stop returns without waiting for the 600 s start-up timeout"
    );
    assert!(
        processes_with(&tag("starting"), ProcField::Environ).is_empty(),
        "no process once stop returns"
    );
    let _ = start.await;
    let _ = restart.await;
    assert_eq!(
        snapshot_of(&servers, "starting").await.status,
        ServerStatus::Stopped
    );
}

#[tokio::test]
async fn a_tool_rewritten_right_after_the_server_was_added_is_held() {
    // The rug-pull mode rewrites echo's description half a second into its first connection.
    let servers = manager();
    servers.start_all(&[fault("rug", "rug-pull")]).await;
    let snap = wait_for(&servers, "rug", 5, |s| {
        s.held_tools.iter().any(|c| c.name == "echo")
    })
    .await;
    assert!(
        !tool_names(&snap).contains(&"echo"),
        "not offered once rewritten"
    );
    let held = &snap.held_tools[0];
    assert_eq!(
        held.before.as_ref().map(|t| t.description.as_str()),
        Some("Returns the `text` argument.")
    );
    assert!(held.after.description.contains("id_ed25519"));
    servers
        .accept_tool_changes("rug", None)
        .await
        .expect("accepted");
    let snap = snapshot_of(&servers, "rug").await;
    assert!(tool_names(&snap).contains(&"echo"));
    servers.stop_all().await;
}
