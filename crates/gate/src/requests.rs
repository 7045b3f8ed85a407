//! Requests servers make of the user, put through the same gate as tool calls.
//!
//! - **Sampling** (`sampling/createMessage`): a server asks to use the user's model, which costs
//!   the user's tokens and can carry anything the server likes into the model. The user sees the
//!   request (and may edit it) before the model gets it, then sees the model's reply (and may edit
//!   it) before the server gets it. An allow rule for the server's sampling skips both questions.
//! - **Elicitation** (`elicitation/create`): a server asks the user a question. Only the user can
//!   answer, so rules can refuse these but never answer them: an allow rule still asks.
//!
//! Deny rules and "pause all" refuse both without asking. A request that waits past the approval
//! time-out, or that the server takes back, is withdrawn from the gate. Every decision is written
//! to the audit log, like a tool call's.
#![allow(deprecated)] // Sampling is deprecated in the 2026 protocol, and used by every server today.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

use async_trait::async_trait;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, ErrorData, Role, SamplingMessage, SamplingMessageContentBlock,
};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use toolgate_history::{AuditDecision, DecidedBy, History};
use toolgate_llm::{ChatRequest, Message, Provider, StopReason};
use toolgate_mcp::{ServerManager, ServerRequests};
use toolgate_policy::{Effect, Rule, Scope, Subject};

mod link;

pub use link::{link_of, open_in_browser, BrowserError, LinkError};

use crate::approval::{launch_fingerprint, now_ms, Audit, PolicyStore};
use crate::gatekeeper::{AuditNote, Held, Next, Settlement};
use crate::wait::{Asked, Decision, Gate, PendingCall, RequestKind};

/// The audit log's "tool" for each kind of request: the protocol's method name.
pub const SAMPLING: &str = "sampling/createMessage";
pub const ELICITATION: &str = "elicitation/create";

/// Error code for a sampling request the user refused (the spec's example uses -1).
const REFUSED: ErrorCode = ErrorCode(-1);

/// The model a server's sampling request runs on: the user's current provider and model.
#[async_trait]
pub trait ModelSource: Send + Sync {
    /// The provider and the model name, or why there is none (no key set, say), in words for
    /// the server's error.
    async fn model(&self) -> Result<(Box<dyn Provider>, String), NoModel>;
}

/// Why there is no model for a server's sampling request, in words for the server's error.
#[derive(Debug, thiserror::Error)]
pub enum NoModel {
    /// Toolgate is shutting down.
    #[error("Toolgate is stopping")]
    Stopping,
    /// The user's provider cannot be used (no key set, say).
    #[error("{0}")]
    Provider(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Answers servers' sampling and elicitation requests through the approval gate. Give it to the
/// [`ServerManager`] (as `ManagerOptions::requests`), then [`attach`](Self::attach) the manager,
/// which it asks for each server's name and launch fingerprint.
pub struct ServerRequestGate {
    gate: Arc<Gate>,
    policy: Arc<dyn PolicyStore>,
    models: Arc<dyn ModelSource>,
    /// The one auditor of the gate, as tool calls have it (no conversation, no client).
    audit: Audit,
    servers: OnceLock<Weak<ServerManager>>,
}

/// Which server asks, as the user and the rules know it.
struct Asker {
    id: String,
    name: String,
    fingerprint: String,
}

/// Nobody asks on a server's behalf: its requests belong to no chat and no client.
const NO_CALLER: crate::gatekeeper::Asker<'static> = crate::gatekeeper::Asker {
    conversation: None,
    client: None,
};

impl ServerRequestGate {
    pub fn new(
        gate: Arc<Gate>,
        policy: Arc<dyn PolicyStore>,
        models: Arc<dyn ModelSource>,
    ) -> Self {
        Self {
            gate,
            policy,
            models,
            audit: Audit::default(),
            servers: OnceLock::new(),
        }
    }

    /// Writes every decision to the audit log in `history`.
    pub fn with_audit(mut self, history: Arc<History>) -> Self {
        self.audit.history = Some(history);
        self
    }

    /// The manager whose servers send the requests (held weakly: the manager holds this).
    pub fn attach(&self, servers: &Arc<ServerManager>) {
        let _ = self.servers.set(Arc::downgrade(servers));
    }

    async fn asker(&self, server: &str) -> Asker {
        let snapshot = match self.servers.get().and_then(Weak::upgrade) {
            Some(manager) => manager.snapshot().await,
            None => Vec::new(),
        };
        let found = snapshot.iter().find(|s| s.id == server);
        Asker {
            id: server.to_owned(),
            name: found.map_or_else(|| server.to_owned(), |s| s.name.clone()),
            // Unknown servers get a fingerprint no grant was bound to, so no grant applies.
            fingerprint: found.map_or_else(String::new, |s| launch_fingerprint(&s.launch)),
        }
    }

