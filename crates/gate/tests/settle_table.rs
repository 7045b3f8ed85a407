//! The gatekeeper's settlement as a table: every kind of held request × verdict × how the wait
//! ended × who asks.
//!
//! The first table states each distinct row of a call in full (audit entry, announcement, rule,
//! next); the third does the same for the other kinds. The second and fourth walk the whole
//! cross product and check the invariants every row must keep, so a row added to `settle`
//! without a line here still cannot run a request it should refuse.

use std::time::Duration;

use serde_json::json;
use toolgate_gate::gatekeeper::{settle, Announce, Asker, AuditNote, Held, Next, RuleToSave};
use toolgate_gate::{Asked, Decision, Lasting, Reach};
use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_policy::{Basis, Decision as Ruling, Verdict};

fn verdict(decision: Ruling, basis: Basis) -> Verdict {
    Verdict {
        decision,
        basis,
        reason: format!("{basis:?} says {decision:?}"),
        rule_id: (basis == Basis::Rule).then(|| "r1".to_owned()),
        changed: Vec::new(),
        beyond_rules: matches!(basis, Basis::Untrusted | Basis::Secret | Basis::Provenance),
    }
}

/// An ask whose allow rule lapsed because the tool changed since.
fn changed_since_allowed() -> Verdict {
    Verdict {
        changed: vec![toolgate_policy::Changed {
            rule_id: "r0".into(),
            what: toolgate_policy::ChangeKind::ToolChanged,
        }],
        ..verdict(Ruling::Ask, Basis::Default)
    }
}

const CHAT: Asker<'static> = Asker {
    conversation: Some("c1"),
    client: None,
};
const CLIENT: Asker<'static> = Asker {
    conversation: None,
    client: Some("claude-code"),
};
const APP: Asker<'static> = Asker {
    conversation: Some("c1"),
    client: Some("the Everything app"),
};
const NOBODY: Asker<'static> = Asker {
    conversation: None,
    client: None,
};

fn note(
    decision: AuditDecision,
    by: DecidedBy,
    rule: Option<&str>,
    reason: Option<&str>,
) -> AuditNote {
    AuditNote {
        decision,
        by,
        rule_id: rule.map(str::to_owned),
        reason: reason.map(str::to_owned),
    }
}

fn refuse(shown: Option<&str>, told: &str) -> Next {
    Next::Refuse {
        shown: shown.map(str::to_owned),
        told: told.to_owned(),
    }
}

const RUN: Next = Next::Run { edited: None };

fn save(allow: bool, reach: Reach, lasting: Lasting) -> Option<RuleToSave> {
    Some(RuleToSave {
        allow,
        reach,
        lasting,
    })
}

/// A row: its name, the verdict, how the wait ended, who asks; then what must follow.
type Row = (
    &'static str,
    Verdict,
    Option<Asked>,
    Asker<'static>,
    AuditNote,
    Option<Announce>,
    Option<RuleToSave>,
    Next,
);

