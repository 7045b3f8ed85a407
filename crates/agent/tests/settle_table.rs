//! The gatekeeper's settlement as a table: every verdict × how the wait ended × who asks.
//!
//! The first table states each distinct row in full (audit entry, announcement, rule, next).
//! The second walks the whole cross product and checks the invariants every row must keep,
//! so a row added to `settle` without a line here still cannot run a call it should refuse.

use std::time::Duration;

use serde_json::json;
use toolgate_agent::gatekeeper::{settle, Announce, Asker, AuditNote, Next, RuleToSave};
use toolgate_agent::{Asked, Decision, Lasting, Reach};
use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_policy::{Basis, Decision as Ruling, Verdict};

fn verdict(decision: Ruling, basis: Basis) -> Verdict {
    Verdict {
        decision,
        basis,
        reason: format!("{basis:?} says {decision:?}"),
        rule_id: (basis == Basis::Rule).then(|| "r1".to_owned()),
        changed: Vec::new(),
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
        let settled = settle(&verdict, asked.as_ref(), asker);
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
                let s = settle(verdict, asked.as_ref(), asker);
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
