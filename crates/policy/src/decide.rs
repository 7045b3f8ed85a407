//! The decision itself: one pure function with a fixed precedence.

use serde::{Deserialize, Serialize};

use crate::rule::{ChangeKind, Effect, Rule, Target};
use crate::settings::{DefaultDecision, PolicySettings};
use crate::subject::{Annotations, Subject};

/// What the gate does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    Allow,
    Deny,
    Ask,
}

/// Which step of the precedence decided; for the audit trail and for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Basis {
    Paused,
    Rule,
    Destructive,
    ReadOnly,
    Default,
    /// The conversation has read untrusted content and the call could send data out: an
    /// allow became a question ([`decide_in`], step 7).
    Untrusted,
    /// The arguments carry what looks like a secret: an allow became a question ([`decide_in`],
    /// step 8).
    Secret,
    /// A call that changes something carries a value only outside content brought, or a
    /// decisive value that is not the user's after outside content was read: an allow became
    /// a question ([`decide_in`], step 9).
    Provenance,
}

/// Where a request is decided: its conversation and client, the time, and what the gate knows
/// of the conversation's content and the call's reach, for step 7 of [`decide`]'s precedence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Context<'a> {
    pub conversation_id: Option<&'a str>,
    /// The connected client asking, for rules limited to one ([`decide_for_client`]).
    pub client: Option<&'a str>,
    pub now_ms: i64,
    /// Untrusted content the conversation has read, in words ("fetch_url on Web, which reads
    /// the outside world"); `None` when it has read none.
    pub untrusted: Option<&'a str>,
    /// Why this call could send data out of the computer, in words ("the server marks the
    /// tool as reaching the outside world"); `None` when it cannot.
    pub egress: Option<&'a str>,
    /// What in the call's arguments looks like a secret, in words ("a GitHub Token at /body");
    /// `None` when nothing does (or the server's arguments are not scanned).
    pub secrets: Option<&'a str>,
    /// Every argument that decides where the call's data goes (a recipient, an address, an
    /// account, a web address, a path) is a value from the user's own words, in words; for a
    /// call that only reads, every argument that says where its request goes (or it names
    /// none). `None` when not proven. Lets step 7 keep an allow.
    pub proven: Option<&'a str>,
    /// Why the call's arguments are not the user's, for step 9, in words ("the value “US13…”
    /// at /recipient came only from outside content: …"); `None` when nothing is amiss.
    pub tainted: Option<&'a str>,
}

/// The decision, why, and which grants lapsed on the way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub decision: Decision,
    pub basis: Basis,
    /// For people: shown in the approval prompt and the audit trail.
    pub reason: String,
    /// The rule that decided, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    /// Grants that would have applied but were given to a different server or tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<Changed>,
    /// No rule could let this call run without a question: it is asked for what it carries
    /// or what its conversation read (steps 7 to 9: untrusted content and a way out, a
    /// secret, a value from outside content), whatever the rules say. A question then offers
    /// no "always allow", which would not change the outcome.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub beyond_rules: bool,
}

/// A grant that no longer applies because what it was given to changed ("re-ask on change").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Changed {
    pub rule_id: String,
    pub what: ChangeKind,
}

