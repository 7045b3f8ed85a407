//! The gatekeeper's one decision: what a request's verdict and the user's answer come to.
//!
//! Every request that waits at the gate is a [`Held`] kind: a call, a client's resource read or
//! prompt get, a result under review, a server's sampling request and the model's reply to it, a server's
//! question, a page to open. A call passes the gate in five steps (`Agent::gated`): resolve the
//! tool, ask the rules for a verdict, ask the user when the verdict says so
//! ([`Gate::ask`](crate::Gate::ask)), settle, and carry the settlement out; the other kinds take
//! the same steps where they apply. [`settle`] is the fourth step and the only one that decides
//! anything: a pure function from the kind, the verdict, how the wait ended and who asks, to
//! everything that follows — the audit entry, the event the window gets, the rule to save, and
//! whether the request goes ahead or what the asker is told. Being pure, it is tested as a table
//! (`tests/settle_table.rs`), every kind × verdict × answer × caller row.
//!
//! Invariants:
//! - Only [`Next::Run`] lets a request go ahead, and only an allow verdict (for the kinds a rule
//!   may let through: calls, reads, prompt gets, sampling) or a user's approval produces it. Anything
//!   unexpected (a question that was never asked) refuses.
//! - Every settlement has an audit entry; an entry names a rule only when a rule decided.
//! - "In this chat" said to a connected client's call (which belongs to no chat) is that call
//!   only, never quietly "always".
//! - An answer never makes a rule that answers a server's question or skips a review.

use serde_json::Value;
use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_policy::{Basis, ChangeKind, Decision as Ruling, Verdict};

use crate::gate::{Asked, Decision, Lasting, Reach};

mod held;

/// What waits at the gate; every kind settles through [`settle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Held {
    /// A model's or a connected client's tool call.
    ToolCall,
    /// A connected client's `resources/read` ([`crate::resource`]).
    ResourceRead,
    /// A connected client's `prompts/get` ([`crate::resource`]).
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

/// Why the user is asked, as the card says it: the verdict's reason, and any grant that no
/// longer applies because what it was given to changed.
pub fn ask_reason(verdict: &Verdict) -> String {
    let mut reason = verdict.reason.clone();
    for changed in &verdict.changed {
        let what = match changed.what {
            ChangeKind::ServerChanged => "the server's command or address changed",
            ChangeKind::ToolChanged => "the tool's description or inputs changed",
        };
        reason.push_str(&format!(" Asking again: {what} since you allowed it."));
    }
    reason
}

/// Settles a request of kind `held`: `verdict` is the rules' word (`None` for the kinds the
/// user always sees: a review, a reply), `asked` how the wait at the gate ended (`None` when
/// nothing was asked).
pub fn settle(
    held: Held,
    verdict: Option<&Verdict>,
    asked: Option<&Asked>,
    asker: Asker<'_>,
) -> Settlement {
    match (held, verdict) {
        (Held::ToolCall | Held::ResourceRead | Held::PromptGet, Some(verdict)) => {
            settle_call(verdict, asked, asker)
        }
        (Held::ToolCall | Held::ResourceRead | Held::PromptGet, None) => plain(
            AuditDecision::Denied,
            DecidedBy::Toolgate,
            "the rules gave no verdict",
            refused("Toolgate could not decide about this call".to_owned()),
        ),
        (other, verdict) => held::settle(other, verdict, asked),
    }
}

/// A call or a read.
fn settle_call(verdict: &Verdict, asked: Option<&Asked>, asker: Asker<'_>) -> Settlement {
    match (verdict.decision, asked) {
        (Ruling::Deny, _) => Settlement {
            audit: by_rules(verdict, AuditDecision::Denied),
            announce: Some(Announce::DecidedByRule { allowed: false }),
            rule_to_save: None,
            next: refused(verdict.reason.clone()),
        },
        (Ruling::Allow, _) => Settlement {
            audit: by_rules(verdict, AuditDecision::Allowed),
            announce: Some(Announce::DecidedByRule { allowed: true }),
            rule_to_save: None,
            next: Next::Run { edited: None },
        },
        (Ruling::Ask, None) => plain(
            AuditDecision::Denied,
            DecidedBy::Toolgate,
            "the rules asked the user, but no question was put",
            refused("Toolgate could not ask you about this call".to_owned()),
        ),
        (Ruling::Ask, Some(asked)) => answered(verdict, asked, asker),
    }
}

