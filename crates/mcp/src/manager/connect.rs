//! Reaching a server: spawn or dial, handshake (both protocol eras), and the first listing of what
//! it offers, all within the server's start-up timeout; and letting go of a connection or
//! process no longer wanted. Why a start failed is put into words in `reasons.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientInitializeError;
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate_settings::{Reference, ServerConfig, Transport};

use super::reasons::{handshake_problem, redact_url, with_last_words, STOPPED};
use super::registry::ServerManager;
use super::sign_in::{auth_required, scope_required};
use crate::confine::{self, SandboxReport};
use crate::logs::ServerLog;
use crate::spawn::{self, StdioProcess, StdioSpec};
use crate::{PromptInfo, ResourceInfo, ResourceTemplateInfo, ToolInfo};
use toolgate_mcp_client::client::{Client, ListKind};
use toolgate_mcp_client::http::{self, AuthRefusal, Refused};
use toolgate_mcp_client::sse::{OpenError, SseTransport};

pub(super) type Service = RunningService<RoleClient, Client>;

/// A connection that has finished its handshake.
/// What a start learnt besides its connection: the sandbox applied and the version installed.
#[derive(Default)]
pub(super) struct StartFacts {
    pub sandbox: Option<SandboxReport>,
    pub installed: Option<toolgate_install::Record>,
}

pub(super) struct Connected {
    pub service: Service,
    pub process: Option<StdioProcess>,
    pub list_changed: mpsc::UnboundedReceiver<ListKind>,
    /// Feeds `list_changed`, for the `subscriptions/listen` stream of a 2026-07-28 connection.
    pub list_sender: mpsc::UnboundedSender<ListKind>,
    /// On a 2026-07-28 connection whose lists can change: what to listen for, and the stream
    /// opened before the first listing (or why it could not be).
    pub listening: Option<(
        rmcp::model::SubscriptionFilter,
        Result<rmcp::service::Subscription, ServiceError>,
    )>,
    /// A remote server's sign-in, when it has one.
    pub session: Option<toolgate_oauth::Session>,
}

/// Why a start failed, and whether it is a sign-in the user has to give (`Some(again)`).
pub(super) struct Failure {
    pub reason: String,
    pub sign_in: Option<bool>,
    /// The scopes the server refused the connection for (403 `insufficient_scope`): signing in
    /// again for them (a step-up) is what lets it start.
    pub needs_scope: Option<String>,
}

impl From<String> for Failure {
    fn from(reason: String) -> Self {
        Failure {
            reason,
            sign_in: None,
            needs_scope: None,
        }
    }
}

/// What a refused connection (or its first listing) says about the sign-in, as the failure the
/// server's status shows: a 401 ends the sign-in, a 403 `insufficient_scope` asks for more.
fn refused_sign_in(name: &str, refusal: AuthRefusal) -> Failure {
    match refusal {
        AuthRefusal::SignIn => Failure {
            reason: format!("{name}'s sign-in is no longer accepted: sign in again"),
            sign_in: Some(true),
            needs_scope: None,
        },
        AuthRefusal::Scope(scope) => Failure {
            reason: format!("{name} needs more access ({scope}): sign in again to grant it"),
            sign_in: Some(true),
            needs_scope: Some(scope),
        },
    }
}

/// The handshakes to try, in order, each with the version `initialize` offers (when pinned).
///
/// Unpinned, both eras of servers: those that answer `server/discover` (2026-07-28), and those
/// that only know `initialize` (every Node server on npm today), which get 2025-11-25. rmcp's
/// `Auto` falls back when a server rejects `server/discover` with an error; a server that
/// answers it with something else (`{}`) gets a second, fresh start with `initialize` alone.
/// Pinned (`protocolVersion` in the server's settings): that era only.
fn lifecycles(pinned: Option<&str>) -> Vec<(ClientLifecycleMode, Option<ProtocolVersion>)> {
    let discover = ProtocolVersion::V_2026_07_28;
    match pinned {
        None => vec![
            (
                ClientLifecycleMode::Auto {
                    preferred_versions: vec![discover],
                    legacy_version: Some(ProtocolVersion::V_2025_11_25),
                },
                None,
            ),
            (ClientLifecycleMode::Initialize, None),
        ],
        Some(version) if version == discover.as_str() => vec![(
            ClientLifecycleMode::Discover {
                preferred_versions: vec![discover],
            },
            None,
        )],
        Some(version) => vec![(
            ClientLifecycleMode::Initialize,
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .find(|known| known.as_str() == version)
                .cloned(),
        )],
    }
}

