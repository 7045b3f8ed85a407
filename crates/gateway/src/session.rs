//! One connected client: what it sees (its profile's catalog, resources and prompts) and how
//! its calls pass the gate. The same [`Session`] serves the socket's clients and the HTTP door's;
//! they differ only in how the client is known ([`Who`]).
//!
//! - `lists.rs`: the lists the client sees (tools, resources and their templates, prompts), the
//!   wait before its first list, and telling it when they change;
//! - `calls.rs`: a `tools/call` (and `prompts/get`), through the host's gated agent, with the
//!   server's progress, logs and questions passed to the client;
//! - `waiting.rs`: a call waited for by its request, and resumed by the client's next one after
//!   a round of questions (see `crate::rounds`).
#![allow(deprecated)]

mod calls;
mod completion;
mod lists;
mod waiting;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, ErrorCode,
    Extensions, GetPromptRequestParams, GetPromptResponse, Implementation, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingLevel, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    Reference, ResultType, ServerCapabilities, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use toolgate_agent::Agent;
use toolgate_host::{Caller, Connection, Host};

/// Calls one client may have running or waiting at once; past it, a call is refused at once
/// with an error saying so, rather than queued without end.
pub const MAX_CALLS_PER_CLIENT: usize = 64;

/// What Toolgate tells a connecting client about itself.
const INSTRUCTIONS: &str = "Toolgate: the user's MCP servers behind one approval gate. Every \
tool call is decided by the user's rules or asked of the user; a denied call comes back as an \
error result that says why. Do not retry a denied call.";

/// The name a client is known by when it gives none.
const UNNAMED: &str = "a connected client";

/// What is kept for one client across its calls.
pub(crate) struct ClientState {
    /// For a connected client, the connection is the conversation: what it has read is kept
    /// across its calls (see `toolgate_agent::Exposure`).
    connection: Connection,
    calls: Arc<Semaphore>,
    /// Calls waiting for this client's answers to their server's questions.
    waiting: crate::rounds::Waiting,
}

impl Default for ClientState {
    fn default() -> Self {
        Self {
            connection: Connection::default(),
            calls: Arc::new(Semaphore::new(MAX_CALLS_PER_CLIENT)),
            waiting: Default::default(),
        }
    }
}

/// The HTTP door's clients, by their token's name. Each is one conversation for as long as
/// the door is open, whichever of its sessions (or, at 2026-07-28, requests) a call comes in:
/// what any of them read counts for all, which can only make the gate ask more.
#[derive(Default)]
pub(crate) struct DoorClients(Mutex<HashMap<String, Arc<ClientState>>>);

impl DoorClients {
    fn get(&self, name: &str) -> Arc<ClientState> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(name.to_owned())
            .or_default()
            .clone()
    }
}

/// The name the door's guard found for a request's token, put in the request's extensions.
#[derive(Debug, Clone)]
pub(crate) struct DoorCaller(pub String);

/// How a session's client is known.
#[derive(Clone)]
pub(crate) enum Who {
    /// A client on the socket: the profile its shim named (`toolgate connect --profile NAME`),
    /// else its own `clientInfo.name`; one connection.
    Socket {
        profile: Option<String>,
        state: Arc<ClientState>,
    },
    /// A client of the HTTP door: named by the token on each request, which picks its profile
    /// as `--profile` does. A session stays with the token that opened it.
    Door {
        clients: Arc<DoorClients>,
        bound: Arc<OnceLock<String>>,
    },
}

/// The client behind one request.
pub(crate) struct Client {
    /// As the gate's card, the audit log, client-limited rules and profiles name it.
    pub name: String,
    pub state: Arc<ClientState>,
}

#[derive(Clone)]
pub(crate) struct Session {
    host: Arc<Host>,
    who: Who,
    /// Cancelled when the client's connection ends (or the door closes): its running calls
    /// stop at their servers.
    closed: CancellationToken,
    /// Whether list changes are already followed for an older-era client.
    watching: Arc<AtomicBool>,
    /// Whether this client's first lists have waited for the servers that were starting.
    settled: Arc<AtomicBool>,
    /// Whether the log already says what the first lists wait for.
    said_waiting: Arc<AtomicBool>,
    /// `logging/setLevel`: the least severe of the servers' log messages passed on during this
    /// client's calls; `None`: all of them.
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
    /// The resources this client subscribed to, as (server, URI).
    subscribed: Arc<Mutex<BTreeSet<(String, String)>>>,
}

impl Session {
    /// A client of the socket.
    pub(crate) fn new(host: Arc<Host>, profile: Option<String>, closed: CancellationToken) -> Self {
        let who = Who::Socket {
            profile,
            state: Arc::default(),
        };
        Self::with(host, who, closed)
    }

    /// A session (or, at 2026-07-28, a request) of the HTTP door.
    pub(crate) fn for_door(
        host: Arc<Host>,
        clients: Arc<DoorClients>,
        closed: CancellationToken,
    ) -> Self {
        let who = Who::Door {
            clients,
            bound: Arc::default(),
        };
        Self::with(host, who, closed)
    }

