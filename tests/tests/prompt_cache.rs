//! Prompt caching: what Toolgate sends so that providers cache it, and the tokens and cost it
//! reports, through the scripted provider (which refuses a malformed request and reports its
//! cache in each reply's usage as the real services do: `toolgate_tests::wire`).
//!
//! A turn of two rounds (a tool call, then the answer) with a catalog of 60 tools, sent whole:
//! - Anthropic: every request carries three breakpoints, on the last tool, the system prompt and
//!   the last block of the conversation; the second round's prompt starts with exactly the
//!   first's, so it reads what the first wrote; a second turn reads more again.
//! - OpenAI: no breakpoints, but the same order: the second round's request starts with the
//!   first's tools and messages, byte for byte, so the prefix cache hits.
//!
//! Both: each model call's input, output, cache-read and cache-write tokens come as a `Usage`
//! event with its cost from the dated price table, and `Finished` carries the turn's sums.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolgate_agent::{Agent, AgentParts, Decision, Gate, ToolTarget, TurnEvent};
use toolgate_catalog::{CatalogSettings, SearchMode};
use toolgate_llm::{pricing, HttpProvider, Message, Usage, WireFormat};
use toolgate_mcp::ServerManager;
use toolgate_settings::ServerConfig;
use toolgate_tests::{fixtures, repo_root, Recorded, Scripted, ScriptedProvider};

async fn sixty_tools() -> Arc<ServerManager> {
    let script = repo_root().join("tests/catalog_server.py");
    let config = ServerConfig::stdio(
        "catalog",
        "python3",
        [script.to_string_lossy().into_owned(), "60".into()],
    );
    let servers = ServerManager::new(Default::default());
    servers.start_all(&[config]).await;
    servers
}

/// Runs a turn (every call approved); returns each model call's usage and cost, and the turn's.
async fn turn(
    agent: &Agent,
    gate: &Arc<Gate>,
    provider: &HttpProvider,
    model: &str,
    history: &mut Vec<Message>,
    text: &str,
) -> (Vec<(Usage, Option<u64>)>, (Usage, Option<u64>)) {
    let calls = Mutex::new(Vec::new());
    let total = Mutex::new(None);
    let on_event = |event: TurnEvent| match event {
        TurnEvent::ApprovalRequested(pending) => {
            let (gate, id) = (gate.clone(), pending.id.clone());
            tokio::spawn(async move { gate.answer(&id, Decision::Approve).expect("answer") });
        }
        TurnEvent::Usage {
            usage,
            cost_micro_usd,
        } => calls.lock().expect("calls").push((usage, cost_micro_usd)),
        TurnEvent::Finished {
            usage,
            cost_micro_usd,
            ..
        } => *total.lock().expect("total") = Some((usage, cost_micro_usd)),
        _ => {}
    };
    agent
        .run_turn(provider, model, history, text, &on_event)
        .await
        .expect("the turn completes");
    let total = total.into_inner().expect("total").expect("finished");
    (calls.into_inner().expect("calls"), total)
}

fn all_tools() -> CatalogSettings {
    let mut settings = CatalogSettings::default();
    settings.search.mode = SearchMode::Never;
    settings
}

/// The blocks carrying a breakpoint, as (where, index).
fn breakpoints(body: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        if tool.get("cache_control").is_some() {
            found.push(format!("tool {i}"));
        }
    }
    for block in body["system"].as_array().into_iter().flatten() {
        if block.get("cache_control").is_some() {
            found.push("system".to_owned());
        }
    }
    let messages = body["messages"].as_array().expect("messages");
    for (m, message) in messages.iter().enumerate() {
        for (b, block) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            if block.get("cache_control").is_some() {
                found.push(format!("message {m} block {b}"));
            }
        }
    }
    found
}

