//! Test harness for Toolgate's end-to-end tests.
//!
//! [`ScriptedProvider`] is the one stand-in the tests use: an HTTP server on 127.0.0.1 that speaks
//! the Anthropic Messages and OpenAI Chat Completions wire formats, answering each request with the
//! next reply of a script and recording what it was sent. A request with `"stream": true` gets a
//! scripted server-sent event stream, framed as each API frames it. Product code reaches it only
//! through its normal base-URL setting. [`fixtures`] builds replies in the documented shapes.
//! As the real services do, it refuses with their 400 and message a request they would refuse
//! (a tool schema the format does not take, a structured-output field of the other format, too
//! many cache breakpoints, only deferred tools, a `tool_reference` to a tool not deferred), and
//! reports prompt caching in each reply's usage ([`wire`]).
//!
//! Everything else the tests use is real: MCP servers installed from npm by the set-up
//! ([`example_servers_dir`]), the OS keychain, and the built app.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde_json::{json, Value};
use toolgate_llm::{HttpProvider, WireFormat};
use toolgate_settings::ServerConfig;

pub mod bench;
pub mod fixtures;
pub mod line_client;
pub mod line_server;
pub mod oauth;
mod terminal;
pub mod wire;

pub use terminal::{at_a_terminal, AtATerminal};

/// How long a stalled stream holds its connection open before ending (bounded, so a test that
/// fails to cancel still ends).
const STALL: Duration = Duration::from_secs(30);

/// One scripted answer: an HTTP status and a JSON body, or a server-sent event stream, with
/// optional extra headers.
#[derive(Debug, Clone)]
pub struct Scripted {
    pub status: u16,
    pub body: Value,
    pub headers: Vec<(String, String)>,
    /// When set, the answer is this event stream instead of `body` (streaming requests only).
    pub stream: Option<ScriptedStream>,
}

/// A scripted `text/event-stream` answer.
#[derive(Debug, Clone, Default)]
pub struct ScriptedStream {
    pub events: Vec<SseEvent>,
    /// After the events, hold the connection open without ending the stream (for cancellation).
    pub stall: bool,
    /// A wait before each event, as a model generating tokens would leave.
    pub gap: Duration,
    /// Where to note when each event is handed to the connection (see [`Scripted::paced`]).
    pub sent: Option<SendTimes>,
}

/// When each event of a paced stream left the scripted provider, in the stream's order (the
/// `data: [DONE]` the provider adds for OpenAI included): stamped in-process the moment the event
/// is handed to the HTTP connection, so a benchmark can match each one to its arrival.
#[derive(Debug, Clone, Default)]
pub struct SendTimes(Arc<Mutex<Vec<Instant>>>);

impl SendTimes {
    /// The stamps so far, one per event sent.
    pub fn get(&self) -> Vec<Instant> {
        lock(&self.0).clone()
    }

    fn stamp(&self) {
        lock(&self.0).push(Instant::now());
    }
}

/// One event of a scripted stream.
#[derive(Debug, Clone)]
pub enum SseEvent {
    /// Framed as the API of the request's path frames it: `event: <type>` and `data: <json>`
    /// for Anthropic, `data: <json>` for OpenAI (which also ends a complete stream with
    /// `data: [DONE]`).
    Json(Value),
    /// Sent exactly as given: for cut-off or malformed streams.
    Raw(String),
}

impl Scripted {
    pub fn ok(body: Value) -> Self {
        Self::status(200, body)
    }

    pub fn status(status: u16, body: Value) -> Self {
        Self {
            status,
            body,
            headers: Vec::new(),
            stream: None,
        }
    }

    /// A complete event stream of documented events (see [`fixtures`]).
    pub fn stream(events: impl IntoIterator<Item = Value>) -> Self {
        Self {
            stream: Some(ScriptedStream {
                events: events.into_iter().map(SseEvent::Json).collect(),
                ..ScriptedStream::default()
            }),
            ..Self::ok(Value::Null)
        }
    }

    /// A stream sent byte for byte as `text`, with no framing added.
    pub fn raw_stream(text: &str) -> Self {
        Self {
            stream: Some(ScriptedStream {
                events: vec![SseEvent::Raw(text.to_owned())],
                ..ScriptedStream::default()
            }),
            ..Self::ok(Value::Null)
        }
    }

    /// Sends the events, then stalls: the connection stays open and the stream never ends
    /// (for [`STALL`] at most).
    pub fn stalling(mut self) -> Self {
        if let Some(stream) = &mut self.stream {
            stream.stall = true;
        }
        self
    }

