//! A client's `tools/call` (and `prompts/get`): through the host's gated agent
//! (`Agent::call_for_client`: the same rules, gate, audit and fingerprints as a chat call), with
//! what the server says meanwhile passed to the client: progress on the client's own token, log
//! messages at the level it set, and the server's questions (sampling, elicitation, roots) when
//! the client said it can answer them: as requests to a client of the older era
//! (`asker::ClientAsker`), as its call's `input_required` result to a 2026-07-28 client
//! (`asker::ClientRounds`, `rounds.rs`). A server's JSON-RPC error is passed on as it sent it.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, LoggingMessageNotificationParam,
    ProgressNotificationParam, ResultType,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_agent::{CallOutcome, TurnEvent, TurnOptions};
use toolgate_llm::ToolCall;
use toolgate_mcp::{LogLevel, McpError, ServerEvent};

use super::{Client, Session, MAX_CALLS_PER_CLIENT};
use crate::asker::{ClientAsker, ClientRounds};
use crate::rounds::{Finished, Running, Step, Target, ROUND_PREFIX};

fn refused_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The server's own JSON-RPC error, when it answered with one: passed on as it sent it.
fn server_error(error: &McpError) -> Option<ErrorData> {
    let McpError::Call {
        detail,
        code: Some(code),
        data,
        ..
    } = error
    else {
        return None;
    };
    let data = data.as_deref().and_then(|d| serde_json::from_str(d).ok());
    Some(ErrorData::new(ErrorCode(*code), detail.clone(), data))
}

/// Whether the request is of the 2026-07-28 era (its `_meta` names its version).
fn modern(context: &RequestContext<RoleServer>) -> bool {
    context.meta.protocol_version().is_some()
}

impl Session {
    /// The least severe log message this request's client wants during its call, or `None`
    /// for none: a 2026-07-28 request names it in its `_meta` (no level, no logs); an older
    /// session's `logging/setLevel` does, and without one it gets them all.
    fn wanted_logs(&self, context: &RequestContext<RoleServer>) -> Option<LogLevel> {
        if modern(context) {
            return context.meta.log_level().map(LogLevel::from);
        }
        let set = *self.log_level.lock().unwrap_or_else(|p| p.into_inner());
        Some(set.map_or(LogLevel::Debug, LogLevel::from))
    }

    /// Who answers the server's questions during this call: the client, as far as it said it
    /// can. A 2026-07-28 client takes them as rounds (and the server is told its capabilities,
    /// not Toolgate's); an older one as requests, and what it cannot answer goes to the gate.
    fn asker(
        &self,
        client: &Client,
        context: &RequestContext<RoleServer>,
        rounds: Option<ClientRounds>,
    ) -> Option<toolgate_mcp::Asker> {
        let capabilities = match &rounds {
            Some(_) => context.meta.client_capabilities().unwrap_or_default(),
            None => context.peer.peer_info()?.capabilities.clone(),
        };
        let elicitation = capabilities.elicitation.as_ref();
        let handler: Arc<dyn toolgate_mcp::ServerRequests> = match &rounds {
            Some(rounds) => Arc::new(rounds.clone()),
            None => Arc::new(ClientAsker::new(
                context.peer.clone(),
                context.id.clone(),
                client.name.clone(),
            )),
        };
        let asker = toolgate_mcp::Asker {
            handler,
            sampling: capabilities.sampling.is_some(),
            // An empty `elicitation: {}` means forms (the spec's default).
            forms: elicitation.is_some_and(|e| e.form.is_some() || e.url.is_none()),
            urls: elicitation.is_some_and(|e| e.url.is_some()),
            capabilities: rounds.is_some().then(|| capabilities.clone()),
            rounds: rounds.map(|r| Arc::new(r) as Arc<dyn toolgate_mcp::Rounds>),
        };
        let relays = asker.rounds.is_some() || asker.sampling || asker.forms || asker.urls;
        relays.then_some(asker)
    }

