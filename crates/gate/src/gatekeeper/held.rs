//! How the requests that are not calls settle: a result under review, a server's sampling
//! request and the model's reply to it, a server's question, a page to open. Each is a [`Held`]
//! kind; [`super::settle`] sends them here, so every request that waits at the gate comes out of
//! the one pure step and its table (`tests/settle_table.rs`).
//!
//! What differs between kinds is said here and nowhere else:
//! - whether a rule can let it through without a question (a sampling request, yes; a question
//!   or a page, no: rules can refuse them, never answer them; a review or a reply, no: the user
//!   asked to see them);
//! - which rule an answer may make (none for a review; only "never" for a question or a page);
//! - the words of the audit entry and of what the asker is told.

use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_policy::{Decision as Ruling, Verdict};

use super::settlement::{by_rules, plain, AuditNote, Held, Next, RuleToSave, Settlement};
use crate::wait::{Asked, Decision, Lasting, Reach};

/// Settles a request of a kind other than a call or a read. `verdict` is the rules' word where
/// rules apply (a sampling request, a question, a page), `None` where the user asked to see it
/// (a review, a reply).
pub(super) fn settle(held: Held, verdict: Option<&Verdict>, asked: Option<&Asked>) -> Settlement {
    if let Some(verdict) = verdict {
        match verdict.decision {
            // A restriction holds whatever was answered.
            Ruling::Deny => {
                return Settlement {
                    audit: by_rules(verdict, AuditDecision::Denied),
                    announce: None,
                    rule_to_save: None,
                    next: Next::Refuse {
                        shown: Some(verdict.reason.clone()),
                        told: words(held).ruled_out(&verdict.reason),
                    },
                }
            }
            // Only a sampling request can be let through by a rule.
            Ruling::Allow if held == Held::Sampling => {
                return Settlement {
                    audit: by_rules(verdict, AuditDecision::Allowed),
                    announce: None,
                    rule_to_save: None,
                    next: Next::Run { edited: None },
                }
            }
            Ruling::Allow | Ruling::Ask => {}
        }
    }
    match asked {
        None => plain(
            AuditDecision::Denied,
            DecidedBy::Toolgate,
            "the user was to be asked, but no question was put",
            Next::Refuse {
                shown: None,
                told: words(held).refused("Toolgate could not ask the user"),
            },
        ),
        Some(asked) => answered(held, asked),
    }
}

fn answered(held: Held, asked: &Asked) -> Settlement {
    let w = words(held);
    match asked {
        Asked::Unattended(why) => plain(
            AuditDecision::Denied,
            DecidedBy::Unattended,
            &w.audit(&format!("{}, nobody could be asked ({why})", w.not_done)),
            Next::Refuse {
                shown: Some(why.clone()),
                told: w.refused(&format!("nobody could be asked ({why})")),
            },
        ),
        Asked::Stopped => plain(
            AuditDecision::Cancelled,
            DecidedBy::User,
            &w.audit(&format!("{}, {}", w.not_done, w.stopped)),
            Next::Refuse {
                shown: None,
                told: w.refused(w.stopped),
            },
        ),
        Asked::TimedOut(after) => {
            let why = format!("nobody answered within {} s", after.as_secs());
            plain(
                AuditDecision::TimedOut,
                DecidedBy::Timeout,
                &w.audit(&format!("{}, {why}", w.not_done)),
                Next::Refuse {
                    shown: Some(why.clone()),
                    told: w.refused(&why),
                },
            )
        }
        Asked::Answered(decision) => by_user(held, decision),
    }
}

