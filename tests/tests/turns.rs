//! The turn loop's limits and controls, against the scripted provider and a real MCP server
//! (`tests/fault_server.py`): retries on 429, the user stopping a turn (while a call waits for
//! approval, and while one runs), the round limit and continuing after it, results cut to size,
//! and progress reaching the UI's event stream.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use toolgate_agent::{Agent, AgentError, AgentParts, Decision, Gate, TurnEvent, TurnOptions};
use toolgate_llm::{ContentPart, HttpProvider, Message};
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_tests::{
    everything_server, fault_server, fixtures::anthropic::*, fixtures::anthropic_stream, Scripted,
    ScriptedProvider,
};

async fn fault_servers() -> Arc<ServerManager> {
    let servers = ServerManager::new(ManagerOptions::default());
    servers.start_all(&[fault_server("f", "ok")]).await;
    servers
}

fn tool_call(id: &str, name: &str, input: Value) -> Scripted {
    Scripted::ok(tool_use(id, name, input))
}

/// Records events; approves (or not) each held call from outside the loop, as the window does.
struct Harness {
    gate: Arc<Gate>,
    events: Mutex<Vec<TurnEvent>>,
    approve: bool,
}

impl Harness {
    fn new(approve: bool) -> Arc<Self> {
        Arc::new(Self {
            gate: Arc::new(Gate::default()),
            events: Mutex::new(Vec::new()),
            approve,
        })
    }

    fn on_event(self: &Arc<Self>) -> impl Fn(TurnEvent) + Send + Sync {
        let me = self.clone();
        move |event| {
            if let (TurnEvent::ApprovalRequested(p), true) = (&event, me.approve) {
                let (gate, id) = (me.gate.clone(), p.id.clone());
                tokio::spawn(async move { gate.answer(&id, Decision::Approve) });
            }
            me.events.lock().expect("events").push(event);
        }
    }

    fn events(&self) -> Vec<TurnEvent> {
        self.events.lock().expect("events").clone()
    }

    /// Presses Stop for the turn run with `options` once an event `seen` accepts has arrived.
    fn stop_when(
        self: &Arc<Self>,
        options: &TurnOptions,
        seen: impl Fn(&TurnEvent) -> bool + Send + 'static,
    ) {
        let (me, cancel) = (self.clone(), options.cancel.clone());
        tokio::spawn(async move {
            while !me.events().iter().any(&seen) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            cancel.cancel();
        });
    }
}

async fn provider(replies: Vec<Scripted>) -> (ScriptedProvider, HttpProvider) {
    let script = ScriptedProvider::start(replies).await;
    let provider = script.anthropic_client("k");
    (script, provider)
}