    fn with(host: Arc<Host>, who: Who, closed: CancellationToken) -> Self {
        Self {
            host,
            who,
            closed,
            watching: Arc::default(),
            settled: Arc::default(),
            said_waiting: Arc::default(),
            log_level: Arc::default(),
            subscribed: Arc::default(),
        }
    }

    /// Who asks: for the socket, the profile chosen with `--profile`, else the client's
    /// `clientInfo.name`; for the door, its token's name.
    pub(crate) fn client(
        &self,
        extensions: &Extensions,
        info: Option<Implementation>,
    ) -> Result<Client, ErrorData> {
        match &self.who {
            Who::Socket { profile, state } => Ok(Client {
                name: profile
                    .clone()
                    .or_else(|| info.map(|i| i.name))
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| UNNAMED.to_owned()),
                state: state.clone(),
            }),
            Who::Door { clients, bound } => {
                let name = extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.extensions.get::<DoorCaller>())
                    .map(|caller| caller.0.clone())
                    .ok_or_else(|| {
                        ErrorData::internal_error(
                            "Toolgate's HTTP door lost the name of this request's token",
                            None,
                        )
                    })?;
                let owner = bound.get_or_init(|| name.clone());
                if *owner != name {
                    return Err(ErrorData::invalid_request(
                        "this session was opened with another client's token: open a session of \
                         your own (send `initialize` without an Mcp-Session-Id)",
                        None,
                    ));
                }
                Ok(Client {
                    state: clients.get(&name),
                    name,
                })
            }
        }
    }

    /// The client of a request.
    fn client_of(&self, context: &RequestContext<RoleServer>) -> Result<Client, ErrorData> {
        self.client(&context.extensions, context.client_info())
    }

    /// The gated agent for this client's calls.
    async fn agent(&self, client: &Client) -> Agent {
        self.host
            .agent(Caller::Client {
                name: &client.name,
                connection: &client.state.connection,
            })
            .await
    }
}

/// A resource no server the client sees has: invalid parameters naming the URI (SEP-2164).
fn not_found(uri: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_PARAMS,
        format!("no server you can see has the resource {uri}"),
        Some(serde_json::json!({ "uri": uri })),
    )
}

