//! The turn loop and the approval gate.
//!
//! [`Agent::run_turn`] sends the conversation and the enabled tools to the model, and for every
//! tool call the model asks for it holds the call at the [`Gate`] until the user answers. Only an
//! approval runs the call on its MCP server; a denial (or bad arguments, or an unknown tool) goes
//! back to the model as an error tool result, so the conversation stays valid and the model can
//! carry on. The loop ends when the model answers without asking for a tool.
//!
//! The gate is the only way from a model's request to a server: nothing in this crate calls a tool
//! without first awaiting the gate's one-shot answer for that call.
//!
//! A turn is bounded: at most [`TurnOptions::max_rounds`] model calls, results cut to
//! [`TurnOptions::result_limit`], and the user's [`TurnOptions::cancel`] stops it at any point,
//! cancelling the tool calls in flight and withdrawing the ones awaiting an answer. Rate limits and
//! overloads are retried with backoff, and each retry is announced.

mod answer;
mod approval;
pub mod apps;
mod attach;
mod exposure;
mod gate;
mod output;
mod record;
mod requests;
mod review;
mod rules;
mod tools;
pub mod tray;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_catalog::{Catalog, CatalogError, CatalogSettings};
use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_llm::{
    ChatRequest, ContentPart, LlmError, Message, Provider, StreamDelta, ToolCall, ToolSpec, Usage,
};
use toolgate_mcp::{CallOptions, CallProgress, McpError, ServerManager, TaskState, ToolOutput};

pub use approval::{MemoryPolicy, PolicyStore};
pub use attach::{with_attachments, Attached};
pub use exposure::Exposure;
pub use gate::{
    Announcer, Decision, Gate, GateError, Lasting, Link, PendingCall, Reach, RequestKind,
};
pub use record::{restore, stored, title_for, HistoryRecorder};
pub use requests::{link_of, open_in_browser, ModelSource, ServerRequestGate};
pub use rules::{bind_edited, BindError};
pub use toolgate_catalog::Provider as ToolTarget;
pub use tools::{catalog_of, catalog_with};

use output::{call_ids, images_of, json_size, truncate, unique_call_ids};

/// How a gated call ended.
#[derive(Debug)]
pub enum CallOutcome {
    /// It did not run: what the caller (a model, a client) is told why.
    Refused(String),
    /// It ran (or was sent and failed): the server's answer.
    Ran(Result<ToolOutput, McpError>),
}

/// How one turn may run.
#[derive(Debug, Clone)]
pub struct TurnOptions {
    /// Model calls in one turn before the loop stops, so a model cannot spin forever. The user
    /// can continue with another message.
    pub max_rounds: usize,
    /// Characters of one tool result sent to the model; the rest is cut with a note saying so.
    pub result_limit: usize,
    /// Stops the turn: the model call, the approvals waiting, and the tool calls running.
    pub cancel: CancellationToken,
    /// Retries of a rate-limited or overloaded model call.
    pub retries: u32,
    /// The first retry's wait when the provider names none; doubled for each retry.
    pub retry_delay: Duration,
    /// How long a call waits for the user's answer before it is denied.
    pub approval_timeout: Duration,
    /// Makes the final answer a JSON value valid against this schema (`toolgate run --schema`):
    /// the provider's own structured output where it has one (Anthropic, OpenAI), else the
    /// schema given in words; either way the answer is validated, and an invalid one gets one
    /// round to be repaired.
    pub answer_schema: Option<Value>,
}

impl Default for TurnOptions {
    fn default() -> Self {
        Self {
            max_rounds: 10,
            result_limit: 100_000,
            cancel: CancellationToken::new(),
            retries: 4,
            retry_delay: Duration::from_secs(1),
            approval_timeout: Duration::from_secs(600),
            answer_schema: None,
        }
    }
}

/// The longest wait between retries, whatever the provider asks.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// An image from a tool result, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShownImage {
    pub mime_type: String,
    pub data: String,
}

