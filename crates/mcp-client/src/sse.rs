//! The older HTTP+SSE transport (protocol 2024-11-05), which rmcp 3.11 no longer has a client
//! for: a GET opens an event stream whose first `endpoint` event names where to POST messages;
//! the server's messages come back as `message` events on the stream.
//!
//! A dropped stream is opened again (with backoff, for about half a minute); the server then
//! starts a new session, so the `initialize` request and `initialized` notification the client
//! sent first are sent again on the new session, and their answer is kept from the client, which
//! carries on as if nothing happened. Calls in flight when the stream dropped get no answer and
//! end by their timeout.

use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// The id the replayed `initialize` goes out with; its answer is not passed on.
const REINIT_ID: &str = "toolgate-sse-reinitialize";
/// Waits between attempts to open a dropped stream again.
const RECONNECT_DELAYS_MS: [u64; 9] = [250, 500, 1000, 2000, 4000, 4000, 4000, 8000, 8000];

/// Why the stream could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// 401: the server wants a sign-in (its `WWW-Authenticate`).
    #[error("the server asks for a sign-in")]
    SignIn,
    #[error("{0}")]
    Other(String),
}

struct Shared {
    http: reqwest::Client,
    url: reqwest::Url,
    headers: reqwest::header::HeaderMap,
    auth: Option<toolgate_oauth::Session>,
    server: String,
    /// Where to POST: `None` while the stream is being opened again.
    endpoint: watch::Sender<Option<reqwest::Url>>,
    /// The handshake as the client sent it, to replay on a new session.
    initialize: StdMutex<Option<Value>>,
    initialized: StdMutex<bool>,
}

pub struct SseTransport {
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl SseTransport {
    /// Opens the stream and waits for its `endpoint` event.
    pub async fn connect(
        server: &str,
        url: &str,
        headers: reqwest::header::HeaderMap,
        auth: Option<toolgate_oauth::Session>,
    ) -> Result<Self, OpenError> {
        let url = reqwest::Url::parse(url).map_err(|e| OpenError::Other(e.to_string()))?;
        let (endpoint, mut endpoint_rx) = watch::channel(None);
        let shared = Arc::new(Shared {
            http: reqwest::Client::new(),
            url,
            headers,
            auth,
            server: server.to_owned(),
            endpoint,
            initialize: StdMutex::new(None),
            initialized: StdMutex::new(false),
        });
        let events = open(&shared).await?;
        let (tx, incoming) = mpsc::channel(256);
        let stop = CancellationToken::new();
        tokio::spawn(read(shared.clone(), events, tx, stop.clone()));
        let got = endpoint_rx
            .wait_for(Option::is_some)
            .await
            .map(|_| ())
            .map_err(|_| {
                OpenError::Other(
                    "the event stream ended before it named the endpoint to post to".into(),
                )
            });
        if let Err(e) = got {
            stop.cancel();
            return Err(e);
        }
        Ok(Self {
            incoming,
            shared,
            stop,
        })
    }
}

type Events = std::pin::Pin<
    Box<
        dyn futures::Stream<
                Item = Result<
                    eventsource_stream::Event,
                    eventsource_stream::EventStreamError<reqwest::Error>,
                >,
            > + Send,
    >,
>;

async fn bearer(shared: &Shared) -> Result<Option<String>, OpenError> {
    match &shared.auth {
        None => Ok(None),
        Some(session) => session
            .access_token(&shared.server)
            .await
            .map(Some)
            .map_err(|e| match e {
                toolgate_oauth::AuthProblem::Unavailable(m) => OpenError::Other(m),
                _ => OpenError::SignIn,
            }),
    }
}

/// GETs the event stream.
async fn open(shared: &Shared) -> Result<Events, OpenError> {
    let mut request = shared
        .http
        .get(shared.url.clone())
        .headers(shared.headers.clone())
        .header(reqwest::header::ACCEPT, "text/event-stream");
    if let Some(token) = bearer(shared).await? {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .map_err(|e| OpenError::Other(e.without_url().to_string()))?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return Err(OpenError::SignIn);
    }
    if !status.is_success() {
        return Err(OpenError::Other(format!(
            "the server answered HTTP {status} to the event stream's GET"
        )));
    }
    let is_stream = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_stream {
        return Err(OpenError::Other(
            "the server's GET answer is not an event stream (text/event-stream)".into(),
        ));
    }
    Ok(Box::pin(response.bytes_stream().eventsource()))
}

/// Reads the stream for the connection's life, opening it again when it drops.
async fn read(
    shared: Arc<Shared>,
    mut events: Events,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    stop: CancellationToken,
) {
    let mut replay = false;
    loop {
        loop {
            let event = tokio::select! {
                () = stop.cancelled() => return,
                event = events.next() => event,
            };
            let Some(Ok(event)) = event else { break };
            match event.event.as_str() {
                "endpoint" => {
                    let Some(endpoint) = endpoint_of(&shared.url, event.data.trim()) else {
                        tracing::warn!(server = %shared.server, "ignored an endpoint on another origin");
                        continue;
                    };
                    if replay {
                        if let Err(why) = reinitialize(&shared, &endpoint).await {
                            tracing::warn!(server = %shared.server, "could not start the new session: {why}");
                            break;
                        }
                        replay = false;
                        tracing::info!(server = %shared.server, "the event stream is back");
                    }
                    shared.endpoint.send_replace(Some(endpoint));
                }
                "message" | "" => {
                    let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(&event.data)
                    else {
                        tracing::info!(server = %shared.server, "skipped an event that is not a JSON-RPC message");
                        continue;
                    };
                    if answers_reinitialize(&message) {
                        continue;
                    }
                    if tx.send(message).await.is_err() {
                        return;
                    }
                }
                _ => {}
            }
        }
        // The stream ended: open it again, a few times, before giving up the connection.
        shared.endpoint.send_replace(None);
        tracing::info!(server = %shared.server, "the event stream dropped; opening it again");
        let mut reopened = None;
        for delay in RECONNECT_DELAYS_MS {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(Duration::from_millis(delay)) => {}
            }
            match open(&shared).await {
                Ok(stream) => {
                    reopened = Some(stream);
                    break;
                }
                Err(OpenError::SignIn) => break,
                Err(OpenError::Other(why)) => {
                    tracing::info!(server = %shared.server, "the event stream is still down: {why}");
                }
            }
        }
        let Some(stream) = reopened else {
            // Dropping `tx` ends the connection; the manager reports it and restarts the server.
            return;
        };
        events = stream;
        replay = shared
            .initialize
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
    }
}

