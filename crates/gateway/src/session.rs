//! One connected client: what it sees (its profile's catalog, resources and prompts) and how
//! its calls pass the gate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeResult, ListPromptsResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    Prompt, ReadResourceRequestParams, ReadResourceResponse, Resource, ResultType,
    ServerCapabilities, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use toolgate_agent::{Agent, CallOutcome, TurnEvent, TurnOptions};
use toolgate_host::{Caller, Connection, Host};
use toolgate_llm::ToolCall;
use toolgate_mcp::{ServerSnapshot, ServerStatus};

/// Calls one client may have running or waiting at once; past it, a call is refused at once
/// with an error saying so, rather than queued without end.
pub const MAX_CALLS_PER_CLIENT: usize = 64;

/// What Toolgate tells a connecting client about itself.
const INSTRUCTIONS: &str = "Toolgate: the user's MCP servers behind one approval gate. Every \
tool call is decided by the user's rules or asked of the user; a denied call comes back as an \
error result that says why. Do not retry a denied call.";

/// The name a client is known by when it gives none.
const UNNAMED: &str = "a connected client";

#[derive(Clone)]
pub(crate) struct Session {
    host: Arc<Host>,
    /// `toolgate connect --profile NAME`; otherwise the client's own name picks the profile.
    profile: Option<String>,
    /// Cancelled when the client's connection ends: its running calls stop at their servers.
    closed: CancellationToken,
    calls: Arc<Semaphore>,
    /// Whether list changes are already followed for an older-era client.
    watching: Arc<AtomicBool>,
    /// This client's connection: for a connected client, the connection is the conversation
    /// (what it has read is kept across its calls; see `toolgate_agent::Exposure`).
    connection: Arc<Connection>,
    /// Whether this client's first lists have waited for the servers that were starting.
    settled: Arc<AtomicBool>,
    /// Whether the log already says what the first lists wait for.
    said_waiting: Arc<AtomicBool>,
}

/// Where list changes go: an older-era session's peer, or a 2026-07-28 `subscriptions/listen`
/// stream (which rmcp filters to what the client asked for).
enum Listener {
    Session(rmcp::Peer<RoleServer>),
    Subscription(rmcp::service::SubscriptionSink),
}

#[derive(Clone, Copy)]
enum ListKind {
    Tools,
    Resources,
    Prompts,
}

impl Listener {
    /// Tells the client; false once it cannot be told any more.
    async fn changed(&self, kind: ListKind) -> bool {
        match (self, kind) {
            (Listener::Session(peer), ListKind::Tools) => {
                peer.notify_tool_list_changed().await.is_ok()
            }
            (Listener::Session(peer), ListKind::Resources) => {
                peer.notify_resource_list_changed().await.is_ok()
            }
            (Listener::Session(peer), ListKind::Prompts) => {
                peer.notify_prompt_list_changed().await.is_ok()
            }
            (Listener::Subscription(sink), kind) => {
                let sent = match kind {
                    ListKind::Tools => sink.notify_tool_list_changed().await,
                    ListKind::Resources => sink.notify_resource_list_changed().await,
                    ListKind::Prompts => sink.notify_prompt_list_changed().await,
                };
                // A kind the client did not ask for is not sent, and is no reason to stop.
                matches!(
                    sent,
                    Ok(()) | Err(rmcp::service::SubscriptionSendError::NotificationNotAccepted(_))
                )
            }
        }
    }
}