    /// Sends each event `gap` after the previous one, noting in `sent` when each leaves.
    pub fn paced(mut self, gap: Duration, sent: &SendTimes) -> Self {
        if let Some(stream) = &mut self.stream {
            stream.gap = gap;
            stream.sent = Some(sent.clone());
        }
        self
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
    models: Mutex<Vec<String>>,
    cache: Mutex<wire::PromptCache>,
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
            .route("/v1/responses", post(answer))
            .route("/v1beta/models/{*model_and_method}", post(answer))
            .route("/v1/models", get(models))
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

    /// The base URL to configure for Google's Gemini API (`GOOGLE_GEMINI_BASE_URL`): requests go
    /// to `/v1beta/models/MODEL:streamGenerateContent` below it.
    pub fn gemini_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, replies: impl IntoIterator<Item = Scripted>) {
        lock(&self.script.replies).extend(replies);
    }

    /// The model ids `GET /v1/models` lists.
    pub fn set_models(&self, ids: &[&str]) {
        *lock(&self.script.models) = ids.iter().map(|s| s.to_string()).collect();
    }

    /// An Anthropic client of this server, reaching it through its base URL as a user would.
    pub fn anthropic_client(&self, key: &str) -> HttpProvider {
        HttpProvider::new(WireFormat::Anthropic, self.anthropic_base_url(), key).expect("provider")
    }

    /// An OpenAI client of this server.
    pub fn openai_client(&self, key: &str) -> HttpProvider {
        HttpProvider::new(WireFormat::OpenAi, self.openai_base_url(), key).expect("provider")
    }

    /// The requests received so far, in order.
    pub fn received(&self) -> Vec<Recorded> {
        lock(&self.script.received).clone()
    }

    /// Drops the requests received so far, so a long run (the soak test) measures the host's
    /// memory, not this record's.
    pub fn forget_received(&self) {
        lock(&self.script.received).clear();
    }
}

fn record(script: &Script, uri: &Uri, headers: &HeaderMap, body: Value) {
    lock(&script.received).push(Recorded {
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
            .collect(),
        body,
    });
}

async fn answer(
    State(script): State<Arc<Script>>,
    uri: Uri,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let api = Api::of(uri.path());
    // Gemini says "stream" in the method, the others in the body.
    let wants_stream =
        body["stream"] == json!(true) || uri.path().ends_with(":streamGenerateContent");
    let openai = api == Api::OpenAiChat;
    if matches!(api, Api::OpenAiResponses | Api::Gemini) {
        // The hosts that speak these (Codex CLI, Gemini CLI) are driven whole in the tests; their
        // requests are recorded and answered from the script, with no refusal or cache rules.
        record(&script, &uri, &headers, body);
        let next = lock(&script.replies).pop_front();
        let Some(reply) = next else {
            return script_error("the test script has no more replies");
        };
        return scripted_response(reply, wants_stream, api);
    }
    // A request the real API would refuse is refused here too, before any scripted reply.
    let refusal = if openai {
        wire::openai_refusal(&body)
    } else {
        wire::anthropic_refusal(&body)
    };
    if let Some(refusal) = refusal {
        record(&script, &uri, &headers, body);
        return (StatusCode::BAD_REQUEST, Json(refusal)).into_response();
    }
    let cache = {
        let mut cache = lock(&script.cache);
        if openai {
            cache.openai(&body)
        } else {
            cache.anthropic(&body)
        }
    };
    // Only a request that uses the cache gets its figures: Anthropic's with breakpoints, and
    // OpenAI's that shares a cached prefix. Others keep the scripted usage as it is.
    let caching = if openai {
        cache.read > 0
    } else {
        cache.read + cache.written > 0 || body.to_string().contains("\"cache_control\"")
    };
    record(&script, &uri, &headers, body);
    let next = lock(&script.replies).pop_front();
    let Some(mut reply) = next else {
        return script_error("the test script has no more replies");
    };
    if caching {
        with_cache_usage(&mut reply, openai, cache);
    }
    scripted_response(
        reply,
        wants_stream,
        if openai {
            Api::OpenAiChat
        } else {
            Api::Anthropic
        },
    )
}

/// Which API a request's path belongs to: how its stream is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    /// `event: TYPE` and `data: JSON` per event.
    Anthropic,
    /// `data: JSON` per chunk, then `data: [DONE]`.
    OpenAiChat,
    /// OpenAI's Responses API: `event: TYPE` and `data: JSON`, as Anthropic's.
    OpenAiResponses,
    /// Google's: `data: JSON` per chunk (`?alt=sse`), no end marker.
    Gemini,
}