/// A handshake that did not finish: why, the process to stop, and whether the server answered
/// in a way that another era's handshake may fix.
pub(super) struct Handshake {
    pub(super) reason: String,
    pub(super) process: Option<StdioProcess>,
    pub(super) other_era: bool,
    /// The server wants a sign-in: `Some(again)`.
    pub(super) sign_in: Option<bool>,
    /// The server refused the handshake for want of a sign-in or of scopes.
    pub(super) refusal: Option<AuthRefusal>,
}

impl From<String> for Handshake {
    fn from(reason: String) -> Self {
        Handshake {
            reason,
            process: None,
            other_era: false,
            sign_in: None,
            refusal: None,
        }
    }
}

impl Handshake {
    pub(super) fn sign_in(reason: String, again: bool) -> Self {
        Handshake {
            sign_in: Some(again),
            ..Handshake::from(reason)
        }
    }
}

type Handshaken = (
    Service,
    Option<StdioProcess>,
    Option<toolgate_oauth::Session>,
);

/// Whether a failed handshake is the server answering `server/discover` without knowing it.
fn other_era(error: &ClientInitializeError) -> bool {
    matches!(
        error,
        ClientInitializeError::ExpectedInitResult(_) | ClientInitializeError::JsonRpcError(_)
    )
}

