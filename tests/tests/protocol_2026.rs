//! The 2026-07-28 protocol against a server written on the official Python SDK
//! (`tests/modern_server.py`): questions asked inside a call (`input_required`) go through the
//! gate and the call is retried with the answer and the server's sealed `requestState`; a call
//! the server runs as a task is polled with its progress shown, its in-task question asked, and
//! cancelled with `tasks/cancel`; tool lists stay live on `subscriptions/listen`, also after the
//! server ends the stream; a subscribed resource's updates arrive on a listen stream of their
//! own, which follows the subscribers; tool context reaches the server in `_meta`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use toolgate_agent::{Decision, Gate, MemoryPolicy, PendingCall, RequestKind};
use toolgate_history::{AuditDecision, AuditFilter, History};
use toolgate_mcp::{
    CallOptions, CallProgress, McpError, ServerEvent, ServerManager, ServerSnapshot,
};
use toolgate_policy::PolicySettings;
use toolgate_settings::ServerConfig;
use toolgate_tests::{json_lines, modern_server, temp_dir, TestDir};

#[path = "common/gated.rs"]
mod gated;

use gated::{gated_servers, NoModel};

struct Setup {
    servers: Arc<ServerManager>,
    gate: Arc<Gate>,
    history: Arc<History>,
    log: std::path::PathBuf,
    _dir: TestDir,
}

async fn setup(tag: &str, configure: impl FnOnce(&mut ServerConfig)) -> Setup {
    let dir = temp_dir(tag);
    let log = dir.join("server.jsonl");
    let gated::Gated {
        gate,
        history,
        servers,
    } = gated_servers(
        &dir,
        Arc::new(MemoryPolicy::new(PolicySettings::default())),
        Arc::new(NoModel),
    );
    let mut config = modern_server("m", &log);
    configure(&mut config);
    servers.start_all(&[config]).await;
    let snap = snapshot(&servers).await;
    assert_eq!(
        snap.protocol_version.as_deref(),
        Some("2026-07-28"),
        "{:?}",
        snap.status
    );
    Setup {
        servers,
        gate,
        history,
        log,
        _dir: dir,
    }
}

async fn snapshot(servers: &ServerManager) -> ServerSnapshot {
    servers
        .snapshot()
        .await
        .into_iter()
        .find(|s| s.id == "m")
        .expect("configured")
}

impl Setup {
    fn call(
        &self,
        tool: &str,
        arguments: Value,
        options: CallOptions,
    ) -> tokio::task::JoinHandle<Result<toolgate_mcp::ToolOutput, McpError>> {
        let servers = self.servers.clone();
        let tool = tool.to_owned();
        tokio::spawn(async move { servers.call_tool_with("m", &tool, arguments, options).await })
    }

