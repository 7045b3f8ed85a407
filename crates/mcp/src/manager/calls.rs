//! Tool calls: timeouts reset by progress, cancellation that reaches the server, and errors that
//! say what happened.
//!
//! A call may take several rounds. A 2026-07-28 server that needs something first answers
//! `input_required` (multi-round requests): its questions go to the same [`ServerRequests`]
//! handler a standalone request goes to (the gate, in the app and the CLI), and the call is sent
//! again with the answers and the server's `requestState`, exactly as received. rmcp's own
//! `call_tool` drives those rounds too, but through its `ClientHandler` and with no timeout reset
//! by progress, no cancellation of our own and no progress per call; so the rounds are driven
//! here, each one a cancellable request like any call. A server that runs the call as a task
//! (the tasks extension) is followed in `tasks.rs`.
//!
//! [`ServerRequests`]: crate::ServerRequests

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex as StdMutex, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, InputRequest, InputRequests, InputResponses, RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::RoleClient;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::entry::Entry;
use super::registry::ServerManager;
use crate::McpError;
use crate::{CallOptions, CallProgress, ServerEvent, ToolOutput};
use toolgate_mcp_client::asker::{question_of, Question};

/// Time beyond a call's maximum after which we stop waiting even if the transport itself is stuck
/// (a server that stopped reading its stdin blocks the cancellation rmcp sends on timeout).
const STUCK_GRACE: Duration = Duration::from_secs(5);

/// Rounds of `input_required` one request may take before Toolgate gives up on it: the limit the
/// official SDKs use, so a server cannot keep a call (and the user) busy forever.
pub(super) const MAX_ROUNDS: usize = 10;

/// A server's entry and its connection, or why it has none.
pub(super) fn running<'a>(
    entries: &'a std::collections::BTreeMap<String, Entry>,
    server: &str,
) -> Result<(&'a Entry, Peer<RoleClient>), McpError> {
    let entry = entries
        .get(server)
        .ok_or_else(|| McpError::UnknownServer(server.to_owned()))?;
    let peer = entry
        .conn
        .as_ref()
        .map(|c| c.peer.clone())
        .ok_or_else(|| McpError::NotRunning {
            server: server.to_owned(),
            status: entry.status.to_string(),
        })?;
    Ok((entry, peer))
}

/// One tool call in flight, across its rounds.
pub(super) struct Call<'a> {
    pub server: &'a str,
    pub tool: &'a str,
    pub peer: Peer<RoleClient>,
    pub timeout: Duration,
    pub max_timeout: Duration,
    pub cancel: CancellationToken,
    /// The tool context (`_meta`) sent with every round.
    pub meta: Option<RequestMetaObject>,
    pub progress: Option<Progress>,
    pub roots: Arc<RwLock<Vec<PathBuf>>>,
    /// Who answers the server's questions during the call, when not the manager's handler.
    pub asker: Option<crate::Asker>,
}

impl Call<'_> {
    pub fn failed(&self, detail: String) -> McpError {
        McpError::Call {
            server: self.server.to_owned(),
            tool: self.tool.to_owned(),
            detail,
            code: None,
            data: None,
        }
    }

    pub fn exited(&self) -> McpError {
        McpError::ServerExited {
            server: self.server.to_owned(),
            tool: self.tool.to_owned(),
        }
    }

    pub fn cancelled(&self) -> McpError {
        McpError::Cancelled {
            tool: self.tool.to_owned(),
        }
    }

    /// What a failed request means for the call.
    pub fn service_error(&self, error: ServiceError) -> McpError {
        match error {
            ServiceError::Timeout { timeout } => McpError::Timeout {
                server: self.server.to_owned(),
                tool: self.tool.to_owned(),
                seconds: timeout.as_secs(),
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => self.exited(),
            ServiceError::McpError(error) => McpError::Call {
                server: self.server.to_owned(),
                tool: self.tool.to_owned(),
                detail: error.message.into_owned(),
                code: Some(error.code.0),
                data: error.data.map(|d| d.to_string()),
            },
            other => self.failed(other.to_string()),
        }
    }
}

/// A call's progress: every round's token is watched, and the server's notifications are passed
/// on while the call waits (see [`forwarding`]), with no task of its own: a task per call cost
/// more than the rest of a call's bookkeeping. A task's status is sent straight to the sink.
pub(super) struct Progress {
    pub sink: tokio::sync::mpsc::UnboundedSender<CallProgress>,
    server: String,
    tokens: StdMutex<HashSet<String>>,
    /// Subscribed before the first request goes out, so no notification is missed; what
    /// arrives between two waits is kept by the channel until the next one.
    events: tokio::sync::Mutex<tokio::sync::broadcast::Receiver<ServerEvent>>,
}