/// `value` without any `cache_control`, at any depth.
fn unmarked(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), unmarked(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

fn cost(format: WireFormat, model: &str, usage: &Usage) -> Option<u64> {
    pricing::cost_micro_usd(format, model, usage)
}

#[tokio::test]
async fn anthropic_requests_carry_breakpoints_and_later_rounds_read_the_cached_prefix() {
    let servers = sixty_tools().await;
    use fixtures::anthropic::*;
    let provider_script = ScriptedProvider::start(vec![
        Scripted::ok(tool_use("toolu_1", "count_words", json!({"text": "a b c"}))),
        Scripted::ok(text("Three words.")),
        Scripted::ok(text("You are welcome.")),
    ])
    .await;
    let provider = provider_script.anthropic_client("sk-ant-test");
    let gate = Arc::new(Gate::default());
    let agent = Agent::new(AgentParts {
        tools: all_tools(),
        target: ToolTarget::Anthropic,
        ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
    });
    let model = "claude-sonnet-4-5-20250929";
    let mut history = Vec::new();
    let (calls, total) = turn(
        &agent,
        &gate,
        &provider,
        model,
        &mut history,
        "count the words",
    )
    .await;

    let sent = provider_script.received();
    let (first, second) = (&sent[0].body, &sent[1].body);
    for (request, last_message) in [(first, 0), (second, 2)] {
        assert_eq!(
            breakpoints(request),
            [
                "tool 59".to_owned(),
                "system".to_owned(),
                format!("message {last_message} block 0")
            ],
            "the last tool, the system prompt and the conversation so far"
        );
    }
    // The second round's prompt begins with exactly the first's: tools, system, and every
    // message the first had (the breakpoints aside).
    assert_eq!(unmarked(&first["tools"]), unmarked(&second["tools"]));
    assert_eq!(unmarked(&first["system"]), unmarked(&second["system"]));
    let (m1, m2) = (
        first["messages"].as_array().expect("messages"),
        second["messages"].as_array().expect("messages"),
    );
    assert_eq!(
        unmarked(&Value::Array(m1.clone())),
        unmarked(&Value::Array(m2[..m1.len()].to_vec()))
    );

    // What the provider reported reaches the events: the first round writes the cache, the
    // second reads all of it and writes only what was added.
    assert_eq!(calls.len(), 2);
    let (round1, round2) = (calls[0].0, calls[1].0);
    assert!(
        round1.cache_write_tokens > 1_024 && round1.cache_read_tokens == 0,
        "{round1:?}"
    );
    assert_eq!(
        round2.cache_read_tokens, round1.cache_write_tokens,
        "{round2:?}"
    );
    assert!(round2.cache_write_tokens > 0 && round2.cache_write_tokens < round1.cache_write_tokens);
    for (usage, call_cost) in &calls {
        assert_eq!(*call_cost, cost(WireFormat::Anthropic, model, usage));
        assert!(call_cost.is_some(), "Sonnet 4.5 has a price");
    }
    let mut sum = Usage::default();
    sum += round1;
    sum += round2;
    assert_eq!(total.0, sum);
    assert_eq!(
        total.1,
        Some(calls[0].1.unwrap_or(0) + calls[1].1.unwrap_or(0))
    );

    // The next turn reads even more: everything up to the last answer.
    let (calls, _) = turn(&agent, &gate, &provider, model, &mut history, "thanks").await;
    assert!(
        calls[0].0.cache_read_tokens > round2.cache_read_tokens,
        "{:?} after {round2:?}",
        calls[0].0
    );
    let third: &Recorded = &provider_script.received()[2];
    assert_eq!(breakpoints(&third.body).len(), 3);
    servers.stop_all().await;
}

#[tokio::test]
async fn openai_requests_keep_one_order_so_the_prefix_cache_hits() {
    let servers = sixty_tools().await;
    use fixtures::openai::*;
    let provider_script = ScriptedProvider::start(vec![
        Scripted::ok(completion(
            None,
            vec![tool_call(
                "call_1",
                "count_words",
                &json!({"text": "a b c"}),
            )],
        )),
        Scripted::ok(text("Three words.")),
    ])
    .await;
    let provider = provider_script.openai_client("sk-test");
    let gate = Arc::new(Gate::default());
    let agent = Agent::new(AgentParts {
        tools: all_tools(),
        target: ToolTarget::OpenAi,
        ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
    });
    let model = "gpt-4.1";
    let (calls, total) = turn(&agent, &gate, &provider, model, &mut Vec::new(), "count").await;

    let sent = provider_script.received();
    let (first, second) = (&sent[0].body, &sent[1].body);
    assert!(
        !first.to_string().contains("cache_control"),
        "no breakpoints for OpenAI"
    );
    assert_eq!(first["tools"], second["tools"]);
    let (m1, m2) = (
        first["messages"].as_array().expect("messages"),
        second["messages"].as_array().expect("messages"),
    );
    assert_eq!(
        m1[..],
        m2[..m1.len()],
        "the first request is a prefix of the second"
    );

    let (round1, round2) = (calls[0].0, calls[1].0);
    assert_eq!(round1.cache_read_tokens, 0);
    assert!(round2.cache_read_tokens >= 1_024, "{round2:?}");
    assert_eq!(calls[1].1, cost(WireFormat::OpenAi, model, &round2));
    assert!(calls[1].1.is_some(), "GPT-4.1 has a price");
    assert_eq!(total.0.cache_read_tokens, round2.cache_read_tokens);
    servers.stop_all().await;
}

#[tokio::test]
async fn a_model_without_a_known_price_has_tokens_but_no_cost() {
    let servers = sixty_tools().await;
    let provider_script =
        ScriptedProvider::start(vec![Scripted::ok(fixtures::openai::text("hi"))]).await;
    let provider = provider_script.openai_client("");
    let gate = Arc::new(Gate::default());
    let agent = Agent::new(AgentParts {
        tools: all_tools(),
        target: ToolTarget::OpenAiCompatible,
        ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
    });
    let (calls, total) = turn(
        &agent,
        &gate,
        &provider,
        "llama3.1:8b",
        &mut Vec::new(),
        "hi",
    )
    .await;
    assert_eq!(calls[0].1, None);
    assert_eq!(total.1, None);
    assert!(total.0.input_tokens > 0);
    servers.stop_all().await;
}