    /// Starts a call (`run` makes it) with the asker and the cancellation a call of this
    /// request's client gets; the waiting request polls it.
    fn start<F>(
        &self,
        client: &Client,
        context: &RequestContext<RoleServer>,
        run: impl FnOnce(Option<toolgate_mcp::Asker>, CancellationToken, Target) -> F,
    ) -> Running
    where
        F: std::future::Future<Output = Result<Finished, ErrorData>> + Send + 'static,
    {
        let (rounds, questions) = tokio::sync::mpsc::channel(1);
        let rounds = modern(context).then(|| ClientRounds::new(rounds, client.name.clone()));
        // Stopped by the client's `notifications/cancelled` (see `wait_for`), by its going
        // away, or by a round nobody resumed.
        let cancel = self.closed.child_token();
        let target = Target::of(context);
        let outcome = Box::pin(run(
            self.asker(client, context, rounds),
            cancel.clone(),
            target.clone(),
        ));
        Running {
            rounds: questions,
            outcome,
            cancel,
            target,
        }
    }

    pub(super) async fn call(
        &self,
        client: &Client,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let step = match request.request_state.as_deref() {
            Some(state) if state.starts_with(ROUND_PREFIX) => {
                let answers = request.input_responses.unwrap_or_default();
                self.resume(client, state, answers, &context).await?
            }
            _ => {
                let Ok(permit) = client.state.calls.clone().try_acquire_owned() else {
                    return Err(ErrorData::new(
                        ErrorCode(-32000),
                        format!(
                            "Toolgate is already handling {MAX_CALLS_PER_CLIENT} calls from this \
                             client; wait for some to finish"
                        ),
                        None,
                    ));
                };
                let call = ToolCall {
                    id: format!("gateway-{}", context.id),
                    name: request.name.to_string(),
                    arguments: Value::Object(request.arguments.unwrap_or_default()),
                };
                let logs = self.wanted_logs(&context);
                let session = self.clone();
                let agent_client = client.name.clone();
                let running =
                    self.start(client, &context, move |asker, cancel, target| async move {
                        let _permit = permit;
                        session
                            .run_tool(&agent_client, call, asker, cancel, target, logs)
                            .await
                    });
                self.wait_for(client, running, &context).await?
            }
        };
        match step {
            Step::Asked(asked) => Ok(CallToolResponse::InputRequired(asked)),
            Step::Done(Finished::Tool(mut result)) => {
                // A server of the older era sends no `resultType`; a 2026-07-28 client needs it
                // (rmcp takes it out again for older clients).
                result.result_type = Some(ResultType::COMPLETE);
                Ok(CallToolResponse::Complete(result))
            }
            Step::Done(Finished::Prompt(_)) => Err(ErrorData::invalid_params(
                "this request state belongs to a prompt, not a tool call",
                None,
            )),
        }
    }

    /// `prompts/get` of `server`'s prompt `own` (its own name), its questions asked of the
    /// client as a call's are.
    pub(super) async fn prompt(
        &self,
        client: &Client,
        (server, own): (String, String),
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arguments = request.arguments;
        let step = match request.request_state.as_deref() {
            Some(state) if state.starts_with(ROUND_PREFIX) => {
                let answers = request.input_responses.unwrap_or_default();
                self.resume(client, state, answers, &context).await?
            }
            _ => {
                // Through the gate, as a call is: decided, asked, audited, reviewed, scrubbed.
                let (session, name) = (self.clone(), client.name.clone());
                let approval_timeout = self.host.settings().policy.approval_timeout();
                let running = self.start(client, &context, move |asker, cancel, _| async move {
                    let options = TurnOptions {
                        cancel,
                        approval_timeout,
                        asker,
                        ..TurnOptions::default()
                    };
                    let agent = session.agent(&session.client_named(&name)).await;
                    let outcome = agent
                        .prompt_for_client(&server, &own, arguments.as_ref(), &options, &|_| {})
                        .await;
                    match outcome {
                        Ok(CallOutcome::Ran(Ok(output))) => Ok(Finished::Prompt(
                            toolgate_agent::resource::as_prompt(output),
                        )),
                        Ok(CallOutcome::Ran(Err(e))) => Err(server_error(&e)
                            .unwrap_or_else(|| ErrorData::internal_error(e.to_string(), None))),
                        Ok(CallOutcome::Refused(told)) => Err(ErrorData::new(
                            rmcp::model::ErrorCode::INVALID_REQUEST,
                            told,
                            None,
                        )),
                        Err(e) => Err(ErrorData::internal_error(
                            format!("Toolgate could not get this prompt: {e}"),
                            None,
                        )),
                    }
                });
                self.wait_for(client, running, &context).await?
            }
        };
        match step {
            Step::Asked(asked) => Ok(GetPromptResponse::InputRequired(asked)),
            Step::Done(Finished::Prompt(mut got)) => {
                got.result_type = Some(ResultType::COMPLETE);
                Ok(GetPromptResponse::Complete(got))
            }
            Step::Done(Finished::Tool(_)) => Err(ErrorData::invalid_params(
                "this request state belongs to a tool call, not a prompt",
                None,
            )),
        }
    }