impl Api {
    fn of(path: &str) -> Api {
        if path.ends_with("/chat/completions") {
            Api::OpenAiChat
        } else if path.ends_with("/responses") {
            Api::OpenAiResponses
        } else if path.starts_with("/v1beta/models/") {
            Api::Gemini
        } else {
            Api::Anthropic
        }
    }
}

/// A scripted reply as an HTTP response, its stream framed as `api` frames it.
fn scripted_response(reply: Scripted, wants_stream: bool, api: Api) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match reply.stream {
        Some(_) if !wants_stream => {
            return script_error("the script has a stream, but the request did not ask for one")
        }
        Some(stream) => {
            let mut response = (status, sse_body(stream, api)).into_response();
            response.headers_mut().insert(
                axum::http::header::CONTENT_TYPE,
                axum::http::HeaderValue::from_static("text/event-stream"),
            );
            response
        }
        None => (status, Json(reply.body)).into_response(),
    };
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

/// Puts what the prompt cache did into the reply's usage, where each API reports it.
fn with_cache_usage(reply: &mut Scripted, openai: bool, cache: wire::CacheUse) {
    let patch = |usage: &mut Value| {
        if openai {
            wire::openai_usage(usage, cache);
        } else {
            wire::anthropic_usage(usage, cache);
        }
    };
    if let Some(usage) = reply.body.get_mut("usage").filter(|u| u.is_object()) {
        patch(usage);
    }
    for event in reply.stream.iter_mut().flat_map(|s| s.events.iter_mut()) {
        let SseEvent::Json(data) = event else {
            continue;
        };
        if openai {
            if let Some(usage) = data.get_mut("usage").filter(|u| u.is_object()) {
                patch(usage);
            }
        } else if data["type"] == "message_start" {
            if let Some(usage) = data["message"].get_mut("usage") {
                patch(usage);
            }
        }
    }
}

fn script_error(message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": "api_error", "message": message}});
    (StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response()
}

/// The stream body: one chunk per event, so the client sees each as it is "generated".
fn sse_body(stream: ScriptedStream, api: Api) -> Body {
    let openai = api == Api::OpenAiChat;
    let mut frames: Vec<String> = stream
        .events
        .into_iter()
        .map(|event| match event {
            SseEvent::Raw(text) => text,
            SseEvent::Json(data) if matches!(api, Api::OpenAiChat | Api::Gemini) => {
                format!("data: {data}\n\n")
            }
            SseEvent::Json(data) => {
                let name = data["type"].as_str().unwrap_or("message").to_owned();
                format!("event: {name}\ndata: {data}\n\n")
            }
        })
        .collect();
    let complete = !stream.stall;
    if openai && complete && !frames.iter().any(|f| f.contains("[DONE]")) {
        frames.push("data: [DONE]\n\n".to_owned());
    }
    let (gap, sent) = (stream.gap, stream.sent);
    let events = futures::stream::iter(frames).then(move |frame| {
        let sent = sent.clone();
        async move {
            if !gap.is_zero() {
                tokio::time::sleep(gap).await;
            }
            if let Some(sent) = sent {
                sent.stamp();
            }
            Ok::<_, std::convert::Infallible>(frame)
        }
    });
    let stall = futures::stream::once(async move {
        if !complete {
            tokio::time::sleep(STALL).await;
        }
        Ok(String::new())
    });
    Body::from_stream(events.chain(stall))
}

/// `GET /v1/models` in the shape of the API that asked: Anthropic's when `anthropic-version` was
/// sent, OpenAI's otherwise.
async fn models(State(script): State<Arc<Script>>, uri: Uri, headers: HeaderMap) -> Response {
    let anthropic = headers.contains_key("anthropic-version");
    record(&script, &uri, &headers, Value::Null);
    let ids = lock(&script.models).clone();
    let body = if anthropic {
        json!({
            "data": ids.iter().map(|id| json!({"type": "model", "id": id, "display_name": id,
                "created_at": "2025-02-19T00:00:00Z"})).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": ids.first(),
            "last_id": ids.last(),
        })
    } else {
        json!({
            "object": "list",
            "data": ids.iter().map(|id| json!({"id": id, "object": "model", "created": 1686935002,
                "owned_by": "organization-owner"})).collect::<Vec<_>>(),
        })
    };
    Json(body).into_response()
}

/// A web page for the servers under test to fetch, on 127.0.0.1: every GET answers `page`, and
/// every POST is recorded (whole request) in the returned list, for tests that a post never
/// left. Returns the port and that list; it serves until the test's runtime ends.
pub async fn web_page(page: String) -> (u16, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let posted = Arc::new(Mutex::new(Vec::new()));
    let seen = posted.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (page, seen) = (page.clone(), seen.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let n = socket.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]).into_owned();
                if request.starts_with("POST") {
                    lock(&seen).push(request);
                }
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    (port, posted)
}

