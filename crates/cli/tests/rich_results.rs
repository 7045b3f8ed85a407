//! A server's rich result — text with its own `_meta`, an image, a resource link, an embedded
//! resource, `structuredContent` and the result's `_meta` — arrives whole wherever Toolgate passes
//! it on: at the manager (rmcp's typed result), in the chat (the model's text and image), from
//! `toolgate call --json`, and through the gateway at the official Python SDK client. The server
//! is the official Python SDK's (`tests/modern_server.py`), answering with `tests/rich_result.json`.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use toolgate_gateway::Gateway;
use toolgate_host::{Caller, Host, HostOptions};
use toolgate_llm::{ContentPart, Message, ToolCall};
use toolgate_mcp::{HostEnv, ServerStatus};
use toolgate_policy::{Effect, Rule, Scope, Target};
use toolgate_settings::Settings;
use toolgate_tests::{example_servers_dir, modern_server, repo_root, temp_dir};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// What the server sends, as the file it reads it from.
fn sent() -> Value {
    let text = std::fs::read_to_string(repo_root().join("tests/rich_result.json")).expect("file");
    serde_json::from_str(&text).expect("json")
}

/// A result as JSON without what each hop writes of itself by the protocol it speaks: the
/// 2026-07-28 `resultType` marker and the protocol's own `io.modelcontextprotocol/…` keys of
/// `_meta` (the sender's `serverInfo`). Everything else is content, and must arrive unchanged.
fn content_of(mut result: Value) -> Value {
    if let Some(object) = result.as_object_mut() {
        object.remove("resultType");
        if let Some(Value::Object(meta)) = object.get_mut("_meta") {
            meta.retain(|key, _| !key.starts_with("io.modelcontextprotocol/"));
        }
    }
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rich_result_arrives_whole_directly_in_the_chat_from_the_cli_and_through_the_gateway() {
    let dir = temp_dir("rich-results");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data");
    let mut server = modern_server("modern", &dir.join("modern.log"));
    if let toolgate_settings::Transport::Stdio { env, .. } = &mut server.transport {
        env.clear();
    }
    // No log, so no folder for one (this test's folder holds Toolgate's own).
    server.sandbox = None;
    let mut settings = Settings::first_run(server);
    settings.policy.rules.push(Rule::new(
        "allow-rich",
        Effect::Allow,
        Target::Tool {
            server_id: "modern".into(),
            tool: "rich_result".into(),
        },
        Scope::Always,
        0,
    ));
    toolgate_settings::file::save(&data.join("settings.json"), &settings).expect("settings");
    let host = Host::open(HostOptions {
        env: Some(HostEnv::inherited()),
        ..HostOptions::new(&data)
    })
    .expect("host");
    host.servers().start_all(&settings.servers).await;
    for _ in 0..600 {
        if host
            .servers()
            .snapshot()
            .await
            .iter()
            .all(|s| s.status == ServerStatus::Ready)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // At the manager: rmcp's typed result, the server's content exactly.
    let direct = host
        .servers()
        .call_tool("modern", "rich_result", json!({}))
        .await
        .expect("the call");
    let direct = content_of(serde_json::to_value(&direct.result).expect("json"));
    assert_eq!(direct, sent());

    // In the chat: the model gets the text rendering and the image.
    let chat = host
        .agent(Caller::Chat {
            conversation: None,
            servers_off: &[],
        })
        .await;
    let name = chat
        .catalog_for_client()
        .await
        .expect("catalog")
        .entries()
        .iter()
        .find(|e| e.tool.name == "rich_result")
        .map(|e| e.model_name.clone())
        .expect("rich_result is offered");
    let message = chat
        .gated_call_alone(
            &ToolCall {
                id: "rich".into(),
                name: name.clone(),
                arguments: json!({}),
            },
            &host.turn_options(),
            &|_| {},
        )
        .await
        .expect("the chat's call");
    let Message::ToolResult {
        content, is_error, ..
    } = message
    else {
        panic!("not a tool result: {message:?}")
    };
    assert!(!is_error);
    assert_eq!(
        content,
        [
            ContentPart::text(
                "Here is everything.\n[image image/png]\n[resource link notes://oslo]\nBergen, 1 day"
            ),
            ContentPart::Image {
                mime_type: "image/png".into(),
                data: sent()["content"][1]["data"]
                    .as_str()
                    .expect("data")
                    .to_owned(),
            },
        ]
    );

    // `toolgate call --json`: the whole result, as the server sent it.
    let cli = {
        let (data, name) = (data.clone(), name.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(TOOLGATE)
                .arg("--data-dir")
                .arg(&data)
                .args(["call", &name, "{}", "--json"])
                .stdin(Stdio::null())
                .output()
                .expect("toolgate call runs")
        })
        .await
        .expect("joins")
    };
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    let printed: Value = serde_json::from_slice(&cli.stdout).expect("JSON on stdout");
    assert_eq!(content_of(printed), sent());

    // Through the gateway, at the official Python SDK client.
    let gateway =
        Gateway::bind(host.clone(), toolgate_gateway::socket_path(&data)).expect("gateway binds");
    let stop = gateway.stopper();
    tokio::spawn(gateway.serve());
    let client = {
        let data = data.clone();
        tokio::task::spawn_blocking(move || {
            Command::new(example_servers_dir().join(".venv/bin/python"))
                .arg(repo_root().join("tests/clients/rich_py.py"))
                .arg(TOOLGATE)
                .arg(&data)
                .arg("rich_result")
                .stdin(Stdio::null())
                .output()
                .expect("the client runs")
        })
        .await
        .expect("joins")
    };
    assert!(
        client.status.success(),
        "{}",
        String::from_utf8_lossy(&client.stderr)
    );
    let received: Value = serde_json::from_slice(&client.stdout).expect("JSON on stdout");
    assert_eq!(content_of(received), sent());

    stop.cancel();
    host.shutdown("the test ended").await;
}