impl Progress {
    fn start(
        events: tokio::sync::broadcast::Receiver<ServerEvent>,
        server: &str,
        sink: tokio::sync::mpsc::UnboundedSender<CallProgress>,
    ) -> Self {
        Self {
            sink,
            server: server.to_owned(),
            tokens: StdMutex::default(),
            events: tokio::sync::Mutex::new(events),
        }
    }

    fn watch(&self, token: String) {
        self.tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token);
    }

    /// Passes this call's progress notifications on for as long as it is awaited.
    async fn forward(&self) -> std::convert::Infallible {
        let mut events = self.events.lock().await;
        loop {
            match events.recv().await {
                Ok(ServerEvent::Progress {
                    server,
                    token,
                    progress,
                    total,
                    message,
                }) if server == self.server
                    && self
                        .tokens
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .contains(&token) =>
                {
                    let _ = self.sink.send(CallProgress {
                        progress,
                        total,
                        message,
                        task: None,
                    });
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    return std::future::pending().await
                }
            }
        }
    }
}

/// A branch for each wait of a call (`tokio::select!`): passes the call's progress on while the
/// call waits, and never ends (nor does anything for a call nobody follows).
pub(super) async fn forwarding(progress: &Option<Progress>) -> std::convert::Infallible {
    match progress {
        Some(progress) => progress.forward().await,
        None => std::future::pending().await,
    }
}

impl ServerManager {
    /// A call the server refused for want of a sign-in or of scopes: the error that says so,
    /// with the server's entry marked for the window (Sign in again, or grant more access).
    async fn refused_call(
        &self,
        server: &str,
        tool: &str,
        error: &ServiceError,
    ) -> Option<McpError> {
        let ServiceError::TransportSend(send) = error else {
            return None;
        };
        let refusal = toolgate_mcp_client::http::auth_refusal(&*send.error)?;
        let mut entries = self.entries.lock().await;
        let entry = entries.get_mut(server)?;
        let failure = match refusal {
            toolgate_mcp_client::http::AuthRefusal::Scope(scope) => {
                entry.needs_scope = Some(scope.clone());
                McpError::MoreAccess {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    scope,
                }
            }
            toolgate_mcp_client::http::AuthRefusal::SignIn => {
                entry.status = crate::types::ServerStatus::SignIn {
                    reason: format!(
                        "{}'s sign-in is no longer accepted: sign in again",
                        entry.config.name
                    ),
                    again: true,
                };
                McpError::SignInNeeded {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                }
            }
        };
        drop(entries);
        self.changed(server);
        Some(failure)
    }

    /// One request to a running server, within its call timeout.
    pub(super) async fn ask<T, F>(
        &self,
        server: &str,
        what: &'static str,
        request: impl FnOnce(Peer<RoleClient>) -> F,
    ) -> Result<T, McpError>
    where
        F: std::future::Future<Output = Result<T, ServiceError>>,
    {
        let (peer, timeout) = {
            let entries = self.entries.lock().await;
            let (entry, peer) = running(&entries, server)?;
            (peer, Duration::from_secs(entry.config.call_timeout_secs))
        };
        let failed = |detail: String| McpError::Request {
            server: server.to_owned(),
            what,
            detail,
        };
        tokio::time::timeout(timeout, request(peer))
            .await
            .map_err(|_| failed(format!("no answer within {} s", timeout.as_secs())))?
            .map_err(|e| failed(e.to_string()))
    }

    /// The folders a server is offered as roots, for its `roots/list` questions inside a call.
    pub(super) async fn roots_of(&self, server: &str) -> Arc<RwLock<Vec<PathBuf>>> {
        match self.entries.lock().await.get(server) {
            Some(entry) => entry.roots.clone(),
            None => Arc::default(),
        }
    }