#[test]
fn each_distinct_row() {
    use AuditDecision as A;
    use DecidedBy as By;
    let ask = verdict(Ruling::Ask, Basis::Default);
    let answered = |d: Decision| Some(Asked::Answered(d));
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        ("a rule allows", verdict(Ruling::Allow, Basis::Rule), None, CHAT,
            note(A::Allowed, By::Rule, Some("r1"), Some("Rule says Allow")),
            Some(Announce::DecidedByRule { allowed: true }), None, RUN),
        ("read-only by default", verdict(Ruling::Allow, Basis::ReadOnly), None, CLIENT,
            note(A::Allowed, By::Default, None, Some("ReadOnly says Allow")),
            Some(Announce::DecidedByRule { allowed: true }), None, RUN),
        ("a rule denies", verdict(Ruling::Deny, Basis::Rule), None, CHAT,
            note(A::Denied, By::Rule, Some("r1"), Some("Rule says Deny")),
            Some(Announce::DecidedByRule { allowed: false }), None,
            refuse(Some("Rule says Deny"), "Toolgate did not run this call: Rule says Deny")),
        ("paused", verdict(Ruling::Deny, Basis::Paused), None, APP,
            note(A::Denied, By::Pause, None, Some("Paused says Deny")),
            Some(Announce::DecidedByRule { allowed: false }), None,
            refuse(Some("Paused says Deny"), "Toolgate did not run this call: Paused says Deny")),
        ("an answer given to a verdict that never asked is ignored", verdict(Ruling::Deny, Basis::Rule), answered(Decision::Approve), CHAT,
            note(A::Denied, By::Rule, Some("r1"), Some("Rule says Deny")),
            Some(Announce::DecidedByRule { allowed: false }), None,
            refuse(Some("Rule says Deny"), "Toolgate did not run this call: Rule says Deny")),
        ("asked but never put", ask.clone(), None, CHAT,
            note(A::Denied, By::Toolgate, None, Some("the rules asked the user, but no question was put")),
            None, None,
            refuse(Some("Toolgate could not ask you about this call"), "Toolgate did not run this call: Toolgate could not ask you about this call")),
        ("nobody to ask, no rule", ask.clone(), Some(Asked::Unattended("no terminal".into())), CLIENT,
            note(A::Denied, By::Unattended, None, Some("it needs approval (Default says Ask), and nobody could be asked (no terminal)")),
            Some(Announce::Unattended), None,
            refuse(Some("it needs approval (Default says Ask), and nobody could be asked (no terminal)"),
                "Toolgate did not run this call: it needs approval (Default says Ask), and nobody could be asked (no terminal). \
                 An allow rule for this tool would let it run.")),
        ("nobody to ask, no rule, in a run", ask.clone(), Some(Asked::Unattended("no terminal".into())), CHAT,
            note(A::Denied, By::Unattended, None, Some("it needs approval (Default says Ask), and nobody could be asked (no terminal)")),
            Some(Announce::Unattended), None,
            refuse(Some("it needs approval (Default says Ask), and nobody could be asked (no terminal)"),
                "Toolgate did not run this call: it needs approval (Default says Ask), and nobody could be asked (no terminal). \
                 An allow rule for this tool (or `--approve` for one run) would let it run.")),
        ("nobody to ask, no rule, and an outside value besides", Verdict { beyond_rules: true, ..ask.clone() }, Some(Asked::Unattended("no terminal".into())), CLIENT,
            note(A::Denied, By::Unattended, None, Some("it needs approval (Default says Ask), and nobody could be asked (no terminal)")),
            Some(Announce::Unattended), None,
            refuse(Some("it needs approval (Default says Ask), and nobody could be asked (no terminal)"),
                "Toolgate did not run this call: it needs approval (Default says Ask), and nobody could be asked (no terminal). \
                 No rule can allow it as it stands (the reason says what it carries or what was read): only a person's answer (in Toolgate's window, or at a terminal) lets it run.")),
        ("nobody to ask, untrusted content read", verdict(Ruling::Ask, Basis::Untrusted), Some(Asked::Unattended("no terminal".into())), CLIENT,
            note(A::Denied, By::Unattended, None, Some("it needs approval (Untrusted says Ask), and nobody could be asked (no terminal)")),
            Some(Announce::Unattended), None,
            refuse(Some("it needs approval (Untrusted says Ask), and nobody could be asked (no terminal)"),
                "Toolgate did not run this call: it needs approval (Untrusted says Ask), and nobody could be asked (no terminal). \
                 No rule can allow it while this connection holds that content: only a person's answer (in Toolgate's window, \
                 or `toolgate serve` at a terminal) or a new connection that has not read it lets it run.")),
        ("nobody to ask, a rule asks", verdict(Ruling::Ask, Basis::Rule), Some(Asked::Unattended("no terminal".into())), CLIENT,
            note(A::Denied, By::Unattended, None, Some("it needs approval (Rule says Ask), and nobody could be asked (no terminal)")),
            Some(Announce::Unattended), None,
            refuse(Some("it needs approval (Rule says Ask), and nobody could be asked (no terminal)"),
                "Toolgate did not run this call: it needs approval (Rule says Ask), and nobody could be asked (no terminal). \
                 Your rule asks before this call: only a person's answer (in Toolgate's window, or at a terminal), or changing \
                 that rule, lets it run.")),
        ("nobody to ask, destructive", verdict(Ruling::Ask, Basis::Destructive), Some(Asked::Unattended("no terminal".into())), CLIENT,
            note(A::Denied, By::Unattended, None, Some("it needs approval (Destructive says Ask), and nobody could be asked (no terminal)")),
            Some(Announce::Unattended), None,
            refuse(Some("it needs approval (Destructive says Ask), and nobody could be asked (no terminal)"),
                "Toolgate did not run this call: it needs approval (Destructive says Ask), and nobody could be asked (no terminal). \
                 The server marks the tool destructive: an allow rule for this tool itself (one for its whole server does not \
                 cover it) would let it run.")),
        ("nobody to ask, the tool changed since it was allowed", changed_since_allowed(), Some(Asked::Unattended("no terminal".into())), CLIENT,
            note(A::Denied, By::Unattended, None, Some("it needs approval (Default says Ask Asking again: the tool's description or inputs changed since you allowed it.), and nobody could be asked (no terminal)")),
            Some(Announce::Unattended), None,
            refuse(Some("it needs approval (Default says Ask Asking again: the tool's description or inputs changed since you allowed it.), and nobody could be asked (no terminal)"),
                "Toolgate did not run this call: it needs approval (Default says Ask Asking again: the tool's description or inputs changed since you allowed it.), and nobody could be asked (no terminal). \
                 Look at what changed in Toolgate and allow the tool again to let it run.")),
        ("stopped", ask.clone(), Some(Asked::Stopped), CHAT,
            note(A::Cancelled, By::User, None, Some("the user stopped the turn")),
            None, None,
            refuse(Some("the user stopped the turn"), "Toolgate did not run this call: the user stopped the turn")),
        ("timed out", ask.clone(), Some(Asked::TimedOut(Duration::from_secs(600))), CHAT,
            note(A::TimedOut, By::Timeout, None, Some("nobody answered within 600 s")),
            None, None,
            refuse(Some("nobody answered within 600 s"), "Toolgate did not run this call: nobody answered within 600 s")),
        ("approved once", ask.clone(), answered(Decision::Approve), CHAT,
            note(A::Allowed, By::User, None, None), None, None, RUN),
        ("approved with edits", ask.clone(), answered(Decision::ApproveEdited { arguments: json!({"path": "/tmp/b"}) }), CLIENT,
            note(A::Allowed, By::User, None, Some("approved with edited arguments")), None, None,
            Next::Run { edited: Some(json!({"path": "/tmp/b"})) }),
        ("always, this tool", ask.clone(), answered(Decision::Allow { reach: Reach::Tool, lasting: Lasting::Always }), CLIENT,
            note(A::Allowed, By::User, None, None), None, save(true, Reach::Tool, Lasting::Always), RUN),
        ("in this chat, the server", ask.clone(), answered(Decision::Allow { reach: Reach::Server, lasting: Lasting::Conversation }), CHAT,
            note(A::Allowed, By::User, None, None), None, save(true, Reach::Server, Lasting::Conversation), RUN),
        ("in this chat, from an app shown in a chat", ask.clone(), answered(Decision::Allow { reach: Reach::Tool, lasting: Lasting::Conversation }), APP,
            note(A::Allowed, By::User, None, None), None, save(true, Reach::Tool, Lasting::Conversation), RUN),
        ("in this chat, said to a client: this call only", ask.clone(), answered(Decision::Allow { reach: Reach::Tool, lasting: Lasting::Conversation }), CLIENT,
            note(A::Allowed, By::User, None, None), None, None, RUN),
        ("in this chat, with neither chat nor client (a run not saved)", ask.clone(), answered(Decision::Allow { reach: Reach::Tool, lasting: Lasting::Conversation }), NOBODY,
            note(A::Allowed, By::User, None, None), None, save(true, Reach::Tool, Lasting::Conversation), RUN),
        ("denied with a reason", ask.clone(), answered(Decision::Deny { reason: Some("not that file".into()) }), CHAT,
            note(A::Denied, By::User, None, Some("not that file")), None, None,
            refuse(Some("not that file"), "The user denied this tool call: not that file")),
        ("denied without one", ask.clone(), answered(Decision::Deny { reason: None }), CHAT,
            note(A::Denied, By::User, None, None), None, None,
            refuse(None, "The user denied this tool call.")),
        ("denied with a blank reason", ask.clone(), answered(Decision::Deny { reason: Some("  ".into()) }), CLIENT,
            note(A::Denied, By::User, None, Some("  ")), None, None,
            refuse(Some("  "), "The user denied this tool call.")),
        ("never, the server", ask.clone(), answered(Decision::DenyAlways { reach: Reach::Server }), CLIENT,
            note(A::Denied, By::User, None, Some("denied, and from now on")), None,
            save(false, Reach::Server, Lasting::Always),
            refuse(None, "The user denied this tool call, and will not allow it.")),
        ("asked because of untrusted content, then approved", verdict(Ruling::Ask, Basis::Untrusted), answered(Decision::Approve), CHAT,
            note(A::Allowed, By::User, None, None), None, None, RUN),
    ];
    for (name, verdict, asked, asker, audit, announce, rule, next) in rows {
        let settled = settle(Held::ToolCall, Some(&verdict), asked.as_ref(), asker);
        assert_eq!(settled.audit, audit, "{name}: audit");
        assert_eq!(settled.announce, announce, "{name}: announce");
        assert_eq!(settled.rule_to_save, rule, "{name}: rule");
        assert_eq!(settled.next, next, "{name}: next");
    }
}