/// Decides what to do with `subject`. The first step that applies decides:
///
/// 1. **Paused** → Deny.
/// 2. An applicable **Deny** rule → Deny.
/// 3. An applicable **Ask** rule → Ask. Asks beat allows, so "ask before `git push`" wins over
///    "allow the shell".
/// 4. An applicable **Allow** rule whose binding still matches → Allow. The most specific one
///    is named (a tool with conditions, a tool, a server; earlier in the list on a tie). Grants
///    whose server or tool changed are skipped and reported in [`Verdict::changed`]. A
///    server-wide grant does not cover a tool marked destructive.
/// 5. The tool's **annotations**: destructive → Ask; read-only with `auto_allow_read_only` →
///    Allow. Destructive wins, so a tool marked both is not allowed unasked. With "deny by
///    default" a destructive tool is denied (step 6): this step never loosens the default.
/// 6. The **default**: Ask, or Deny.
/// 7. **Untrusted content** ([`decide_in`] only): when the conversation has read untrusted
///    content ([`Context::untrusted`]: a result of a tool marked open-world, or of a server the
///    user marked as reading the outside world) and the call could send data out
///    ([`Context::egress`]: an open-world tool, a server with network access, a remote or
///    unconfined server, or one the user marked), an **Allow from step 4 or 5 becomes Ask**,
///    whatever rule allowed it, and the reason says why. This is the step that closes "the
///    lethal trifecta": private data, untrusted content, and a way out. It never loosens: a
///    Deny stays a Deny; an Ask stays an Ask, its reason noting the risk; pause and deny rules
///    come first. Sampling and elicitation are not tool calls and are not affected.
/// 8. **Secrets in the arguments** ([`decide_in`] only): when the arguments carry what looks
///    like a secret ([`Context::secrets`]: a provider's token, a private key block, a value
///    Toolgate keeps), an **Allow becomes Ask** whatever allowed it, the finding named in the
///    reason; an Ask notes it; a Deny stays a Deny.
/// 9. **Values from outside content** ([`decide_in`] only): when a call that is not read-only
///    carries a value only outside content brought, or, after outside content was read, a
///    decisive argument (where data goes, a password) that is not in the user's own words
///    ([`Context::tainted`]), an **Allow becomes Ask** whatever allowed it, the value and where
///    it came from named in the reason; an Ask notes it; a Deny stays a Deny.
///
/// Step 7 keeps an allow when provenance proves the call is the user's ([`Context::proven`]:
/// every argument that decides where the data goes came from the user's own words, and step
/// 9 found nothing amiss; for a call that only reads, every argument that says where its
/// request goes, or none does). Nothing else ever loosens a verdict.
///
/// A rule applies when it is in force ([`crate::Scope::Conversation`] only in its own
/// conversation, [`crate::Scope::Once`] never, not past `expires_at`), its target covers the
/// subject and all its conditions hold. Among deny and ask rules specificity does not matter:
/// any one of them is enough, because a narrower allow must never undo a restriction.
///
/// Rules of the organisation's managed policy ([`Rule::managed`]) take part in the same steps:
/// since any deny beats any ask and any ask beats any allow, a managed deny or ask is never
/// undone by the user's allow, and the user's deny or ask still narrows a managed allow.
///
/// This is the decision for Toolgate's own chat and the CLI, where no connected client asks:
/// rules limited to a client ([`Rule::client`]) do not apply. See [`decide_for_client`].
pub fn decide(
    subject: &Subject,
    settings: &PolicySettings,
    conversation_id: Option<&str>,
    now_ms: i64,
) -> Verdict {
    decide_for_client(subject, settings, conversation_id, None, now_ms)
}

/// [`decide`] for a call from a connected client (through the gateway): the same precedence,
/// with the rules for every caller and those limited to `client` both in force.
pub fn decide_for_client(
    subject: &Subject,
    settings: &PolicySettings,
    conversation_id: Option<&str>,
    client: Option<&str>,
    now_ms: i64,
) -> Verdict {
    decide_in(
        subject,
        settings,
        &Context {
            conversation_id,
            client,
            now_ms,
            untrusted: None,
            egress: None,
            secrets: None,
            proven: None,
            tainted: None,
        },
    )
}

/// [`decide`] with everything the gate knows of where the request comes from: its
/// conversation and client, and, for step 7, what untrusted content the conversation has read
/// and whether the call could send data out.
pub fn decide_in(subject: &Subject, settings: &PolicySettings, context: &Context<'_>) -> Verdict {
    let mut verdict = untrusted_step(subject, settings, context);
    let Subject::ToolCall(call) = subject else {
        return verdict;
    };
    if let Some(tainted) = context.tainted.filter(|_| !call.annotations.read_only) {
        verdict = held(verdict, Basis::Provenance, tainted);
    }
    if let Some(secrets) = context.secrets {
        let risk = format!("the arguments carry what looks like a secret ({secrets})");
        verdict = held(verdict, Basis::Secret, &risk);
    }
    verdict
}

/// An allow becomes a question on `basis`, `risk` said; an ask notes it; a deny stays.
fn held(verdict: Verdict, basis: Basis, risk: &str) -> Verdict {
    match verdict.decision {
        Decision::Allow => Verdict {
            decision: Decision::Ask,
            basis,
            reason: format!(
                "asking because {risk}; otherwise it would be {}",
                verdict.reason
            ),
            rule_id: None,
            changed: verdict.changed,
            beyond_rules: true,
        },
        Decision::Ask => Verdict {
            reason: format!("{}; note that {risk}", verdict.reason),
            beyond_rules: true,
            ..verdict
        },
        Decision::Deny => verdict,
    }
}

/// Steps 1 to 7.
fn untrusted_step(subject: &Subject, settings: &PolicySettings, context: &Context<'_>) -> Verdict {
    let verdict = by_rules(
        subject,
        settings,
        context.conversation_id,
        context.client,
        context.now_ms,
    );
    let (Subject::ToolCall(_), Some(untrusted), Some(egress)) =
        (subject, context.untrusted, context.egress)
    else {
        return verdict;
    };
    // A connected client's calls belong to no chat: what was read, was read in its connection.
    let whose = match (context.conversation_id, context.client) {
        (None, Some(_)) => "this connection",
        _ => "this chat",
    };
    if let (Decision::Allow | Decision::Ask, Some(proven), None) =
        (verdict.decision, context.proven, context.tainted)
    {
        // Provenance shows the call is the user's: the data goes where the user said. An
        // allow stands; an ask is the rules' own, which an allow rule would change.
        return Verdict {
            reason: format!(
                "{}; {whose} has read untrusted content, but {proven}",
                verdict.reason
            ),
            ..verdict
        };
    }
    let risk = format!(
        "{whose} has read untrusted content ({untrusted}), and this call could send data out ({egress})"
    );
    held(verdict, Basis::Untrusted, &risk)
}