    /// Answers the questions of an `input_required` result (or of a task waiting for input):
    /// sampling and elicitation through the [`crate::ServerRequests`] handler, as a standalone
    /// request would be, and `roots/list` from the server's roots. All are asked at once; a
    /// refusal the handler reports as an error (a denied sampling request) fails the request,
    /// since the protocol has no way to send an error as an answer.
    pub(super) async fn fulfil(
        &self,
        server: &str,
        roots: &Arc<RwLock<Vec<PathBuf>>>,
        requests: InputRequests,
        cancel: &CancellationToken,
        asker: Option<&crate::Asker>,
    ) -> Result<InputResponses, String> {
        // A client that takes the round whole (a 2026-07-28 client) is asked everything.
        if let Some(rounds) = asker.and_then(|a| a.rounds.clone()) {
            return rounds
                .round(server, requests, cancel.child_token())
                .await
                .map_err(|e| e.to_string());
        }
        // The call's own asker where it answers that kind of question, else the handler.
        let handler = |question| match asker {
            Some(asker) if asker.answers(question) => asker.handler.clone(),
            _ => self.options.requests.clone(),
        };
        let answers = requests.into_iter().map(|(key, request)| {
            let cancel = cancel.child_token();
            let (sampling, form, url) = (
                handler(Question::Sampling),
                handler(Question::Form),
                handler(Question::Url),
            );
            async move {
                let answer = match request {
                    InputRequest::Elicitation(request) => {
                        let handler = match question_of(&request.params) {
                            Question::Url => url,
                            _ => form,
                        };
                        handler
                            .elicit(server, request.params, cancel)
                            .await
                            .map_err(|e| e.message.into_owned())
                            .and_then(|r| serde_json::to_value(r).map_err(|e| e.to_string()))
                    }
                    InputRequest::CreateMessage(request) => sampling
                        .create_message(server, request.params, cancel)
                        .await
                        .map_err(|e| e.message.into_owned())
                        .and_then(|r| serde_json::to_value(r).map_err(|e| e.to_string())),
                    InputRequest::ListRoots(_) => {
                        let roots = roots.read().unwrap_or_else(|p| p.into_inner()).clone();
                        serde_json::to_value(toolgate_mcp_client::client::roots_result(&roots))
                            .map_err(|e| e.to_string())
                    }
                    other => Err(format!(
                        "it asked for something Toolgate does not know: {}",
                        serde_json::to_string(&other).unwrap_or_default()
                    )),
                };
                answer.map(|value| (key, value))
            }
        });
        let answers = futures::future::try_join_all(answers).await?;
        Ok(answers.into_iter().collect())
    }

    /// Calls a tool with the server's default timeouts. The caller is responsible for having
    /// obtained the user's approval.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<ToolOutput, McpError> {
        self.call_tool_with(server, tool, arguments, CallOptions::default())
            .await
    }

    /// Calls a tool. The timeout is reset by each progress notification, up to the maximum; on
    /// timeout or cancellation the server is sent `notifications/cancelled`. If the server exits
    /// meanwhile, the call fails at once. The server's questions (`input_required`) are answered
    /// and the call sent again; a call the server runs as a task is polled to its end.
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<ToolOutput, McpError> {
        let (peer, timeout, max_timeout, roots, context, modern) = {
            let entries = self.entries.lock().await;
            let (entry, peer) = running(&entries, server)?;
            if entry.held.iter().any(|(t, _)| t.name == tool) {
                return Err(McpError::Held {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                });
            }
            if !entry.tools.iter().any(|t| t.name == tool) {
                return Err(McpError::UnknownTool {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                });
            }
            let timeout = options
                .timeout
                .unwrap_or(Duration::from_secs(entry.config.call_timeout_secs));
            let max = options
                .max_timeout
                .unwrap_or(Duration::from_secs(entry.config.max_call_timeout_secs))
                .max(timeout);
            let context = entry
                .config
                .tool_context
                .meta_for(options.conversation.as_deref());
            let modern = entry
                .protocol_version
                .as_deref()
                .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
            (peer, timeout, max, entry.roots.clone(), context, modern)
        };
        if options.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Err(McpError::Cancelled {
                tool: tool.to_owned(),
            });
        }
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => return Err(McpError::BadArguments(other.to_string())),
        };
        let call = Call {
            server,
            tool,
            peer,
            timeout,
            max_timeout,
            cancel: options.cancel.unwrap_or_default(),
            meta: call_meta(
                context,
                options.logs.filter(|_| modern),
                options
                    .asker
                    .as_ref()
                    .and_then(|a| a.capabilities.clone())
                    .filter(|_| modern),
            ),
            // Subscribed before the first request goes out, so no notification can be missed.
            progress: options
                .progress
                .map(|sink| Progress::start(self.events.subscribe(), server, sink)),
            roots,
            asker: options.asker.clone(),
        };
        // Known as running until it ends, so the server's questions can find their caller.
        let _flight = self.in_flight.enter(server, options.asker);
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let mut state_only = 0;
        for _ in 0..MAX_ROUNDS {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
            let asked = match self.round(&call, request).await? {
                ServerResult::CallToolResult(result) => return Ok(ToolOutput::new(result)),
                ServerResult::InputRequiredResult(asked) => asked,
                ServerResult::CreateTaskResult(created) => {
                    return self.follow_task(&call, created).await
                }
                other => {
                    return Err(call.failed(format!(
                        "it answered with something other than a tool result: {}",
                        serde_json::to_string(&other).unwrap_or_default()
                    )))
                }
            };
            let requests = asked.input_requests.unwrap_or_default();
            pace(requests.is_empty(), &mut state_only).await;
            // A stop also ends the questions' own waits (their tokens are children of the
            // call's), which may then answer "declined": the stop wins, and nothing is retried.
            let responses = tokio::select! {
                biased;
                () = call.cancel.cancelled() => return Err(call.cancelled()),
                answered = self.fulfil(server, &call.roots, requests, &call.cancel, call.asker.as_ref()) => answered
                    .map_err(|e| call.failed(format!("its question was not answered: {e}")))?,
            };
            if call.cancel.is_cancelled() {
                return Err(call.cancelled());
            }
            params.input_responses = (!responses.is_empty()).then_some(responses);
            // Echoed exactly as received: the state is the server's, opaque to us.
            params.request_state = asked.request_state;
        }
        Err(call.failed(format!(
            "it still needed more input after {MAX_ROUNDS} rounds of questions, so Toolgate stopped asking"
        )))
    }

    /// One request of a call: sent cancellable, within the call's timeouts, its progress
    /// watched; cancelled at the server if the caller stops waiting.
    pub(super) async fn round(
        &self,
        call: &Call<'_>,
        request: ClientRequest,
    ) -> Result<ServerResult, McpError> {
        let mut request_options = PeerRequestOptions::with_timeout(call.timeout)
            .reset_timeout_on_progress()
            .with_max_total_timeout(call.max_timeout);
        if let Some(meta) = &call.meta {
            request_options = request_options.with_meta(meta.clone());
        }
        let handle = match call
            .peer
            .send_cancellable_request(request, request_options)
            .await
        {
            Ok(handle) => handle,
            // A remote server that refuses the sign-in or wants more scopes says so here.
            Err(e) => {
                return Err(self
                    .refused_call(call.server, call.tool, &e)
                    .await
                    .unwrap_or_else(|| call.exited()))
            }
        };
        if let Some(progress) = &call.progress {
            progress.watch(handle.progress_token.0.to_string());
        }
        let mut guard = CancelOnDrop {
            peer: Some(call.peer.clone()),
            id: handle.id.clone(),
        };
        let response = tokio::select! {
            response = tokio::time::timeout(call.max_timeout + STUCK_GRACE, handle.await_response()) => {
                match response {
                    Ok(response) => response,
                    Err(_) => {
                        guard.send("timed out");
                        return Err(McpError::Timeout {
                            server: call.server.to_owned(),
                            tool: call.tool.to_owned(),
                            seconds: call.max_timeout.as_secs(),
                        });
                    }
                }
            }
            () = call.cancel.cancelled() => {
                guard.send("cancelled by the user");
                return Err(call.cancelled());
            }
            never = forwarding(&call.progress) => match never {},
        };
        guard.peer = None;
        match response {
            Ok(result) => Ok(result),
            Err(e @ ServiceError::TransportSend(_)) => Err(self
                .refused_call(call.server, call.tool, &e)
                .await
                .unwrap_or_else(|| call.exited())),
            Err(e) => Err(call.service_error(e)),
        }
    }
}