#[test]
fn every_row_keeps_the_invariants() {
    let verdicts = [Ruling::Allow, Ruling::Deny, Ruling::Ask]
        .into_iter()
        .flat_map(|d| {
            [
                Basis::Paused,
                Basis::Rule,
                Basis::Destructive,
                Basis::ReadOnly,
                Basis::Default,
                Basis::Untrusted,
            ]
            .map(|b| verdict(d, b))
        })
        .collect::<Vec<_>>();
    let decisions = [
        Decision::Approve,
        Decision::ApproveEdited {
            arguments: json!({}),
        },
        Decision::Allow {
            reach: Reach::Tool,
            lasting: Lasting::Always,
        },
        Decision::Allow {
            reach: Reach::Server,
            lasting: Lasting::Conversation,
        },
        Decision::Deny { reason: None },
        Decision::DenyAlways { reach: Reach::Tool },
    ];
    let mut answers: Vec<Option<Asked>> = vec![
        None,
        Some(Asked::Stopped),
        Some(Asked::TimedOut(Duration::from_secs(1))),
        Some(Asked::Unattended("x".into())),
    ];
    answers.extend(decisions.iter().cloned().map(|d| Some(Asked::Answered(d))));
    let mut rows = 0;
    for verdict in &verdicts {
        for asked in &answers {
            for asker in [CHAT, CLIENT, APP, NOBODY] {
                rows += 1;
                let s = settle(Held::ToolCall, Some(verdict), asked.as_ref(), asker);
                let approved = matches!(
                    asked,
                    Some(Asked::Answered(
                        Decision::Approve | Decision::ApproveEdited { .. } | Decision::Allow { .. }
                    ))
                );
                let runs = matches!(s.next, Next::Run { .. });
                // Only an allow verdict, or a question the user approved, runs a call.
                let may_run = match verdict.decision {
                    Ruling::Allow => true,
                    Ruling::Deny => false,
                    Ruling::Ask => approved,
                };
                assert_eq!(runs, may_run, "{verdict:?} {asked:?} {asker:?}");
                // The audit says what happened.
                assert_eq!(
                    s.audit.decision == AuditDecision::Allowed,
                    runs,
                    "{verdict:?} {asked:?}"
                );
                // A rule is named only when a rule decided, and a question's answer is the
                // user's (or the clock's, or nobody's) — never the rules'.
                if s.audit.rule_id.is_some() {
                    assert_eq!(s.audit.by, DecidedBy::Rule);
                }
                if verdict.decision == Ruling::Ask {
                    assert!(!matches!(
                        s.audit.by,
                        DecidedBy::Rule | DecidedBy::Pause | DecidedBy::Default
                    ));
                    assert_ne!(s.announce, Some(Announce::DecidedByRule { allowed: true }));
                } else {
                    assert!(s.rule_to_save.is_none(), "only an answer makes a rule");
                }
                // A rule to save is the answer's own: allow only from an approval.
                if let Some(rule) = s.rule_to_save {
                    assert_eq!(rule.allow, runs);
                }
            }
        }
    }
    assert_eq!(rows, 18 * 10 * 4);
}

