//! Test harness for Toolgate's end-to-end tests.
//!
//! [`ScriptedProvider`] is the one stand-in the tests use: an HTTP server on 127.0.0.1 that speaks
//! the Anthropic Messages and OpenAI Chat Completions wire formats, answering each request with the
//! next reply of a script and recording what it was sent. Product code reaches it only through its
//! normal base-URL setting. [`fixtures`] builds replies in the documented response shapes.
//!
//! Everything else the tests use is real: MCP servers installed from npm by the set-up
//! ([`example_servers_dir`]), the OS keychain, and the built app.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

pub mod fixtures;

/// One scripted answer: an HTTP status and a JSON body, with optional extra headers.
#[derive(Debug, Clone)]
pub struct Scripted {
    pub status: u16,
    pub body: Value,
    pub headers: Vec<(String, String)>,
}

impl Scripted {
    pub fn ok(body: Value) -> Self {
        Self {
            status: 200,
            body,
            headers: Vec::new(),
        }
    }

    pub fn status(status: u16, body: Value) -> Self {
        Self {
            status,
            body,
            headers: Vec::new(),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// A request the scripted provider received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

#[derive(Default)]
struct Script {
    replies: Mutex<VecDeque<Scripted>>,
    received: Mutex<Vec<Recorded>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The scripted LLM provider. Stops when dropped.
pub struct ScriptedProvider {
    addr: SocketAddr,
    script: Arc<Script>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl ScriptedProvider {
    /// Starts serving on a free port of 127.0.0.1, answering requests with `replies` in order.
    pub async fn start(replies: Vec<Scripted>) -> Self {
        let script = Arc::new(Script::default());
        lock(&script.replies).extend(replies);
        let app = Router::new()
            .route("/v1/messages", post(answer))
            .route("/v1/chat/completions", post(answer))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Self {
            addr,
            script,
            _shutdown: tx,
        }
    }

    /// The base URL to configure for the Anthropic format.
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL to configure for the OpenAI format (it includes `/v1`, as OpenAI's does).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, replies: impl IntoIterator<Item = Scripted>) {
        lock(&self.script.replies).extend(replies);
    }

    /// The requests received so far, in order.
    pub fn received(&self) -> Vec<Recorded> {
        lock(&self.script.received).clone()
    }
}

async fn answer(
    State(script): State<Arc<Script>>,
    uri: Uri,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    lock(&script.received).push(Recorded {
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
            .collect(),
        body,
    });
    let next = lock(&script.replies).pop_front();
    let Some(reply) = next else {
        let body = json!({"type": "error", "error": {"type": "api_error",
            "message": "the test script has no more replies"}});
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response();
    };
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, Json(reply.body)).into_response();
    for (name, value) in reply.headers {
        if let (Ok(n), Ok(v)) = (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            axum::http::HeaderValue::from_str(&value),
        ) {
            response.headers_mut().insert(n, v);
        }
    }
    response
}

/// The repository's root folder.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// Where the set-up installs the MCP servers from npm (`mcp-servers/node_modules`).
pub fn example_servers_dir() -> PathBuf {
    repo_root().join("mcp-servers")
}

/// The entry script of an npm-installed MCP server package, checked to exist.
pub fn npm_server_entry(package: &str) -> PathBuf {
    let path = example_servers_dir()
        .join("node_modules")
        .join(package)
        .join("dist/index.js");
    assert!(
        path.is_file(),
        "{} is missing: run the README's test command, which installs the test servers",
        path.display()
    );
    path
}

/// Where to look for a marker in a process: its command line or its environment.
#[derive(Debug, Clone, Copy)]
pub enum ProcField {
    Cmdline,
    Environ,
}

/// Process ids (other than this one) whose command line or environment contains `needle`.
/// Used to prove that no server process outlives the app or the manager that started it.
pub fn processes_with(needle: &str, field: ProcField) -> Vec<u32> {
    let file = match field {
        ProcField::Cmdline => "cmdline",
        ProcField::Environ => "environ",
    };
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/{file}"))
                .map(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
                .unwrap_or(false)
        })
        .collect()
}

/// Polls `probe` until it finds no process, for up to `seconds`; returns what is left.
pub async fn wait_until_none(seconds: u64, probe: impl Fn() -> Vec<u32>) -> Vec<u32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    loop {
        let left = probe();
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A command installed by the set-up into the Python test environment (`mcp-servers/.venv`).
pub fn python_server_bin(name: &str) -> PathBuf {
    let path = example_servers_dir().join(".venv/bin").join(name);
    assert!(
        path.is_file(),
        "{} is missing: run the README's test command, which installs the test servers",
        path.display()
    );
    path
}

/// The misbehaving MCP server written for the tests (`tests/fault_server.py`).
pub fn fault_server_script() -> PathBuf {
    repo_root().join("tests/fault_server.py")
}

/// A free TCP port on 127.0.0.1 (free when asked; good enough for a test server).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

/// The parent pid of a process, from `/proc/<pid>/stat`.
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Live (non-zombie) processes whose parent is `parent`.
pub fn children_of(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent) && is_alive(*pid))
        .collect()
}

/// Whether a process exists and has not exited (a zombie has).
pub fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = s[s.rfind(')')? + 1..].to_owned();
            rest.split_whitespace().next().map(|state| state != "Z")
        })
        .unwrap_or(false)
}
