//! The tool loop without the GUI: real MCP servers (npm packages run by node), the scripted
//! provider over HTTP, the real gate. One call is approved and one denied; the approved one really
//! ran on the server (its file exists) and the denied one never did (its file does not).

use std::sync::Arc;

use serde_json::{json, Value};
use toolgate_agent::{Agent, AgentParts, Decision, Gate, TurnEvent};
use toolgate_llm::{HttpProvider, Message};
use toolgate_mcp::{ServerManager, ServerStatus};
use toolgate_settings::{ServerConfig, Transport};
use toolgate_tests::{
    filesystem_server, fixtures, processes_with, temp_dir, wait_until_none, ProcField, Scripted,
    ScriptedProvider,
};

fn files(root: &std::path::Path) -> ServerConfig {
    let mut config = filesystem_server("files", root);
    config.name = "Files".into();
    config
}

fn everything_server() -> ServerConfig {
    let config = toolgate_settings::example_server(Some(&toolgate_tests::example_servers_dir()));
    assert!(
        matches!(&config.transport, Transport::Stdio { command, .. } if command == "node"),
        "the set-up installs the example server locally"
    );
    config
}

/// Runs one turn, answering each approval request with `decide(tool, arguments)`.
async fn run_turn(
    servers: Arc<ServerManager>,
    provider: &HttpProvider,
    history: &mut Vec<Message>,
    text: &str,
    decide: fn(&str, &Value) -> Decision,
) -> (String, Vec<TurnEvent>) {
    let gate = Arc::new(Gate::default());
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers, gate.clone())
    });
    let events = std::sync::Mutex::new(Vec::new());
    let on_event = |event: TurnEvent| {
        if let TurnEvent::ApprovalRequested(pending) = &event {
            // Answered from outside the loop, by id, as the window does.
            let decision = decide(&pending.tool, &pending.arguments);
            let (gate, id) = (gate.clone(), pending.id.clone());
            tokio::spawn(async move { gate.answer(&id, decision).expect("answer once") });
        }
        events.lock().expect("events").push(event);
    };
    let answer = agent
        .run_turn(provider, "test-model", history, text, &on_event)
        .await
        .expect("turn completes");
    let events = events.into_inner().expect("events");
    (answer, events)
}

#[tokio::test]
async fn anthropic_turn_runs_the_approved_call_and_never_the_denied_one() {
    let root = temp_dir("loop-anthropic");
    let (approved, denied) = (root.join("approved.txt"), root.join("denied.txt"));
    let servers = ServerManager::new(Default::default());
    servers
        .start_all(&[files(&root), everything_server()])
        .await;
    for s in servers.snapshot().await {
        assert_eq!(s.status, ServerStatus::Ready, "{} should run", s.id);
    }

    use fixtures::anthropic::*;
    let provider_script = ScriptedProvider::start(vec![
        Scripted::ok(message(
            vec![
                text_block("I'll write both files."),
                tool_use_block(
                    "toolu_A",
                    "write_file",
                    json!({"path": approved, "content": "yes"}),
                ),
                tool_use_block(
                    "toolu_B",
                    "write_file",
                    json!({"path": denied, "content": "no"}),
                ),
            ],
            "tool_use",
        )),
        Scripted::ok(text("One file written; you declined the other.")),
    ])
    .await;
    let provider = provider_script.anthropic_client("sk-ant-test-key");

    let mut history = Vec::new();
    let (answer, events) = run_turn(
        servers.clone(),
        &provider,
        &mut history,
        "write two files",
        |_, args| {
            if args["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("approved.txt"))
            {
                Decision::Approve
            } else {
                Decision::Deny {
                    reason: Some("not that one".into()),
                }
            }
        },
    )
    .await;

    assert_eq!(answer, "One file written; you declined the other.");
    assert_eq!(
        std::fs::read_to_string(&approved).expect("approved file written"),
        "yes"
    );
    assert!(
        !denied.exists(),
        "the denied call must never reach the server"
    );

    let held: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ApprovalRequested(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(held.len(), 2, "both calls were held at the gate");
    assert_eq!(held[0].server_id, "files");
    assert_eq!(
        held[0].arguments,
        json!({"path": approved, "content": "yes"})
    );

    let sent = provider_script.received();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].headers["x-api-key"], "sk-ant-test-key");
    let tools: Vec<&str> = sent[0].body["tools"]
        .as_array()
        .expect("tools sent")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        tools.contains(&"write_file") && tools.contains(&"echo"),
        "{tools:?}"
    );
    let results = &sent[1].body["messages"][2]["content"];
    assert_eq!(results[0]["tool_use_id"], "toolu_A");
    assert!(results[0].get("is_error").is_none(), "{results}");
    assert!(
        results[0]["content"]
            .as_str()
            .expect("text")
            .contains("approved.txt"),
        "{results}"
    );
    assert_eq!(results[1]["tool_use_id"], "toolu_B");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(
        results[1]["content"],
        "The user denied this tool call: not that one"
    );

    let marker = root.to_string_lossy().into_owned();
    assert!(
        !processes_with(&marker, ProcField::Cmdline).is_empty(),
        "the server runs"
    );
    servers.stop_all().await;
    assert_eq!(
        wait_until_none(5, || processes_with(&marker, ProcField::Cmdline)).await,
        Vec::<u32>::new(),
        "no server process outlives stop_all"
    );
    std::fs::remove_dir_all(&root).ok();
}

#[tokio::test]
async fn openai_turn_feeds_results_and_errors_back_as_tool_messages() {
    let servers = ServerManager::new(Default::default());
    servers.start_all(&[everything_server()]).await;

    use fixtures::openai::*;
    let provider_script = ScriptedProvider::start(vec![
        Scripted::ok(completion(
            None,
            vec![
                tool_call(
                    "call_1",
                    "echo",
                    &json!({"message": "hello from the model"}),
                ),
                tool_call("call_2", "no_such_tool", &json!({})),
                tool_call("call_3", "get-sum", &json!({"a": 2, "b": 3})),
            ],
        )),
        Scripted::ok(text("The echo worked.")),
    ])
    .await;
    let provider = provider_script.openai_client("sk-openai-test");

    let mut history = Vec::new();
    let (answer, _) = run_turn(
        servers.clone(),
        &provider,
        &mut history,
        "echo something",
        |tool, _| {
            if tool == "echo" {
                Decision::Approve
            } else {
                Decision::Deny { reason: None }
            }
        },
    )
    .await;
    assert_eq!(answer, "The echo worked.");

    let sent = provider_script.received();
    assert_eq!(sent[0].path, "/v1/chat/completions");
    assert_eq!(sent[0].headers["authorization"], "Bearer sk-openai-test");
    let messages = sent[1].body["messages"].as_array().expect("messages");
    // system, user, assistant with three calls, then one tool message per call, in order.
    assert_eq!(messages[2]["tool_calls"].as_array().map(Vec::len), Some(3));
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert!(messages[3]["content"]
        .as_str()
        .expect("text")
        .contains("hello from the model"));
    assert!(messages[4]["content"]
        .as_str()
        .expect("text")
        .contains("no tool named 'no_such_tool'"));
    assert_eq!(
        messages[5]["content"],
        "Error: The user denied this tool call."
    );
    assert_eq!(
        history.len(),
        6,
        "user, assistant, three results, final answer"
    );
    servers.stop_all().await;
}