/// What happens during a turn, in order, for a UI to show.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum TurnEvent {
    /// A piece of the model's text as it streams in. A retry starts the round's text afresh.
    #[serde(rename_all = "camelCase")]
    TextDelta { text: String },
    /// The whole text the model said before or between tool calls (the deltas, joined).
    #[serde(rename_all = "camelCase")]
    AssistantText { text: String },
    /// A call waits for the user's answer at the gate.
    ApprovalRequested(PendingCall),
    /// A call the user's rules decided without asking (its `reason` says which rule).
    #[serde(rename_all = "camelCase")]
    DecidedByRule {
        #[serde(flatten)]
        call: PendingCall,
        allowed: bool,
    },
    /// A call the rules left to the user, refused because nobody can be asked (no terminal).
    #[serde(rename_all = "camelCase")]
    Unattended {
        #[serde(flatten)]
        call: PendingCall,
    },
    #[serde(rename_all = "camelCase")]
    ToolStarted { call_id: String },
    #[serde(rename_all = "camelCase")]
    ToolProgress {
        call_id: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        /// Set when the server runs the call as a task: its id and last status.
        #[serde(skip_serializing_if = "Option::is_none")]
        task: Option<TaskState>,
    },
    /// The provider refused for now (rate limit, overload); the call is retried after a wait.
    #[serde(rename_all = "camelCase")]
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolFinished {
        call_id: String,
        is_error: bool,
        output: String,
        /// The result's images (PNG, JPEG, GIF, WebP), for the window to show.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        images: Vec<ShownImage>,
        /// The server's MCP App that shows this result, when the tool links one.
        #[serde(skip_serializing_if = "Option::is_none")]
        app: Option<apps::ToolApp>,
    },
    #[serde(rename_all = "camelCase")]
    ToolDenied {
        call_id: String,
        reason: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Finished { text: String, usage: Usage },
    #[serde(rename_all = "camelCase")]
    Failed { message: String },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("the model kept calling tools for {0} rounds without a final answer, so the turn stopped here. Send another message (for example \"continue\") to let it go on")]
    TooManyRounds(usize),
    #[error("stopped")]
    Cancelled,
    /// The tool list cannot be sent: a name collision the settings forbid, or too many tools.
    #[error(transparent)]
    Tools(#[from] CatalogError),
    /// The final answer did not match the schema asked for, even after one repair round.
    #[error("the answer is not a JSON value valid against the schema, even after one round to repair it: {}", .0.join("; "))]
    InvalidAnswer(Vec<String>),
}

/// The tools of a turn, the fingerprint of each server's launch for binding grants, and what
/// the gate knows of each server (its way out, its untrusted output, results to review).
struct Offer {
    catalog: Catalog,
    fingerprints: std::collections::HashMap<String, String>,
    facts: exposure::Facts,
    /// (server id, tool) → the `ui://` resource of the MCP App that shows its results.
    apps: std::collections::HashMap<(String, String), String>,
}

fn offer_of(catalog: Catalog, snapshot: &[toolgate_mcp::ServerSnapshot]) -> Offer {
    let fingerprints = snapshot
        .iter()
        .map(|s| (s.id.clone(), approval::launch_fingerprint(&s.launch)))
        .collect();
    let apps = snapshot
        .iter()
        .flat_map(|s| {
            s.tools.iter().filter_map(|t| {
                let uri = t.ui_resource.clone()?;
                Some(((s.id.clone(), t.name.clone()), uri))
            })
        })
        .collect();
    let facts = snapshot
        .iter()
        .map(|s| (s.id.clone(), exposure::ServerFacts::of(s)))
        .collect();
    Offer {
        catalog,
        fingerprints,
        facts,
        apps,
    }
}

/// Keeps each message of a conversation the moment it exists (a database, for the app), so a crash
/// mid-turn loses nothing already shown.
pub trait Recorder: Send + Sync {
    fn record(&self, message: &Message);
}

