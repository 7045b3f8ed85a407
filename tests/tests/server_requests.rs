//! Servers' own requests pass the approval gate: `server-everything`'s `trigger-sampling-request`
//! and `trigger-elicitation-request` tools make real `sampling/createMessage` and
//! `elicitation/create` requests, answered here the way the window answers them (through the
//! gate, by id). The model is the scripted provider, reached through its base URL.

#[path = "common/gated.rs"]
mod gated;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use gated::gated_servers;
use serde_json::{json, Value};
use toolgate_agent::{
    Decision, Gate, GateError, Lasting, MemoryPolicy, ModelSource, PendingCall, PolicyStore, Reach,
    RequestKind,
};
use toolgate_history::{AuditDecision, AuditFilter, DecidedBy, History};
use toolgate_llm::{HttpProvider, Provider, WireFormat};
use toolgate_mcp::{Launch, ServerManager, ToolOutput};
use toolgate_policy::{
    server_fingerprint, Effect, PolicySettings, Rule, Scope, ServerEndpoint, Subject, Target,
};
use toolgate_tests::{
    everything_server, fixtures::anthropic, temp_dir, Scripted, ScriptedProvider, TestDir,
};

/// The user's provider: the scripted one, at its base URL, as the app's settings would name it.
struct Models(String);

#[async_trait]
impl ModelSource for Models {
    async fn model(&self) -> Result<(Box<dyn Provider>, String), toolgate_agent::NoModel> {
        let provider = HttpProvider::new(WireFormat::Anthropic, &self.0, "sk-test")
            .map_err(|e| toolgate_agent::NoModel::Provider(Box::new(e)))?;
        Ok((Box::new(provider), "claude-test".to_owned()))
    }
}

struct Setup {
    servers: Arc<ServerManager>,
    gate: Arc<Gate>,
    policy: Arc<MemoryPolicy>,
    history: Arc<History>,
    provider: ScriptedProvider,
    /// Holds the history's folder until the test ends.
    _dir: TestDir,
}

async fn setup(tag: &str, replies: Vec<Scripted>, policy: PolicySettings) -> Setup {
    let provider = ScriptedProvider::start(replies).await;
    let policy = Arc::new(MemoryPolicy::new(policy));
    let dir = temp_dir(tag);
    let gated::Gated {
        gate,
        history,
        servers,
    } = gated_servers(
        &dir,
        policy.clone(),
        Arc::new(Models(provider.anthropic_base_url())),
    );
    servers.start_all(&[everything_server("e")]).await;
    Setup {
        servers,
        gate,
        policy,
        history,
        provider,
        _dir: dir,
    }
}

impl Setup {
    /// Calls a tool of server-everything in the background, as the user's own call.
    fn call(&self, tool: &str, arguments: Value) -> tokio::task::JoinHandle<ToolOutput> {
        let servers = self.servers.clone();
        let tool = tool.to_owned();
        tokio::spawn(async move {
            servers
                .call_tool("e", &tool, arguments)
                .await
                .expect("the tool call itself succeeds")
        })
    }

    /// The next request held at the gate.
    async fn held(&self) -> PendingCall {
        for _ in 0..400 {
            if let Some(call) = self.gate.waiting().into_iter().next() {
                return call;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("nothing was held at the gate within 20 s");
    }

    fn audit(&self, tool: &str) -> Vec<toolgate_history::AuditRow> {
        self.history
            .audit(&AuditFilter {
                tool: Some(tool.to_owned()),
                ..AuditFilter::default()
            })
            .expect("audit")
    }
}

fn sampling(prompt: &str) -> Value {
    json!({"prompt": prompt, "maxTokens": 50})
}

#[tokio::test]
async fn sampling_is_asked_then_its_reply_reviewed_and_edits_are_what_is_sent() {
    let s = setup(
        "sampling-edit",
        vec![Scripted::ok(anthropic::text("the model's own words"))],
        PolicySettings::default(),
    )
    .await;
    let running = s.call("trigger-sampling-request", sampling("a haiku"));

    let asked = s.held().await;
    assert_eq!(asked.request, RequestKind::Sampling);
    assert_eq!(asked.tool, "sampling/createMessage");
    assert_eq!(asked.server_id, "e");
    assert!(
        asked.reason.contains("asks to use your model"),
        "{}",
        asked.reason
    );
    let text = &asked.arguments["messages"][0]["content"]["text"];
    assert!(text.as_str().unwrap().contains("a haiku"), "{text}");
    assert!(
        s.provider.received().is_empty(),
        "nothing reaches the model before the user answers"
    );

    // The user rewrites the prompt before the model sees it.
    let mut edited = asked.arguments.clone();
    edited["messages"][0]["content"]["text"] = json!("EDITED: a limerick instead");
    s.gate
        .answer(&asked.id, Decision::ApproveEdited { arguments: edited })
        .expect("the edit fits");

    // Then sees the reply before the server does, and edits it too.
    let review = s.held().await;
    assert_eq!(review.request, RequestKind::Sampling);
    assert_eq!(review.arguments, json!({"text": "the model's own words"}));
    assert!(review.reason.contains("claude-test"), "{}", review.reason);
    s.gate
        .answer(
            &review.id,
            Decision::ApproveEdited {
                arguments: json!({"text": "words the user chose"}),
            },
        )
        .expect("the edit fits");

    let output = running.await.expect("joined");
    assert!(!output.is_error, "{}", output.text);
    assert!(
        output.text.contains("words the user chose"),
        "{}",
        output.text
    );
    assert!(
        !output.text.contains("the model's own words"),
        "{}",
        output.text
    );
    assert!(output.text.contains("claude-test"), "{}", output.text);

    let sent = s.provider.received();
    assert_eq!(sent.len(), 1);
    let body = &sent[0].body;
    assert_eq!(body["system"], "You are a helpful test server.");
    assert_eq!(body["max_tokens"], 50);
    assert!(
        body["messages"]
            .to_string()
            .contains("EDITED: a limerick instead"),
        "{body}"
    );
    assert!(!body["messages"].to_string().contains("a haiku"), "{body}");

    let audit = s.audit("sampling/createMessage");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].entry.decision, AuditDecision::Allowed);
    assert_eq!(audit[0].entry.decided_by, DecidedBy::User);
    assert!(audit[0].entry.arguments.to_string().contains("EDITED"));
    assert!(
        audit[0].entry.duration_ms.is_some(),
        "completed: {:?}",
        audit[0]
    );
    assert!(s.gate.waiting().is_empty());
    s.servers.stop_all().await;
}

