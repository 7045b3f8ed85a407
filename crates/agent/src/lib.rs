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

mod gate;
mod tools;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use toolgate_catalog::{Catalog, CatalogError, CatalogSettings};
use toolgate_llm::{ChatRequest, LlmError, Message, Provider, ToolCall, ToolSpec, Usage};
use toolgate_mcp::ServerManager;

pub use gate::{Decision, Gate, GateError, PendingCall};
pub use toolgate_catalog::Provider as ToolTarget;
pub use tools::catalog_of;

/// Rounds of model → tools → model before the loop gives up, so a model cannot spin forever.
pub const MAX_ROUNDS: usize = 12;

/// What happens during a turn, in order, for a UI to show.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum TurnEvent {
    /// Text the model said (before or between tool calls, or its final answer).
    #[serde(rename_all = "camelCase")]
    AssistantText { text: String },
    /// A call waits for the user's answer at the gate.
    ApprovalRequested(PendingCall),
    #[serde(rename_all = "camelCase")]
    ToolStarted { call_id: String },
    #[serde(rename_all = "camelCase")]
    ToolFinished {
        call_id: String,
        is_error: bool,
        output: String,
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
    #[error("the model kept calling tools for {MAX_ROUNDS} rounds without answering; stopped")]
    TooManyRounds,
    /// The tool list cannot be sent: a name collision the settings forbid, or too many tools.
    #[error(transparent)]
    Tools(#[from] CatalogError),
}

/// Runs turns of one conversation against a set of MCP servers.
pub struct Agent {
    servers: Arc<ServerManager>,
    gate: Arc<Gate>,
    system: Option<String>,
    tools: CatalogSettings,
    target: ToolTarget,
}

impl Agent {
    pub fn new(servers: Arc<ServerManager>, gate: Arc<Gate>) -> Self {
        Self {
            servers,
            gate,
            system: Some(
                "You are Toolgate's assistant. Use the tools when they help. The user approves every tool call; if one is denied, do not retry it, say what you would have done."
                    .to_owned(),
            ),
            tools: CatalogSettings::default(),
            target: ToolTarget::Anthropic,
        }
    }

    /// Which tools to offer, under which names (the user's tool settings), and the provider the
    /// list must suit (its tool limit and schema rules).
    pub fn with_tools(mut self, tools: CatalogSettings, target: ToolTarget) -> Self {
        self.tools = tools;
        self.target = target;
        self
    }

    /// The tools for this turn, or a failure the user can act on.
    async fn catalog(&self) -> Result<Catalog, AgentError> {
        let catalog = catalog_of(&self.servers.snapshot().await, &self.tools)?;
        catalog.check(self.target)?;
        Ok(catalog)
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
        history.push(Message::User {
            text: user_text.to_owned(),
        });
        let catalog = match self.catalog().await {
            Ok(catalog) => catalog,
            Err(e) => {
                on_event(TurnEvent::Failed {
                    message: e.to_string(),
                });
                return Err(e);
            }
        };
        let specs: Vec<ToolSpec> = catalog
            .entries()
            .iter()
            .map(|e| ToolSpec {
                name: e.model_name.clone(),
                description: e.tool.description.clone(),
                input_schema: e.schema_for(self.target).into_owned(),
            })
            .collect();
        let mut usage = Usage::default();
        for _ in 0..MAX_ROUNDS {
            let request = ChatRequest {
                model: model.to_owned(),
                system: self.system.clone(),
                messages: history.clone(),
                tools: specs.clone(),
                max_tokens: 4096,
            };
            let reply = match provider.complete(&request).await {
                Ok(reply) => reply,
                Err(e) => {
                    on_event(TurnEvent::Failed {
                        message: e.to_string(),
                    });
                    return Err(e.into());
                }
            };
            usage.input_tokens += reply.usage.input_tokens;
            usage.output_tokens += reply.usage.output_tokens;
            history.push(Message::Assistant {
                text: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
            });
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
                    .map(|call| self.gated_call(&catalog, call, on_event)),
            )
            .await;
            history.extend(results);
        }
        on_event(TurnEvent::Failed {
            message: AgentError::TooManyRounds.to_string(),
        });
        Err(AgentError::TooManyRounds)
    }

    /// Holds one call at the gate, then runs it or reports why not. Always yields a result message.
    async fn gated_call(
        &self,
        catalog: &Catalog,
        call: &ToolCall,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Message {
        let error = |content: String| Message::tool_text(call.id.clone(), content, true);
        // Models sometimes swap `-` and `_` or change case; the catalog's names are unique even
        // so, so the loose match can only find the tool meant.
        let Some(entry) = catalog
            .resolve(&call.name)
            .or_else(|| catalog.resolve_loose(&call.name))
        else {
            return error(format!(
                "There is no tool named '{}'. Use one of the tools offered.",
                call.name
            ));
        };
        if !matches!(call.arguments, Value::Object(_)) {
            return error(format!(
                "The arguments for '{}' must be a JSON object; got: {}",
                call.name, call.arguments
            ));
        }
        let (pending, answer) = self.gate.hold(PendingCall {
            id: String::new(),
            call_id: call.id.clone(),
            server_id: entry.server_id.clone(),
            server_name: entry.server_name.clone(),
            tool: entry.tool.name.clone(),
            arguments: call.arguments.clone(),
            read_only: entry.annotations().read_only_hint == Some(true),
            destructive: entry.annotations().destructive_hint == Some(true),
        });
        on_event(TurnEvent::ApprovalRequested(pending));
        match answer.await {
            Decision::Approve => {
                on_event(TurnEvent::ToolStarted {
                    call_id: call.id.clone(),
                });
                let (is_error, content) = match self
                    .servers
                    .call_tool(&entry.server_id, &entry.tool.name, call.arguments.clone())
                    .await
                {
                    Ok(output) => (output.is_error, output.text),
                    Err(e) => (true, e.to_string()),
                };
                on_event(TurnEvent::ToolFinished {
                    call_id: call.id.clone(),
                    is_error,
                    output: content.clone(),
                });
                Message::tool_text(call.id.clone(), content, is_error)
            }
            Decision::Deny { reason } => {
                on_event(TurnEvent::ToolDenied {
                    call_id: call.id.clone(),
                    reason: reason.clone(),
                });
                error(match reason {
                    Some(r) if !r.trim().is_empty() => {
                        format!("The user denied this tool call: {r}")
                    }
                    _ => "The user denied this tool call.".to_owned(),
                })
            }
        }
    }
}