/// Steps 1 to 6 of the precedence.
fn by_rules(
    subject: &Subject,
    settings: &PolicySettings,
    conversation_id: Option<&str>,
    client: Option<&str>,
    now_ms: i64,
) -> Verdict {
    if settings.paused {
        return Verdict {
            decision: Decision::Deny,
            basis: Basis::Paused,
            reason: "all tools are paused".into(),
            rule_id: None,
            changed: Vec::new(),
            beyond_rules: false,
        };
    }

    let applicable: Vec<&Rule> = settings
        .rules
        .iter()
        .filter(|r| r.in_force(conversation_id, client, now_ms) && r.covers(subject))
        .collect();
    let of_effect = |effect| {
        applicable
            .iter()
            .copied()
            .filter(move |r| r.effect == effect)
    };

    if let Some(rule) = most_specific(of_effect(Effect::Deny)) {
        return by_rule(Decision::Deny, "denied by", rule, Vec::new());
    }
    if let Some(rule) = most_specific(of_effect(Effect::Ask)) {
        return by_rule(Decision::Ask, "asking because of", rule, Vec::new());
    }

    let annotations = match subject {
        Subject::ToolCall(call) => call.annotations,
        Subject::Sampling { .. } | Subject::Elicitation { .. } => Annotations::default(),
    };
    let mut grants = Vec::new();
    let mut lapsed = Vec::new();
    for rule in of_effect(Effect::Allow) {
        if annotations.destructive && matches!(rule.target, Target::Server { .. }) {
            continue;
        }
        match rule.binding_change(subject) {
            Some(what) => lapsed.push((rule, what)),
            None => grants.push(rule),
        }
    }
    let changed: Vec<Changed> = lapsed
        .iter()
        .map(|(rule, what)| Changed {
            rule_id: rule.id.clone(),
            what: *what,
        })
        .collect();
    if let Some(rule) = most_specific(grants.into_iter()) {
        return by_rule(Decision::Allow, "allowed by", rule, changed);
    }

    let (decision, basis, reason) = match settings.default {
        // Only ever stricter than the default: with "deny by default" a destructive tool is
        // denied like any other, not offered as a prompt.
        DefaultDecision::Ask if annotations.destructive => (
            Decision::Ask,
            Basis::Destructive,
            "asking because the server marks this tool as destructive",
        ),
        _ if annotations.read_only && !annotations.destructive && settings.auto_allow_read_only => (
            Decision::Allow,
            Basis::ReadOnly,
            "allowed because the server marks this tool as read-only and you allow read-only tools",
        ),
        DefaultDecision::Ask => (
            Decision::Ask,
            Basis::Default,
            "asking because no rule covers this",
        ),
        DefaultDecision::Deny => (
            Decision::Deny,
            Basis::Default,
            "denied because no rule covers this and you deny by default",
        ),
    };
    Verdict {
        decision,
        basis,
        reason: format!("{reason}{}", lapsed_note(&lapsed)),
        rule_id: None,
        changed,
        beyond_rules: false,
    }
}

/// The most specific rule; on a tie, the earliest in the user's list.
fn most_specific<'a>(rules: impl Iterator<Item = &'a Rule>) -> Option<&'a Rule> {
    rules.fold(None, |best: Option<&Rule>, rule| match best {
        Some(b) if b.specificity() >= rule.specificity() => Some(b),
        _ => Some(rule),
    })
}

fn by_rule(decision: Decision, lead: &str, rule: &Rule, changed: Vec<Changed>) -> Verdict {
    Verdict {
        decision,
        basis: Basis::Rule,
        reason: match rule.managed {
            true => format!("{lead} your organisation's rule “{}”", rule.label()),
            false => format!("{lead} your rule “{}” ({})", rule.label(), rule.scope),
        },
        rule_id: Some(rule.id.clone()),
        changed,
        beyond_rules: false,
    }
}

/// Words for the lapsed grants, appended to a reason that did not come from a rule.
fn lapsed_note(lapsed: &[(&Rule, ChangeKind)]) -> String {
    lapsed
        .iter()
        .map(|(rule, what)| {
            let what = match what {
                ChangeKind::ServerChanged => "the server's command or address",
                ChangeKind::ToolChanged => "the tool's description or inputs",
            };
            format!(
                "; your rule “{}” no longer applies because {what} changed since you made it",
                rule.label()
            )
        })
        .collect()
}
