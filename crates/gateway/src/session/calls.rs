//! A client's `tools/call`: through the host's gated agent (`Agent::call_for_client`: the same
//! rules, gate, audit and fingerprints as a chat call), with what the server says meanwhile
//! passed to the client: progress on the client's own token, log messages at the level it set,
//! and the server's questions (sampling, elicitation) when the client said it can answer them.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ResultType,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_agent::{CallOutcome, TurnEvent, TurnOptions};
use toolgate_llm::ToolCall;
use toolgate_mcp::{LogLevel, ServerEvent};

use super::{Client, Session, MAX_CALLS_PER_CLIENT};
use crate::asker::ClientAsker;

fn refused_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A level as Toolgate's log names it.
fn ours(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

impl Session {
    /// The least severe log message this request's client wants during its call, or `None`
    /// for none: a 2026-07-28 request names it in its `_meta` (no level, no logs); an older
    /// session's `logging/setLevel` does, and without one it gets them all.
    fn wanted_logs(&self, context: &RequestContext<RoleServer>) -> Option<LogLevel> {
        if context.meta.protocol_version().is_some() {
            return context.meta.log_level().map(ours);
        }
        let set = *self.log_level.lock().unwrap_or_else(|p| p.into_inner());
        Some(set.map_or(LogLevel::Debug, ours))
    }

    /// Who answers the server's questions during this call: the client, when it speaks the
    /// older era on a session of its own (2026-07-28 forbids a server's requests; those
    /// questions go to the gate) and said it can answer them.
    fn asker(
        &self,
        client: &Client,
        context: &RequestContext<RoleServer>,
    ) -> Option<toolgate_mcp::Asker> {
        if context.meta.protocol_version().is_some() {
            return None;
        }
        let capabilities = context.peer.peer_info()?.capabilities.clone();
        let elicitation = capabilities.elicitation.as_ref();
        let asker = toolgate_mcp::Asker {
            handler: Arc::new(ClientAsker::new(
                context.peer.clone(),
                context.id.clone(),
                client.name.clone(),
            )),
            sampling: capabilities.sampling.is_some(),
            // An empty `elicitation: {}` means forms (the spec's default).
            forms: elicitation.is_some_and(|e| e.form.is_some() || e.url.is_none()),
            urls: elicitation.is_some_and(|e| e.url.is_some()),
        };
        (asker.sampling || asker.forms || asker.urls).then_some(asker)
    }

    pub(super) async fn call(
        &self,
        client: &Client,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Ok(_permit) = client.state.calls.clone().try_acquire_owned() else {
            return Err(ErrorData::new(
                ErrorCode(-32000),
                format!(
                    "Toolgate is already handling {MAX_CALLS_PER_CLIENT} calls from this client; \
                     wait for some to finish"
                ),
                None,
            ));
        };
        let call = ToolCall {
            id: format!("gateway-{}", context.id),
            name: request.name.to_string(),
            arguments: Value::Object(request.arguments.unwrap_or_default()),
        };
        // Stopped by the client's `notifications/cancelled` or by its going away.
        let cancel = CancellationToken::new();
        let stop = {
            let (cancel, asked, closed) = (cancel.clone(), context.ct.clone(), self.closed.clone());
            tokio::spawn(async move {
                tokio::select! {
                    () = asked.cancelled() => {}
                    () = closed.cancelled() => {}
                }
                cancel.cancel();
            })
        };
        let options = TurnOptions {
            cancel,
            // The user's own wait for an answer, as in chat.
            approval_timeout: self.host.settings().policy.approval_timeout(),
            asker: self.asker(client, &context),
            server_logs: self.wanted_logs(&context),
            ..TurnOptions::default()
        };
        let agent = self.agent(client).await;
        // The server the call goes to, for its log messages; none when the name is unknown
        // (the agent then refuses the call).
        let server = agent.catalog_for_client().await.ok().and_then(|c| {
            c.entries()
                .iter()
                .find(|e| e.model_name == call.name)
                .map(|e| e.server_id.clone())
        });
        let logs = self.pass_logs(server, &context);
        // Progress goes back in order, on the client's token, when it asked for progress.
        let (progress, mut updates) = tokio::sync::mpsc::unbounded_channel();
        let forward = context.meta.get_progress_token().map(|token| {
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some((done, total, message)) = updates.recv().await {
                    let mut param = ProgressNotificationParam::new(token.clone(), done);
                    param.total = total;
                    param.message = message;
                    if peer.notify_progress(param).await.is_err() {
                        return;
                    }
                }
            })
        });
        let on_event = move |event: TurnEvent| {
            if let TurnEvent::ToolProgress {
                progress: done,
                total,
                message,
                ..
            } = event
            {
                let _ = progress.send((done, total, message));
            }
        };
        let outcome = agent.call_for_client(&call, &options, &on_event).await;
        stop.abort();
        drop(on_event);
        if let Some(forward) = forward {
            let _ = forward.await;
        }
        if let Some((finished, logs)) = logs {
            // What the server logged before it answered is passed on before the answer.
            let _ = finished.send(());
            let _ = logs.await;
        }
        let mut result = match outcome {
            // What the server sent, passed on as it is.
            Ok(CallOutcome::Ran(Ok(output))) => output.result,
            Ok(CallOutcome::Ran(Err(e))) => refused_result(e.to_string()),
            Ok(CallOutcome::Refused(told)) => refused_result(told),
            Err(e) => refused_result(format!("Toolgate could not run this call: {e}")),
        };
        // A server of the older era sends no `resultType`; a 2026-07-28 client needs it (rmcp
        // takes it out again for older clients).
        result.result_type = Some(ResultType::COMPLETE);
        Ok(CallToolResponse::Complete(result))
    }

    /// Passes `server`'s log messages to the client while its call runs, at the level the
    /// client wants; nothing when it wants none. Sending on the returned channel ends it, once
    /// what arrived so far is passed on.
    fn pass_logs(
        &self,
        server: Option<String>,
        context: &RequestContext<RoleServer>,
    ) -> Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )> {
        use tokio::sync::broadcast::error::{RecvError, TryRecvError};
        let (server, least) = (server?, self.wanted_logs(context)?);
        let mut events = self.host.servers.events();
        let peer = context.peer.clone();
        let (finished, mut finish) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut ending = false;
            loop {
                let event = if ending {
                    match events.try_recv() {
                        Ok(event) => event,
                        Err(TryRecvError::Lagged(_)) => continue,
                        Err(_) => return,
                    }
                } else {
                    tokio::select! {
                        _ = &mut finish => { ending = true; continue }
                        event = events.recv() => match event {
                            Ok(event) => event,
                            Err(RecvError::Lagged(_)) => continue,
                            Err(RecvError::Closed) => return,
                        },
                    }
                };
                let ServerEvent::Log {
                    server: from,
                    level,
                    logger,
                    data,
                } = event
                else {
                    continue;
                };
                if from != server || level < least {
                    continue;
                }
                let mut param = LoggingMessageNotificationParam::new(level.protocol(), data);
                param.logger = logger;
                if peer.notify_logging_message(param).await.is_err() {
                    return;
                }
            }
        });
        Some((finished, task))
    }
}