/// The repository's root folder.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The app: the installed one the README's test command sets in `TOOLGATE_APP`, else the build.
pub fn app_binary() -> PathBuf {
    let path = std::env::var_os("TOOLGATE_APP")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/debug/toolgate-app"));
    assert!(
        path.is_file(),
        "{} is missing: the README's test command builds it with `tauri build --debug --no-bundle`",
        path.display()
    );
    path
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
        .expect("a free port")
}

/// A fresh, empty folder for one test, by its canonical path (the filesystem server resolves
/// symlinks, so paths compare equal only in that form). Removed with everything in it when the
/// returned guard is dropped, so a run leaves nothing in the system's temporary folder; keep the
/// guard alive as long as the folder is used.
pub fn temp_dir(tag: &str) -> TestDir {
    let dir = std::env::temp_dir().join(format!("toolgate-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    TestDir(dir.canonicalize().expect("canonical"))
}

/// A folder for a run of the built app (its data and logs, in `XDG_*_HOME` under it), made by
/// [`temp_dir`]: when dropped, every process still running with the folder in its environment
/// (the app, its servers, WebKit's) is killed, then the folder removed, however the test ends.
#[derive(Debug)]
pub struct AppHome(TestDir);

impl AppHome {
    pub fn new(tag: &str) -> Self {
        AppHome(temp_dir(tag))
    }
}

impl std::ops::Deref for AppHome {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for AppHome {
    fn drop(&mut self) {
        for pid in processes_with(&self.0.to_string_lossy(), ProcField::Environ) {
            send_signal("KILL", pid);
        }
    }
}

/// A test's folder, removed on drop (see [`temp_dir`]).
#[derive(Debug)]
pub struct TestDir(PathBuf);

impl std::ops::Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `@modelcontextprotocol/server-everything` over stdio, run by node from the set-up's install.
pub fn everything_server(id: &str) -> ServerConfig {
    let entry = npm_server_entry("@modelcontextprotocol/server-everything");
    ServerConfig::stdio(
        id,
        "node",
        [entry.to_string_lossy().into_owned(), "stdio".into()],
    )
}

/// `@modelcontextprotocol/server-filesystem` on one folder.
pub fn filesystem_server(id: &str, root: &std::path::Path) -> ServerConfig {
    let entry = npm_server_entry("@modelcontextprotocol/server-filesystem");
    ServerConfig::stdio(
        id,
        "node",
        [
            entry.to_string_lossy().into_owned(),
            root.to_string_lossy().into_owned(),
        ],
    )
}

/// `tests/fault_server.py` in `mode` (see the script for the modes).
pub fn fault_server(id: &str, mode: &str) -> ServerConfig {
    let script = fault_server_script().to_string_lossy().into_owned();
    ServerConfig::stdio(id, "python3", [script, mode.to_owned()])
}

/// `@modelcontextprotocol/server-basic-vanillajs`, the MCP Apps example (its `get-time` tool
/// links the `ui://get-time/mcp-app.html` app), over stdio.
pub fn apps_server(id: &str) -> ServerConfig {
    let entry = example_servers_dir()
        .join("node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
    assert!(
        entry.is_file(),
        "{} is missing: run the README's test command",
        entry.display()
    );
    ServerConfig::stdio(
        id,
        "node",
        [entry.to_string_lossy().into_owned(), "--stdio".into()],
    )
}

/// `tests/modern_server.py`: a 2026-07-28 server on the official Python SDK (multi-round
/// questions, a task, live lists, a template and a prompt), logging what it sees to `log`, whose
/// folder its sandbox settings give it to write (a path in its environment opens nothing by
/// itself; a folder holding Toolgate's own is refused, so keep the log out of one).
pub fn modern_server(id: &str, log: &std::path::Path) -> ServerConfig {
    let python = python_server_bin("python");
    let script = repo_root().join("tests/modern_server.py");
    let mut config = ServerConfig::stdio(
        id,
        python.to_string_lossy(),
        [script.to_string_lossy().into_owned()],
    );
    if let toolgate_settings::Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("MODERN_LOG".into(), log.to_string_lossy().into_owned());
    }
    if let Some(folder) = log.parent() {
        let mut sandbox = config.sandbox_settings().unwrap_or_default();
        sandbox.write.push(folder.to_owned());
        config.sandbox = Some(sandbox);
    }
    config
}

/// The lines of a JSON Lines log, parsed (missing file: none).
pub fn json_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
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
    toolgate_mcp::orphans::ProcessId::of(pid).is_some()
}

/// Sends `signal` (`TERM`, `INT`, `KILL`…) to `pid` with `kill`; whether it was sent.
pub fn send_signal(signal: &str, pid: u32) -> bool {
    std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

/// A test agent's parts, each chosen here in plain sight (the app and the CLI get theirs from
/// `toolgate_host::Host::agent`): these servers and this gate, no rules (every call asked), no
/// audit log or recorder, a fresh exposure and offers, the default tool settings under
/// Anthropic's rules, and Toolgate's system prompt. A test changes what it is about with
/// `AgentParts { policy, ..agent_parts(servers, gate) }`.
pub fn agent_parts(
    servers: Arc<toolgate_mcp::ServerManager>,
    gate: Arc<toolgate_agent::Gate>,
) -> toolgate_agent::AgentParts {
    toolgate_agent::AgentParts {
        servers,
        gate,
        policy: Arc::new(toolgate_agent::MemoryPolicy::default()),
        history: None,
        conversation: None,
        client: None,
        exposure: Arc::default(),
        offers: Arc::default(),
        tools: toolgate_catalog::CatalogSettings::default(),
        target: toolgate_agent::ToolTarget::Anthropic,
        only: None,
        recorder: None,
        system: Some(toolgate_agent::SYSTEM_PROMPT.to_owned()),
    }
}

/// An organisation's policy folder in `dir` as an administrator leaves it (`policy/`, with
/// `managed.json` holding `document` and an empty `managed.d/`, writable by their owner only).
#[cfg(unix)]
pub fn managed_policy_folder(dir: &Path, document: &Value) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let policy = dir.join("policy");
    std::fs::create_dir_all(policy.join("managed.d")).expect("policy folder");
    for folder in [&policy, &policy.join("managed.d")] {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).expect("mode");
    }
    write_policy_file(&policy.join("managed.json"), document, 0o644);
    policy
}

/// Writes one policy file with `mode` (0o644 as it should be; 0o666 to see it refused).
#[cfg(unix)]
pub fn write_policy_file(path: &Path, document: &Value, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, serde_json::to_vec_pretty(document).expect("json")).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("mode");
}

