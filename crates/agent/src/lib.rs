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
pub mod apps;
mod attach;
mod call;
mod offer;
mod output;
mod recall;
mod record;
pub mod resource;
mod review;
mod search;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use toolgate_catalog::{Catalog, CatalogError, CatalogSettings};
use toolgate_llm::{ChatRequest, LlmError, Message, Provider, StreamDelta, Usage, WireFormat};
use toolgate_mcp::{McpError, ServerManager, TaskState, ToolOutput};

pub use attach::{with_attachments, Attached};
pub use offer::Offers;
pub use record::{restore, stored, title_for, HistoryRecorder};
// The gate is its own crate; its names are offered here too, for the front ends that build on
// the agent.
pub use search::FoundTool;
pub use toolgate_catalog::Provider as ToolTarget;
pub use toolgate_gate::{
    approval, bind_edited, exposure, facts, gatekeeper, link_of, open_in_browser, requests,
    secrets, tray, wait, Announcer, Asked, Asking, BindError, Decision, Exposure, Gate, GateError,
    Gatekeeper, Lasting, Link, MemoryPolicy, ModelSource, NoModel, PendingCall, PolicyStore, Reach,
    RequestKind, RuleNotKept, ServerRequestGate,
};
pub use tools::{catalog_of, catalog_with};

use offer::Offer;
use output::{call_ids, unique_call_ids};

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
    pub answer_schema: Option<serde_json::Value>,
    /// Who answers the servers' questions (sampling, elicitation) during this turn's calls
    /// instead of the gate: a connected client that can (see `toolgate_mcp::Asker`).
    pub asker: Option<toolgate_mcp::Asker>,
    /// The least severe log message of the servers' the caller wants during its calls (see
    /// `toolgate_mcp::CallOptions::logs`).
    pub server_logs: Option<toolgate_mcp::LogLevel>,
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
            asker: None,
            server_logs: None,
        }
    }
}

/// The longest wait between retries, whatever the provider asks.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// An image from a tool result, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ShownImage {
    pub mime_type: String,
    pub data: String,
}

/// What happens during a turn, in order, for a UI to show.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
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
        #[ts(optional)]
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
        #[ts(optional = nullable)]
        images: Vec<ShownImage>,
        /// The server's MCP App that shows this result, when the tool links one.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        app: Option<apps::ToolApp>,
    },
    #[serde(rename_all = "camelCase")]
    ToolDenied {
        call_id: String,
        reason: Option<String>,
    },
    /// The model searched the tools (`search_tools`, when tool search is on); what it found is
    /// loaded for the rest of the turn. Toolgate's own tool: it runs no server and needs no
    /// approval.
    #[serde(rename_all = "camelCase")]
    ToolsSearched {
        call_id: String,
        query: String,
        found: Vec<FoundTool>,
    },
    /// One model call's tokens, and its estimated cost in millionths of a dollar when the
    /// model's price is known.
    #[serde(rename_all = "camelCase")]
    Usage {
        usage: Usage,
        cost_micro_usd: Option<u64>,
    },
    /// The turn's answer, with the tokens of all its model calls and their estimated cost (when
    /// every call's price is known).
    #[serde(rename_all = "camelCase")]
    Finished {
        text: String,
        usage: Usage,
        cost_micro_usd: Option<u64>,
    },
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

/// What a turn sends besides the conversation.
struct Prepared {
    offer: Arc<Offer>,
    tools: search::TurnTools,
    system: Option<String>,
}

/// One round's request.
fn request(
    model: &str,
    system: &Option<String>,
    history: &[Message],
    tools: &search::TurnTools,
    offer: &Offer,
    response_schema: Option<serde_json::Value>,
) -> ChatRequest {
    ChatRequest {
        model: model.to_owned(),
        system: system.clone(),
        messages: history.to_vec(),
        tools: tools.specs(offer),
        max_tokens: 4096,
        // Breakpoints for Anthropic; OpenAI caches the same stable prefix by itself.
        cache: true,
        response_schema,
    }
}

/// Keeps each message of a conversation the moment it exists (a database, for the app), so a crash
/// mid-turn loses nothing already shown. Awaited before the turn goes on; it must not block an
/// async worker (the history's writes are queued to its writer thread).
#[async_trait::async_trait]
pub trait Recorder: Send + Sync {
    async fn record(&self, message: &Message);
}