/// Runs turns of one conversation against a set of MCP servers.
pub struct Agent {
    recorder: Option<Arc<dyn Recorder>>,
    policy: Arc<dyn PolicyStore>,
    audit: approval::Audit,
    servers: Arc<ServerManager>,
    gate: Arc<Gate>,
    system: Option<String>,
    tools: CatalogSettings,
    target: ToolTarget,
    /// The servers whose tools are offered, by id; `None`: every server.
    only: Option<std::collections::BTreeSet<String>>,
    /// The untrusted content this conversation has read (see [`Exposure`]).
    exposure: Arc<Exposure>,
}

impl Agent {
    pub fn new(servers: Arc<ServerManager>, gate: Arc<Gate>) -> Self {
        Self {
            recorder: None,
            policy: Arc::new(MemoryPolicy::default()),
            audit: approval::Audit::default(),
            servers,
            gate,
            system: Some(
                "You are Toolgate's assistant. Use the tools when they help. The user approves every tool call; if one is denied, do not retry it, say what you would have done."
                    .to_owned(),
            ),
            tools: CatalogSettings::default(),
            target: ToolTarget::Anthropic,
            only: None,
            exposure: Arc::new(Exposure::new()),
        }
    }

    /// What the conversation has read so far, shared with the agents of its other turns (the
    /// app builds one agent per turn) or of a connected client's other calls.
    pub fn with_exposure(mut self, exposure: Arc<Exposure>) -> Self {
        self.exposure = exposure;
        self
    }

    /// Offers only these servers' tools (a connected client's profile).
    pub fn with_servers(mut self, only: Option<std::collections::BTreeSet<String>>) -> Self {
        self.only = only;
        self
    }

    /// Which tools to offer, under which names (the user's tool settings), and the provider the
    /// list must suit (its tool limit and schema rules).
    pub fn with_tools(mut self, tools: CatalogSettings, target: ToolTarget) -> Self {
        self.tools = tools;
        self.target = target;
        self
    }

    /// The user's approval rules. Without them every call is asked (the default policy).
    pub fn with_policy(mut self, policy: Arc<dyn PolicyStore>) -> Self {
        self.policy = policy;
        self
    }

    /// Writes every decision to the audit log in `history`, under `conversation`.
    pub fn with_audit(
        mut self,
        history: Arc<toolgate_history::History>,
        conversation: Option<String>,
    ) -> Self {
        self.audit.history = Some(history);
        self.audit.conversation = conversation;
        self
    }

    /// The calls are a connected client's (through the gateway): the gate's card names it, its
    /// audit entries carry it, rules limited to it apply, and "always" answers are limited to it.
    pub fn with_client(mut self, client: impl Into<String>) -> Self {
        self.audit.client = Some(client.into());
        self
    }

    /// Records every message as it is added to the history.
    pub fn with_recorder(mut self, recorder: Arc<dyn Recorder>) -> Self {
        self.recorder = Some(recorder);
        self
    }

    fn keep(&self, history: &mut Vec<Message>, message: Message) {
        if let Some(recorder) = &self.recorder {
            recorder.record(&message);
        }
        history.push(message);
    }

    /// The tools for this turn, or a failure the user can act on.
    async fn catalog(&self) -> Result<Offer, AgentError> {
        let mut snapshot = self.servers.snapshot().await;
        if let Some(only) = &self.only {
            snapshot.retain(|s| only.contains(&s.id));
        }
        let catalog = catalog_of(&snapshot, &self.tools)?;
        // A provider's limits (tool count, schema rules) are for a model; a connected client
        // gets the tools as their servers list them.
        if self.audit.client.is_none() {
            catalog.check(self.target)?;
        }
        let offer = offer_of(catalog, &snapshot);
        if self.exposure.first_recall() {
            self.recall_exposure(&offer.catalog, &offer.facts);
        }
        Ok(offer)
    }