    /// The call itself: through the gate, with progress and log messages passed to whichever
    /// request of the client waits for it.
    async fn run_tool(
        &self,
        client: &str,
        call: ToolCall,
        asker: Option<toolgate_mcp::Asker>,
        cancel: CancellationToken,
        target: Target,
        logs: Option<LogLevel>,
    ) -> Result<Finished, ErrorData> {
        let options = TurnOptions {
            cancel,
            // The user's own wait for an answer, as in chat.
            approval_timeout: self.host.settings().policy.approval_timeout(),
            asker,
            server_logs: logs,
            ..TurnOptions::default()
        };
        let agent = self.agent(&self.client_named(client)).await;
        let logs = self.pass_logs(client, &call.name, logs, target.clone());
        // Progress goes back in order, on the client's token, when it asked for progress.
        let (progress, mut updates) = tokio::sync::mpsc::unbounded_channel();
        let forward = tokio::spawn(async move {
            while let Some((done, total, message)) = updates.recv().await {
                let (peer, token) = target.now();
                let Some(token) = token else { continue };
                let mut param = ProgressNotificationParam::new(token, done);
                param.total = total;
                param.message = message;
                let _ = peer.notify_progress(param).await;
            }
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
        drop(on_event);
        let _ = forward.await;
        if let Some((finished, logs)) = logs {
            // What the server logged before it answered is passed on before the answer.
            let _ = finished.send(());
            let _ = logs.await;
        }
        Ok(Finished::Tool(match outcome {
            // What the server sent, passed on as it is.
            Ok(CallOutcome::Ran(Ok(output))) => output.result,
            Ok(CallOutcome::Ran(Err(e))) => match server_error(&e) {
                Some(error) => return Err(error),
                None => refused_result(e.to_string()),
            },
            Ok(CallOutcome::Refused(told)) => refused_result(told),
            Err(e) => refused_result(format!("Toolgate could not run this call: {e}")),
        }))
    }

    /// Passes the log messages of the server that `tool` (as `client` sees it) belongs to, to
    /// the waiting request's client while its call runs, at the level it wants; nothing when it
    /// wants none. Sending on the returned channel ends it, once what arrived so far is passed
    /// on. The server is found beside the call, so the call does not wait for it.
    fn pass_logs(
        &self,
        client: &str,
        tool: &str,
        least: Option<LogLevel>,
        target: Target,
    ) -> Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )> {
        use tokio::sync::broadcast::error::{RecvError, TryRecvError};
        let least = least?;
        let mut events = self.host.servers().events();
        let (finished, mut finish) = tokio::sync::oneshot::channel::<()>();
        let (session, client, tool) = (self.clone(), self.client_named(client), tool.to_owned());
        let task = tokio::spawn(async move {
            // None when the name is unknown (the agent then refuses the call).
            let catalog = session.agent(&client).await.catalog_for_client().await;
            let Some(server) = catalog.ok().and_then(|c| {
                c.entries()
                    .iter()
                    .find(|e| e.model_name == tool)
                    .map(|e| e.server_id.clone())
            }) else {
                return;
            };
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
                let (peer, _) = target.now();
                let _ = peer.notify_logging_message(param).await;
            }
        });
        Some((finished, task))
    }
}