    async fn held(&self) -> PendingCall {
        for _ in 0..400 {
            if let Some(call) = self.gate.waiting().into_iter().next() {
                return call;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("nothing was held at the gate within 20 s");
    }

    fn logged(&self, event: &str) -> Vec<Value> {
        json_lines(&self.log)
            .into_iter()
            .filter(|e| e["event"] == event)
            .collect()
    }

    async fn wait_logged(&self, event: &str) -> Vec<Value> {
        for _ in 0..100 {
            let found = self.logged(event);
            if !found.is_empty() {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the server never logged {event}");
    }

    async fn wait_for_tool(&self, name: &str) -> ServerSnapshot {
        for _ in 0..200 {
            let snap = snapshot(&self.servers).await;
            if snap.tools.iter().any(|t| t.name == name) {
                return snap;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the tool list never showed {name}");
    }
}

#[tokio::test]
async fn a_question_inside_a_call_is_asked_at_the_gate_and_the_call_retried_with_its_state() {
    let s = setup("mrtr-accept", |_| {}).await;
    let running = s.call("book_table", json!({"people": 2}), CallOptions::default());

    let asked = s.held().await;
    assert_eq!(asked.request, RequestKind::Elicitation);
    assert_eq!(asked.server_id, "m");
    assert_eq!(
        asked.message.as_deref(),
        Some("Whose name is the table for 2 under?")
    );
    assert_eq!(asked.input_schema["required"], json!(["name"]));
    // A form-invalid answer is refused by the gate; the question stays.
    assert!(s
        .gate
        .answer(
            &asked.id,
            Decision::ApproveEdited {
                arguments: json!({"name": ""})
            }
        )
        .is_err());
    s.gate
        .answer(
            &asked.id,
            Decision::ApproveEdited {
                arguments: json!({"name": "Ada"}),
            },
        )
        .expect("a valid answer");

    let output = running.await.expect("joined").expect("the call ends well");
    assert!(!output.is_error, "{}", output.text);
    // The server unsealed the state it had sent: it came back exactly as it was.
    assert_eq!(
        output.text,
        "Booked a table for 2 under Ada (state people=2)"
    );
    let retried = s.logged("book-retried");
    assert_eq!(retried.len(), 1, "one retry: {retried:?}");
    assert_eq!(retried[0]["action"], "accept");

    let audit = s
        .history
        .audit(&AuditFilter {
            tool: Some("elicitation/create".into()),
            ..AuditFilter::default()
        })
        .expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].entry.decision, AuditDecision::Allowed);
    assert!(
        !audit[0].entry.arguments.to_string().contains("Ada"),
        "the answer is the user's own, never logged"
    );
    s.servers.stop_all().await;
}

#[tokio::test]
async fn a_declined_question_is_sent_back_as_declined_and_the_server_decides() {
    let s = setup("mrtr-decline", |_| {}).await;
    let running = s.call("book_table", json!({"people": 4}), CallOptions::default());
    let asked = s.held().await;
    s.gate
        .answer(&asked.id, Decision::Deny { reason: None })
        .expect("answered");
    let output = running.await.expect("joined").expect("the call ends");
    assert_eq!(
        output.text,
        "No booking: the question was answered with decline"
    );
    s.servers.stop_all().await;
}

#[tokio::test]
async fn a_stop_while_a_question_waits_cancels_the_call_and_withdraws_the_question() {
    let s = setup("mrtr-stop", |_| {}).await;
    let cancel = CancellationToken::new();
    let running = s.call(
        "book_table",
        json!({"people": 3}),
        CallOptions {
            cancel: Some(cancel.clone()),
            ..CallOptions::default()
        },
    );
    s.held().await;
    cancel.cancel();
    let result = running.await.expect("joined");
    assert!(
        matches!(result, Err(McpError::Cancelled { .. })),
        "{result:?}"
    );
    for _ in 0..40 {
        if s.gate.waiting().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(s.gate.waiting().is_empty(), "the question left the gate");
    assert!(s.logged("book-retried").is_empty(), "no retry was sent");
    s.servers.stop_all().await;
}

fn progress_channel() -> (
    tokio::sync::mpsc::UnboundedSender<CallProgress>,
    tokio::sync::mpsc::UnboundedReceiver<CallProgress>,
) {
    tokio::sync::mpsc::unbounded_channel()
}

#[tokio::test]
async fn a_call_run_as_a_task_is_polled_to_its_result_with_its_progress_and_its_question() {
    let s = setup("task-done", |_| {}).await;
    let (progress, mut updates) = progress_channel();
    let running = s.call(
        "slow_report",
        json!({"steps": 6, "ask": true}),
        CallOptions {
            progress: Some(progress),
            ..CallOptions::default()
        },
    );
    // The task's question is asked like any other, once however often it is polled.
    let asked = s.held().await;
    assert_eq!(asked.request, RequestKind::Elicitation);
    assert_eq!(
        asked.message.as_deref(),
        Some("Include the appendix in the report?")
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.gate.waiting().len(), 1, "asked once across polls");
    s.gate
        .answer(
            &asked.id,
            Decision::ApproveEdited {
                arguments: json!({"include": true}),
            },
        )
        .expect("answered");
    let output = running.await.expect("joined").expect("the task completes");
    assert_eq!(output.text, "Report of 6 steps; appendix: True");
    assert_eq!(s.logged("task-update").len(), 1);

    let mut seen = Vec::new();
    while let Ok(update) = updates.try_recv() {
        seen.push(update);
    }
    let tasks: Vec<_> = seen.iter().filter_map(|p| p.task.clone()).collect();
    assert!(!tasks.is_empty(), "{seen:?}");
    let id = &tasks[0].id;
    assert!(tasks.iter().all(|t| &t.id == id));
    let statuses: Vec<&str> = tasks.iter().map(|t| t.status.as_str()).collect();
    assert!(statuses.contains(&"working"), "{statuses:?}");
    assert!(statuses.contains(&"input_required"), "{statuses:?}");
    assert!(
        seen.iter()
            .any(|p| p.message.as_deref().is_some_and(|m| m.starts_with("step "))),
        "status messages shown as progress: {seen:?}"
    );
    s.servers.stop_all().await;
}

#[tokio::test]
async fn cancelling_a_task_sends_tasks_cancel() {
    let s = setup("task-cancel", |_| {}).await;
    let (progress, mut updates) = progress_channel();
    let cancel = CancellationToken::new();
    let running = s.call(
        "slow_report",
        json!({"steps": 60}),
        CallOptions {
            progress: Some(progress),
            cancel: Some(cancel.clone()),
            ..CallOptions::default()
        },
    );
    let first = tokio::time::timeout(Duration::from_secs(20), updates.recv())
        .await
        .expect("progress in time")
        .expect("progress");
    let task = first.task.expect("the call runs as a task");
    cancel.cancel();
    let result = running.await.expect("joined");
    assert!(
        matches!(result, Err(McpError::Cancelled { .. })),
        "{result:?}"
    );
    let cancelled = s.wait_logged("task-cancelled").await;
    assert_eq!(cancelled[0]["taskId"], json!(task.id));
    assert!(s.logged("task-completed").is_empty());
    s.servers.stop_all().await;
}

#[tokio::test]
async fn tool_lists_stay_live_on_subscriptions_listen_and_a_dropped_stream_is_opened_again() {
    let s = setup("listen", |_| {}).await;
    s.servers
        .call_tool("m", "add_tool", json!({"name": "first_added"}))
        .await
        .expect("added");
    s.wait_for_tool("first_added").await;

    // The server ends every stream; Toolgate opens it again, so later changes still arrive.
    let closed = s
        .servers
        .call_tool("m", "end_listen", json!({}))
        .await
        .expect("closed");
    assert_eq!(closed.text, "closed");
    tokio::time::sleep(Duration::from_millis(500)).await;
    s.servers
        .call_tool("m", "add_tool", json!({"name": "second_added"}))
        .await
        .expect("added");
    let snap = s.wait_for_tool("second_added").await;
    assert!(snap.tools.iter().any(|t| t.name == "first_added"));
    s.servers.stop_all().await;
}

/// The next resource update `events` carries, within 10 s.
async fn next_update(events: &mut tokio::sync::broadcast::Receiver<ServerEvent>) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(ServerEvent::ResourceUpdated { server, uri })) => {
                assert_eq!(server, "m");
                return uri;
            }
            Ok(Ok(_)) => continue,
            Ok(Err(e)) => panic!("the events ended: {e}"),
            Err(_) => panic!("no resource update within 10 s"),
        }
    }
}

#[tokio::test]
async fn subscribed_resources_are_watched_on_a_listen_stream_that_follows_the_subscribers() {
    let s = setup("resource-updates", |_| {}).await;
    assert!(s.servers.offers_subscriptions("m").await);
    let mut events = s.servers.events();
    let touch = |uri: &'static str| {
        let servers = s.servers.clone();
        async move {
            servers
                .call_tool("m", "touch", json!({ "uri": uri }))
                .await
                .expect("touched");
        }
    };

