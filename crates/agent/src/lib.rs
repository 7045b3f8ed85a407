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

mod approval;
mod exposure;
mod gate;
mod record;
mod requests;
mod review;
mod rules;
mod tools;
pub mod tray;

use std::collections::HashSet;
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
use toolgate_mcp::{CallOptions, CallProgress, McpError, ServerManager, ToolOutput};

pub use approval::{MemoryPolicy, PolicyStore};
pub use exposure::Exposure;
pub use gate::{Announcer, Decision, Gate, GateError, Lasting, PendingCall, Reach, RequestKind};
pub use record::{restore, stored, title_for, HistoryRecorder};
pub use requests::{ModelSource, ServerRequestGate};
pub use rules::{bind_edited, BindError};
pub use toolgate_catalog::Provider as ToolTarget;
pub use tools::catalog_of;

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
}

/// The tools of a turn, the fingerprint of each server's launch for binding grants, and what
/// the gate knows of each server (its way out, its untrusted output, results to review).
struct Offer {
    catalog: Catalog,
    fingerprints: std::collections::HashMap<String, String>,
    facts: exposure::Facts,
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

/// The size of a value as JSON, counted while writing it nowhere: tool results can be tens of
/// megabytes, and only their size is needed for the audit log.
fn json_size(value: &Value) -> Option<u64> {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).ok()?;
    Some(count.0)
}

/// The images of a tool result, for providers that can look at them. Everything else is in the
/// text rendering already (with a placeholder where each image was).
fn images_of(raw: &Value) -> Vec<ContentPart> {
    // What Anthropic and OpenAI accept in a request; anything else stays a placeholder in text.
    const KINDS: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
    // Base64 of about 5 MB, the largest image Anthropic takes.
    const MAX_BASE64: usize = 6_900_000;
    raw.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .filter_map(|b| {
            let mime_type = b.get("mimeType")?.as_str()?;
            let data = b.get("data")?.as_str()?;
            (KINDS.contains(&mime_type) && data.len() <= MAX_BASE64).then(|| ContentPart::Image {
                mime_type: mime_type.to_owned(),
                data: data.to_owned(),
            })
        })
        .collect()
}

/// Gives every call of a reply an id of its own in the conversation. Everything downstream (the
/// gate's cards, the results sent back, the CLI's trace, the history) pairs a call with its
/// outcome by this id, and a model can send two calls under one id, none, or (as some
/// OpenAI-compatible servers do, numbering from `call_0` each round) an id an earlier call of the
/// conversation had: the second would then be shown, answered and reported as the first. Such an
/// id is replaced, before the reply is kept, by one that is unique in the conversation and valid
/// for every provider (`[A-Za-z0-9_-]`), so the history sent back stays consistent with what ran.
fn unique_call_ids(calls: &mut [ToolCall], earlier: &HashSet<String>) {
    let mut seen: HashSet<String> = HashSet::new();
    let in_reply: HashSet<String> = calls.iter().map(|c| c.id.clone()).collect();
    let free = |id: &str, seen: &HashSet<String>| {
        !id.is_empty() && !earlier.contains(id) && !seen.contains(id)
    };
    for (index, call) in calls.iter_mut().enumerate() {
        if free(&call.id, &seen) {
            seen.insert(call.id.clone());
            continue;
        }
        let stem: String = call
            .id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        let stem = if stem.is_empty() {
            "toolgate_call".to_owned()
        } else {
            stem
        };
        let mut n = index + 1;
        let fresh = loop {
            let candidate = format!("{stem}_{n}");
            if free(&candidate, &seen) && !in_reply.contains(&candidate) {
                break candidate;
            }
            n += 1;
        };
        tracing::warn!(
            "the model sent call id {:?} again (or empty); call {} of its reply is now {fresh}",
            call.id,
            index + 1
        );
        seen.insert(fresh.clone());
        call.id = fresh;
    }
}

/// The ids of every call already in the conversation.
fn call_ids(history: &[Message]) -> HashSet<String> {
    history
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .map(|c| c.id.clone())
        .collect()
}

/// Cuts a tool result to `limit` characters, telling the model what was left out.
fn truncate(text: String, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text;
    }
    let kept: String = text.chars().take(limit).collect();
    format!(
        "{kept}\n\n[Toolgate cut this result: it was {total} characters and the limit is {limit}. Ask for a smaller part if you need the rest.]"
    )
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
        let fingerprints = snapshot
            .iter()
            .map(|s| (s.id.clone(), approval::launch_fingerprint(&s.launch)))
            .collect();
        let facts: exposure::Facts = snapshot
            .iter()
            .map(|s| (s.id.clone(), exposure::ServerFacts::of(s)))
            .collect();
        if self.exposure.first_recall() {
            self.recall_exposure(&catalog, &facts);
        }
        Ok(Offer {
            catalog,
            fingerprints,
            facts,
        })
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
        for _ in 0..options.max_rounds {
            let request = ChatRequest {
                model: model.to_owned(),
                system: self.system.clone(),
                messages: history.clone(),
                tools: specs.clone(),
                max_tokens: 4096,
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
                on_event(TurnEvent::Finished {
                    text: reply.text.clone(),
                    usage,
                });
                return Ok(reply.text);
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
            CallOutcome::Ran(outcome) => self.result_message(call, outcome, options, on_event),
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
                Some(CallProgress { progress, total, message }) = updates.recv() => {
                    on_event(TurnEvent::ToolProgress {
                        call_id: call.id.clone(),
                        progress,
                        total,
                        message,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.to_owned(),
            name: "echo".to_owned(),
            arguments: serde_json::json!({}),
        }
    }

    #[test]
    fn repeated_and_empty_call_ids_are_made_unique_and_the_first_keeps_its_own() {
        let mut calls = vec![
            call("same"),
            call("same"),
            call(""),
            call("same_2"),
            call(""),
        ];
        unique_call_ids(&mut calls, &HashSet::new());
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids[0], "same");
        assert_eq!(
            ids[3], "same_2",
            "an id the model chose is kept when it is unique"
        );
        let distinct: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), ids.len(), "{ids:?}");
        assert!(ids.iter().all(|id| !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')));
        let mut clean = vec![call("a"), call("b")];
        unique_call_ids(&mut clean, &HashSet::new());
        assert_eq!(
            clean,
            vec![call("a"), call("b")],
            "unique ids are left alone"
        );
    }

    #[test]
    fn an_id_an_earlier_call_of_the_conversation_had_is_replaced() {
        let earlier: HashSet<String> = ["call_0".to_owned(), "call_0_1".to_owned()].into();
        let mut calls = vec![call("call_0"), call("call_1")];
        unique_call_ids(&mut calls, &earlier);
        assert_eq!(calls[1].id, "call_1");
        assert!(
            !earlier.contains(&calls[0].id) && calls[0].id.starts_with("call_0_"),
            "{calls:?}"
        );
    }
}