/// Every verdict the rules can give (with a rule, by default, paused…), and none.
fn all_verdicts() -> Vec<Option<Verdict>> {
    let mut all: Vec<Option<Verdict>> = [Ruling::Allow, Ruling::Deny, Ruling::Ask]
        .into_iter()
        .flat_map(|d| [Basis::Paused, Basis::Rule, Basis::Default].map(|b| Some(verdict(d, b))))
        .collect();
    all.push(None);
    all
}

/// Every way a wait can end, and none.
fn all_answers() -> Vec<Option<Asked>> {
    let mut all = vec![
        None,
        Some(Asked::Stopped),
        Some(Asked::TimedOut(Duration::from_secs(3))),
        Some(Asked::Unattended("no terminal".into())),
    ];
    all.extend(
        [
            Decision::Approve,
            Decision::ApproveEdited {
                arguments: json!({"text": "edited"}),
            },
            Decision::Allow {
                reach: Reach::Server,
                lasting: Lasting::Always,
            },
            Decision::Allow {
                reach: Reach::Tool,
                lasting: Lasting::Conversation,
            },
            Decision::Deny {
                reason: Some("no".into()),
            },
            Decision::Deny { reason: None },
            Decision::DenyAlways {
                reach: Reach::Server,
            },
        ]
        .map(|d| Some(Asked::Answered(d))),
    );
    all
}