#[tokio::test]
async fn a_denied_sampling_request_never_reaches_the_model() {
    let s = setup("sampling-deny", Vec::new(), PolicySettings::default()).await;
    let running = s.call("trigger-sampling-request", sampling("spend tokens"));
    let asked = s.held().await;
    s.gate
        .answer(
            &asked.id,
            Decision::Deny {
                reason: Some("not now".into()),
            },
        )
        .expect("answered");
    let output = running.await.expect("joined");
    assert!(output.is_error, "{}", output.text);
    assert!(
        output
            .text
            .contains("the user rejected the sampling request: not now"),
        "{}",
        output.text
    );
    assert!(s.provider.received().is_empty());
    let audit = s.audit("sampling/createMessage");
    assert_eq!(audit[0].entry.decision, AuditDecision::Denied);
    assert_eq!(audit[0].entry.reason.as_deref(), Some("not now"));
    s.servers.stop_all().await;
}

#[tokio::test]
async fn always_allowing_a_servers_sampling_stops_the_questions_and_pause_refuses_it() {
    let s = setup(
        "sampling-always",
        vec![
            Scripted::ok(anthropic::text("first")),
            Scripted::ok(anthropic::text("second")),
        ],
        PolicySettings::default(),
    )
    .await;
    let running = s.call("trigger-sampling-request", sampling("one"));
    let asked = s.held().await;
    s.gate
        .answer(
            &asked.id,
            Decision::Allow {
                reach: Reach::Server,
                lasting: Lasting::Always,
            },
        )
        .expect("answered");
    let output = running.await.expect("joined");
    assert!(output.text.contains("first"), "{}", output.text);
    let rules = s.policy.settings().rules.clone();
    assert_eq!(rules.len(), 1);
    assert!(matches!(&rules[0].target, Target::Sampling { server_id } if server_id == "e"));

    // The next one runs without a question: nothing is ever held.
    let mut changes = s.gate.subscribe();
    changes.mark_unchanged();
    let output = s
        .servers
        .call_tool("e", "trigger-sampling-request", sampling("two"))
        .await
        .expect("call");
    assert!(output.text.contains("second"), "{}", output.text);
    assert!(
        !changes.has_changed().expect("gate alive"),
        "nothing was asked"
    );
    let audit = s.audit("sampling/createMessage");
    assert_eq!(audit[0].entry.decided_by, DecidedBy::Rule, "newest first");
    assert_eq!(
        audit[0].entry.rule_id.as_deref(),
        Some(rules[0].id.as_str())
    );

    // Pause-all refuses even what a rule allows, without asking.
    s.policy.set_paused(true);
    let output = s
        .servers
        .call_tool("e", "trigger-sampling-request", sampling("three"))
        .await
        .expect("call");
    assert!(
        output.is_error && output.text.contains("refuse"),
        "{}",
        output.text
    );
    assert_eq!(
        s.provider.received().len(),
        2,
        "the paused request was not sent"
    );
    assert_eq!(
        s.audit("sampling/createMessage")[0].entry.decided_by,
        DecidedBy::Pause
    );
    s.servers.stop_all().await;
}

