//! Tool calls: timeouts reset by progress, cancellation that reaches the server, and errors that
//! say what happened.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::RoleClient;
use serde_json::Value;

use super::ServerManager;
use crate::types::{CallOptions, CallProgress, ServerEvent, ToolOutput};
use crate::McpError;

/// Time beyond a call's maximum after which we stop waiting even if the transport itself is stuck
/// (a server that stopped reading its stdin blocks the cancellation rmcp sends on timeout).
const STUCK_GRACE: Duration = Duration::from_secs(5);

/// A server's entry and its connection, or why it has none.
fn running<'a>(
    entries: &'a std::collections::BTreeMap<String, super::Entry>,
    server: &str,
) -> Result<(&'a super::Entry, Peer<RoleClient>), McpError> {
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
        let refusal = crate::http::auth_refusal(&*send.error)?;
        let mut entries = self.entries.lock().await;
        let entry = entries.get_mut(server)?;
        let failure = match refusal {
            crate::http::AuthRefusal::Scope(scope) => {
                entry.needs_scope = Some(scope.clone());
                McpError::MoreAccess {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    scope,
                }
            }
            crate::http::AuthRefusal::SignIn => {
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

    /// One request to a running server, within its call timeout; the result as JSON.
    async fn ask<T, F>(
        &self,
        server: &str,
        what: &'static str,
        request: impl FnOnce(Peer<RoleClient>) -> F,
    ) -> Result<Value, McpError>
    where
        T: serde::Serialize,
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
        let result = tokio::time::timeout(timeout, request(peer))
            .await
            .map_err(|_| failed(format!("no answer within {} s", timeout.as_secs())))?
            .map_err(|e| failed(e.to_string()))?;
        serde_json::to_value(result).map_err(|e| failed(e.to_string()))
    }

    /// Reads one of a server's resources, within the server's call timeout; the result as the
    /// server sent it (`contents`: text or base64 blobs).
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, McpError> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        self.ask(server, "read the resource", |peer| async move {
            peer.read_resource(params).await
        })
        .await
    }

    /// Gets one of a server's prompts filled with `arguments`, within the server's call timeout;
    /// the result as the server sent it (`description`, `messages`).
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
    ) -> Result<Value, McpError> {
        let mut params = rmcp::model::GetPromptRequestParams::new(name);
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        self.ask(server, "get the prompt", |peer| async move {
            peer.get_prompt(params).await
        })
        .await
    }

    /// Calls a tool. The timeout is reset by each progress notification, up to the maximum; on
    /// timeout or cancellation the server is sent `notifications/cancelled`. If the server exits
    /// meanwhile, the call fails at once.
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<ToolOutput, McpError> {
        let (peer, timeout, max_timeout) = {
            let entries = self.entries.lock().await;
            let (entry, peer) = running(&entries, server)?;
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
            (peer, timeout, max)
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
        let failed = |detail: String| McpError::Call {
            server: server.to_owned(),
            tool: tool.to_owned(),
            detail,
        };
        let exited = || McpError::ServerExited {
            server: server.to_owned(),
            tool: tool.to_owned(),
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
        ));
        let request_options = PeerRequestOptions::with_timeout(timeout)
            .reset_timeout_on_progress()
            .with_max_total_timeout(max_timeout);
        // Subscribed before the request goes out, so the first notification cannot be missed.
        // Progress is passed on in this call's own loop below, not by a task of its own: a
        // task per call cost more than the rest of the bookkeeping together.
        let mut events = options.progress.map(|sink| (self.events.subscribe(), sink));
        let handle = match peer
            .send_cancellable_request(request, request_options)
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                return Err(self
                    .refused_call(server, tool, &e)
                    .await
                    .unwrap_or_else(exited))
            }
        };
        let token = events
            .as_ref()
            .map(|_| handle.progress_token.0.to_string())
            .unwrap_or_default();
        let mut guard = CancelOnDrop {
            peer: Some(peer.clone()),
            id: handle.id.clone(),
        };
        let cancel = options.cancel.unwrap_or_default();
        let timed_out = || McpError::Timeout {
            server: server.to_owned(),
            tool: tool.to_owned(),
            seconds: max_timeout.as_secs(),
        };
        let waiting = tokio::time::timeout(max_timeout + STUCK_GRACE, handle.await_response());
        tokio::pin!(waiting);
        let response = loop {
            tokio::select! {
                response = &mut waiting => match response {
                    Ok(response) => break response,
                    Err(_) => {
                        guard.send("timed out");
                        return Err(timed_out());
                    }
                },
                () = cancel.cancelled() => {
                    guard.send("cancelled by the user");
                    return Err(McpError::Cancelled { tool: tool.to_owned() });
                }
                event = next_event(&mut events) => {
                    match event {
                        Ok(ServerEvent::Progress { server: s, token: t, progress, total, message })
                            if s == server && t == token =>
                        {
                            if let Some((_, sink)) = &events {
                                let _ = sink.send(CallProgress { progress, total, message });
                            }
                        }
                        Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => events = None,
                    }
                }
            }
        };
        guard.peer = None;
        let result = match response {
            Ok(ServerResult::CallToolResult(result)) => result,
            Ok(other) => {
                return Err(failed(format!(
                    "it answered with something other than a tool result: {}",
                    serde_json::to_string(&other).unwrap_or_default()
                )))
            }
            Err(ServiceError::Timeout { timeout }) => {
                return Err(McpError::Timeout {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    seconds: timeout.as_secs(),
                })
            }
            Err(e @ ServiceError::TransportSend(_)) => {
                return Err(self
                    .refused_call(server, tool, &e)
                    .await
                    .unwrap_or_else(exited))
            }
            Err(ServiceError::TransportClosed) => return Err(exited()),
            Err(ServiceError::McpError(error)) => return Err(failed(error.message.into_owned())),
            Err(other) => return Err(failed(other.to_string())),
        };
        let raw = serde_json::to_value(&result).map_err(|e| failed(e.to_string()))?;
        Ok(ToolOutput::from_result(raw))
    }
}

/// The next server event for a call that forwards progress; never, for one that does not.
async fn next_event(
    events: &mut Option<(
        tokio::sync::broadcast::Receiver<ServerEvent>,
        tokio::sync::mpsc::UnboundedSender<CallProgress>,
    )>,
) -> Result<ServerEvent, tokio::sync::broadcast::error::RecvError> {
    match events {
        Some((events, _)) => events.recv().await,
        None => std::future::pending().await,
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