fn failed(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

impl ServerHandler for Session {
    fn get_info(&self) -> InitializeResult {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .build();
        // The servers' log messages during a client's calls are passed on, at the level it set.
        capabilities.logging = Some(Default::default());
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let Ok(client) = self.client(
            &context.extensions,
            context.peer.peer_info().map(|i| i.client_info.clone()),
        ) else {
            return;
        };
        tracing::info!(client = %client.name, "a client connected to the gateway");
        // An older-era session is told of list changes on its own; a 2026-07-28 client asks
        // with `subscriptions/listen` (below).
        if !self.watching.swap(true, Ordering::SeqCst) {
            let (session, peer) = (self.clone(), context.peer.clone());
            tokio::spawn(async move {
                session.follow_session(&client.name, peer).await;
                session.unsubscribe_all().await;
            });
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // All of it, as asked: a resource no server of this client has, or whose server sends
        // no updates, is watched and never fires (as a server itself does with an unknown URI).
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let client = self.client_of(context.request_context())?;
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let watched = self.watch(&client.name, &uris).await;
        tokio::select! {
            () = self.follow_subscription(&client.name, context.sink().clone(), &watched) => {}
            () = context.cancelled() => {}
        }
        for (server, uri) in watched {
            let _ = self
                .host
                .servers()
                .unsubscribe_resource(&server, &uri)
                .await;
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let client = self.client_of(&context)?;
        self.first_lists_settled(&client.name).await;
        Ok(ListToolsResult::with_all_items(
            self.tools(&client.name).await?,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let client = self.client_of(&context)?;
        self.call(&client, request, context).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let client = self.client_of(&context)?;
        self.first_lists_settled(&client.name).await;
        Ok(ListResourcesResult::with_all_items(
            self.resources(&client.name).await,
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let client = self.client_of(&context)?;
        self.first_lists_settled(&client.name).await;
        Ok(ListResourceTemplatesResult::with_all_items(
            self.templates(&client.name).await,
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let client = self.client_of(&context)?;
        let owner = self.owner_of(&client.name, &request.uri).await?;
        // Through the gate, as a call is: decided, asked, audited, reviewed, scrubbed.
        let options = toolgate_agent::TurnOptions {
            cancel: context.ct.clone(),
            approval_timeout: self.host.settings().policy.approval_timeout(),
            ..toolgate_agent::TurnOptions::default()
        };
        let outcome = self
            .agent(&client)
            .await
            .read_for_client(&owner, &request.uri, &options, &|_| {})
            .await;
        let uri = serde_json::json!({ "uri": request.uri });
        let mut read = match outcome {
            Ok(toolgate_agent::CallOutcome::Ran(Ok(output))) => {
                toolgate_agent::resource::as_read(output, &request.uri)
            }
            // The server's own words, when it refused: "not found" is not Toolgate's fault.
            Ok(toolgate_agent::CallOutcome::Ran(Err(e))) => {
                return Err(ErrorData::new(
                    ErrorCode::INVALID_PARAMS,
                    e.to_string(),
                    Some(uri),
                ))
            }
            Ok(toolgate_agent::CallOutcome::Refused(told)) => {
                return Err(ErrorData::new(ErrorCode::INVALID_REQUEST, told, Some(uri)))
            }
            Err(e) => {
                return Err(ErrorData::internal_error(
                    format!("Toolgate could not read this resource: {e}"),
                    Some(uri),
                ))
            }
        };
        read.result_type = Some(ResultType::COMPLETE);
        Ok(ReadResourceResponse::Complete(read))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let client = self.client_of(&context)?;
        let owner = self.owner_of(&client.name, &request.uri).await?;
        if !self.host.servers().offers_subscriptions(&owner).await {
            return Err(ErrorData::invalid_params(
                format!(
                    "the server that has {} does not send updates of its resources",
                    request.uri
                ),
                None,
            ));
        }
        let key = (owner.clone(), request.uri.clone());
        if !self.lock_subscribed().contains(&key) {
            self.host
                .servers()
                .subscribe_resource(&owner, &request.uri)
                .await
                .map_err(failed)?;
            self.lock_subscribed().insert(key);
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.client_of(&context)?;
        let owned: Vec<_> = {
            let mut subscribed = self.lock_subscribed();
            let owned = subscribed
                .iter()
                .filter(|(_, uri)| *uri == request.uri)
                .cloned()
                .collect();
            subscribed.retain(|(_, uri)| *uri != request.uri);
            owned
        };
        for (server, uri) in owned {
            self.host
                .servers()
                .unsubscribe_resource(&server, &uri)
                .await
                .map_err(failed)?;
        }
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.client_of(&context)?;
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner()) = Some(request.level);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let client = self.client_of(&context)?;
        if let Some(why) = completion::refusal(&request) {
            return Err(ErrorData::invalid_params(why, None));
        }
        let mut request = request;
        let server = match &mut request.r#ref {
            Reference::Prompt(prompt) => {
                let (_, server, own) = self
                    .prompts(&client.name)
                    .await
                    .into_iter()
                    .find(|(shown, _, _)| *shown == prompt.name)
                    .ok_or_else(|| {
                        ErrorData::invalid_params(
                            format!("there is no prompt {}", prompt.name),
                            None,
                        )
                    })?;
                // The server knows its prompt by its own name.
                prompt.name = own.name;
                server
            }
            Reference::Resource(resource) => self
                .template_owner(&client.name, &resource.uri)
                .await
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!(
                            "no server you can see has the resource template {}",
                            resource.uri
                        ),
                        None,
                    )
                })?,
            _ => {
                return Err(ErrorData::invalid_params(
                    "Toolgate completes arguments of prompts and resource templates only",
                    None,
                ))
            }
        };
        self.host
            .servers()
            .complete(&server, request)
            .await
            .map_err(failed)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let client = self.client_of(&context)?;
        self.first_lists_settled(&client.name).await;
        Ok(ListPromptsResult::with_all_items(
            self.prompt_list(&client.name).await,
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let client = self.client_of(&context)?;
        let (_, server, prompt) = self
            .prompts(&client.name)
            .await
            .into_iter()
            .find(|(shown, _, _)| *shown == request.name)
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("there is no prompt {}", request.name), None)
            })?;
        self.prompt(&client, (server, prompt.name), request, context)
            .await
    }
}

impl Session {
    fn lock_subscribed(&self) -> std::sync::MutexGuard<'_, BTreeSet<(String, String)>> {
        self.subscribed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The server that lists `uri`, or has a template that names it, among those the client
    /// sees.
    async fn owner_of(&self, client: &str, uri: &str) -> Result<String, ErrorData> {
        let servers = self.servers(client).await;
        if let Some(server) = servers
            .iter()
            .find(|s| s.resources.iter().any(|r| r.uri == uri))
        {
            return Ok(server.id.clone());
        }
        self.template_owner(client, uri)
            .await
            .ok_or_else(|| not_found(uri))
    }

    /// Subscribes, for one listen stream, to those of `uris` a server of this client has and
    /// sends updates of; what it got, to give back when the stream ends.
    async fn watch(&self, client: &str, uris: &[String]) -> BTreeSet<(String, String)> {
        let mut watched = BTreeSet::new();
        for uri in uris {
            let Ok(owner) = self.owner_of(client, uri).await else {
                continue;
            };
            if !self.host.servers().offers_subscriptions(&owner).await {
                continue;
            }
            match self.host.servers().subscribe_resource(&owner, uri).await {
                Ok(()) => {
                    watched.insert((owner, uri.clone()));
                }
                Err(e) => tracing::info!(client, uri, "could not watch the resource: {e}"),
            }
        }
        watched
    }

    /// Gives back this client's subscriptions, when its session ends.
    async fn unsubscribe_all(&self) {
        let subscribed = std::mem::take(&mut *self.lock_subscribed());
        for (server, uri) in subscribed {
            let _ = self
                .host
                .servers()
                .unsubscribe_resource(&server, &uri)
                .await;
        }
    }
}