/// The system prompt of Toolgate's own chat.
pub const SYSTEM_PROMPT: &str = "You are Toolgate's assistant. Use the tools when they help. The user approves every tool call; if one is denied, do not retry it, say what you would have done.";

/// Everything a gated agent is made of, each part required: there is no default that could
/// quietly drop a safeguard (an audit log, the user's rules, what the conversation has read).
/// Product code gets an agent only from `toolgate_host::Host::agent`, which fills this in the
/// same way for every caller; tests fill it by hand.
pub struct AgentParts {
    pub servers: Arc<ServerManager>,
    pub gate: Arc<Gate>,
    /// The user's approval rules, read at every call.
    pub policy: Arc<dyn PolicyStore>,
    /// Where every decision is written; `None` only when the history could not be opened
    /// (the host has told the user).
    pub history: Option<Arc<toolgate_history::History>>,
    /// The conversation the calls belong to (the audit entries and "in this chat" rules).
    pub conversation: Option<String>,
    /// The connected client or app whose calls these are: the card names it, its audit
    /// entries carry it, rules limited to it apply, and its "always" answers are limited to it.
    pub client: Option<String>,
    /// The untrusted content the conversation (or client connection) has read: shared with
    /// every agent of the same conversation.
    pub exposure: Arc<Exposure>,
    /// Offers kept by their inputs, shared with every other agent of the host.
    pub offers: Arc<Offers>,
    /// Which tools to offer, under which names (the user's tool settings).
    pub tools: CatalogSettings,
    /// The provider the tool list must suit (its tool limit and schema rules).
    pub target: ToolTarget,
    /// The servers whose tools are offered, by id; `None`: every server.
    pub only: Option<std::collections::BTreeSet<String>>,
    /// Keeps each message of the conversation as it is added.
    pub recorder: Option<Arc<dyn Recorder>>,
    pub system: Option<String>,
}

/// Runs turns of one conversation against a set of MCP servers.
pub struct Agent {
    recorder: Option<Arc<dyn Recorder>>,
    /// The gate as this conversation meets it: rules, audit, what it has read, the wait.
    keeper: Gatekeeper,
    servers: Arc<ServerManager>,
    system: Option<String>,
    tools: CatalogSettings,
    target: ToolTarget,
    /// The servers whose tools are offered, by id; `None`: every server.
    only: Option<std::collections::BTreeSet<String>>,
    /// Offers kept by their inputs, shared with every other agent of the host.
    offers: Arc<Offers>,
}

impl Agent {
    /// An agent of exactly these parts. Outside tests, use `toolgate_host::Host::agent`.
    pub fn new(parts: AgentParts) -> Self {
        let AgentParts {
            servers,
            gate,
            policy,
            history,
            conversation,
            client,
            exposure,
            offers,
            tools,
            target,
            only,
            recorder,
            system,
        } = parts;
        Self {
            recorder,
            keeper: Gatekeeper {
                gate,
                policy,
                audit: approval::Audit {
                    history,
                    conversation,
                    client,
                },
                exposure,
            },
            servers,
            system,
            tools,
            target,
            only,
            offers,
        }
    }

    async fn keep(&self, history: &mut Vec<Message>, message: Message) {
        if let Some(recorder) = &self.recorder {
            recorder.record(&message).await;
        }
        history.push(message);
    }

    /// The tools for this turn or call: kept from an earlier one when the servers and settings
    /// are unchanged. A provider's limits (tool count, schema rules) are checked when the
    /// request is made: they are for a model, not for a connected client.
    async fn offer(&self) -> Result<Arc<Offer>, AgentError> {
        let offer = self
            .offers
            .get(&self.servers, &self.tools, self.only.as_ref())
            .await?;
        if self.keeper.exposure.first_recall() {
            self.recall_exposure(&offer.catalog, &offer.facts);
        }
        Ok(offer)
    }