    // Two subscribers to one resource, one to another: only those are told.
    s.servers
        .subscribe_resource("m", "notes://rust")
        .await
        .expect("subscribed");
    s.servers
        .subscribe_resource("m", "notes://rust")
        .await
        .expect("again");
    s.servers
        .subscribe_resource("m", "notes://go")
        .await
        .expect("subscribed");
    touch("notes://unwatched").await;
    touch("notes://rust").await;
    assert_eq!(next_update(&mut events).await, "notes://rust");
    touch("notes://go").await;
    assert_eq!(next_update(&mut events).await, "notes://go");

    // One of rust's two subscribers leaves: still watched. go's only one leaves: not.
    s.servers
        .unsubscribe_resource("m", "notes://rust")
        .await
        .expect("one left");
    s.servers
        .unsubscribe_resource("m", "notes://go")
        .await
        .expect("left");
    touch("notes://go").await;
    touch("notes://rust").await;
    assert_eq!(next_update(&mut events).await, "notes://rust");

    // The last one leaves: nothing more, until a new subscription.
    s.servers
        .unsubscribe_resource("m", "notes://rust")
        .await
        .expect("left");
    touch("notes://rust").await;
    s.servers
        .subscribe_resource("m", "notes://new")
        .await
        .expect("subscribed");
    touch("notes://new").await;
    assert_eq!(next_update(&mut events).await, "notes://new");
    let opened = s
        .wait_logged("touched")
        .await
        .iter()
        .filter(|e| e["uri"] == "notes://rust")
        .count();
    assert_eq!(opened, 3, "every touch of rust reached the server");
    s.servers.stop_all().await;
}

