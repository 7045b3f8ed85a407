//! Properties that must hold for any request and any rules: a pause or a matching denial is
//! never turned into an Allow.

use proptest::prelude::*;
use serde_json::{json, Value};
use toolgate_policy::{
    decide, Annotations, ArgCondition, Binding, Decision, DefaultDecision, Effect, PolicySettings,
    Rule, Scope, Subject, Target, ToolCall,
};

const SERVERS: &[&str] = &["shell", "fs"];
const TOOLS: &[&str] = &["run", "write_file"];
const COMMANDS: &[&str] = &["git status", "git push", "rm -rf ~", "git status; rm x", ""];

fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(COMMANDS).prop_map(|c| json!({ "command": c })),
        prop::sample::select(&["/etc/hosts", "/home/me/p/a", "/home/me/p/../x"][..])
            .prop_map(|p| json!({ "path": p })),
        Just(json!({})),
        Just(json!({ "command": 3, "path": null })),
    ]
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        prop::sample::select(SERVERS),
        prop::sample::select(TOOLS),
        arguments(),
        any::<(bool, bool, bool, bool)>(),
    )
        .prop_map(|(server, tool, arguments, (ro, de, s2, t2))| ToolCall {
            server_id: server.into(),
            tool: tool.into(),
            arguments,
            annotations: Annotations {
                read_only: ro,
                destructive: de,
            },
            server_fingerprint: if s2 { "s2" } else { "s1" }.into(),
            tool_fingerprint: if t2 { "t2" } else { "t1" }.into(),
        })
}

fn subject() -> impl Strategy<Value = Subject> {
    prop_oneof![
        4 => tool_call().prop_map(Subject::ToolCall),
        1 => prop::sample::select(SERVERS).prop_map(|s| Subject::Sampling {
            server_id: s.into(),
            server_fingerprint: "s1".into(),
        }),
        1 => prop::sample::select(SERVERS).prop_map(|s| Subject::Elicitation {
            server_id: s.into(),
            server_fingerprint: "s1".into(),
        }),
    ]
}

fn condition() -> impl Strategy<Value = ArgCondition> {
    prop_oneof![
        prop::sample::select(&["git status", "git push", "rm"][..])
            .prop_map(|p| ArgCondition::prefix("/command", p)),
        prop::sample::select(&["/etc/**", "/home/me/p/**", "*"][..])
            .prop_map(|g| ArgCondition::glob("/path", g)),
        Just(ArgCondition::equals("/command", json!("git status"))),
    ]
}

fn rule() -> impl Strategy<Value = Rule> {
    let target = (
        prop::sample::select(SERVERS),
        prop::sample::select(TOOLS),
        0..4u8,
    )
        .prop_map(|(server, tool, kind)| match kind {
            0 => Target::Tool {
                server_id: server.into(),
                tool: tool.into(),
            },
            1 => Target::Server {
                server_id: server.into(),
            },
            2 => Target::Sampling {
                server_id: server.into(),
            },
            _ => Target::Elicitation {
                server_id: server.into(),
            },
        });
    let effect = prop::sample::select(&[Effect::Allow, Effect::Deny, Effect::Ask][..]);
    let scope = prop_oneof![
        Just(Scope::Always),
        Just(Scope::Once),
        Just(Scope::Conversation { id: "c1".into() }),
    ];
    (
        effect,
        scope,
        target,
        prop::collection::vec(condition(), 0..3),
        any::<bool>(),
        any::<u32>(),
        any::<bool>(),
    )
        .prop_map(
            |(effect, scope, target, conditions, bound, id, managed)| Rule {
                id: format!("r{id}"),
                effect,
                scope,
                target,
                conditions,
                bound_to: bound.then(|| Binding {
                    server_fingerprint: "s1".into(),
                    tool_fingerprint: Some("t1".into()),
                }),
                created_at: 0,
                expires_at: None,
                note: None,
                client: None,
                // The organisation's rules hold to the same properties as the user's.
                managed,
            },
        )
}

fn settings() -> impl Strategy<Value = PolicySettings> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(rule(), 0..8),
    )
        .prop_map(|(auto, deny, rules)| PolicySettings {
            paused: false,
            auto_allow_read_only: auto,
            default: if deny {
                DefaultDecision::Deny
            } else {
                DefaultDecision::Ask
            },
            approval_timeout_secs: None,
            rules,
        })
}

fn conversation() -> impl Strategy<Value = Option<&'static str>> {
    prop::option::of(prop::sample::select(&["c1", "c2"][..]))
}

/// A denial that names exactly this subject, with no conditions, in force everywhere.
fn matching_deny(subject: &Subject) -> Rule {
    Rule::for_subject("the-deny", Effect::Deny, subject, Scope::Always, 0)
}

proptest! {
    #[test]
    fn paused_never_allows(subject in subject(), mut settings in settings(), conv in conversation()) {
        settings.paused = true;
        let v = decide(&subject, &settings, conv, 0);
        prop_assert_eq!(v.decision, Decision::Deny);
    }

    #[test]
    fn a_matching_deny_never_allows(
        subject in subject(),
        mut settings in settings(),
        conv in conversation(),
        at in 0..9usize,
    ) {
        let at = at.min(settings.rules.len());
        settings.rules.insert(at, matching_deny(&subject));
        let v = decide(&subject, &settings, conv, 0);
        prop_assert_eq!(v.decision, Decision::Deny);
    }

    #[test]
    fn a_plain_deny_anywhere_in_the_list_never_allows(
        subject in subject(),
        settings in settings(),
        conv in conversation(),
    ) {
        // Any in-force Deny without conditions whose target covers the subject (its tool, its
        // whole server, its sampling or elicitation) must decide, whatever else is listed.
        let deny_applies = settings.rules.iter().any(|r| {
            r.effect == Effect::Deny
                && r.conditions.is_empty()
                && match &r.scope {
                    Scope::Always => true,
                    Scope::Conversation { id } => conv == Some(id.as_str()),
                    Scope::Once => false,
                }
                && covers(&r.target, &subject)
        });
        let v = decide(&subject, &settings, conv, 0);
        if deny_applies {
            prop_assert_eq!(v.decision, Decision::Deny);
        }
    }
}

fn covers(target: &Target, subject: &Subject) -> bool {
    match (target, subject) {
        (Target::Server { server_id }, Subject::ToolCall(c)) => *server_id == c.server_id,
        (target, subject) => *target == matching_deny(subject).target,
    }
}
