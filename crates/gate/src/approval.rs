//! What the gate consults before asking: the user's rules (through a [`PolicyStore`]), and
//! where each decision is written down (the audit log).

use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolgate_catalog::Entry;
use toolgate_history::{AuditDecision, AuditEntry, AuditRef, DecidedBy, History};
use toolgate_mcp::Launch;
use toolgate_policy::{
    server_fingerprint, tool_fingerprint, Annotations, PolicyError, PolicySettings, Rule, Scope,
    ServerEndpoint, ToolCall as PolicyCall,
};

use crate::gatekeeper::AuditNote;
use crate::wait::{Lasting, Reach};

/// The user's approval rules: read at every call (so a rule added mid-turn applies to the next
/// call), and added to when the user answers "always".
#[async_trait::async_trait]
pub trait PolicyStore: Send + Sync {
    /// The rules as they are now: shared, not copied, since every call reads them.
    fn settings(&self) -> Arc<PolicySettings>;
    /// Adds a rule and keeps it (a store that saves to a file does so off the async workers).
    async fn add_rule(&self, rule: Rule) -> Result<(), RuleNotKept>;
}

/// Why a rule the user asked for was not kept.
#[derive(Debug, thiserror::Error)]
pub enum RuleNotKept {
    /// The rules refused it (a malformed rule, say).
    #[error(transparent)]
    Refused(#[from] PolicyError),
    /// Toolgate is shutting down.
    #[error("Toolgate is stopping; the rule was not saved")]
    Stopping,
    /// The store could not write it down.
    #[error("the rule was not saved: {0}")]
    NotSaved(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Rules kept in memory, for the CLI's one-off grants and for tests.
#[derive(Default)]
pub struct MemoryPolicy(Mutex<Arc<PolicySettings>>);

impl MemoryPolicy {
    pub fn new(settings: PolicySettings) -> Self {
        Self(Mutex::new(Arc::new(settings)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Arc<PolicySettings>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_paused(&self, paused: bool) {
        Arc::make_mut(&mut self.lock()).paused = paused;
    }

    /// Adds a rule now (the store's own, synchronous form of [`PolicyStore::add_rule`]).
    pub fn add_rule(&self, rule: Rule) -> Result<(), PolicyError> {
        Arc::make_mut(&mut self.lock()).add_rule(rule)
    }
}

#[async_trait::async_trait]
impl PolicyStore for MemoryPolicy {
    fn settings(&self) -> Arc<PolicySettings> {
        self.lock().clone()
    }

    async fn add_rule(&self, rule: Rule) -> Result<(), RuleNotKept> {
        Ok(MemoryPolicy::add_rule(self, rule)?)
    }
}

/// The fingerprint of what a server runs, to bind grants to it.
pub fn launch_fingerprint(launch: &Launch) -> String {
    match launch {
        Launch::Stdio { command, args } => {
            server_fingerprint(&ServerEndpoint::Stdio { command, args })
        }
        Launch::Http { url } => server_fingerprint(&ServerEndpoint::Http { url }),
    }
}

/// The fingerprint of what a tool is (its name, description and inputs), to bind grants to it.
pub fn tool_print(entry: &Entry) -> String {
    tool_fingerprint(
        &entry.tool.name,
        &entry.tool.description,
        &entry.tool.input_schema,
    )
}

/// The policy's view of a call: which server and tool (by original name), the arguments, the
/// tool's hints, and the fingerprints its grants are bound to.
pub fn subject(
    entry: &Entry,
    server_fingerprint: &str,
    tool_fingerprint: &str,
    arguments: &Value,
) -> PolicyCall {
    let annotations = entry.annotations();
    PolicyCall {
        server_id: entry.server_id.clone(),
        tool: entry.tool.name.clone(),
        arguments: arguments.clone(),
        annotations: Annotations {
            read_only: annotations.read_only_hint == Some(true),
            destructive: annotations.destructive_hint == Some(true),
        },
        server_fingerprint: server_fingerprint.to_owned(),
        tool_fingerprint: tool_fingerprint.to_owned(),
    }
}

/// The rule an "always" answer makes.
pub fn rule_for(
    call: &PolicyCall,
    allow: bool,
    reach: Reach,
    lasting: Lasting,
    conversation: Option<&str>,
    client: Option<&str>,
    now_ms: i64,
) -> Rule {
    let scope = match (lasting, conversation) {
        (Lasting::Conversation, Some(id)) => Scope::Conversation { id: id.to_owned() },
        _ => Scope::Always,
    };
    let id = uuid::Uuid::new_v4().to_string();
    let mut rule = match (allow, reach) {
        (true, Reach::Tool) => Rule::allow_tool(id, call, scope, now_ms),
        (true, Reach::Server) => Rule::allow_server(id, call, scope, now_ms),
        (false, Reach::Tool) => Rule::deny_tool(id, call, scope, now_ms),
        (false, Reach::Server) => {
            // A refusal is never bound to fingerprints: a changed server stays refused.
            let mut rule = Rule::allow_server(id, call, scope, now_ms);
            rule.effect = toolgate_policy::Effect::Deny;
            rule.bound_to = None;
            rule
        }
    };
    // "Always" said to a connected client's call is about that client: Claude Code allowed to
    // write files does not make Cursor allowed to.
    rule.client = client.map(str::to_owned);
    rule
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Writes decisions to the audit log. Failures are logged, never fatal: the user's answer stands.
#[derive(Clone, Default)]
pub struct Audit {
    pub history: Option<Arc<History>>,
    pub conversation: Option<String>,
    /// The connected client whose calls these are, if any.
    pub client: Option<String>,
}

impl Audit {
    /// Writes the decision to allow a call, before the call is sent: into the history's audit
    /// journal (in the operating system when this returns, so it survives the app being
    /// killed), and queued for the database, with no commit on the call's path. `None` (logged)
    /// when it could not be written: the user's answer stands regardless.
    pub fn allowed(
        &self,
        call: &PolicyCall,
        arguments: &Value,
        original: Option<&Value>,
        note: AuditNote,
    ) -> Option<AuditRef> {
        let history = self.history.as_ref()?;
        history
            .journal_audit(self.entry(call, arguments, original, note))
            .map_err(|e| tracing::error!("could not write the audit log: {e}"))
            .ok()
    }

    /// Queues a decision that runs nothing (a refusal, a time-out) on the history's writer
    /// thread, without waiting (a failure is logged by the writer).
    pub fn refused(&self, call: &PolicyCall, arguments: &Value, note: AuditNote) {
        if let Some(history) = self.history.as_ref() {
            drop(history.queue_audit(&self.entry(call, arguments, None, note)));
        }
    }

    fn entry(
        &self,
        call: &PolicyCall,
        arguments: &Value,
        original: Option<&Value>,
        note: AuditNote,
    ) -> AuditEntry {
        self.entry_for(&call.server_id, &call.tool, arguments, original, note)
    }

    fn entry_for(
        &self,
        server_id: &str,
        tool: &str,
        arguments: &Value,
        original: Option<&Value>,
        note: AuditNote,
    ) -> AuditEntry {
        let mut entry = AuditEntry::new(server_id, tool, arguments.clone(), note.decision, note.by);
        entry.conversation_id = self.conversation.clone();
        entry.client = self.client.clone();
        entry.original_arguments = original.cloned();
        entry.rule_id = note.rule_id;
        entry.reason = note.reason;
        entry
    }

    /// Writes a decision about a server's request (`tool` is the protocol's method) and waits
    /// for its commit on the writer thread; its id completes it later. `None` (logged) when it
    /// could not be written.
    pub async fn committed(
        &self,
        server_id: &str,
        tool: &str,
        arguments: &Value,
        note: AuditNote,
    ) -> Option<i64> {
        self.history
            .as_ref()?
            .queue_audit(&self.entry_for(server_id, tool, arguments, None, note))
            .await
            .map_err(|e| tracing::error!("could not write the audit log: {e}"))
            .ok()
    }

    /// A call refused before any rule or person could decide it (an unknown tool, arguments
    /// that are not an object): logged too, so the log holds every call the model asked for.
    pub fn refused_early(&self, server_id: &str, tool: &str, arguments: &Value, reason: String) {
        let Some(history) = self.history.as_ref() else {
            return;
        };
        let note = AuditNote {
            decision: AuditDecision::Denied,
            by: DecidedBy::Toolgate,
            rule_id: None,
            reason: Some(reason),
        };
        // Not waited for: the call never runs. A failure is logged by the writer.
        drop(history.queue_audit(&self.entry_for(server_id, tool, arguments, None, note)));
    }

    /// Completes an entry when its call returns. Queued, not waited for and not woken for: the
    /// result goes back at once, and the entry is committed with the writer's next batch (a
    /// failure is logged).
    pub fn finish(
        &self,
        entry: Option<&AuditRef>,
        millis: u64,
        bytes: Option<u64>,
        error: Option<&str>,
    ) {
        if let (Some(history), Some(entry)) = (&self.history, entry) {
            history.finish_audit_later(entry, millis, bytes, error.is_some(), error);
        }
    }
}