/// A call's `_meta`: the tool context, and what a 2026-07-28 server is told of the caller (the
/// log level it wants, the capabilities of the client that answers its questions).
fn call_meta(
    context: serde_json::Map<String, Value>,
    logs: Option<crate::LogLevel>,
    capabilities: Option<rmcp::model::ClientCapabilities>,
) -> Option<RequestMetaObject> {
    let mut meta = RequestMetaObject(rmcp::model::MetaObject(context));
    if let Some(level) = logs {
        meta.set_log_level(level.protocol());
    }
    if let Some(capabilities) = capabilities {
        meta.set_client_capabilities(capabilities);
    }
    (!meta.0 .0.is_empty()).then_some(meta)
}

/// A round that only echoes state (no questions) is the server polling through us: wait a
/// little, more each time, so such a server cannot make us spin.
pub(super) async fn pace(state_only: bool, rounds: &mut u32) {
    if state_only {
        let millis = (50u64 << (*rounds).min(3)).min(250);
        tokio::time::sleep(Duration::from_millis(millis)).await;
        *rounds += 1;
    } else {
        *rounds = 0;
    }
}

pub(super) fn unexpected(server: &str, what: &'static str) -> McpError {
    McpError::Request {
        server: server.to_owned(),
        what,
        detail: "it answered with a result of another kind".to_owned(),
    }
}

pub(super) fn too_many_rounds(server: &str, what: &'static str) -> McpError {
    McpError::Request {
        server: server.to_owned(),
        what,
        detail: format!(
            "it still needed more input after {MAX_ROUNDS} rounds of questions, so Toolgate stopped asking"
        ),
    }
}

/// Sends `notifications/cancelled` for a request whose caller went away before it finished (a
/// turn stopped, a window closed), so the server can stop working on it.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: rmcp::model::RequestId,
}

impl CancelOnDrop {
    fn send(&mut self, reason: &str) {
        let Some(peer) = self.peer.take() else { return };
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some(reason.to_owned()),
        ));
        tokio::spawn(async move {
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.peer.is_some() && tokio::runtime::Handle::try_current().is_ok() {
            self.send("the caller stopped waiting");
        }
    }
}
