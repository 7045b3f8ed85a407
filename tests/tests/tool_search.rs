//! Tool search with a catalog of 500 tools (`tests/catalog_server.py`, a real stdio MCP server),
//! through the scripted provider in both wire formats.
//!
//! Each scripted task needs a tool by its purpose, in words its name does not use ("turn 30
//! celsius into fahrenheit" needs `convert_temperature`): the model calls `search_tools` with
//! the purpose, Toolgate's local ranking must find the tool (first), the next request must carry
//! it (OpenAI: its definition in the tool list; Anthropic: a `tool_reference` in the search
//! result, the tool deferred in every request), and the model's call of it is held at the gate
//! as any call is: approved, it reaches the server; denied, it never does.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolgate_agent::{Agent, AgentParts, Decision, Gate, ToolTarget, TurnEvent};
use toolgate_catalog::CatalogSettings;
use toolgate_llm::HttpProvider;
use toolgate_mcp::{ServerManager, ServerStatus};
use toolgate_settings::ServerConfig;
use toolgate_tests::{fixtures, repo_root, Recorded, Scripted, ScriptedProvider};

const TOOLS: usize = 500;

/// Tasks by purpose, and the tool each needs.
const TASKS: [(&str, &str, &str); 4] = [
    (
        "turn 30 celsius into fahrenheit",
        "convert_temperature",
        r#"{"value": "30", "to": "fahrenheit"}"#,
    ),
    (
        "how many words are in this paragraph",
        "count_words",
        r#"{"text": "one two three"}"#,
    ),
    (
        "make this long link short",
        "shorten_url",
        r#"{"url": "https://example.com/a/very/long/path"}"#,
    ),
    (
        "what phase is the moon in tonight",
        "moon_phase",
        r#"{"date": "2026-11-25"}"#,
    ),
];

fn catalog_server() -> ServerConfig {
    let script = repo_root().join("tests/catalog_server.py");
    let mut config = ServerConfig::stdio(
        "catalog",
        "python3",
        [script.to_string_lossy().into_owned(), TOOLS.to_string()],
    );
    config.name = "Catalog".into();
    config
}

async fn started() -> Arc<ServerManager> {
    let servers = ServerManager::new(Default::default());
    servers.start_all(&[catalog_server()]).await;
    let snapshot = servers.snapshot().await;
    assert_eq!(
        snapshot[0].status,
        ServerStatus::Ready,
        "{:?}",
        snapshot[0].status
    );
    assert_eq!(snapshot[0].tools.len(), TOOLS);
    servers
}

/// What one turn did: its events, and whether every call the gate held was for `expected`.
struct Turn {
    events: Vec<TurnEvent>,
    held: Vec<(String, String)>,
}

async fn run(
    servers: &Arc<ServerManager>,
    target: ToolTarget,
    settings: CatalogSettings,
    provider: &HttpProvider,
    task: &str,
    approve: bool,
) -> Turn {
    let gate = Arc::new(Gate::default());
    let agent = Agent::new(AgentParts {
        tools: settings,
        target,
        ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
    });
    let events = Mutex::new(Vec::new());
    let on_event = |event: TurnEvent| {
        if let TurnEvent::ApprovalRequested(pending) = &event {
            let decision = if approve {
                Decision::Approve
            } else {
                Decision::Deny {
                    reason: Some("not now".into()),
                }
            };
            let (gate, id) = (gate.clone(), pending.id.clone());
            tokio::spawn(async move { gate.answer(&id, decision).expect("answer once") });
        }
        events.lock().expect("events").push(event);
    };
    let model = match target {
        ToolTarget::Anthropic => "claude-sonnet-4-5",
        _ => "gpt-4.1",
    };
    agent
        .run_turn(provider, model, &mut Vec::new(), task, &on_event)
        .await
        .expect("the turn completes");
    let events = events.into_inner().expect("events");
    let held = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ApprovalRequested(p) => Some((p.server_id.clone(), p.tool.clone())),
            _ => None,
        })
        .collect();
    Turn { events, held }
}