/// What would let a call the rules left to the user run when nobody can be asked, in words
/// for the model or host and the person reading its log. Only what would change the outcome
/// is offered: an allow rule, say, is never suggested for a call asked because of untrusted
/// content, which asks whatever the rules allow.
pub fn remedy(verdict: &Verdict, asker: Asker<'_>) -> String {
    let place = if asker.conversation.is_none() && asker.client.is_some() {
        "connection"
    } else {
        "chat"
    };
    let one_run = if asker.client.is_none() {
        " (or `--approve` for one run)"
    } else {
        ""
    };
    match verdict.basis {
        Basis::Untrusted => format!(
            "No rule can allow it while this {place} holds that content: only a person's answer \
             (in Toolgate's window, or `toolgate serve` at a terminal) or a new {place} that has \
             not read it lets it run."
        ),
        Basis::Secret => "No rule can allow arguments that carry a secret: only a person's answer \
             (in Toolgate's window, or at a terminal) lets it run, or the same call without it."
            .to_owned(),
        Basis::Rule => "Your rule asks before this call: only a person's answer (in Toolgate's \
             window, or at a terminal), or changing that rule, lets it run."
            .to_owned(),
        Basis::Destructive => format!(
            "The server marks the tool destructive: an allow rule for this tool itself (one for \
             its whole server does not cover it){one_run} would let it run."
        ),
        Basis::Default | Basis::ReadOnly | Basis::Paused if !verdict.changed.is_empty() => format!(
            "Look at what changed in Toolgate and allow the tool again{one_run} to let it run."
        ),
        Basis::Default | Basis::ReadOnly | Basis::Paused => {
            format!("An allow rule for this tool{one_run} would let it run.")
        }
    }
}

fn answered(verdict: &Verdict, asked: &Asked, asker: Asker<'_>) -> Settlement {
    match asked {
        Asked::Unattended(nobody) => {
            let why = format!(
                "it needs approval ({}), and nobody could be asked ({nobody})",
                ask_reason(verdict)
            );
            Settlement {
                announce: Some(Announce::Unattended),
                ..plain(
                    AuditDecision::Denied,
                    DecidedBy::Unattended,
                    &why,
                    Next::Refuse {
                        told: format!(
                            "Toolgate did not run this call: {why}. {}",
                            remedy(verdict, asker)
                        ),
                        shown: Some(why.clone()),
                    },
                )
            }
        }
        Asked::Stopped => {
            let why = "the user stopped the turn";
            plain(
                AuditDecision::Cancelled,
                DecidedBy::User,
                why,
                refused(why.to_owned()),
            )
        }
        Asked::TimedOut(after) => {
            let why = format!("nobody answered within {} s", after.as_secs());
            plain(
                AuditDecision::TimedOut,
                DecidedBy::Timeout,
                &why,
                refused(why.clone()),
            )
        }
        Asked::Answered(decision) => Settlement {
            rule_to_save: rule_to_save(decision, asker),
            ..by_user(decision)
        },
    }
}

fn by_user(decision: &Decision) -> Settlement {
    let user = |decision, reason: Option<String>, next| Settlement {
        audit: AuditNote {
            decision,
            by: DecidedBy::User,
            rule_id: None,
            reason,
        },
        announce: None,
        rule_to_save: None,
        next,
    };
    match decision {
        Decision::Deny { reason } => {
            let told = match reason {
                Some(r) if !r.trim().is_empty() => format!("The user denied this tool call: {r}"),
                _ => "The user denied this tool call.".to_owned(),
            };
            user(
                AuditDecision::Denied,
                reason.clone(),
                Next::Refuse {
                    shown: reason.clone(),
                    told,
                },
            )
        }
        Decision::DenyAlways { .. } => user(
            AuditDecision::Denied,
            Some("denied, and from now on".to_owned()),
            Next::Refuse {
                shown: None,
                told: "The user denied this tool call, and will not allow it.".to_owned(),
            },
        ),
        Decision::ApproveEdited { arguments } => user(
            AuditDecision::Allowed,
            Some("approved with edited arguments".to_owned()),
            Next::Run {
                edited: Some(arguments.clone()),
            },
        ),
        Decision::Approve | Decision::Allow { .. } => {
            user(AuditDecision::Allowed, None, Next::Run { edited: None })
        }
    }
}

/// The rule an answer makes, if any.
fn rule_to_save(decision: &Decision, asker: Asker<'_>) -> Option<RuleToSave> {
    match *decision {
        // A client's call belongs to no chat: "in this chat" is this call only.
        Decision::Allow {
            lasting: Lasting::Conversation,
            ..
        } if asker.conversation.is_none() && asker.client.is_some() => None,
        Decision::Allow { reach, lasting } => Some(RuleToSave {
            allow: true,
            reach,
            lasting,
        }),
        Decision::DenyAlways { reach } => Some(RuleToSave {
            allow: false,
            reach,
            lasting: Lasting::Always,
        }),
        _ => None,
    }
}

/// The audit entry of a decision the rules (or the pause) made.
pub(crate) fn by_rules(verdict: &Verdict, decision: AuditDecision) -> AuditNote {
    let by = decided_by(verdict.basis);
    AuditNote {
        decision,
        by,
        rule_id: verdict.rule_id.clone().filter(|_| by == DecidedBy::Rule),
        reason: Some(verdict.reason.clone()),
    }
}

fn plain(decision: AuditDecision, by: DecidedBy, reason: &str, next: Next) -> Settlement {
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

/// A refusal Toolgate makes: the card shows why; the caller is told Toolgate did not run it.
fn refused(reason: String) -> Next {
    Next::Refuse {
        told: format!("Toolgate did not run this call: {reason}"),
        shown: Some(reason),
    }
}