impl ServerManager {
    /// `values` (a server's env or headers) with their `${secret:…}` and `${env:…}` references
    /// filled in, just before use. An error names the entry and what is missing, never a value.
    pub(super) async fn resolve(
        &self,
        kind: &'static str,
        values: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, String> {
        let needs_keychain = values.values().any(|v| {
            toolgate_settings::references(v)
                .is_ok_and(|r| r.iter().any(|r| matches!(r, Reference::Secret(_))))
        });
        let values = values.clone();
        let secrets = self.options.secrets.clone();
        let fill = move || {
            values
                .into_iter()
                .map(|(name, value)| {
                    toolgate_settings::expand(&value, |reference| {
                        crate::reference::lookup(secrets.as_deref(), reference)
                    })
                    .map(|value| (name.clone(), value))
                    .map_err(|why| format!("{kind}.{name}: {why}"))
                })
                .collect()
        };
        if needs_keychain {
            // The keychain answers over D-Bus and may block: off the async workers.
            tokio::task::spawn_blocking(fill)
                .await
                .map_err(|e| format!("could not read the keychain: {e}"))?
        } else {
            fill()
        }
    }

    /// Spawns or dials the server, performs the handshake and lists what it offers, all within
    /// the server's start-up timeout, unless `cancel` cuts it short. On failure the process is
    /// stopped and the reason includes the server's last words on stderr.
    pub(super) async fn connect(
        &self,
        config: &ServerConfig,
        log: &ServerLog,
        roots: Arc<RwLock<Vec<PathBuf>>>,
        refused: Refused,
        cancel: &CancellationToken,
        facts: &mut StartFacts,
    ) -> Result<(Connected, Listed), Failure> {
        let (tx, list_changed) = mpsc::unbounded_channel();
        let timeout = Duration::from_secs(config.startup_timeout_secs);
        let seconds = timeout.as_secs();
        let attempts = lifecycles(config.protocol_version.as_deref());
        let mut attempt = 0;
        let (mut service, process, session) = loop {
            let client = Client {
                server: config.id.clone(),
                roots: roots.clone(),
                events: self.events.clone(),
                list_changed: tx.clone(),
                requests: self.options.requests.clone(),
                in_flight: self.in_flight.clone(),
                protocol: attempts[attempt].1.clone(),
                refused: refused.clone(),
            };
            let mode = attempts[attempt].0.clone();
            let failed = match self
                .handshake(config, log, client, mode, cancel, facts)
                .await
            {
                Ok(ok) => break ok,
                Err(failed) => failed,
            };
            let Handshake {
                reason,
                process,
                other_era,
                sign_in,
                refusal,
            } = failed;
            if let Some(again) = sign_in {
                return Err(Failure {
                    reason,
                    sign_in: Some(again),
                    needs_scope: None,
                });
            }
            if let Some(refusal) = refusal {
                return Err(refused_sign_in(&config.name, refusal));
            }
            let exit = match process {
                // A short grace: a server that failed its handshake has nothing to finish.
                Some(p) => Some(
                    self.stop_process(&config.id, p, Duration::from_millis(300))
                        .await,
                ),
                None => None,
            };
            attempt += 1;
            if other_era && attempt < attempts.len() {
                // It answered `server/discover` with something that is not a discover result (an
                // older server that replies `{}` to what it does not know): start it afresh and
                // say `initialize`.
                tracing::info!(server = %config.id, %reason, "trying the initialize handshake");
                continue;
            }
            return Err(with_last_words(reason, exit, log).into());
        };
        // Listening starts before the listing, so a change in between is not missed.
        let listening = match super::listen::filter_for(service.peer()) {
            Some(filter) => {
                let opened = tokio::select! {
                    opened = tokio::time::timeout(timeout, super::listen::open(&config.id, service.peer(), &filter)) => {
                        opened.unwrap_or(Err(ServiceError::Timeout { timeout }))
                    }
                    () = cancel.cancelled() => Err(ServiceError::Cancelled { reason: None }),
                };
                Some((filter, opened))
            }
            None => None,
        };
        let listing = tokio::select! {
            listed = tokio::time::timeout(timeout, list_everything(service.peer())) => match listed {
                Ok(Ok(listed)) => Ok(listed),
                Ok(Err(e)) => Err(match http::auth_refusal(&e) {
                    Some(refusal) => refused_sign_in(&config.name, refusal),
                    None => format!("listing its tools failed: {e}").into(),
                }),
                Err(_) => Err(format!("it did not list its tools within {seconds} s").into()),
            },
            () = cancel.cancelled() => Err(Failure::from(STOPPED.to_owned())),
        };
        match listing {
            Ok(listed) => Ok((
                Connected {
                    service,
                    process,
                    list_changed,
                    list_sender: tx,
                    listening,
                    session,
                },
                listed,
            )),
            Err(failure) => {
                let _ = service.close_with_timeout(self.options.stop_grace).await;
                let exit = match process {
                    Some(p) => Some(
                        self.stop_process(&config.id, p, self.options.stop_grace)
                            .await,
                    ),
                    None => None,
                };
                if failure.sign_in.is_some() {
                    return Err(failure);
                }
                Err(with_last_words(failure.reason, exit, log).into())
            }
        }
    }

    /// Spawns or dials the server and performs one handshake, within the start-up timeout.
    async fn handshake(
        &self,
        config: &ServerConfig,
        log: &ServerLog,
        client: Client,
        mode: ClientLifecycleMode,
        cancel: &CancellationToken,
        facts: &mut StartFacts,
    ) -> Result<Handshaken, Handshake> {
        let timeout = Duration::from_secs(config.startup_timeout_secs);
        let seconds = timeout.as_secs();
        let failed = |reason: String, process, e: Option<&ClientInitializeError>| Handshake {
            reason,
            process,
            other_era: e.is_some_and(other_era),
            sign_in: None,
            refusal: None,
        };
        match &config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                if let Some(refused) = config.unsafe_env() {
                    return Err(refused.to_string().into());
                }
                let env = self.resolve("env", env).await?;
                // Kept from an earlier start, or found while the app started: no server waits for
                // the login shell unless only its new answer has the command.
                let host = self.host_env_for(command, cwd.as_deref()).await;
                // Before the start-up time counts: the first start of an npx or uvx server
                // installs its exact version.
                let pinned = self.pinned(config, host, log).await?;
                let deadline = tokio::time::Instant::now() + timeout;
                spawn::check_cwd(cwd.as_deref())?;
                let (program, args) = match &pinned {
                    Some((record, rest)) => {
                        super::pinned::command_of(record, rest, host, cwd.as_deref())?
                    }
                    None => (
                        host.resolve(command, cwd.as_deref())
                            .map_err(|e| e.to_string())?,
                        args.clone(),
                    ),
                };
                facts.installed = pinned.as_ref().map(|(record, _)| record.clone());
                let spec = StdioSpec {
                    server: &config.id,
                    program: &program,
                    args: &args,
                    env: &env,
                    cwd: cwd.as_deref(),
                };
                let mut plan = confine::plan(
                    config,
                    &program,
                    host,
                    self.options.server_data.as_deref(),
                    &self.protected,
                    pinned.as_ref().map(|(record, _)| record.folder.as_path()),
                    &self.reserved,
                )?;
                if let Some(plan) = plan.as_mut() {
                    if let Some(proxy) = self.start_proxy(config, log).await? {
                        plan.through(proxy);
                    }
                }
                facts.sandbox = match &plan {
                    Some(plan) => {
                        log.mark(&confine::describe(&plan.report));
                        Some(plan.report.clone())
                    }
                    None => confine::unconfined_report(config),
                };
                if let Some(plan) = &plan {
                    spawn::fetch(&spec, host, plan, log, timeout).await?;
                }
                let spawned = spawn::spawn(&spec, host, plan, log, &self.events)?;
                self.groups().insert(&config.id, spawned.process.leader);
                let process = spawned.process;
                // The supervision spawned it; the client speaks MCP over its pipes.
                let junk = log.clone();
                let transport = toolgate_mcp_client::stdio::transport(
                    &config.id,
                    spawned.stdout,
                    spawned.stdin,
                    self.events.clone(),
                    Box::new(move |line| junk.push(line)),
                );
                let serve = client.serve_with_lifecycle(transport, mode);
                tokio::select! {
                    served = tokio::time::timeout_at(deadline, serve) => match served {
                        Ok(Ok(service)) => Ok((service, Some(process), None)),
                        Ok(Err(e)) => Err(failed(handshake_problem(&e, None), Some(process), Some(&e))),
                        Err(_) => Err(failed(
                            format!("no answer to the MCP handshake within {seconds} s"),
                            Some(process),
                            None,
                        )),
                    },
                    () = cancel.cancelled() => Err(failed(STOPPED.to_owned(), Some(process), None)),
                }
            }
            Transport::Http { url, headers, sse } => {
                let deadline = tokio::time::Instant::now() + timeout;
                let headers = self.resolve("headers", headers).await?;
                let work = self.dial(config, url, &headers, *sse, client, mode);
                tokio::select! {
                    dialled = tokio::time::timeout_at(deadline, work) => match dialled {
                        Ok(dialled) => dialled,
                        Err(_) => Err(Handshake::from(format!(
                            "{} did not answer the MCP handshake within {seconds} s",
                            redact_url(url)
                        ))),
                    },
                    () = cancel.cancelled() => Err(failed(STOPPED.to_owned(), None, None)),
                }
            }
        }
    }

    /// Dials a remote server: its sign-in from the keychain, if any (refreshed when about to
    /// expire: nothing is sent with a token that is no longer valid), then Streamable HTTP, or
    /// the older HTTP+SSE transport when the settings say so or the server turns Streamable HTTP
    /// down (400, 404 or 405 to the first POST, as the spec's backwards-compatibility section
    /// says).
    async fn dial(
        &self,
        config: &ServerConfig,
        url: &str,
        headers: &BTreeMap<String, String>,
        sse: bool,
        client: Client,
        mode: ClientLifecycleMode,
    ) -> Result<Handshaken, Handshake> {
        let shown = redact_url(url);
        use toolgate_settings::OAuthGrant;
        let grant = config.oauth.as_ref().map(|o| (o.grant, o));
        let session = match (&self.options.secrets, grant) {
            (
                Some(secrets),
                Some((OAuthGrant::JwtBearer | OAuthGrant::EnterpriseManaged, oauth)),
            ) => {
                let assertion = self.assertion(oauth).await?;
                Some(
                    toolgate_oauth::connect_assertion(
                        secrets,
                        &config.id,
                        url,
                        assertion,
                        Some(self.on_renewal(&config.id)),
                    )
                    .await
                    .map_err(|problem| Handshake::from(problem.to_string()))?,
                )
            }
            (Some(secrets), Some((OAuthGrant::ClientCredentials, oauth))) => {
                let client = self.machine_client(oauth).await?;
                Some(
                    toolgate_oauth::connect_machine(
                        secrets,
                        &config.id,
                        url,
                        client,
                        Some(self.on_renewal(&config.id)),
                    )
                    .await
                    .map_err(|problem| Handshake::from(problem.to_string()))?,
                )
            }
            (Some(secrets), _) => match toolgate_oauth::connect(
                secrets,
                &config.id,
                url,
                Some(self.on_renewal(&config.id)),
            )
            .await
            {
                Ok(session) => session,
                Err(toolgate_oauth::AuthProblem::SignInRequired(reason)) => {
                    return Err(Handshake::sign_in(reason, false))
                }
                Err(toolgate_oauth::AuthProblem::SignInAgain(reason)) => {
                    return Err(Handshake::sign_in(reason, true))
                }
                Err(toolgate_oauth::AuthProblem::Unavailable(reason)) => return Err(reason.into()),
            },
            (None, _) => None,
        };
        let header_map = http::header_map(headers).map_err(|e| e.to_string())?;
        if !sse {
            let transport =
                http::transport(url, &header_map, session.clone(), client.refused.clone())
                    .map_err(|e| e.to_string())?;
            let fallback_client = client.clone();
            match client.serve_with_lifecycle(transport, mode).await {
                Ok(service) => return Ok((service, None, session)),
                Err(e) => {
                    if auth_required(&e) {
                        return Err(self.needs_sign_in(config, session.is_some()).await);
                    }
                    if let Some(scope) = scope_required(&e) {
                        return Err(Handshake {
                            refusal: Some(AuthRefusal::Scope(scope)),
                            ..Handshake::from(format!("{shown} asks for more access"))
                        });
                    }
                    let token = match &session {
                        Some(s) => s.access_token(&config.id).await.ok(),
                        None => None,
                    };
                    if !toolgate_mcp_client::sse::turns_down_streamable_http(
                        url,
                        &header_map,
                        token,
                    )
                    .await
                    {
                        return Err(Handshake {
                            other_era: other_era(&e),
                            ..Handshake::from(handshake_problem(&e, Some(&shown)))
                        });
                    }
                    tracing::info!(server = %config.id, "not a Streamable HTTP server: trying the older HTTP+SSE transport");
                    return self
                        .dial_sse(config, url, header_map, session, fallback_client)
                        .await;
                }
            }
        }
        self.dial_sse(config, url, header_map, session, client)
            .await
    }

    async fn dial_sse(
        &self,
        config: &ServerConfig,
        url: &str,
        headers: reqwest::header::HeaderMap,
        session: Option<toolgate_oauth::Session>,
        mut client: Client,
    ) -> Result<Handshaken, Handshake> {
        let shown = redact_url(url);
        let transport = match SseTransport::connect(&config.id, url, headers, session.clone()).await
        {
            Ok(t) => t,
            Err(OpenError::SignIn) => {
                return Err(self.needs_sign_in(config, session.is_some()).await)
            }
            Err(OpenError::Other(why)) => {
                return Err(format!("connecting to {shown} over HTTP+SSE failed: {why}").into())
            }
        };
        // Servers of the older transport speak `initialize` only.
        if client.protocol.is_none() {
            client.protocol = Some(ProtocolVersion::V_2025_11_25);
        }
        match client
            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await
        {
            Ok(service) => Ok((service, None, session)),
            Err(e) => Err(handshake_problem(&e, Some(&shown)).into()),
        }
    }

    async fn needs_sign_in(&self, config: &ServerConfig, had_session: bool) -> Handshake {
        let before = match &self.options.secrets {
            Some(secrets) => {
                had_session || toolgate_oauth::signed_in_before(secrets, &config.id).await
            }
            None => had_session,
        };
        if before {
            Handshake::sign_in(
                format!(
                    "{}'s sign-in is no longer accepted: sign in again",
                    config.name
                ),
                true,
            )
        } else {
            Handshake::sign_in(format!("{} asks you to sign in", config.name), false)
        }
    }

    /// Stops a server's process and takes it off the record of running groups (the file and
    /// the reaper's list), which has nothing left to sweep for it; says how it ended.
    pub(super) async fn stop_process(
        &self,
        id: &str,
        process: StdioProcess,
        grace: Duration,
    ) -> String {
        let leader = process.leader;
        let status = process.stop(grace).await;
        self.groups().remove(id, leader);
        spawn::describe_exit(status)
    }

    /// A connection that finished starting after it was no longer wanted.
    pub(super) async fn close_connected(&self, id: &str, mut connected: Connected) {
        let _ = connected
            .service
            .close_with_timeout(self.options.stop_grace)
            .await;
        if let Some(p) = connected.process {
            self.stop_process(id, p, self.options.stop_grace).await;
        }
    }
}