    /// Adds `user_text` to `history` and runs the loop until the model answers.
    /// Every message of the turn is appended to `history`, so a later turn continues from it.
    pub async fn run_turn(
        &self,
        provider: &dyn Provider,
        model: &str,
        history: &mut Vec<Message>,
        user_text: &str,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<String, AgentError> {
        self.run_turn_with(
            provider,
            model,
            history,
            user_text,
            &TurnOptions::default(),
            on_event,
        )
        .await
    }

    /// [`Self::run_turn`] with limits and a way to stop it. The history keeps every message up to
    /// the stop, so a stopped or cut-off turn can be continued; the caller decides whether to keep
    /// the messages of a turn that failed.
    pub async fn run_turn_with(
        &self,
        provider: &dyn Provider,
        model: &str,
        history: &mut Vec<Message>,
        user_text: &str,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<String, AgentError> {
        let result = self
            .turn(provider, model, history, user_text, options, on_event)
            .await;
        if let Err(e) = &result {
            on_event(TurnEvent::Failed {
                message: e.to_string(),
            });
        }
        result
    }

    async fn turn(
        &self,
        provider: &dyn Provider,
        model: &str,
        history: &mut Vec<Message>,
        user_text: &str,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<String, AgentError> {
        self.keep(
            history,
            Message::User {
                text: user_text.to_owned(),
            },
        );
        let offer = self.catalog().await?;
        let specs: Vec<ToolSpec> = offer
            .catalog
            .entries()
            .iter()
            .map(|e| ToolSpec {
                name: e.model_name.clone(),
                description: e.tool.description.clone(),
                input_schema: e.schema_for(self.target).into_owned(),
            })
            .collect();
        let mut usage = Usage::default();
        // Where the provider has structured output it constrains the answer; elsewhere the
        // schema is given in words. The answer is validated either way.
        let native = matches!(self.target, ToolTarget::Anthropic | ToolTarget::OpenAi);
        let system = match (&options.answer_schema, native) {
            (Some(schema), false) => Some(answer::instruction(self.system.as_deref(), schema)),
            _ => self.system.clone(),
        };
        let mut repaired = false;
        for _ in 0..options.max_rounds {
            let request = ChatRequest {
                model: model.to_owned(),
                system: system.clone(),
                messages: history.clone(),
                tools: specs.clone(),
                max_tokens: 4096,
                response_schema: options.answer_schema.clone().filter(|_| native),
            };
            let mut reply = self.ask(provider, &request, options, on_event).await?;
            unique_call_ids(&mut reply.tool_calls, &call_ids(history));
            usage.input_tokens += reply.usage.input_tokens;
            usage.output_tokens += reply.usage.output_tokens;
            self.keep(
                history,
                Message::Assistant {
                    text: reply.text.clone(),
                    tool_calls: reply.tool_calls.clone(),
                },
            );
            if reply.tool_calls.is_empty() {
                let text = match &options.answer_schema {
                    None => reply.text,
                    Some(schema) => match answer::check(schema, &reply.text) {
                        Ok(json) => json,
                        Err(problems) if !repaired => {
                            repaired = true;
                            self.keep(
                                history,
                                Message::User {
                                    text: answer::repair_request(&problems),
                                },
                            );
                            continue;
                        }
                        Err(problems) => return Err(AgentError::InvalidAnswer(problems)),
                    },
                };
                on_event(TurnEvent::Finished {
                    text: text.clone(),
                    usage,
                });
                return Ok(text);
            }
            if !reply.text.is_empty() {
                on_event(TurnEvent::AssistantText { text: reply.text });
            }
            // Every call of the round is put to the user at once; results go back in call order.
            let results = futures::future::join_all(
                reply
                    .tool_calls
                    .iter()
                    .map(|call| self.gated_call(&offer, call, options, on_event)),
            )
            .await;
            // Results go back even when stopped, so the history stays valid to continue from.
            for result in results {
                self.keep(history, result);
            }
            if options.cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
        }
        Err(AgentError::TooManyRounds(options.max_rounds))
    }

    /// One tool call through exactly the path a model's call takes in a turn, without a model: the
    /// catalog of the ready servers (built as at the start of a turn) resolves `call.name`, the
    /// user's rules decide (asking at the gate when they say to), the decision is audited, and an
    /// allowed call runs on its server. For the benchmarks, which measure that path per call.
    pub async fn gated_call_alone(
        &self,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<Message, AgentError> {
        let offer = self.catalog().await?;
        Ok(self.gated_call(&offer, call, options, on_event).await)
    }

    /// One model call, streamed (text deltas go to the UI as they arrive), retried with backoff
    /// while the provider is rate limiting or overloaded.
    async fn ask(
        &self,
        provider: &dyn Provider,
        request: &ChatRequest,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<toolgate_llm::Reply, AgentError> {
        let on_delta = |delta: StreamDelta| {
            if let StreamDelta::Text(text) = delta {
                on_event(TurnEvent::TextDelta { text });
            }
        };
        let mut attempt = 0;
        loop {
            let result = provider.stream(request, &on_delta, &options.cancel).await;
            match result {
                Err(LlmError::Cancelled) => return Err(AgentError::Cancelled),
                Err(e) if e.is_retryable() && attempt < options.retries => {
                    attempt += 1;
                    let delay = e
                        .retry_after()
                        .unwrap_or(
                            options
                                .retry_delay
                                .saturating_mul(2u32.saturating_pow(attempt - 1)),
                        )
                        .min(MAX_RETRY_WAIT);
                    on_event(TurnEvent::Retrying {
                        attempt,
                        delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        reason: e.to_string(),
                    });
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = options.cancel.cancelled() => return Err(AgentError::Cancelled),
                    }
                }
                result => return Ok(result?),
            }
        }
    }

    /// One call from a connected client (through the gateway), on the path a model's call takes:
    /// `call.name` is resolved in the catalog built from the ready servers and `tools` (the
    /// client's profile), the user's rules decide (asking at the gate when they say to), the
    /// decision is audited, and an allowed call runs. The server's whole result comes back, not
    /// the text a model gets; progress arrives as [`TurnEvent::ToolProgress`].
    pub async fn call_for_client(
        &self,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Result<CallOutcome, AgentError> {
        let offer = self.catalog().await?;
        Ok(self.gated(&offer, call, options, on_event).await)
    }

    /// Decides one call by the user's rules, asking the user when they say to; then runs it or
    /// reports why not. Always yields a result message, and writes the decision to the audit log.
    async fn gated_call(
        &self,
        offer: &Offer,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Message {
        match self.gated(offer, call, options, on_event).await {
            CallOutcome::Refused(told) => Message::tool_text(call.id.clone(), told, true),
            CallOutcome::Ran(outcome) => {
                // A tool that links an MCP App has its result shown there too.
                let app = match &outcome {
                    Ok(output) => offer
                        .catalog
                        .resolve(&call.name)
                        .or_else(|| offer.catalog.resolve_loose(&call.name))
                        .and_then(|entry| {
                            let key = (entry.server_id.clone(), entry.tool.name.clone());
                            Some(apps::ToolApp {
                                resource_uri: offer.apps.get(&key)?.clone(),
                                server_id: entry.server_id.clone(),
                                arguments: call.arguments.clone(),
                                result: output.raw.clone(),
                            })
                        }),
                    Err(_) => None,
                };
                self.result_message(call, outcome, options, on_event, app)
            }
        }
    }

    /// The tools a connected client is offered: the same catalog a turn builds.
    pub async fn catalog_for_client(&self) -> Result<Catalog, AgentError> {
        Ok(self.catalog().await?.catalog)
    }

    /// [`Self::gated_call`] up to the server's answer.
    async fn gated(
        &self,
        offer: &Offer,
        call: &ToolCall,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> CallOutcome {
        let error = CallOutcome::Refused;
        let catalog = &offer.catalog;
        // Models sometimes swap `-` and `_` or change case; the catalog's names are unique even
        // so, so the loose match can only find the tool meant.
        let Some(entry) = catalog
            .resolve(&call.name)
            .or_else(|| catalog.resolve_loose(&call.name))
        else {
            self.audit.refused_early(
                "",
                &call.name,
                &call.arguments,
                "no tool of that name is offered".to_owned(),
            );
            return error(format!(
                "There is no tool named '{}'. Use one of the tools offered.",
                call.name
            ));
        };
        if !matches!(call.arguments, Value::Object(_)) {
            self.audit.refused_early(
                &entry.server_id,
                &entry.tool.name,
                &call.arguments,
                "the arguments are not a JSON object".to_owned(),
            );
            return error(format!(
                "The arguments for '{}' must be a JSON object; got: {}",
                call.name, call.arguments
            ));
        }
        let fingerprint = offer
            .fingerprints
            .get(&entry.server_id)
            .map(String::as_str)
            .unwrap_or("");
        let subject = approval::subject(entry, fingerprint, &call.arguments);
        let conversation = self.audit.conversation.as_deref();
        let client = self.audit.client.as_deref();
        let untrusted = self.exposure.untrusted();
        let egress = exposure::egress(entry, &offer.facts);
        let verdict = toolgate_policy::decide_in(
            &toolgate_policy::Subject::ToolCall(subject.clone()),
            &self.policy.settings(),
            &toolgate_policy::Context {
                conversation_id: conversation,
                client,
                now_ms: approval::now_ms(),
                untrusted: untrusted.as_deref(),
                egress: egress.as_deref(),
            },
        );
        let by_policy = match verdict.basis {
            toolgate_policy::Basis::Paused => DecidedBy::Pause,
            toolgate_policy::Basis::Rule => DecidedBy::Rule,
            _ => DecidedBy::Default,
        };
        let decided = |decision, by, arguments: &Value, original, reason: Option<String>| {
            self.audit.record(approval::Decided {
                call: &subject,
                arguments,
                original,
                decision,
                by,
                rule_id: (by == DecidedBy::Rule)
                    .then(|| verdict.rule_id.clone())
                    .flatten(),
                reason,
            })
        };
        // Every call that will not run ends here: the card shows `shown`, the model gets `told`.
        let denied = |shown: Option<String>, told: String| {
            on_event(TurnEvent::ToolDenied {
                call_id: call.id.clone(),
                reason: shown,
            });
            error(told)
        };
        let refused = |reason: String| {
            let told = format!("Toolgate did not run this call: {reason}");
            denied(Some(reason), told)
        };
        let shown = |reason: String| PendingCall {
            id: String::new(),
            request: RequestKind::ToolCall,
            message: None,
            call_id: call.id.clone(),
            server_id: entry.server_id.clone(),
            server_name: entry.server_name.clone(),
            tool: entry.tool.name.clone(),
            arguments: call.arguments.clone(),
            read_only: subject.annotations.read_only,
            destructive: subject.annotations.destructive,
            input_schema: entry.tool.input_schema.clone(),
            reason,
            client: self.audit.client.clone(),
            link: None,
        };
        let arguments = match verdict.decision {
            toolgate_policy::Decision::Deny => {
                on_event(TurnEvent::DecidedByRule {
                    call: shown(verdict.reason.clone()),
                    allowed: false,
                });
                decided(
                    AuditDecision::Denied,
                    by_policy,
                    &call.arguments,
                    None,
                    Some(verdict.reason.clone()),
                );
                return refused(verdict.reason.clone());
            }
            toolgate_policy::Decision::Allow => {
                on_event(TurnEvent::DecidedByRule {
                    call: shown(verdict.reason.clone()),
                    allowed: true,
                });
                let audit = decided(
                    AuditDecision::Allowed,
                    by_policy,
                    &call.arguments,
                    None,
                    Some(verdict.reason.clone()),
                );
                return self
                    .run(
                        offer,
                        entry,
                        call,
                        call.arguments.clone(),
                        audit,
                        options,
                        on_event,
                    )
                    .await;
            }
            toolgate_policy::Decision::Ask => {
                if let Some(why) = self.gate.nobody_to_ask() {
                    on_event(TurnEvent::Unattended {
                        call: shown(verdict.reason.clone()),
                    });
                    decided(
                        AuditDecision::Denied,
                        DecidedBy::Unattended,
                        &call.arguments,
                        None,
                        Some(why.to_owned()),
                    );
                    return denied(
                        Some(why.to_owned()),
                        format!("Toolgate did not run this call: nobody could be asked to approve it ({why})."),
                    );
                }
                let mut reason = verdict.reason.clone();
                for changed in &verdict.changed {
                    let what = match changed.what {
                        toolgate_policy::ChangeKind::ServerChanged => {
                            "the server's command or address changed"
                        }
                        toolgate_policy::ChangeKind::ToolChanged => {
                            "the tool's description or inputs changed"
                        }
                    };
                    reason.push_str(&format!(" Asking again: {what} since you allowed it."));
                }
                let (pending, answer) = self.gate.hold(shown(reason));
                let gate_id = pending.id.clone();
                on_event(TurnEvent::ApprovalRequested(pending));
                let answer = tokio::select! {
                    // Stop wins a tie with an approval: nothing may start after the user stopped.
                    biased;
                    () = options.cancel.cancelled() => {
                        self.gate.withdraw(&gate_id);
                        decided(AuditDecision::Cancelled, DecidedBy::User, &call.arguments, None,
                            Some("the user stopped the turn".to_owned()));
                        return refused("the user stopped the turn".to_owned());
                    }
                    answer = tokio::time::timeout(options.approval_timeout, answer) => answer,
                };
                let Ok(answer) = answer else {
                    self.gate.withdraw(&gate_id);
                    let reason = format!(
                        "nobody answered within {} s",
                        options.approval_timeout.as_secs()
                    );
                    decided(
                        AuditDecision::TimedOut,
                        DecidedBy::Timeout,
                        &call.arguments,
                        None,
                        Some(reason.clone()),
                    );
                    return refused(reason);
                };
                // An "always" answer becomes a rule before the call runs.
                let remembered = match &answer {
                    // A client's call belongs to no chat: "in this chat" is this call only,
                    // never quietly "always".
                    Decision::Allow {
                        lasting: Lasting::Conversation,
                        ..
                    } if conversation.is_none() && client.is_some() => None,
                    Decision::Allow { reach, lasting } => Some((true, *reach, *lasting)),
                    Decision::DenyAlways { reach } => Some((false, *reach, Lasting::Always)),
                    _ => None,
                };
                if let Some((allow, reach, lasting)) = remembered {
                    let rule = approval::rule_for(
                        &subject,
                        allow,
                        reach,
                        lasting,
                        conversation,
                        client,
                        approval::now_ms(),
                    );
                    if let Err(e) = self.policy.add_rule(rule) {
                        tracing::error!("could not save the rule the user asked for: {e}");
                    }
                }
                match answer {
                    Decision::Deny { reason } => {
                        decided(
                            AuditDecision::Denied,
                            DecidedBy::User,
                            &call.arguments,
                            None,
                            reason.clone(),
                        );
                        let told = match &reason {
                            Some(r) if !r.trim().is_empty() => {
                                format!("The user denied this tool call: {r}")
                            }
                            _ => "The user denied this tool call.".to_owned(),
                        };
                        return denied(reason, told);
                    }
                    Decision::DenyAlways { .. } => {
                        decided(
                            AuditDecision::Denied,
                            DecidedBy::User,
                            &call.arguments,
                            None,
                            Some("denied, and from now on".to_owned()),
                        );
                        return denied(
                            None,
                            "The user denied this tool call, and will not allow it.".to_owned(),
                        );
                    }
                    Decision::ApproveEdited { arguments } => {
                        let audit = decided(
                            AuditDecision::Allowed,
                            DecidedBy::User,
                            &arguments,
                            Some(&call.arguments),
                            Some("approved with edited arguments".to_owned()),
                        );
                        (arguments, audit)
                    }
                    Decision::Approve | Decision::Allow { .. } => {
                        let audit = decided(
                            AuditDecision::Allowed,
                            DecidedBy::User,
                            &call.arguments,
                            None,
                            None,
                        );
                        (call.arguments.clone(), audit)
                    }
                }
            }
        };
        let (arguments, audit) = arguments;
        self.run(offer, entry, call, arguments, audit, options, on_event)
            .await
    }

    /// Runs an approved call on its server, reporting progress, and completes its audit entry.
    /// The result is then reviewed when the user asked to, and noted as untrusted content when
    /// it is.
    #[allow(clippy::too_many_arguments)]
    async fn run(
        &self,
        offer: &Offer,
        entry: &toolgate_catalog::Entry,
        call: &ToolCall,
        arguments: Value,
        audit: Option<i64>,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> CallOutcome {
        on_event(TurnEvent::ToolStarted {
            call_id: call.id.clone(),
        });
        let started = std::time::Instant::now();
        let (progress, mut updates) = tokio::sync::mpsc::unbounded_channel();
        let call_options = CallOptions {
            cancel: Some(options.cancel.child_token()),
            progress: Some(progress),
            conversation: self.audit.conversation.clone(),
            ..CallOptions::default()
        };
        let running = self.servers.call_tool_with(
            &entry.server_id,
            &entry.tool.name,
            arguments,
            call_options,
        );
        tokio::pin!(running);
        let outcome = loop {
            tokio::select! {
                outcome = &mut running => break outcome,
                Some(CallProgress { progress, total, message, task }) = updates.recv() => {
                    on_event(TurnEvent::ToolProgress {
                        call_id: call.id.clone(),
                        progress,
                        total,
                        message,
                        task,
                    });
                }
            }
        };
        let millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &outcome {
            Ok(output) => self.audit.finish(
                audit,
                millis,
                json_size(&output.raw),
                output.is_error.then_some("the tool reported an error"),
            ),
            Err(e) => self.audit.finish(audit, millis, None, Some(&e.to_string())),
        }
        self.after_run(offer, entry, call, outcome, options, on_event)
            .await
    }

    /// What the model gets back from a call that ran, announced to the UI.
    fn result_message(
        &self,
        call: &ToolCall,
        outcome: Result<ToolOutput, McpError>,
        options: &TurnOptions,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
        app: Option<apps::ToolApp>,
    ) -> Message {
        let mut shown = Vec::new();
        let (is_error, content, images) = match outcome {
            Ok(output) => {
                shown = images_of(&output.raw)
                    .into_iter()
                    .filter_map(|part| match part {
                        ContentPart::Image { mime_type, data } => {
                            Some(ShownImage { mime_type, data })
                        }
                        _ => None,
                    })
                    .collect();
                (
                    output.is_error,
                    truncate(output.text, options.result_limit),
                    // Endpoints that copy OpenAI's API often serve text-only models, which fail
                    // on an image; only providers known to take images get them.
                    if matches!(self.target, ToolTarget::Anthropic | ToolTarget::OpenAi) {
                        images_of(&output.raw)
                    } else {
                        Vec::new()
                    },
                )
            }
            Err(e) => (true, e.to_string(), Vec::new()),
        };
        on_event(TurnEvent::ToolFinished {
            call_id: call.id.clone(),
            is_error,
            output: content.clone(),
            images: shown,
            app,
        });
        let mut parts = vec![ContentPart::text(content)];
        parts.extend(images);
        Message::ToolResult {
            call_id: call.id.clone(),
            content: parts,
            is_error,
        }
    }
}