fn tool_names(request: &Recorded, openai: bool) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            let name = if openai {
                &t["function"]["name"]
            } else {
                &t["name"]
            };
            name.as_str().expect("name").to_owned()
        })
        .collect()
}

fn found(events: &[TurnEvent]) -> Vec<String> {
    events
        .iter()
        .find_map(|e| match e {
            TurnEvent::ToolsSearched { found, .. } => {
                Some(found.iter().map(|f| f.name.clone()).collect())
            }
            _ => None,
        })
        .expect("a search happened")
}

/// Calls the server received, from its stderr.
async fn called(servers: &ServerManager) -> Vec<String> {
    servers
        .stderr_tail("catalog")
        .await
        .into_iter()
        .filter_map(|l| l.strip_prefix("called ").map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn openai_finds_each_tool_by_purpose_loads_it_and_the_gate_holds_its_call() {
    let servers = started().await;
    use fixtures::openai::*;
    let mut script = Vec::new();
    for (i, (purpose, tool, arguments)) in TASKS.iter().enumerate() {
        let args: Value = serde_json::from_str(arguments).expect("json");
        script.push(Scripted::ok(completion(
            None,
            vec![tool_call(
                &format!("s{i}"),
                "search_tools",
                &json!({"query": purpose}),
            )],
        )));
        script.push(Scripted::ok(completion(
            None,
            vec![tool_call(&format!("c{i}"), tool, &args)],
        )));
        script.push(Scripted::ok(text("done")));
    }
    let provider_script = ScriptedProvider::start(script).await;
    let provider = provider_script.openai_client("sk-test");

    for (i, (purpose, tool, _)) in TASKS.iter().enumerate() {
        // The last task is denied: the call must not reach the server.
        let approve = i + 1 < TASKS.len();
        let turn = run(
            &servers,
            ToolTarget::OpenAi,
            CatalogSettings::default(),
            &provider,
            purpose,
            approve,
        )
        .await;
        assert_eq!(
            found(&turn.events)[0],
            *tool,
            "{purpose}: the tool is found first"
        );
        assert_eq!(
            turn.held,
            [("catalog".to_owned(), tool.to_string())],
            "{purpose}: the gate held exactly the found tool's call"
        );
        let sent = provider_script.received();
        let (first, second) = (&sent[3 * i], &sent[3 * i + 1]);
        assert_eq!(
            tool_names(first, true),
            ["search_tools"],
            "only search, at first"
        );
        let system = first.body["messages"][0]["content"]
            .as_str()
            .expect("system");
        assert!(
            system.contains("500 more tools") && system.contains("Catalog (500)"),
            "{system}"
        );
        let loaded = tool_names(second, true);
        assert_eq!(loaded[0], "search_tools");
        assert!(loaded.contains(&tool.to_string()), "{loaded:?}");
        assert!(
            loaded.len() <= 6,
            "what one search found, no more: {loaded:?}"
        );
        // The found tool goes with its whole definition.
        let definition = second.body["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["function"]["name"] == *tool))
            .expect("the found tool");
        assert!(definition["function"]["parameters"]["properties"].is_object());
        // The search result names it for the model.
        let result = second.body["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
            .expect("the search result");
        assert!(result["content"].as_str().is_some_and(|c| c.contains(tool)));
    }
    let called = called(&servers).await;
    let expected: Vec<&str> = TASKS[..TASKS.len() - 1].iter().map(|t| t.1).collect();
    assert_eq!(
        called
            .iter()
            .map(|c| c.split(' ').next().unwrap_or(""))
            .collect::<Vec<_>>(),
        expected,
        "approved calls ran, the denied one never did"
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn anthropic_defers_every_tool_and_loads_the_found_ones_by_reference() {
    let servers = started().await;
    use fixtures::anthropic::*;
    let (purpose, tool, arguments) = TASKS[0];
    let args: Value = serde_json::from_str(arguments).expect("json");
    let provider_script = ScriptedProvider::start(vec![
        Scripted::ok(tool_use(
            "toolu_s",
            "search_tools",
            json!({"query": purpose}),
        )),
        Scripted::ok(tool_use("toolu_c", tool, args)),
        Scripted::ok(text("It is 86 °F.")),
    ])
    .await;
    let provider = provider_script.anthropic_client("sk-ant-test");
    // `count_words` pinned as always loaded: sent loaded, never deferred.
    let mut settings = CatalogSettings::default();
    settings.set_pinned("catalog", Some("count_words"), true);
    let turn = run(
        &servers,
        ToolTarget::Anthropic,
        settings,
        &provider,
        purpose,
        true,
    )
    .await;
    assert_eq!(found(&turn.events)[0], tool);
    assert_eq!(turn.held, [("catalog".to_owned(), tool.to_owned())]);

    let sent = provider_script.received();
    assert_eq!(sent.len(), 3, "no request was refused");
    for request in &sent {
        let tools = request.body["tools"].as_array().expect("tools");
        assert_eq!(tools.len(), TOOLS + 1, "every tool, plus search");
        assert_eq!(tools[0]["name"], "count_words");
        assert_eq!(tools[1]["name"], "search_tools");
        assert!(tools[..2].iter().all(|t| t.get("defer_loading").is_none()));
        assert!(tools[2..].iter().all(|t| t["defer_loading"] == true));
        assert_eq!(
            tools[1]["cache_control"],
            json!({"type": "ephemeral"}),
            "the breakpoint ends the tools that are loaded"
        );
    }
    // The search result loads the found tools by reference, and only by reference.
    let messages = sent[1].body["messages"].as_array().expect("messages");
    let result = &messages.last().expect("the search result")["content"][0];
    assert_eq!(result["type"], "tool_result");
    let references = result["content"].as_array().expect("blocks");
    assert!(references.iter().all(|b| b["type"] == "tool_reference"));
    assert_eq!(references[0]["tool_name"], tool);
    let called = called(&servers).await;
    assert_eq!(called.len(), 1);
    assert!(called[0].starts_with(tool), "{called:?}");
    servers.stop_all().await;
}

#[tokio::test]
async fn below_the_threshold_every_tool_is_sent_and_search_is_not_offered() {
    let servers = started().await;
    let provider_script =
        ScriptedProvider::start(vec![Scripted::ok(fixtures::openai::text("hi"))]).await;
    let provider = provider_script.openai_client("sk-test");
    let mut settings = CatalogSettings::default();
    settings.search.max_tools = 1_000;
    settings.search.max_tokens = 1_000_000;
    // OpenAI takes at most 128 tools: a catalog of 500 without search is refused, saying so.
    let gate = Arc::new(Gate::default());
    let agent = Agent::new(AgentParts {
        tools: settings.clone(),
        target: ToolTarget::Anthropic,
        ..toolgate_tests::agent_parts(servers.clone(), gate)
    });
    let anthropic_script =
        ScriptedProvider::start(vec![Scripted::ok(fixtures::anthropic::text("hi"))]).await;
    agent
        .run_turn(
            &anthropic_script.anthropic_client("k"),
            "m",
            &mut Vec::new(),
            "hi",
            &|_| {},
        )
        .await
        .expect("the turn completes");
    let names = tool_names(&anthropic_script.received()[0], false);
    assert_eq!(names.len(), TOOLS);
    assert!(!names.contains(&"search_tools".to_owned()));

    let agent = Agent::new(AgentParts {
        tools: settings,
        target: ToolTarget::OpenAi,
        ..toolgate_tests::agent_parts(servers.clone(), Arc::new(Gate::default()))
    });
    let err = agent
        .run_turn(&provider, "m", &mut Vec::new(), "hi", &|_| {})
        .await
        .expect_err("too many tools for OpenAI");
    assert!(err.to_string().contains("128"), "{err}");
    servers.stop_all().await;
}
