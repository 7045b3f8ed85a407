//! What a settlement is made of: the kinds of held request, who asks, and what follows from a
//! settled request (the audit entry, the announcement, the rule to save, whether it goes ahead).
//! Shared by the call's settlement (`gatekeeper.rs`) and the other kinds' (`held.rs`).

use serde_json::Value;
use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_policy::{Basis, Verdict};

use crate::wait::{Lasting, Reach};

/// What waits at the gate; every kind settles through [`super::settle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Held {
    /// A model's or a connected client's tool call.
    ToolCall,
    /// A connected client's `resources/read` (`toolgate_agent::resource`).
    ResourceRead,
    /// A connected client's `prompts/get` (`toolgate_agent::resource`).
    PromptGet,
    /// A result the user reviews before the model or client sees it (always asked).
    ResultReview,
    /// A server's request to use the user's model (a rule may allow it).
    Sampling,
    /// The model's reply to a sampling request, seen before the server gets it (always asked).
    SamplingReply,
    /// A server's question to the user: rules may refuse it, never answer it.
    Elicitation,
    /// A page a server asks the user to open: rules may refuse it, never open it.
    Link,
}

impl Held {
    /// Every kind, for tables.
    pub const ALL: [Held; 8] = [
        Held::ToolCall,
        Held::ResourceRead,
        Held::PromptGet,
        Held::ResultReview,
        Held::Sampling,
        Held::SamplingReply,
        Held::Elicitation,
        Held::Link,
    ];

    /// Whether an allow verdict lets this kind through without a question.
    pub fn rules_may_allow(self) -> bool {
        matches!(
            self,
            Held::ToolCall | Held::ResourceRead | Held::PromptGet | Held::Sampling
        )
    }
}

/// Who asks for the call: the conversation it belongs to (Toolgate's chat, the CLI's run, an
/// MCP App shown in a chat), and the connected client or app it comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asker<'a> {
    pub conversation: Option<&'a str>,
    pub client: Option<&'a str>,
}

/// The audit log's entry for the call.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditNote {
    pub decision: AuditDecision,
    pub by: DecidedBy,
    /// The rule that decided, only when one did.
    pub rule_id: Option<String>,
    pub reason: Option<String>,
}

/// What the window is told of the decision before the call runs or is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announce {
    /// A rule (or the pause) decided without asking.
    DecidedByRule { allowed: bool },
    /// The rules left it to the user, and nobody can be asked.
    Unattended,
}

/// A rule the user's answer makes ("always", "in this chat", "never").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleToSave {
    pub allow: bool,
    pub reach: Reach,
    pub lasting: Lasting,
}

/// Whether the call runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// It runs: with the user's edited arguments when there are some, else as asked.
    Run { edited: Option<Value> },
    /// It does not: `shown` on the call's card, `told` to the model or client.
    Refuse { shown: Option<String>, told: String },
}

/// Everything that follows from a settled call.
#[derive(Debug, Clone, PartialEq)]
pub struct Settlement {
    pub audit: AuditNote,
    pub announce: Option<Announce>,
    pub rule_to_save: Option<RuleToSave>,
    pub next: Next,
}

/// Who decided, as the audit log names it, when the rules decided.
pub fn decided_by(basis: Basis) -> DecidedBy {
    match basis {
        Basis::Paused => DecidedBy::Pause,
        Basis::Rule => DecidedBy::Rule,
        _ => DecidedBy::Default,
    }
}

/// The audit entry of a decision the rules (or the pause) made.
pub fn by_rules(verdict: &Verdict, decision: AuditDecision) -> AuditNote {
    let by = decided_by(verdict.basis);
    AuditNote {
        decision,
        by,
        rule_id: verdict.rule_id.clone().filter(|_| by == DecidedBy::Rule),
        reason: Some(verdict.reason.clone()),
    }
}

pub(super) fn plain(
    decision: AuditDecision,
    by: DecidedBy,
    reason: &str,
    next: Next,
) -> Settlement {
    Settlement {
        audit: AuditNote {
            decision,
            by,
            rule_id: None,
            reason: Some(reason.to_owned()),
        },
        announce: None,
        rule_to_save: None,
        next,
    }
}