/// What a server offers, read once it is connected.
pub(super) struct Listed {
    pub implementation: Option<String>,
    pub protocol_version: Option<String>,
    pub tools: Vec<ToolInfo>,
    pub resources: Vec<ResourceInfo>,
    pub resource_templates: Vec<ResourceTemplateInfo>,
    pub prompts: Vec<PromptInfo>,
}

async fn list_everything(peer: &Peer<RoleClient>) -> Result<Listed, ServiceError> {
    let info = peer.peer_info();
    let capabilities = info
        .as_ref()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    let tools = peer.list_all_tools().await?;
    // Resources and prompts are extras: a server that fails to list them still serves tools.
    let resources = if capabilities.resources.is_some() {
        peer.list_all_resources().await.unwrap_or_else(|e| {
            tracing::info!("listing resources failed: {e}");
            Vec::new()
        })
    } else {
        Vec::new()
    };
    let templates = if capabilities.resources.is_some() {
        peer.list_all_resource_templates()
            .await
            .unwrap_or_else(|e| {
                tracing::info!("listing resource templates failed: {e}");
                Vec::new()
            })
    } else {
        Vec::new()
    };
    let prompts = if capabilities.prompts.is_some() {
        peer.list_all_prompts().await.unwrap_or_else(|e| {
            tracing::info!("listing prompts failed: {e}");
            Vec::new()
        })
    } else {
        Vec::new()
    };
    Ok(Listed {
        implementation: info
            .as_ref()
            .and_then(|i| i.server_info.as_ref())
            .map(|s| format!("{} {}", s.name, s.version)),
        protocol_version: info.as_ref().map(|i| i.protocol_version.to_string()),
        tools: tools.into_iter().map(ToolInfo::from).collect(),
        resources: resources.into_iter().map(ResourceInfo::from).collect(),
        resource_templates: templates
            .into_iter()
            .map(ResourceTemplateInfo::from)
            .collect(),
        prompts: prompts.into_iter().map(PromptInfo::from).collect(),
    })
}
