//! The 2026-07-28 HTTP rules against a real server of that era (the Python SDK's MCPServer over
//! Streamable HTTP, `tests/header_server.py`): a tool's `x-mcp-header` parameter travels as an
//! `Mcp-Param-*` header beside `Mcp-Method` and `Mcp-Name` (the server echoes what it got), and
//! a tool whose annotation is invalid is refused, with the reason in the server's snapshot.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use toolgate_mcp::{ManagerOptions, ServerManager, ServerStatus};
use toolgate_settings::ServerConfig;
use toolgate_tests::{example_servers_dir, free_port, repo_root};

/// The server process, stopped however the test ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_parameters_are_sent_and_invalid_annotations_refused() {
    let port = free_port();
    let _server = Killed(
        Command::new(example_servers_dir().join(".venv/bin/python"))
            .arg(repo_root().join("tests/header_server.py"))
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python runs (the set-up's venv)"),
    );
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let servers = ServerManager::new(ManagerOptions::default());
    servers
        .start_all(&[ServerConfig::http(
            "headers",
            format!("http://127.0.0.1:{port}/mcp"),
        )])
        .await;
    let snap = servers.snapshot().await.remove(0);
    assert_eq!(snap.status, ServerStatus::Ready, "{}", snap.status);
    assert_eq!(snap.protocol_version.as_deref(), Some("2026-07-28"));
    let tools: Vec<&str> = snap.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, vec!["where"], "the invalid tool is not offered");
    assert_eq!(snap.refused_tools.len(), 1, "{:?}", snap.refused_tools);
    assert_eq!(snap.refused_tools[0].name, "broken");
    assert!(
        snap.refused_tools[0].reason.contains("Bad Name"),
        "{}",
        snap.refused_tools[0].reason
    );

    let out = servers
        .call_tool("headers", "where", json!({"region": "eu-west"}))
        .await
        .expect("a call");
    assert!(out.text.contains("region=eu-west"), "{}", out.text);
    for header in [
        "('mcp-method', 'tools/call')",
        "('mcp-name', 'where')",
        "('mcp-param-region', 'eu-west')",
    ] {
        assert!(out.text.contains(header), "{header} missing: {}", out.text);
    }
    servers.stop_all().await;
}