/// `program` run as on a managed desktop: in a mount namespace of its own where `policy` is
/// bound over `/etc/toolgate`, the place Toolgate reads its organisation's policy from on Linux,
/// so the real binary reads the real path and no other test sees the policy. Needs root (CI
/// runs as root) to make the mount point and mount.
pub fn under_managed_policy(policy: &Path, program: &Path) -> std::process::Command {
    std::fs::create_dir_all("/etc/toolgate").unwrap_or_else(|e| {
        panic!("/etc/toolgate could not be made ({e}): this test binds a policy folder there and needs root, as CI runs")
    });
    bound_over(policy, "/etc/toolgate", program)
}

/// `program` in a mount namespace of its own, `source` bound over `target` (needs root).
fn bound_over(source: &Path, target: &str, program: &Path) -> std::process::Command {
    let mut command = std::process::Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!(
            r#"mount --bind "$0" {target} && shift && exec "$@""#
        ))
        .arg(source)
        .arg("--")
        .arg(program);
    command
}

/// `program` run with `hosts` bound over `/etc/hosts` in a mount namespace of its own, so
/// names such as `allowed.test` resolve (through the system's own resolver) to this computer
/// for it alone. Needs root, as CI runs.
pub fn with_hosts_file(hosts: &Path, program: &Path) -> std::process::Command {
    bound_over(hosts, "/etc/hosts", program)
}

/// The test MCP registry (`tests/registry/server.py`, answering as the Registry API's OpenAPI
/// document says, with `tests/registry/fixture.json`), logging each request to `log`; stopped
/// when dropped.
pub struct LocalRegistry {
    child: std::process::Child,
    /// Its address, `http://127.0.0.1:PORT`.
    pub url: String,
}

impl LocalRegistry {
    pub fn start(log: &Path) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new("python3")
            .arg(repo_root().join("tests/registry/server.py"))
            .arg("0")
            .arg(repo_root().join("tests/registry/fixture.json"))
            .arg(log)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the test registry starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("it says where it listens");
        let address = line.trim().trim_start_matches("listening on ").to_owned();
        LocalRegistry {
            child,
            url: format!("http://{address}"),
        }
    }
}

impl Drop for LocalRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