fn refused_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl Session {
    pub(crate) fn new(host: Arc<Host>, profile: Option<String>, closed: CancellationToken) -> Self {
        Self {
            host,
            profile,
            closed,
            calls: Arc::new(Semaphore::new(MAX_CALLS_PER_CLIENT)),
            watching: Arc::new(AtomicBool::new(false)),
            connection: Arc::new(Connection::default()),
            settled: Arc::new(AtomicBool::new(false)),
            said_waiting: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The servers this client's profile shows that are enabled and still on their way up
    /// (not started yet, or starting), by name. A server that is ready, failed, retrying after
    /// a failure or waiting for a sign-in is settled: waiting would not bring its tools.
    async fn starting(&self, client: &str) -> Vec<String> {
        let only = self.host.client_view(client).servers;
        let snapshot = self.host.servers.snapshot().await;
        self.host
            .settings()
            .servers
            .iter()
            .filter(|s| s.enabled && only.as_ref().is_none_or(|o| o.contains(&s.id)))
            .filter(|s| {
                snapshot
                    .iter()
                    .find(|snap| snap.id == s.id)
                    .is_none_or(|snap| {
                        matches!(snap.status, ServerStatus::Starting | ServerStatus::Stopped)
                    })
            })
            .map(|s| s.name.clone())
            .collect()
    }

    /// Before a client's first list is answered: waits until the servers its profile shows
    /// that are starting are ready or have failed, at most the gateway's first-list wait. A
    /// host that lists once (many do) would otherwise keep a short list; later changes reach it
    /// as `list_changed`. Says in the log which servers it waited for.
    async fn first_lists_settled(&self, client: &str) {
        if self.settled.load(Ordering::SeqCst) {
            return;
        }
        let wait = self.host.settings().gateway.first_list_wait();
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = self.host.servers.subscribe();
        let mut told = false;
        loop {
            let starting = self.starting(client).await;
            if starting.is_empty() {
                if told && !self.settled.swap(true, Ordering::SeqCst) {
                    tracing::info!(%client, "the servers it waited for are settled; answering its list");
                }
                break;
            }
            // Tools, resources and prompts are often asked for at once: one line says it.
            if !told && !self.said_waiting.swap(true, Ordering::SeqCst) {
                tracing::info!(%client, servers = %starting.join(", "), wait_secs = wait.as_secs(), "a client's first list waits for servers that are starting");
            }
            told = true;
            tokio::select! {
                () = self.closed.cancelled() => return,
                () = tokio::time::sleep_until(deadline) => {
                    tracing::warn!(%client, servers = %starting.join(", "), "still starting after the first-list wait; answering without them (they follow as list_changed)");
                    break;
                }
                changed = changes.changed() => if changed.is_err() { break },
            }
        }
        self.settled.store(true, Ordering::SeqCst);
    }

    /// Who asks, as the gate's card, the audit log and client-limited rules name it: the profile
    /// chosen with `--profile`, else the client's `clientInfo.name`.
    fn client_name(&self, info: Option<Implementation>) -> String {
        self.profile
            .clone()
            .or_else(|| info.map(|i| i.name))
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| UNNAMED.to_owned())
    }

    /// The gated agent for this client's calls on this connection.
    async fn agent(&self, client: &str) -> Agent {
        self.host
            .agent(Caller::Client {
                name: client,
                connection: &self.connection,
            })
            .await
    }

    /// The ready servers this client's profile shows.
    async fn servers(&self, client: &str) -> Vec<ServerSnapshot> {
        let only = self.host.client_view(client).servers;
        let mut servers = self.host.servers.snapshot().await;
        servers.retain(|s| {
            s.enabled
                && s.status == ServerStatus::Ready
                && only.as_ref().is_none_or(|o| o.contains(&s.id))
        });
        servers
    }

    async fn tools(&self, client: &str) -> Result<Vec<Tool>, ErrorData> {
        let catalog = self
            .agent(client)
            .await
            .catalog_for_client()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        catalog
            .entries()
            .iter()
            .map(|entry| {
                let mut tool = serde_json::to_value(&*entry.tool)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                tool["name"] = Value::String(entry.model_name.clone());
                serde_json::from_value(tool).map_err(|e| {
                    ErrorData::internal_error(
                        format!(
                            "{} lists a tool Toolgate cannot pass on: {e}",
                            entry.server_name
                        ),
                        None,
                    )
                })
            })
            .collect()
    }

    /// Prompts by the name this client sees: the server's own, or `server__name` where two
    /// servers use the same one.
    async fn prompts(&self, client: &str) -> Vec<(String, String, toolgate_mcp::PromptInfo)> {
        let servers = self.servers(client).await;
        let mut count = std::collections::HashMap::<String, usize>::new();
        for p in servers.iter().flat_map(|s| &s.prompts) {
            *count.entry(p.name.clone()).or_default() += 1;
        }
        servers
            .iter()
            .flat_map(|s| s.prompts.iter().map(move |p| (s.id.clone(), p.clone())))
            .map(|(server, p)| {
                let shown = if count.get(&p.name).copied().unwrap_or(0) > 1 {
                    format!("{server}__{}", p.name)
                } else {
                    p.name.clone()
                };
                (shown, server, p)
            })
            .collect()
    }

    /// What this client sees of the lists, to tell when one changed.
    async fn lists(&self, client: &str) -> (String, Vec<String>, Vec<String>) {
        let servers = self.servers(client).await;
        let tools = self.tools(client).await.unwrap_or_default();
        (
            serde_json::to_string(&tools).unwrap_or_default(),
            servers
                .iter()
                .flat_map(|s| s.resources.iter().map(|r| r.uri.clone()))
                .collect(),
            servers
                .iter()
                .flat_map(|s| s.prompts.iter().map(|p| p.name.clone()))
                .collect(),
        )
    }

    /// Tells the client whenever its tools, resources or prompts change, until the connection
    /// ends or the client can no longer be told.
    async fn follow_lists(&self, client: &str, to: Listener) {
        let mut changes = self.host.servers.subscribe();
        let mut seen = self.lists(client).await;
        loop {
            tokio::select! {
                () = self.closed.cancelled() => return,
                changed = changes.changed() => if changed.is_err() { return },
            }
            let now = self.lists(client).await;
            for (differs, kind) in [
                (now.0 != seen.0, ListKind::Tools),
                (now.1 != seen.1, ListKind::Resources),
                (now.2 != seen.2, ListKind::Prompts),
            ] {
                if differs && !to.changed(kind).await {
                    return;
                }
            }
            seen = now;
        }
    }
}

impl ServerHandler for Session {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let client = self.client_name(context.peer.peer_info().map(|i| i.client_info.clone()));
        tracing::info!(%client, "a client connected to the gateway");
        // An older-era session is told of list changes on its own; a 2026-07-28 client asks
        // with `subscriptions/listen` (below).
        if !self.watching.swap(true, Ordering::SeqCst) {
            let (session, peer) = (self.clone(), context.peer.clone());
            tokio::spawn(async move {
                session.follow_lists(&client, Listener::Session(peer)).await;
            });
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // List changes, as asked; no per-resource updates (the servers' are not passed on yet).
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let client = self.client_name(context.request_context().client_info());
        tokio::select! {
            () = self.follow_lists(&client, Listener::Subscription(context.sink().clone())) => {}
            () = context.cancelled() => {}
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let client = self.client_name(context.client_info());
        self.first_lists_settled(&client).await;
        Ok(ListToolsResult::with_all_items(self.tools(&client).await?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Ok(_permit) = self.calls.clone().try_acquire_owned() else {
            return Err(ErrorData::new(
                ErrorCode(-32000),
                format!(
                    "Toolgate is already handling {MAX_CALLS_PER_CLIENT} calls from this client; \
                     wait for some to finish"
                ),
                None,
            ));
        };
        let client = self.client_name(context.client_info());
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
            ..TurnOptions::default()
        };
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
        let outcome = self
            .agent(&client)
            .await
            .call_for_client(&call, &options, &on_event)
            .await;
        stop.abort();
        drop(on_event);
        if let Some(forward) = forward {
            let _ = forward.await;
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

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let client = self.client_name(context.client_info());
        self.first_lists_settled(&client).await;
        let resources = self
            .servers(&client)
            .await
            .iter()
            .flat_map(|s| &s.resources)
            .filter_map(|r| {
                serde_json::from_value::<Resource>(json!({
                    "uri": r.uri,
                    "name": r.name,
                    "description": r.description,
                    "mimeType": r.mime_type,
                }))
                .ok()
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let client = self.client_name(context.client_info());
        let owner = self
            .servers(&client)
            .await
            .into_iter()
            .find(|s| s.resources.iter().any(|r| r.uri == request.uri))
            .ok_or_else(|| {
                ErrorData::new(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("no server you can see lists the resource {}", request.uri),
                    None,
                )
            })?;
        let mut read = self
            .host
            .servers
            .read_resource(&owner.id, &request.uri)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        read.result_type = Some(ResultType::COMPLETE);
        Ok(ReadResourceResponse::Complete(read))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let client = self.client_name(context.client_info());
        self.first_lists_settled(&client).await;
        let prompts = self
            .prompts(&client)
            .await
            .into_iter()
            .filter_map(|(shown, _, p)| {
                let arguments: Vec<Value> = p
                    .argument_info
                    .iter()
                    .map(|a| json!({ "name": a.name, "description": a.description, "required": a.required }))
                    .collect();
                serde_json::from_value::<Prompt>(json!({
                    "name": shown,
                    "description": p.description,
                    "arguments": arguments,
                }))
                .ok()
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let client = self.client_name(context.client_info());
        let (_, server, prompt) = self
            .prompts(&client)
            .await
            .into_iter()
            .find(|(shown, _, _)| *shown == request.name)
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("there is no prompt {}", request.name), None)
            })?;
        let mut got = self
            .host
            .servers
            .get_prompt(&server, &prompt.name, request.arguments)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        got.result_type = Some(ResultType::COMPLETE);
        Ok(GetPromptResponse::Complete(got))
    }
}
