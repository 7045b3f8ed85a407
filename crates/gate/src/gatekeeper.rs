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

use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_policy::{Basis, ChangeKind, Decision as Ruling, Verdict};

use crate::wait::{Asked, Decision, Lasting};

mod held;
mod settlement;

pub use settlement::by_rules;
use settlement::plain;
pub use settlement::{decided_by, Announce, Asker, AuditNote, Held, Next, RuleToSave, Settlement};

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
        Basis::Provenance => "No rule can allow a change made with values that came from \
             outside content rather than from you: only a person's answer (in Toolgate's window, \
             or at a terminal) lets it run, or the same call with values you gave."
            .to_owned(),
        // Asked by a rule or the default, and held by its content besides: a rule alone
        // would not let it run.
        _ if verdict.beyond_rules => "No rule can allow it as it stands (the reason says what \
             it carries or what was read): only a person's answer (in Toolgate's window, or at \
             a terminal) lets it run."
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

/// A refusal Toolgate makes: the card shows why; the caller is told Toolgate did not run it.
fn refused(reason: String) -> Next {
    Next::Refuse {
        told: format!("Toolgate did not run this call: {reason}"),
        shown: Some(reason),
    }
}