/// The kinds other than a call, row by row: what the audit says, what the asker is told, the
/// rule an answer makes.
#[test]
fn each_distinct_row_of_the_other_kinds() {
    use AuditDecision as A;
    use DecidedBy as By;
    let ask = verdict(Ruling::Ask, Basis::Default);
    let allow = verdict(Ruling::Allow, Basis::Rule);
    let deny = verdict(Ruling::Deny, Basis::Rule);
    let answered = |d: Decision| Some(Asked::Answered(d));
    let edited = Decision::ApproveEdited {
        arguments: json!({"text": "edited"}),
    };
    let never = Decision::DenyAlways {
        reach: Reach::Server,
    };
    let trusted = Decision::Allow {
        reach: Reach::Server,
        lasting: Lasting::Always,
    };
    type OtherRow = (
        Held,
        Option<Verdict>,
        Option<Asked>,
        AuditNote,
        Option<RuleToSave>,
        Next,
    );
    #[rustfmt::skip]
    let rows: Vec<OtherRow> = vec![
        // A review: always asked; the words the audit log has always had.
        (Held::ResultReview, None, answered(Decision::Approve),
            note(A::Allowed, By::User, None, Some("result review: passed unchanged")), None, RUN),
        (Held::ResultReview, None, answered(edited.clone()),
            note(A::Allowed, By::User, None, Some("result review: edited before it was seen")), None,
            Next::Run { edited: Some(json!({"text": "edited"})) }),
        (Held::ResultReview, None, answered(Decision::Deny { reason: None }),
            note(A::Denied, By::User, None, Some("result review: withheld (the user withheld it)")), None,
            refuse(None, "The result of this call was withheld from you: the user withheld it.")),
        (Held::ResultReview, None, answered(never.clone()),
            note(A::Denied, By::User, None, Some("result review: withheld, and from now on")), None,
            refuse(None, "The result of this call was withheld from you: the user withheld it, and from now on.")),
        (Held::ResultReview, None, Some(Asked::Unattended("no terminal".into())),
            note(A::Denied, By::Unattended, None, Some("result review: withheld, nobody could be asked (no terminal)")), None,
            refuse(Some("no terminal"), "The result of this call was withheld from you: nobody could be asked (no terminal).")),
        (Held::ResultReview, None, None,
            note(A::Denied, By::Toolgate, None, Some("the user was to be asked, but no question was put")), None,
            refuse(None, "The result of this call was withheld from you: Toolgate could not ask the user.")),
        // Sampling: a rule may allow it; "always" trusts the server with the model.
        (Held::Sampling, Some(allow.clone()), None,
            note(A::Allowed, By::Rule, Some("r1"), Some("Rule says Allow")), None, RUN),
        (Held::Sampling, Some(deny.clone()), answered(Decision::Approve),
            note(A::Denied, By::Rule, Some("r1"), Some("Rule says Deny")), None,
            refuse(Some("Rule says Deny"), "The sampling request was refused: the user's rules refuse it (Rule says Deny).")),
        (Held::Sampling, Some(ask.clone()), answered(trusted.clone()),
            note(A::Allowed, By::User, None, Some("allowed")),
            save(true, Reach::Server, Lasting::Always), RUN),
        (Held::Sampling, Some(ask.clone()), answered(Decision::Deny { reason: Some("not now".into()) }),
            note(A::Denied, By::User, None, Some("not now")), None,
            refuse(Some("not now"), "The sampling request was refused: the user rejected the sampling request: not now.")),
        (Held::Sampling, Some(ask.clone()), Some(Asked::TimedOut(Duration::from_secs(3))),
            note(A::TimedOut, By::Timeout, None, Some("refused, nobody answered within 3 s")), None,
            refuse(Some("nobody answered within 3 s"), "The sampling request was refused: nobody answered within 3 s.")),
        // The reply: always seen; "never" stops the server's sampling.
        (Held::SamplingReply, None, answered(never.clone()),
            note(A::Denied, By::User, None, Some("the reply was not sent, and from now on")),
            save(false, Reach::Server, Lasting::Always),
            refuse(None, "The reply was not sent: the user kept the reply back, and from now on.")),
        (Held::SamplingReply, None, Some(Asked::Stopped),
            note(A::Cancelled, By::User, None, Some("the reply was not sent, the server took the request back")), None,
            refuse(None, "The reply was not sent: the server took the request back.")),
        // A question: a rule may refuse it, never answer it; "always" makes no rule.
        (Held::Elicitation, Some(allow.clone()), None,
            note(A::Denied, By::Toolgate, None, Some("the user was to be asked, but no question was put")), None,
            refuse(None, "The question was not answered: Toolgate could not ask the user.")),
        (Held::Elicitation, Some(allow.clone()), answered(trusted.clone()),
            note(A::Allowed, By::User, None, Some("answered")), None, RUN),
        (Held::Elicitation, Some(deny.clone()), None,
            note(A::Denied, By::Rule, Some("r1"), Some("Rule says Deny")), None,
            refuse(Some("Rule says Deny"), "The question was not answered: the user's rules refuse it (Rule says Deny).")),
        (Held::Elicitation, Some(ask.clone()), answered(never.clone()),
            note(A::Denied, By::User, None, Some("declined, and from now on")),
            save(false, Reach::Server, Lasting::Always),
            refuse(None, "The question was not answered: the user declined the question, and from now on.")),
        // A page: opened only on the user's yes.
        (Held::Link, Some(ask.clone()), answered(Decision::Approve),
            note(A::Allowed, By::User, None, Some("opened in the browser")), None, RUN),
        (Held::Link, Some(ask.clone()), answered(Decision::Deny { reason: None }),
            note(A::Denied, By::User, None, Some("not opened (the user did not open the page)")), None,
            refuse(None, "The page was not opened: the user did not open the page.")),
        // A client's read: a call's rows, under its own kind.
        (Held::ResourceRead, Some(verdict(Ruling::Allow, Basis::ReadOnly)), None,
            note(A::Allowed, By::Default, None, Some("ReadOnly says Allow")), None, RUN),
        (Held::ResourceRead, None, answered(Decision::Approve),
            note(A::Denied, By::Toolgate, None, Some("the rules gave no verdict")), None,
            refuse(Some("Toolgate could not decide about this call"), "Toolgate did not run this call: Toolgate could not decide about this call")),
    ];
    for (held, verdict, asked, audit, rule, next) in rows {
        let settled = settle(held, verdict.as_ref(), asked.as_ref(), NOBODY);
        let row = format!("{held:?} {verdict:?} {asked:?}");
        assert_eq!(settled.audit, audit, "{row}: audit");
        assert_eq!(settled.rule_to_save, rule, "{row}: rule");
        assert_eq!(settled.next, next, "{row}: next");
    }
}