    /// Holds a request at the gate until it is answered, times out, or the server takes it back
    /// (the gate's one drop-safe wait, as a tool call's).
    async fn ask(&self, request: PendingCall, cancel: &CancellationToken) -> Asked {
        let timeout = self.policy.settings().approval_timeout();
        self.gate.ask(request, cancel, timeout, |_| {}).await
    }

    /// Settles a request of kind `held` (the one settling step every held request takes),
    /// saves the rule an answer made, and writes the audit entry against `shown` (or the
    /// user's edit of it); returns the settlement and the entry's id.
    async fn settled(
        &self,
        asker: &Asker,
        (held, subject): (Held, &Subject),
        verdict: Option<&toolgate_policy::Verdict>,
        asked: Option<&Asked>,
        shown: &Value,
    ) -> (Settlement, Option<i64>) {
        let settled = crate::gatekeeper::settle(held, verdict, asked, NO_CALLER);
        if let Some(rule) = settled.rule_to_save {
            let effect = if rule.allow {
                Effect::Allow
            } else {
                Effect::Deny
            };
            self.remember(subject, effect).await;
        }
        let logged = match &settled.next {
            Next::Run {
                edited: Some(edited),
            } if held == Held::Sampling => edited,
            _ => shown,
        };
        let method = match held {
            Held::Sampling | Held::SamplingReply => SAMPLING,
            _ => ELICITATION,
        };
        let id = self
            .audit
            .committed(&asker.id, method, logged, settled.audit.clone())
            .await;
        (settled, id)
    }

    /// Writes a decision and waits for its commit (these requests are rare; the wait blocks no
    /// async worker): its id completes the entry when the request is done.
    async fn audit(
        &self,
        asker: &Asker,
        method: &str,
        arguments: &Value,
        decision: AuditDecision,
        by: DecidedBy,
        reason: Option<String>,
    ) -> Option<i64> {
        let note = AuditNote {
            decision,
            by,
            rule_id: None,
            reason,
        };
        self.audit
            .committed(&asker.id, method, arguments, note)
            .await
    }

    /// Completes an entry; queued, not waited for (a failure is logged by the writer).
    fn finish(&self, id: Option<i64>, started: Instant, bytes: Option<u64>, error: Option<&str>) {
        let millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let entry = id.map(toolgate_history::AuditRef::Id);
        self.audit.finish(entry.as_ref(), millis, bytes, error);
    }

    async fn remember(&self, subject: &Subject, effect: Effect) {
        let rule = Rule::for_subject(
            uuid::Uuid::new_v4().to_string(),
            effect,
            subject,
            Scope::Always,
            now_ms(),
        );
        if let Err(e) = self.policy.add_rule(rule).await {
            tracing::error!("could not save the rule the user asked for: {e}");
        }
    }

    /// Runs the model on a sampling request.
    async fn sample(
        &self,
        params: &CreateMessageRequestParams,
        cancel: &CancellationToken,
    ) -> Result<(String, String, StopReason), String> {
        let (provider, model) = self.models.model().await.map_err(|e| e.to_string())?;
        let request = ChatRequest {
            model: model.clone(),
            system: params.system_prompt.clone(),
            messages: params.messages.iter().map(to_message).collect(),
            tools: Vec::new(),
            max_tokens: params.max_tokens.clamp(1, 32_000),
            // A server's one-off request: nothing of it is sent again.
            cache: false,
            response_schema: None,
        };
        let reply = tokio::select! {
            reply = provider.complete(&request) => reply.map_err(|e| e.to_string())?,
            () = cancel.cancelled() => return Err("the server took the request back".to_owned()),
        };
        Ok((model, reply.text, reply.stop))
    }
}

/// A sampling message as the model gets it. Only text goes to the model: images and audio are
/// named in place, so the user sees in the approval exactly what is sent.
fn to_message(message: &SamplingMessage) -> Message {
    let text = message
        .content
        .iter()
        .map(|block| match block {
            SamplingMessageContentBlock::Text(t) => t.text.clone(),
            SamplingMessageContentBlock::Image(i) => format!("[an image, {}]", i.mime_type),
            SamplingMessageContentBlock::Audio(a) => format!("[audio, {}]", a.mime_type),
            _ => "[a tool use or result, not supported in sampling]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    match message.role {
        Role::Assistant => Message::Assistant {
            text,
            tool_calls: Vec::new(),
        },
        _ => Message::User { text },
    }
}

/// The parts of a sampling request the user can edit, and their shape.
fn sampling_schema() -> Value {
    json!({
        "type": "object",
        "required": ["messages", "maxTokens"],
        "properties": {
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "object", "required": ["role", "content"]}
            },
            "systemPrompt": {"type": "string"},
            "maxTokens": {"type": "integer", "minimum": 1},
            "temperature": {"type": "number"}
        }
    })
}