#[tokio::test]
async fn an_elicitation_is_answered_by_the_user_and_the_answer_must_fit_the_form() {
    let s = setup("elicit", Vec::new(), PolicySettings::default()).await;
    let running = s.call("trigger-elicitation-request", json!({}));
    let asked = s.held().await;
    assert_eq!(asked.request, RequestKind::Elicitation);
    assert_eq!(
        asked.message.as_deref(),
        Some("Please provide inputs for the following fields:")
    );
    // The answer starts from the form's defaults; the schema is the form.
    assert_eq!(asked.arguments["integer"], 42);
    assert_eq!(asked.input_schema["required"], json!(["name"]));

    // "Approve" as it stands leaves the required name empty: refused, still waiting.
    assert!(matches!(
        s.gate.answer(&asked.id, Decision::Approve),
        Err(GateError::InvalidArguments(_))
    ));
    let mut answer = asked.arguments.clone();
    answer["integer"] = json!("many");
    assert!(matches!(
        s.gate.answer(
            &asked.id,
            Decision::ApproveEdited {
                arguments: answer.clone()
            }
        ),
        Err(GateError::InvalidArguments(_))
    ));
    answer["integer"] = json!(7);
    answer["name"] = json!("Ada Lovelace");
    s.gate
        .answer(&asked.id, Decision::ApproveEdited { arguments: answer })
        .expect("fits the form");

    let output = running.await.expect("joined");
    assert!(
        output.text.contains("- Name: Ada Lovelace"),
        "{}",
        output.text
    );
    assert!(
        output.text.contains("- Favorite Integer: 7"),
        "{}",
        output.text
    );

    let audit = s.audit("elicitation/create");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].entry.decision, AuditDecision::Allowed);
    let logged = audit[0].entry.arguments.to_string();
    assert!(
        logged.contains("Please provide inputs"),
        "the question is kept"
    );
    assert!(
        !logged.contains("Ada Lovelace"),
        "the answer is not: {logged}"
    );
    s.servers.stop_all().await;
}

#[tokio::test]
async fn an_elicitation_declined_for_good_becomes_a_rule_that_declines_unasked() {
    let s = setup(
        "elicit-deny",
        Vec::new(),
        PolicySettings {
            approval_timeout_secs: Some(5),
            ..PolicySettings::default()
        },
    )
    .await;
    // The user declines.
    let running = s.call("trigger-elicitation-request", json!({}));
    let asked = s.held().await;
    s.gate
        .answer(
            &asked.id,
            Decision::DenyAlways {
                reach: Reach::Server,
            },
        )
        .expect("answered");
    let output = running.await.expect("joined");
    assert!(output.text.contains("User declined"), "{}", output.text);

    // "Never" became a rule, which declines the next question without asking.
    let mut changes = s.gate.subscribe();
    changes.mark_unchanged();
    let output = s
        .servers
        .call_tool("e", "trigger-elicitation-request", json!({}))
        .await
        .expect("call");
    assert!(output.text.contains("User declined"), "{}", output.text);
    assert!(
        !changes.has_changed().expect("gate alive"),
        "nothing was asked"
    );

    s.servers.stop_all().await;
}

#[tokio::test]
async fn an_allow_rule_cannot_answer_for_the_user_and_an_unanswered_question_is_cancelled() {
    let s = setup(
        "elicit-timeout",
        Vec::new(),
        PolicySettings {
            approval_timeout_secs: Some(5),
            ..PolicySettings::default()
        },
    )
    .await;
    // A grant bound to this very server, so the rules say "allow".
    let snapshot = s.servers.snapshot().await;
    let Launch::Stdio { command, args } = &snapshot[0].launch else {
        panic!("stdio server");
    };
    let subject = Subject::Elicitation {
        server_id: "e".into(),
        server_fingerprint: server_fingerprint(&ServerEndpoint::Stdio { command, args }),
    };
    s.policy
        .add_rule(Rule::for_subject(
            "allow",
            Effect::Allow,
            &subject,
            Scope::Always,
            0,
        ))
        .expect("rule");
    assert_eq!(
        toolgate_policy::decide(&subject, &s.policy.settings(), None, 1).decision,
        toolgate_policy::Decision::Allow
    );

    let running = s.call("trigger-elicitation-request", json!({}));
    let asked = s.held().await;
    assert_eq!(asked.request, RequestKind::Elicitation, "still asked");
    let output = running.await.expect("joined");
    assert!(output.text.contains("User cancelled"), "{}", output.text);
    assert!(s.gate.waiting().is_empty(), "the question left the gate");
    let audit = s.audit("elicitation/create");
    assert_eq!(audit[0].entry.decision, AuditDecision::TimedOut);
    assert_eq!(audit[0].entry.decided_by, DecidedBy::Timeout);
    s.servers.stop_all().await;
}