/// Every kind × every verdict (and none) × every way the wait ended × every asker.
#[test]
fn every_kind_keeps_the_invariants() {
    let mut rows = 0;
    for held in Held::ALL {
        for verdict in all_verdicts() {
            for asked in all_answers() {
                for asker in [CHAT, CLIENT, APP, NOBODY] {
                    rows += 1;
                    let s = settle(held, verdict.as_ref(), asked.as_ref(), asker);
                    let row = format!("{held:?} {verdict:?} {asked:?} {asker:?}");
                    let runs = matches!(s.next, Next::Run { .. });
                    let approved = matches!(
                        asked,
                        Some(Asked::Answered(
                            Decision::Approve
                                | Decision::ApproveEdited { .. }
                                | Decision::Allow { .. }
                        ))
                    );
                    let ruling = verdict.as_ref().map(|v| v.decision);
                    // Only an allow verdict (for a kind a rule may let through) or the user's
                    // approval lets a request go ahead; a deny always holds.
                    let may_run = match ruling {
                        Some(Ruling::Deny) => false,
                        Some(Ruling::Allow) if held.rules_may_allow() => true,
                        None if matches!(
                            held,
                            Held::ToolCall | Held::ResourceRead | Held::PromptGet
                        ) =>
                        {
                            false
                        }
                        _ => approved,
                    };
                    assert_eq!(runs, may_run, "{row}");
                    assert_eq!(s.audit.decision == AuditDecision::Allowed, runs, "{row}");
                    if s.audit.rule_id.is_some() {
                        assert_eq!(s.audit.by, DecidedBy::Rule, "{row}");
                    }
                    if let Some(rule) = s.rule_to_save {
                        // Only an answer makes a rule, and an allow rule only from an approval.
                        assert!(matches!(asked, Some(Asked::Answered(_))), "{row}");
                        assert_eq!(rule.allow, runs, "{row}");
                        // No answer makes a rule that answers a question, opens a page, or
                        // skips a review the user asked for.
                        if matches!(
                            held,
                            Held::Elicitation
                                | Held::Link
                                | Held::ResultReview
                                | Held::SamplingReply
                        ) {
                            assert!(!rule.allow, "{row}");
                        }
                    }
                    if held == Held::ResultReview {
                        assert!(s.rule_to_save.is_none(), "{row}");
                    }
                    // A request refused tells its asker something.
                    if let Next::Refuse { told, .. } = &s.next {
                        assert!(!told.is_empty(), "{row}");
                    }
                }
            }
        }
    }
    assert_eq!(rows, Held::ALL.len() * 10 * 11 * 4);
}
