//! The catalog with real servers: two copies of `@modelcontextprotocol/server-filesystem`, on two
//! folders, offer tools of the same names. The model sees them apart, and a call routed through
//! the catalog reaches the right folder. A tool list that changes while running changes the
//! catalog, and the user's tool settings decide what the model is sent.

use std::sync::Arc;

use serde_json::json;
use toolgate_agent::{catalog_of, Agent, AgentParts, Decision, Gate, ToolTarget, TurnEvent};
use toolgate_catalog::{CatalogSettings, NamingMode, ServerToolSettings};
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_tests::{
    fault_server, filesystem_server, fixtures, temp_dir, Scripted, ScriptedProvider,
};

#[tokio::test]
async fn two_copies_of_one_server_are_told_apart_and_calls_reach_the_right_folder() {
    let (left_dir, right_dir) = (temp_dir("left"), temp_dir("right"));
    let servers = ServerManager::new(ManagerOptions::default());
    servers
        .start_all(&[
            filesystem_server("left", &left_dir),
            filesystem_server("right", &right_dir),
        ])
        .await;

    use fixtures::anthropic::*;
    let script = ScriptedProvider::start(vec![
        Scripted::ok(message(
            vec![
                tool_use_block(
                    "toolu_L",
                    "left__write_file",
                    json!({"path": left_dir.join("note.txt"), "content": "left"}),
                ),
                // Models blur `-` and `_` and case; the catalog still finds the tool meant.
                tool_use_block(
                    "toolu_R",
                    "RIGHT__write-file",
                    json!({"path": right_dir.join("note.txt"), "content": "right"}),
                ),
            ],
            "tool_use",
        )),
        Scripted::ok(text("Both written.")),
    ])
    .await;
    let provider = script.anthropic_client("k");

    let gate = Arc::new(Gate::default());
    let agent = Agent::new(AgentParts {
        tools: CatalogSettings::default(),
        target: ToolTarget::Anthropic,
        ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
    });
    let held = std::sync::Mutex::new(Vec::new());
    let on_event = |event: TurnEvent| {
        if let TurnEvent::ApprovalRequested(pending) = event {
            held.lock()
                .expect("held")
                .push((pending.server_id.clone(), pending.tool.clone()));
            let gate = gate.clone();
            tokio::spawn(async move { gate.answer(&pending.id, Decision::Approve) });
        }
    };
    let mut history = Vec::new();
    let answer = agent
        .run_turn(
            &provider,
            "m",
            &mut history,
            "write a note in each folder",
            &on_event,
        )
        .await
        .expect("turn");
    assert_eq!(answer, "Both written.");
    assert_eq!(
        std::fs::read_to_string(left_dir.join("note.txt")).expect("left"),
        "left"
    );
    assert_eq!(
        std::fs::read_to_string(right_dir.join("note.txt")).expect("right"),
        "right"
    );
    let mut held = held.into_inner().expect("held");
    held.sort();
    assert_eq!(
        held,
        [
            ("left".to_owned(), "write_file".to_owned()),
            ("right".to_owned(), "write_file".to_owned())
        ],
        "the gate shows the original tool name and the server it goes to"
    );

    // The model was sent every tool once per copy, prefixed only because the names clash.
    let sent = &script.received()[0].body["tools"];
    let names: Vec<&str> = sent
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names.len(), 28, "{names:?}");
    assert!(names.contains(&"left__write_file") && names.contains(&"right__write_file"));
    assert!(names
        .iter()
        .all(|n| n.starts_with("left__") || n.starts_with("right__")));
    servers.stop_all().await;
}

#[tokio::test]
async fn tool_settings_choose_what_the_model_is_sent_and_a_refresh_updates_the_catalog() {
    let dir = temp_dir("settings");
    let servers = ServerManager::new(ManagerOptions::default());
    servers
        .start_all(&[
            filesystem_server("files", &dir),
            fault_server("late", "list-changed"),
        ])
        .await;

    // Only read tools of the filesystem server, with a custom prefix on every name.
    let mut settings = CatalogSettings {
        naming: NamingMode::Always,
        ..CatalogSettings::default()
    };
    settings.servers.insert(
        "files".into(),
        ServerToolSettings {
            prefix: Some("fs".into()),
            include: vec!["read_*".into(), "list_*".into()],
            exclude: vec!["read_media_file".into()],
            ..ServerToolSettings::default()
        },
    );
    settings.set_tool_enabled("late", "crash", false);

    // list-changed mode adds `late_tool` half a second after start-up.
    let mut catalog = catalog_of(&servers.snapshot().await, &settings).expect("builds");
    for _ in 0..50 {
        if catalog.resolve("late__late_tool").is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        catalog = catalog_of(&servers.snapshot().await, &settings).expect("builds");
    }
    let mut names: Vec<&str> = catalog
        .entries()
        .iter()
        .map(|e| e.model_name.as_str())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "fs__list_allowed_directories",
            "fs__list_directory",
            "fs__list_directory_with_sizes",
            "fs__read_file",
            "fs__read_multiple_files",
            "fs__read_text_file",
            "late__big",
            "late__echo",
            "late__hang",
            "late__junk",
            "late__late_tool",
            "late__slow",
            "late__wedge",
        ]
    );
    let budget = catalog.budget(ToolTarget::OpenAi);
    assert_eq!((budget.tools, budget.limit), (13, 128));
    assert!(budget.estimated_tokens > 0);
    servers.stop_all().await;
}