/// The endpoint named by an `endpoint` event, only on the stream's own origin: a server cannot
/// send our messages (and token) elsewhere.
fn endpoint_of(base: &reqwest::Url, data: &str) -> Option<reqwest::Url> {
    let endpoint = base.join(data).ok()?;
    (endpoint.origin() == base.origin()).then_some(endpoint)
}

fn answers_reinitialize(message: &ServerJsonRpcMessage) -> bool {
    let Ok(value) = serde_json::to_value(message) else {
        return false;
    };
    value.get("id").and_then(Value::as_str) == Some(REINIT_ID)
}

/// Sends the client's `initialize` (under our own id) and `initialized` on a new session.
async fn reinitialize(shared: &Shared, endpoint: &reqwest::Url) -> Result<(), String> {
    let initialize = shared
        .initialize
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let Some(mut initialize) = initialize else {
        return Ok(());
    };
    initialize["id"] = Value::from(REINIT_ID);
    post(shared, endpoint, &initialize).await?;
    if *shared.initialized.lock().unwrap_or_else(|p| p.into_inner()) {
        let notification =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post(shared, endpoint, &notification).await?;
    }
    Ok(())
}

async fn post(shared: &Shared, endpoint: &reqwest::Url, body: &Value) -> Result<(), String> {
    let send = |token: Option<String>| {
        let mut request = shared
            .http
            .post(endpoint.clone())
            .headers(shared.headers.clone())
            .json(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let token = bearer(shared).await.map_err(|e| match e {
        OpenError::SignIn => format!("{} needs you to sign in again", shared.server),
        OpenError::Other(m) => m,
    })?;
    let mut response = send(token.clone())
        .await
        .map_err(|e| e.without_url().to_string())?;
    if response.status() == reqwest::StatusCode::UNAUTHORIZED {
        if let (Some(session), Some(_)) = (&shared.auth, token) {
            let fresh = session
                .renew(&shared.server)
                .await
                .map_err(|e| e.to_string())?;
            response = send(Some(fresh))
                .await
                .map_err(|e| e.without_url().to_string())?;
        }
    }
    if response.status().is_success() {
        Ok(())
    } else {
        Err(format!("the server answered HTTP {}", response.status()))
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let shared = self.shared.clone();
        async move {
            let message: &ClientJsonRpcMessage = &item;
            let value = serde_json::to_value(message).map_err(std::io::Error::other)?;
            match value.get("method").and_then(Value::as_str) {
                Some("initialize") => {
                    *shared.initialize.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(value.clone());
                }
                Some("notifications/initialized") => {
                    *shared.initialized.lock().unwrap_or_else(|p| p.into_inner()) = true;
                }
                _ => {}
            }
            let mut endpoint = shared.endpoint.subscribe();
            let endpoint =
                tokio::time::timeout(Duration::from_secs(40), endpoint.wait_for(Option::is_some))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .and_then(|e| e.clone())
                    .ok_or_else(|| std::io::Error::other("the server's event stream is gone"))?;
            post(&shared, &endpoint, &value)
                .await
                .map_err(std::io::Error::other)
        }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stop.cancel();
        Ok(())
    }
}

/// Whether a Streamable HTTP server is in fact an older one: the spec's backwards-compatibility
/// test, a POST of `initialize` answered with 400, 404 or 405.
pub async fn turns_down_streamable_http(
    url: &str,
    headers: &reqwest::header::HeaderMap,
    token: Option<String>,
) -> bool {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "toolgate", "version": env!("CARGO_PKG_VERSION")}}
    });
    let mut request = reqwest::Client::new()
        .post(url)
        .headers(headers.clone())
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .json(&body)
        .timeout(Duration::from_secs(15));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    match request.send().await {
        Ok(response) => matches!(response.status().as_u16(), 400 | 404 | 405),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_must_stay_on_the_streams_origin() {
        let base = reqwest::Url::parse("http://127.0.0.1:8000/sse").unwrap();
        assert_eq!(
            endpoint_of(&base, "/messages/?session_id=ab").map(|u| u.to_string()),
            Some("http://127.0.0.1:8000/messages/?session_id=ab".to_owned())
        );
        assert_eq!(endpoint_of(&base, "http://evil.example/messages"), None);
        assert_eq!(endpoint_of(&base, "http://127.0.0.1:9/messages"), None);
    }
}