/// The model's reply, as the user reviews it.
fn reply_schema() -> Value {
    json!({
        "type": "object",
        "required": ["text"],
        "properties": {"text": {"type": "string"}}
    })
}

/// An elicitation form's answer as it starts: each field's default, where it has one.
fn form_defaults(schema: &Value) -> Value {
    let defaults = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, field)| Some((name.clone(), field.get("default")?.clone())))
        .collect();
    Value::Object(defaults)
}

fn refused(message: impl Into<String>) -> ErrorData {
    ErrorData::new(REFUSED, message.into(), None)
}

fn stop_reason(stop: StopReason) -> Option<&'static str> {
    match stop {
        StopReason::EndTurn => Some(CreateMessageResult::STOP_REASON_END_TURN),
        StopReason::MaxTokens => Some(CreateMessageResult::STOP_REASON_END_MAX_TOKEN),
        StopReason::ToolUse => Some(CreateMessageResult::STOP_REASON_TOOL_USE),
        StopReason::Other => None,
    }
}

fn pending(asker: &Asker, request: RequestKind, arguments: Value, schema: Value) -> PendingCall {
    PendingCall {
        id: String::new(),
        request,
        message: None,
        call_id: String::new(),
        server_id: asker.id.clone(),
        server_name: asker.name.clone(),
        tool: match request {
            RequestKind::Elicitation => ELICITATION,
            _ => SAMPLING,
        }
        .to_owned(),
        arguments,
        read_only: false,
        destructive: false,
        input_schema: schema,
        reason: String::new(),
        beyond_rules: false,
        client: None,
        chat: None,
        link: None,
        description: None,
        deadline: None,
    }
}

fn json_len(value: &impl serde::Serialize) -> Option<u64> {
    serde_json::to_vec(value).ok().map(|v| v.len() as u64)
}

#[async_trait]
impl ServerRequests for ServerRequestGate {
    async fn create_message(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
        cancel: CancellationToken,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asker = self.asker(server).await;
        let started = Instant::now();
        let mut shown = serde_json::to_value(&params).unwrap_or(Value::Null);
        if let Some(map) = shown.as_object_mut() {
            map.remove("_meta");
        }
        // Every decision on this request is logged against what the user was shown.
        let log = |decision, by, reason: Option<String>| {
            self.audit(&asker, SAMPLING, &shown, decision, by, reason)
        };
        if params.tools.as_ref().is_some_and(|t| !t.is_empty()) {
            log(
                AuditDecision::Denied,
                DecidedBy::Default,
                Some("sampling with tools is not supported".into()),
            )
            .await;
            return Err(ErrorData::invalid_params(
                "Toolgate does not offer tools in sampling requests; send the request without `tools`",
                None,
            ));
        }
        let subject = Subject::Sampling {
            server_id: asker.id.clone(),
            server_fingerprint: asker.fingerprint.clone(),
        };
        let verdict = toolgate_policy::decide(&subject, &self.policy.settings(), None, now_ms());
        let asked = match verdict.decision {
            toolgate_policy::Decision::Ask => {
                let mut request = pending(
                    &asker,
                    RequestKind::Sampling,
                    shown.clone(),
                    sampling_schema(),
                );
                request.reason = format!(
                    "{} asks to use your model to write a reply ({} tokens at most). You will see the reply before {} gets it.",
                    asker.name, params.max_tokens, asker.name
                );
                Some(self.ask(request, &cancel).await)
            }
            _ => None,
        };
        let (settled, audit) = self
            .settled(
                &asker,
                (Held::Sampling, &subject),
                Some(&verdict),
                asked.as_ref(),
                &shown,
            )
            .await;
        // The reply is seen before the server gets it, unless a rule or an "allow" answer
        // trusted the server with the model.
        let review = matches!(
            asked,
            Some(Asked::Answered(
                Decision::Approve | Decision::ApproveEdited { .. }
            ))
        );
        let params = match settled.next {
            Next::Refuse { told, .. } => return Err(refused(told)),
            Next::Run { edited: None } => params,
            Next::Run {
                edited: Some(arguments),
            } => {
                let mut edited: CreateMessageRequestParams = serde_json::from_value(arguments)
                    .map_err(|e| {
                        ErrorData::internal_error(
                            format!("the edited request could not be read: {e}"),
                            None,
                        )
                    })?;
                edited.meta = params.meta.clone();
                edited
            }
        };
        let (model, mut text, stop) = match self.sample(&params, &cancel).await {
            Ok(reply) => reply,
            Err(e) => {
                self.finish(audit, started, None, Some(&e));
                return Err(ErrorData::internal_error(
                    format!("The model could not answer: {e}"),
                    None,
                ));
            }
        };
        if review {
            let mut request = pending(
                &asker,
                RequestKind::Sampling,
                json!({ "text": text }),
                reply_schema(),
            );
            request.reason = format!(
                "The model ({model}) wrote this reply for {}. Send it, edit it, or deny it.",
                asker.name
            );
            let asked = self.ask(request, &cancel).await;
            let settled =
                crate::gatekeeper::settle(Held::SamplingReply, None, Some(&asked), NO_CALLER);
            if settled.rule_to_save.is_some() {
                self.remember(&subject, Effect::Deny).await;
            }
            match settled.next {
                Next::Run {
                    edited: Some(arguments),
                } => text = arguments["text"].as_str().unwrap_or_default().to_owned(),
                Next::Run { edited: None } => {}
                Next::Refuse { told, .. } => {
                    self.finish(audit, started, None, settled.audit.reason.as_deref());
                    return Err(refused(told));
                }
            }
        }
        let mut result = CreateMessageResult::new(SamplingMessage::assistant_text(text), model);
        result.stop_reason = stop_reason(stop).map(str::to_owned);
        self.finish(audit, started, json_len(&result), None);
        Ok(result)
    }