fn by_user(held: Held, decision: &Decision) -> Settlement {
    let w = words(held);
    let user = |decision, reason: String, rule_to_save, next| Settlement {
        audit: AuditNote {
            decision,
            by: DecidedBy::User,
            rule_id: None,
            reason: Some(w.audit(&reason)),
        },
        announce: None,
        rule_to_save,
        next,
    };
    match decision {
        Decision::Deny { reason } => {
            let because = match reason {
                Some(r) if !r.trim().is_empty() => format!("the user {}: {r}", w.declined),
                _ => format!("the user {}", w.declined),
            };
            // The user's own words are the log's reason, as for a call; a review's entry
            // keeps its "result review:" form.
            let logged = match reason {
                Some(r) if !r.trim().is_empty() && held != Held::ResultReview => r.clone(),
                _ => format!("{} ({because})", w.not_done),
            };
            user(
                AuditDecision::Denied,
                logged,
                None,
                Next::Refuse {
                    shown: reason.clone(),
                    told: w.refused(&because),
                },
            )
        }
        Decision::DenyAlways { .. } => user(
            AuditDecision::Denied,
            format!("{}, and from now on", w.not_done),
            // A review is the user's own setting: "never" there is a withholding, not a rule.
            (held != Held::ResultReview).then_some(RuleToSave {
                allow: false,
                reach: Reach::Server,
                lasting: Lasting::Always,
            }),
            Next::Refuse {
                shown: None,
                told: w.refused(&format!("the user {}, and from now on", w.declined)),
            },
        ),
        Decision::ApproveEdited { arguments } => user(
            AuditDecision::Allowed,
            w.edited.to_owned(),
            None,
            Next::Run {
                edited: Some(arguments.clone()),
            },
        ),
        Decision::Allow { lasting, .. } => user(
            AuditDecision::Allowed,
            w.done.to_owned(),
            // Only a sampling request can be trusted for later by an answer: a question or a
            // page is always the user's to answer, a review always the user's to see.
            (held == Held::Sampling && *lasting == Lasting::Always).then_some(RuleToSave {
                allow: true,
                reach: Reach::Server,
                lasting: Lasting::Always,
            }),
            Next::Run { edited: None },
        ),
        Decision::Approve => user(
            AuditDecision::Allowed,
            w.done.to_owned(),
            None,
            Next::Run { edited: None },
        ),
    }
}

/// A kind's words.
struct Words {
    /// What the audit entry's reason starts with ("result review: "), if anything.
    audit_prefix: &'static str,
    /// What did not happen ("withheld", "not sent").
    not_done: &'static str,
    /// What the user did when refusing ("withheld it").
    declined: &'static str,
    /// What happened when approved, for the audit.
    done: &'static str,
    /// What happened when approved with an edit, for the audit.
    edited: &'static str,
    /// Why it ended when the turn or the server took it back.
    stopped: &'static str,
    /// The start of what the asker is told when it did not happen.
    told: &'static str,
}

impl Words {
    fn audit(&self, reason: &str) -> String {
        format!("{}{reason}", self.audit_prefix)
    }

    fn refused(&self, why: &str) -> String {
        format!("{}: {why}.", self.told)
    }

    fn ruled_out(&self, reason: &str) -> String {
        self.refused(&format!("the user's rules refuse it ({reason})"))
    }
}

fn words(held: Held) -> Words {
    match held {
        Held::ResultReview => Words {
            audit_prefix: "result review: ",
            not_done: "withheld",
            declined: "withheld it",
            done: "passed unchanged",
            edited: "edited before it was seen",
            stopped: "the turn was stopped",
            told: "The result of this call was withheld from you",
        },
        Held::Sampling => Words {
            audit_prefix: "",
            not_done: "refused",
            declined: "rejected the sampling request",
            done: "allowed",
            edited: "approved with an edited request",
            stopped: "the server took the request back",
            told: "The sampling request was refused",
        },
        Held::SamplingReply => Words {
            audit_prefix: "",
            not_done: "the reply was not sent",
            declined: "kept the reply back",
            done: "the reply was sent",
            edited: "the reply was edited before it was sent",
            stopped: "the server took the request back",
            told: "The reply was not sent",
        },
        Held::Elicitation => Words {
            audit_prefix: "",
            not_done: "declined",
            declined: "declined the question",
            done: "answered",
            edited: "answered",
            stopped: "the server took the question back",
            told: "The question was not answered",
        },
        Held::Link => Words {
            audit_prefix: "",
            not_done: "not opened",
            declined: "did not open the page",
            done: "opened in the browser",
            edited: "opened in the browser",
            stopped: "the server took the question back",
            told: "The page was not opened",
        },
        // Calls and reads settle in `super`; their words are there.
        Held::ToolCall | Held::ResourceRead | Held::PromptGet => Words {
            audit_prefix: "",
            not_done: "not run",
            declined: "denied it",
            done: "allowed",
            edited: "approved with edited arguments",
            stopped: "the user stopped the turn",
            told: "Toolgate did not run this",
        },
    }
}