#[tokio::test]
async fn tool_context_reaches_the_server_in_meta_only_where_turned_on() {
    let s = setup("context", |config| {
        config.tool_context.conversation_id = true;
        config
            .tool_context
            .meta
            .insert("example.com/tenant".into(), json!("acme"));
    })
    .await;
    let with_conversation = s
        .servers
        .call_tool_with(
            "m",
            "whoami",
            json!({}),
            CallOptions {
                conversation: Some("conv-42".into()),
                ..CallOptions::default()
            },
        )
        .await
        .expect("called");
    let meta: Value = serde_json::from_str(&with_conversation.text).expect("json");
    assert_eq!(
        meta,
        json!({"example.com/tenant": "acme", "dev.toolgate/conversationId": "conv-42"})
    );
    // A call of no conversation (the user's own, a connected client's) sends none.
    let alone = s
        .servers
        .call_tool("m", "whoami", json!({}))
        .await
        .expect("called");
    assert_eq!(
        serde_json::from_str::<Value>(&alone.text).expect("json"),
        json!({"example.com/tenant": "acme"})
    );
    s.servers.stop_all().await;

    // Off by default: nothing beyond the protocol's own keys.
    let plain = setup("context-off", |_| {}).await;
    let output = plain
        .servers
        .call_tool_with(
            "m",
            "whoami",
            json!({}),
            CallOptions {
                conversation: Some("conv-42".into()),
                ..CallOptions::default()
            },
        )
        .await
        .expect("called");
    assert_eq!(output.text, "{}");
    plain.servers.stop_all().await;
}

#[tokio::test]
async fn a_resource_template_is_filled_and_read_and_a_prompt_got_with_its_arguments() {
    let s = setup("templates", |_| {}).await;
    let snap = snapshot(&s.servers).await;
    let template = snap
        .resource_templates
        .iter()
        .find(|t| t.uri_template == "notes://{topic}")
        .expect("the template is listed");
    assert_eq!(template.variables, ["topic"]);
    let values = [("topic".to_owned(), "oslo trip".to_owned())].into();
    let (uri, read) = s
        .servers
        .read_resource_template("m", &template.uri_template, &values)
        .await
        .expect("read");
    let read = serde_json::to_value(read).expect("json");
    assert_eq!(uri, "notes://oslo%20trip");
    assert_eq!(
        read["contents"][0]["text"],
        "Notes on oslo trip: nothing yet.",
    );
    let typo = [("topik".to_owned(), "x".to_owned())].into();
    let error = s
        .servers
        .read_resource_template("m", &template.uri_template, &typo)
        .await
        .expect_err("no such variable");
    assert!(error.to_string().contains("no variable 'topik'"), "{error}");

    let prompt = snap
        .prompts
        .iter()
        .find(|p| p.name == "plan_trip")
        .expect("the prompt is listed");
    let required: Vec<(&str, bool)> = prompt
        .argument_info
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(required, [("city", true), ("days", false)]);
    let arguments = json!({"city": "Oslo", "days": "3"});
    let got = s
        .servers
        .get_prompt("m", "plan_trip", arguments.as_object().cloned())
        .await
        .expect("got");
    let got = serde_json::to_value(got).expect("json");
    assert_eq!(got["messages"][0]["role"], "user");
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Plan a 3-day trip to Oslo."
    );
    s.servers.stop_all().await;
}