    async fn elicit(
        &self,
        server: &str,
        params: ElicitRequestParams,
        cancel: CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        let asker = self.asker(server).await;
        let started = Instant::now();
        let (question, answer, schema) = match &params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
                (message.clone(), form_defaults(&schema), schema)
            }
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                return Ok(self.open_link(&asker, message, url, &cancel).await);
            }
            _ => {
                return Ok(ElicitResult::new(ElicitationAction::Decline));
            }
        };
        let shown = json!({ "message": question, "requestedSchema": schema });
        let subject = Subject::Elicitation {
            server_id: asker.id.clone(),
            server_fingerprint: asker.fingerprint.clone(),
        };
        let verdict = toolgate_policy::decide(&subject, &self.policy.settings(), None, now_ms());
        let mut request = pending(&asker, RequestKind::Elicitation, answer, schema);
        request.message = Some(question);
        request.reason = format!(
            "{} asks you this. Your answer goes only to {}.",
            asker.name, asker.name
        );
        // Rules can refuse a question, never answer one: an allow rule still asks.
        let asked = match verdict.decision {
            toolgate_policy::Decision::Deny => None,
            _ => Some(self.ask(request.clone(), &cancel).await),
        };
        if let Some(Asked::Unattended(why)) = &asked {
            // Said where the user is (the CLI's stderr), not only in the audit log: a server
            // that asked and got "no" may behave differently than expected.
            tracing::warn!(
                "{} asked you a question and nobody could answer it ({why}); it was declined",
                asker.name
            );
        }
        // The answer itself is the user's own data: the log keeps the question, and whether
        // and how it was answered, not what was typed.
        let (settled, id) = self
            .settled(
                &asker,
                (Held::Elicitation, &subject),
                Some(&verdict),
                asked.as_ref(),
                &shown,
            )
            .await;
        let result = match settled.next {
            Next::Run {
                edited: Some(arguments),
            } => ElicitResult::new(ElicitationAction::Accept).with_content(arguments),
            Next::Run { edited: None } => {
                ElicitResult::new(ElicitationAction::Accept).with_content(request.arguments)
            }
            Next::Refuse { .. } => ElicitResult::new(not_answered(settled.audit.decision)),
        };
        // Only an answer that went to the server has an outcome to complete; a declined or
        // withdrawn question ends with its decision.
        if settled.audit.decision == AuditDecision::Allowed {
            self.finish(
                id,
                started,
                result.content.as_ref().and_then(json_len),
                None,
            );
        }
        Ok(result)
    }
}

/// How a question that was not answered ends for the server: taken back or timed out is
/// "cancel", refused is "decline".
fn not_answered(decision: AuditDecision) -> ElicitationAction {
    match decision {
        AuditDecision::TimedOut | AuditDecision::Cancelled => ElicitationAction::Cancel,
        _ => ElicitationAction::Decline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_starts_with_its_defaults() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "count": {"type": "integer", "default": 42},
                "pick": {"type": "array", "default": ["a"]}
            }
        });
        assert_eq!(form_defaults(&schema), json!({"count": 42, "pick": ["a"]}));
        assert_eq!(form_defaults(&json!({})), json!({}));
    }

    #[test]
    fn sampling_messages_reach_the_model_as_text() {
        let message = SamplingMessage::new_multiple(
            Role::User,
            vec![
                SamplingMessageContentBlock::text("hello"),
                SamplingMessageContentBlock::text("there"),
            ],
        );
        assert_eq!(
            to_message(&message),
            Message::User {
                text: "hello\nthere".into()
            }
        );
        assert!(matches!(
            to_message(&SamplingMessage::assistant_text("hi")),
            Message::Assistant { .. }
        ));
    }
}
