//! Remote servers on the older HTTP+SSE transport (protocol 2024-11-05): the Python SDK's
//! server (PyPI `mcp`, `tests/sse_server.py`) run with its own `sse` transport. Tools listed, a
//! call made, the event stream dropped (the server process killed and started again on the same
//! port) and re-established without the manager noticing; and the spec's fallback: a server
//! configured as Streamable HTTP that turns the POST down with 405 is reached over SSE.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_mcp::{ManagerOptions, ServerManager, ServerStatus};
use toolgate_settings::{ServerConfig, Transport};
use toolgate_tests::{example_servers_dir, free_port, repo_root};

struct SseServer {
    child: Child,
    port: u16,
}

impl SseServer {
    fn start(port: u16) -> Self {
        let child = Command::new(example_servers_dir().join(".venv/bin/python"))
            .arg(repo_root().join("tests/sse_server.py"))
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python runs (the set-up's venv)");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        SseServer { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/sse", self.port)
    }
}

impl Drop for SseServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn manager() -> Arc<ServerManager> {
    ServerManager::new(ManagerOptions {
        stop_grace: Duration::from_millis(500),
        ..ManagerOptions::default()
    })
}

async fn status(servers: &ServerManager, id: &str) -> (ServerStatus, Vec<String>) {
    let snap = servers.snapshot().await;
    let s = snap.iter().find(|s| s.id == id).expect("configured");
    (
        s.status.clone(),
        s.tools.iter().map(|t| t.name.clone()).collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_server_lists_calls_and_survives_a_dropped_stream() {
    let server = SseServer::start(free_port());
    let mut config = ServerConfig::http("legacy", server.url());
    if let Transport::Http { sse, .. } = &mut config.transport {
        *sse = true;
    }
    let servers = manager();
    servers.start_all(&[config]).await;
    let (state, tools) = status(&servers, "legacy").await;
    assert_eq!(state, ServerStatus::Ready, "{state}");
    assert_eq!(tools, vec!["shout".to_owned()]);
    let out = servers
        .call_tool("legacy", "shout", json!({"text": "first"}))
        .await
        .expect("a call over SSE");
    assert!(out.text.contains("FIRST"), "{}", out.text);

    // The stream drops: the server goes away and comes back on the same port.
    let port = server.port;
    drop(server);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _server = SseServer::start(port);
    let mut answered = None;
    let mut seen = Vec::new();
    for _ in 0..60 {
        seen.push(status(&servers, "legacy").await.0);
        match servers
            .call_tool("legacy", "shout", json!({"text": "again"}))
            .await
        {
            Ok(out) => {
                answered = Some(out);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
    let out = answered.expect("a call after the stream came back");
    assert!(out.text.contains("AGAIN"), "{}", out.text);
    let (state, _) = status(&servers, "legacy").await;
    assert_eq!(state, ServerStatus::Ready, "{state}");
    assert!(
        seen.iter().all(|s| *s == ServerStatus::Ready),
        "the transport reconnected by itself, never a restart: {seen:?}"
    );
    servers.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_turns_streamable_http_down_is_reached_over_sse() {
    let server = SseServer::start(free_port());
    // Configured as Streamable HTTP: the POST gets 405, so Toolgate falls back.
    let config = ServerConfig::http("fallback", server.url());
    let servers = manager();
    servers.start_all(&[config]).await;
    let (state, tools) = status(&servers, "fallback").await;
    assert_eq!(state, ServerStatus::Ready, "{state}");
    assert_eq!(tools, vec!["shout".to_owned()]);
    let out = servers
        .call_tool("fallback", "shout", json!({"text": "fell back"}))
        .await
        .expect("a call");
    assert!(out.text.contains("FELL BACK"), "{}", out.text);
    servers.stop_all().await;
}