#[tokio::test]
async fn a_rate_limited_call_is_retried_after_the_wait_the_provider_asks_for() {
    let servers = fault_servers().await;
    let (script, provider) = provider(vec![
        Scripted::status(
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}),
        )
        .with_header("retry-after", "1"),
        Scripted::ok(text("Fine now.")),
    ])
    .await;
    let h = Harness::new(true);
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    let answer = agent
        .run_turn(&provider, "m", &mut Vec::new(), "hi", &h.on_event())
        .await
        .expect("retried");
    assert_eq!(answer, "Fine now.");
    assert_eq!(script.received().len(), 2);
    let retries: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            TurnEvent::Retrying {
                attempt, delay_ms, ..
            } => Some((attempt, delay_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(
        retries,
        [(1, 1000)],
        "the retry was announced with the provider's wait"
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn stopping_a_turn_withdraws_its_approvals_and_keeps_the_history_valid() {
    let servers = fault_servers().await;
    let (_script, provider) =
        provider(vec![tool_call("toolu_1", "echo", json!({"text": "x"}))]).await;
    let h = Harness::new(false);
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    let options = TurnOptions::default();
    let cancel = options.cancel.clone();
    let gate = h.gate.clone();
    tokio::spawn(async move {
        while gate.waiting().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancel.cancel();
    });
    let mut history = Vec::new();
    let result = agent
        .run_turn_with(
            &provider,
            "m",
            &mut history,
            "echo",
            &options,
            &h.on_event(),
        )
        .await;
    assert!(matches!(result, Err(AgentError::Cancelled)), "{result:?}");
    assert!(
        h.gate.waiting().is_empty(),
        "nothing is left waiting for an answer"
    );
    // user, assistant (tool call), tool result (denied: stopped): valid to continue from.
    assert_eq!(history.len(), 3, "{history:?}");
    assert!(
        matches!(&history[2], Message::ToolResult { is_error: true, content, .. }
            if matches!(&content[0], ContentPart::Text { text } if text.contains("stopped"))),
        "{history:?}"
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn stopping_a_turn_cancels_the_tool_call_that_runs() {
    let servers = fault_servers().await;
    let (_script, provider) = provider(vec![tool_call(
        "toolu_1",
        "slow",
        json!({"seconds": 30, "interval": 0.2}),
    )])
    .await;
    let h = Harness::new(true);
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    let options = TurnOptions::default();
    // Once progress shows the call running, the user presses Stop.
    h.stop_when(&options, |e| matches!(e, TurnEvent::ToolProgress { .. }));
    let started = std::time::Instant::now();
    let result = agent
        .run_turn_with(
            &provider,
            "m",
            &mut Vec::new(),
            "slow",
            &options,
            &h.on_event(),
        )
        .await;
    assert!(matches!(result, Err(AgentError::Cancelled)), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "not held for the 30 s call"
    );
    // The server was told.
    let mut told = false;
    for _ in 0..40 {
        told = servers
            .stderr_tail("f")
            .await
            .iter()
            .any(|l| l.starts_with("cancelled "));
        if told {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(told, "notifications/cancelled reached the server");
    let progress = h
        .events()
        .into_iter()
        .filter(|e| matches!(e, TurnEvent::ToolProgress { call_id, .. } if call_id == "toolu_1"))
        .count();
    assert!(progress >= 1);
    servers.stop_all().await;
}

#[tokio::test]
async fn the_round_limit_ends_a_turn_that_can_then_be_continued() {
    let servers = fault_servers().await;
    let (_script, provider) = provider(vec![
        tool_call("toolu_1", "echo", json!({"text": "1"})),
        tool_call("toolu_2", "echo", json!({"text": "2"})),
        Scripted::ok(text("Done at last.")),
    ])
    .await;
    let h = Harness::new(true);
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    let options = TurnOptions {
        max_rounds: 2,
        ..TurnOptions::default()
    };
    let mut history = Vec::new();
    let result = agent
        .run_turn_with(
            &provider,
            "m",
            &mut history,
            "loop",
            &options,
            &h.on_event(),
        )
        .await;
    let err = result.expect_err("cut off");
    assert!(matches!(err, AgentError::TooManyRounds(2)));
    assert!(err.to_string().contains("continue"), "{err}");
    assert_eq!(history.len(), 5, "every round is kept: {history:?}");
    let answer = agent
        .run_turn_with(
            &provider,
            "m",
            &mut history,
            "continue",
            &options,
            &h.on_event(),
        )
        .await
        .expect("continues");
    assert_eq!(answer, "Done at last.");
    servers.stop_all().await;
}

#[tokio::test]
async fn oversized_results_are_cut_with_a_note_to_the_model() {
    let servers = fault_servers().await;
    let (script, provider) = provider(vec![
        tool_call("toolu_1", "big", json!({"bytes": 50_000})),
        Scripted::ok(text("Read it.")),
    ])
    .await;
    let h = Harness::new(true);
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    let options = TurnOptions {
        result_limit: 1_000,
        ..TurnOptions::default()
    };
    agent
        .run_turn_with(
            &provider,
            "m",
            &mut Vec::new(),
            "big",
            &options,
            &h.on_event(),
        )
        .await
        .expect("turn");
    let sent = &script.received()[1].body;
    let result = sent["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"][0]["content"].to_string())
        .unwrap_or_default();
    assert!(
        result.contains("Toolgate cut this result: it was 50000 characters and the limit is 1000"),
        "{result}"
    );
    assert!(result.len() < 2_000, "{}", result.len());
    servers.stop_all().await;
}

#[tokio::test]
async fn text_streams_to_the_ui_as_it_arrives() {
    let servers = fault_servers().await;
    let (_script, provider) = provider(vec![Scripted::stream(anthropic_stream::text(&[
        "Hello", ", ", "world.",
    ]))])
    .await;
    let h = Harness::new(true);
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    let answer = agent
        .run_turn(&provider, "m", &mut Vec::new(), "hi", &h.on_event())
        .await
        .expect("turn");
    assert_eq!(answer, "Hello, world.");
    let deltas: Vec<String> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            TurnEvent::TextDelta { text } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Hello", ", ", "world."]);
    servers.stop_all().await;
}

#[tokio::test]
async fn images_from_a_tool_reach_the_model_as_images() {
    let servers = ServerManager::new(ManagerOptions::default());
    servers.start_all(&[everything_server("everything")]).await;
    let (script, provider) = provider(vec![
        tool_call("toolu_img", "get-tiny-image", json!({})),
        Scripted::ok(text("A tiny image.")),
    ])
    .await;
    let h = Harness::new(true);
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    agent
        .run_turn(&provider, "m", &mut Vec::new(), "show me", &h.on_event())
        .await
        .expect("turn");
    let sent = &script.received()[1].body["messages"];
    let result = &sent.as_array().expect("messages").last().expect("last")["content"][0];
    assert_eq!(result["type"], "tool_result");
    let blocks = result["content"].as_array().expect("blocks");
    assert!(
        blocks.iter().any(|b| b["type"] == "image"
            && b["source"]["type"] == "base64"
            && b["source"]["media_type"] == "image/png"),
        "{result}"
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn a_stored_conversation_is_resumed_after_a_restart() {
    use toolgate_agent::{restore, HistoryRecorder};
    use toolgate_history::History;
    let dir = std::env::temp_dir().join(format!("toolgate-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("history.sqlite3");
    let servers = fault_servers().await;
    let (script, provider) = provider(vec![
        tool_call("toolu_1", "echo", json!({"text": "remember me"})),
        Scripted::ok(text("Echoed.")),
        Scripted::ok(text("You asked me to echo 'remember me'.")),
    ])
    .await;

    let id = {
        let history = Arc::new(History::open(&file).expect("opens"));
        let id = history.create("echo test").expect("created").id;
        let h = Harness::new(true);
        let agent = Agent::new(AgentParts {
            recorder: Some(Arc::new(HistoryRecorder::new(history, id.clone()))),
            ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
        });
        agent
            .run_turn(
                &provider,
                "m",
                &mut Vec::new(),
                "echo remember me",
                &h.on_event(),
            )
            .await
            .expect("first turn");
        id
        // The history is dropped here, as when the app quits.
    };

    // "Restart": a new handle on the same file, the conversation read back and continued.
    let history = Arc::new(History::open(&file).expect("reopens"));
    assert_eq!(history.list(None).expect("list")[0].title, "echo test");
    let mut messages = restore(&history.messages(&id).expect("messages"));
    assert_eq!(
        messages.len(),
        4,
        "user, tool call, result, answer: {messages:?}"
    );
    let h = Harness::new(true);
    let agent = Agent::new(AgentParts {
        recorder: Some(Arc::new(HistoryRecorder::new(history.clone(), id.clone()))),
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    let answer = agent
        .run_turn(
            &provider,
            "m",
            &mut messages,
            "what did I ask?",
            &h.on_event(),
        )
        .await
        .expect("continued");
    assert!(answer.contains("remember me"));
    // The model was sent the whole earlier exchange.
    let sent = &script.received()[2].body["messages"];
    assert_eq!(sent.as_array().expect("messages").len(), 5, "{sent}");
    assert_eq!(history.messages(&id).expect("messages").len(), 6);
    servers.stop_all().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn stop_ends_a_turn_mid_stream() {
    let servers = fault_servers().await;
    // The stream sends its first pieces, then stalls as a slow model would.
    let mut events = vec![anthropic_stream::message_start(25)];
    events.extend(anthropic_stream::text_block(0, &["Thinking", " about it"]));
    let (_script, provider) = provider(vec![Scripted::stream(events).stalling()]).await;
    let h = Harness::new(true);
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), h.gate.clone())
    });
    let options = TurnOptions::default();
    h.stop_when(&options, |e| matches!(e, TurnEvent::TextDelta { .. }));
    let started = std::time::Instant::now();
    let mut history = Vec::new();
    let result = agent
        .run_turn_with(&provider, "m", &mut history, "hi", &options, &h.on_event())
        .await;
    assert!(matches!(result, Err(AgentError::Cancelled)), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "ended at once, not at the stall's end"
    );
    assert_eq!(history.len(), 1, "only the user's message: {history:?}");
    servers.stop_all().await;
}