    /// The tools a connected client is offered: the same catalog a turn builds.
    pub async fn catalog_for_client(&self) -> Result<Catalog, AgentError> {
        Ok(self.offer().await?.catalog.clone())
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
        // The user's own words, for provenance: the earlier messages of a resumed
        // conversation once, then this one.
        let exposure = &self.keeper.exposure;
        if exposure.first_user_read() {
            for message in history.iter() {
                if let Message::User { text } = message {
                    exposure.observe_user(text);
                }
            }
        }
        exposure.observe_user(user_text);
        self.keep(
            history,
            Message::User {
                text: user_text.to_owned(),
            },
        )
        .await;
        let Prepared {
            offer,
            mut tools,
            system,
        } = self.prepare().await?;
        let format = match self.target {
            ToolTarget::Anthropic => WireFormat::Anthropic,
            _ => WireFormat::OpenAi,
        };
        let mut usage = Usage::default();
        let mut cost = Some(0u64);
        // Where the provider has structured output it constrains the answer; elsewhere the
        // schema is given in words. The answer is validated either way.
        let native = matches!(self.target, ToolTarget::Anthropic | ToolTarget::OpenAi);
        let system = match (&options.answer_schema, native) {
            (Some(schema), false) => Some(answer::instruction(system.as_deref(), schema)),
            _ => system,
        };
        let mut repaired = false;
        for _ in 0..options.max_rounds {
            let request = request(
                model,
                &system,
                history,
                &tools,
                &offer,
                options.answer_schema.clone().filter(|_| native),
            );
            let mut reply = self.ask(provider, &request, options, on_event).await?;
            unique_call_ids(&mut reply.tool_calls, &call_ids(history));
            let call_cost = toolgate_llm::pricing::cost_micro_usd(format, model, &reply.usage);
            on_event(TurnEvent::Usage {
                usage: reply.usage,
                cost_micro_usd: call_cost,
            });
            usage += reply.usage;
            cost = cost.zip(call_cost).map(|(a, b)| a.saturating_add(b));
            self.keep(
                history,
                Message::Assistant {
                    text: reply.text.clone(),
                    tool_calls: reply.tool_calls.clone(),
                },
            )
            .await;
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
                            )
                            .await;
                            continue;
                        }
                        Err(problems) => return Err(AgentError::InvalidAnswer(problems)),
                    },
                };
                on_event(TurnEvent::Finished {
                    text: text.clone(),
                    usage,
                    cost_micro_usd: cost,
                });
                return Ok(text);
            }
            if !reply.text.is_empty() {
                on_event(TurnEvent::AssistantText { text: reply.text });
            }
            // Searches are answered at once (they load tools, run nothing and need no
            // approval); every other call of the round is put to the user at once. Results go
            // back in the model's order.
            let mut searched = Vec::new();
            for call in &reply.tool_calls {
                if tools.is_search(&call.name) {
                    searched.push(Some(tools.search(&offer, call, on_event)));
                } else {
                    searched.push(None);
                }
            }
            let gated = futures::future::join_all(
                reply
                    .tool_calls
                    .iter()
                    .zip(&searched)
                    .filter(|(_, found)| found.is_none())
                    .map(|(call, _)| self.gated_call(&offer, call, options, on_event)),
            )
            .await;
            let mut gated = gated.into_iter();
            // Results go back even when stopped, so the history stays valid to continue from.
            for found in searched {
                let result = match found {
                    Some(result) => Some(result),
                    None => gated.next(),
                };
                if let Some(result) = result {
                    self.keep(history, result).await;
                }
            }
            if options.cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
        }
        Err(AgentError::TooManyRounds(options.max_rounds))
    }

    /// What a turn needs before its first request: the offer (kept from an earlier turn when
    /// nothing changed), the tools the turn sends, and the system prompt.
    async fn prepare(&self) -> Result<Prepared, AgentError> {
        let offer = self.offer().await?;
        let tools = search::plan(&offer, &self.tools, self.target)?;
        let system = match (&self.system, tools.note()) {
            (Some(system), Some(note)) => Some(format!("{system}\n\n{note}")),
            (system, note) => system.clone().or(note),
        };
        Ok(Prepared {
            offer,
            tools,
            system,
        })
    }

    /// The request a turn's first round sends for `history` (which ends with the user's
    /// message), built exactly as [`Self::run_turn`] builds it: for the benchmarks, which measure
    /// a turn's own cost (the catalog and the request) without a model.
    pub async fn first_request(
        &self,
        model: &str,
        history: &[Message],
    ) -> Result<ChatRequest, AgentError> {
        let prepared = self.prepare().await?;
        Ok(request(
            model,
            &prepared.system,
            history,
            &prepared.tools,
            &prepared.offer,
            None,
        ))
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
}
