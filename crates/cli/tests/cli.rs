//! The `toolgate` binary against real MCP servers and the scripted provider, on a data folder of
//! its own: `run --json` traces, grants, denials without a terminal, the tool list, calls by
//! hand, server management and import through the settings file the app reads, and exit codes.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use toolgate_history::{AuditDecision, DecidedBy};
use toolgate_settings::{ProviderKind, ProviderSettings, ServerConfig, Settings};
use toolgate_tests::{at_a_terminal, AtATerminal, Scripted, ScriptedProvider};
use toolgate_tests::{
    everything_server, fault_server_script, fixtures::anthropic, temp_dir, TestDir,
};

fn data_dir(tag: &str, provider: &ScriptedProvider) -> TestDir {
    data_dir_with(tag, provider, |_| {})
}

/// The shell command line for `toolgate chat` on `dir`, for a terminal.
fn chat_command(dir: &Path) -> String {
    format!(
        "{} --data-dir {} chat",
        env!("CARGO_BIN_EXE_toolgate"),
        dir.display()
    )
}

/// A data folder whose settings run server-everything (as `everything`) and use `provider`,
/// changed by `change` before they are saved.
fn data_dir_with(
    tag: &str,
    provider: &ScriptedProvider,
    change: impl FnOnce(&mut Settings),
) -> TestDir {
    let dir = temp_dir(&format!("cli-{tag}"));
    let mut settings = Settings::first_run(everything_server("everything"));
    settings.provider = ProviderSettings {
        kind: ProviderKind::Anthropic,
        base_url: provider.anthropic_base_url(),
        model: "claude-test".into(),
    };
    change(&mut settings);
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
    dir
}

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env("ANTHROPIC_API_KEY", "sk-ant-cli-test")
        .stdin(Stdio::null())
        .output()
        .expect("toolgate runs")
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn settings_of(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("settings.json")).expect("settings file");
    serde_json::from_str(&text).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_json_traces_a_granted_call_and_the_answer() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::tool_use(
            "toolu_cli_1",
            "echo",
            json!({"message": "from the cli"}),
        )),
        Scripted::ok(anthropic::text("Echoed it.")),
    ])
    .await;
    let dir = data_dir("run", &provider);
    let out = toolgate(
        &dir,
        &["run", "Echo something", "--json", "--approve", "ech*"],
    );
    let report = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["goal"], "Echo something");
    assert_eq!(report["answer"], "Echoed it.");
    let call = &report["trace"][0];
    assert_eq!(call["tool"], "echo");
    assert_eq!(call["server"], "everything");
    assert_eq!(call["arguments"], json!({"message": "from the cli"}));
    assert_eq!(call["decision"], "allowed");
    assert_eq!(call["decidedBy"], "rule");
    assert_eq!(call["success"], true);
    assert!(
        call["output"]
            .as_str()
            .unwrap_or_default()
            .contains("Echo: from the cli"),
        "{call}"
    );
    // The grant was for this run only, and the decision is in the shared audit log.
    assert_eq!(settings_of(&dir)["settings"]["policy"]["rules"], json!([]));
    let history = toolgate_history::History::open(&dir.join("history.sqlite3")).expect("history");
    let audit = history
        .audit(&toolgate_history::AuditFilter::default())
        .expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].entry.decided_by, toolgate_history::DecidedBy::Rule);
    assert_eq!(provider.received().len(), 2);
    // The tokens of both model calls, each kind, and no cost for a model of no known price; the
    // same totals are the saved conversation's.
    let usage = &report["usage"];
    for kind in [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
    ] {
        assert!(usage[kind].is_u64(), "{kind} in {usage}");
    }
    assert_eq!(
        usage["outputTokens"], 24,
        "12 + 12 from the scripted replies"
    );
    assert_eq!(
        report["costMicroUsd"],
        Value::Null,
        "claude-test has no price"
    );
    let saved = &history.list(None).expect("conversations")[0];
    assert_eq!(saved.output_tokens, 24);
    assert_eq!(saved.unpriced_calls, 2);
    assert_eq!(
        saved.input_tokens + saved.cache_read_tokens + saved.cache_write_tokens,
        usage["inputTokens"].as_u64().unwrap_or(0)
            + usage["cacheReadTokens"].as_u64().unwrap_or(0)
            + usage["cacheWriteTokens"].as_u64().unwrap_or(0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_a_call_that_would_ask_is_denied_and_the_exit_code_says_so() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::tool_use(
            "toolu_cli_2",
            "echo",
            json!({"message": "nobody to ask"}),
        )),
        Scripted::ok(anthropic::text("It was not allowed.")),
    ])
    .await;
    let dir = data_dir("denied", &provider);
    let out = toolgate(&dir, &["run", "Echo something", "--json"]);
    let report = stdout_json(&out);
    assert_eq!(out.status.code(), Some(3), "{report}");
    let call = &report["trace"][0];
    assert_eq!(call["decision"], "denied");
    // Nobody denied it: nobody could be asked. The trace, the log and the model all say so.
    assert_eq!(call["decidedBy"], "unattended");
    assert_eq!(call["tool"], "echo");
    assert_eq!(call["server"], "everything");
    assert_eq!(call["success"], false);
    assert!(
        call["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("no terminal"),
        "{call}"
    );
    assert_eq!(report["answer"], "It was not allowed.");
    // The model was told, as an error result.
    let told = provider.received()[1].body["messages"][2].to_string();
    assert!(told.contains("no terminal"), "{told}");
    assert!(told.contains("nobody could be asked"), "{told}");
    assert!(!told.contains("The user denied"), "{told}");
    let audit = audit_of(&dir);
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].decided_by, DecidedBy::Unattended);
    assert_eq!(audit[0].decision, AuditDecision::Denied);
}

fn audit_of(dir: &Path) -> Vec<toolgate_history::AuditEntry> {
    let history = toolgate_history::History::open(&dir.join("history.sqlite3")).expect("history");
    let mut entries: Vec<_> = history
        .audit(&toolgate_history::AuditFilter::default())
        .expect("audit")
        .into_iter()
        .map(|row| row.entry)
        .collect();
    entries.reverse(); // oldest first
    entries
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_sharing_one_id_are_traced_apart_and_refusals_before_the_gate_are_audited() {
    // Two calls under one id: the allowed one must not be reported as the other, nor the other
    // run under the allowed one's answer. Then two calls refused before the gate, one of them
    // under the id again.
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::message(
            vec![
                anthropic::tool_use_block("same", "echo", json!({"message": "harmless"})),
                anthropic::tool_use_block("same", "get-sum", json!({"a": 1, "b": 2})),
            ],
            "tool_use",
        )),
        Scripted::ok(anthropic::message(
            vec![
                // Numbered afresh each round, as some OpenAI-compatible servers do.
                anthropic::tool_use_block("same", "no_such_tool", json!({})),
                anthropic::tool_use_block("t2", "echo", json!("not an object")),
            ],
            "tool_use",
        )),
        Scripted::ok(anthropic::text("Done.")),
    ])
    .await;
    let dir = data_dir("same-id", &provider);
    let out = toolgate(&dir, &["run", "Two calls", "--json", "--approve", "echo"]);
    let report = stdout_json(&out);
    let trace = report["trace"].as_array().expect("trace");
    assert_eq!(trace.len(), 4, "{report}");
    assert_eq!(trace[0]["tool"], "echo");
    assert_eq!(trace[0]["arguments"], json!({"message": "harmless"}));
    assert_eq!(trace[0]["decision"], "allowed");
    assert_eq!(trace[0]["success"], true);
    assert!(trace[0]["output"]
        .as_str()
        .unwrap_or_default()
        .contains("Echo: harmless"));
    assert_eq!(trace[1]["tool"], "get-sum");
    assert_eq!(trace[1]["arguments"], json!({"a": 1, "b": 2}));
    assert_eq!(trace[1]["decision"], "denied");
    assert_eq!(trace[1]["decidedBy"], "unattended");
    assert_eq!(trace[2]["tool"], "no_such_tool");
    assert_eq!(
        trace[2]["decision"], "denied",
        "not the first round's allowed echo"
    );
    assert_eq!(trace[2]["decidedBy"], "toolgate");
    assert_eq!(trace[3]["decidedBy"], "toolgate");

    // What went back to the model pairs each result with its own call.
    let messages = &provider.received()[1].body["messages"];
    let uses: Vec<&str> = messages[1]["content"]
        .as_array()
        .expect("assistant blocks")
        .iter()
        .filter_map(|b| b["id"].as_str())
        .collect();
    let results: Vec<(&str, String)> = messages[2]["content"]
        .as_array()
        .expect("result blocks")
        .iter()
        .map(|b| {
            (
                b["tool_use_id"].as_str().unwrap_or_default(),
                b["content"].to_string(),
            )
        })
        .collect();
    assert_eq!(uses.len(), 2);
    assert_ne!(uses[0], uses[1], "the ids sent back are distinct: {uses:?}");
    assert_eq!(results[0].0, uses[0]);
    assert!(results[0].1.contains("Echo: harmless"), "{results:?}");
    assert_eq!(results[1].0, uses[1]);
    assert!(
        results[1].1.contains("nobody could be asked"),
        "{results:?}"
    );

    // Every call the model asked for is in the log, with who decided.
    let audit = audit_of(&dir);
    let summary: Vec<(&str, DecidedBy, AuditDecision)> = audit
        .iter()
        .map(|e| (e.tool.as_str(), e.decided_by, e.decision))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("echo", DecidedBy::Rule, AuditDecision::Allowed),
            ("get-sum", DecidedBy::Unattended, AuditDecision::Denied),
            ("no_such_tool", DecidedBy::Toolgate, AuditDecision::Denied),
            ("echo", DecidedBy::Toolgate, AuditDecision::Denied),
        ]
    );
    assert_eq!(audit[3].arguments, json!("not an object"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_matches_the_name_the_model_sees_not_a_tool_named_like_another_servers() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::message(
            vec![
                anthropic::tool_use_block("t1", "evil__cnt__echo", json!({"text": "captured?"})),
                anthropic::tool_use_block("t2", "cnt__echo", json!({"message": "meant"})),
            ],
            "tool_use",
        )),
        Scripted::ok(anthropic::text("Done.")),
    ])
    .await;
    let dir = data_dir_with("imitation", &provider, |settings| {
        settings.servers[0] = everything_server("cnt");
        let mut evil = toolgate_tests::fault_server("evil", "ok");
        if let toolgate_settings::Transport::Stdio { env, .. } = &mut evil.transport {
            env.insert("FAULT_ECHO_NAME".into(), "cnt__echo".into());
        }
        settings.servers.push(evil);
        settings.tools.naming = toolgate_catalog::NamingMode::Always;
    });

    // The listing flags the imitation, in text and JSON.
    let out = toolgate(&dir, &["tools", "list"]);
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    let flagged: Vec<&str> = listing.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(flagged.len(), 1, "{listing}");
    assert!(flagged[0].starts_with("evil__cnt__echo"), "{listing}");
    assert!(
        flagged[0].contains("named like a tool of server cnt"),
        "{listing}"
    );
    let out = toolgate(&dir, &["tools", "list", "--json"]);
    let tools = stdout_json(&out);
    let imitating: Vec<&Value> = tools
        .as_array()
        .expect("list")
        .iter()
        .filter(|t| t.get("imitates").is_some())
        .collect();
    assert_eq!(imitating.len(), 1, "{tools}");
    assert_eq!(imitating[0]["server"], "evil");
    assert_eq!(imitating[0]["imitates"], "cnt");

    let out = toolgate(&dir, &["run", "Echo", "--json", "--approve", "cnt__echo"]);
    let report = stdout_json(&out);
    let trace = report["trace"].as_array().expect("trace");
    assert_eq!(trace[0]["server"], "evil");
    assert_eq!(
        trace[0]["decision"], "denied",
        "the grant for cnt's echo does not reach evil's tool: {report}"
    );
    assert_eq!(trace[1]["server"], "cnt");
    assert_eq!(trace[1]["decision"], "allowed", "{report}");
    assert!(
        !stderr_of(&out).contains("imitates"),
        "the grant matched only cnt's tool: {}",
        stderr_of(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_declined_without_a_terminal_is_logged_once_and_quietly() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::tool_use(
            "t1",
            "trigger-elicitation-request",
            json!({}),
        )),
        Scripted::ok(anthropic::text("No answer, then.")),
    ])
    .await;
    let dir = data_dir("question", &provider);
    let out = toolgate(
        &dir,
        &[
            "run",
            "Ask me",
            "--json",
            "--approve",
            "trigger-elicitation-request",
        ],
    );
    let stderr = stderr_of(&out);
    assert!(!stderr.contains("ERROR"), "{stderr}");
    assert!(!stderr.contains("could not complete"), "{stderr}");
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("declined")).collect();
    assert_eq!(said.len(), 1, "said once, on stderr: {stderr}");
    assert!(
        said[0].contains("asked you a question and nobody could answer it"),
        "{stderr}"
    );
    let audit = audit_of(&dir);
    let question = audit
        .iter()
        .find(|e| e.tool == "elicitation/create")
        .expect("the question is logged");
    assert_eq!(question.decided_by, DecidedBy::Unattended);
    assert_eq!(question.decision, AuditDecision::Denied);
    assert_eq!(
        question.duration_ms, None,
        "a declined question has no outcome"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_is_reported_once_in_plain_words() {
    let provider = ScriptedProvider::start(Vec::new()).await;
    let dir = data_dir_with("start-failures", &provider, |settings| {
        settings.servers = vec![
            ServerConfig::http(
                "remote",
                format!("http://127.0.0.1:{}/mcp", toolgate_tests::free_port()),
            ),
            toolgate_tests::fault_server("exits", "exit-at-once"),
        ];
    });
    let out = toolgate(&dir, &["tools", "list"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a server that did not come up fails the listing"
    );
    let stderr = stderr_of(&out);
    for (id, words) in [
        ("remote", "connection refused"),
        ("exits", "exited with code 1"),
    ] {
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(id)).collect();
        assert_eq!(lines.len(), 1, "{id} is reported once: {stderr}");
        assert!(lines[0].contains(words), "{id}: {stderr}");
    }
    assert!(
        stderr.contains("fatal: config file /nope missing"),
        "its last words: {stderr}"
    );
    for internal in ["Transport", "::", "DuplexStream", "Broken pipe"] {
        assert!(!stderr.contains(internal), "no {internal:?} in: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_as_the_model_sees_them_and_called_by_hand() {
    let provider = ScriptedProvider::start(Vec::new()).await;
    let dir = data_dir("tools", &provider);
    let out = toolgate(&dir, &["tools", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let tools = stdout_json(&out);
    let echo = tools
        .as_array()
        .expect("a list")
        .iter()
        .find(|t| t["name"] == "echo")
        .expect("echo is offered");
    assert_eq!(echo["server"], "everything");
    assert_eq!(echo["readOnly"], true);
    assert_eq!(echo["inputSchema"]["type"], "object", "{echo}");
    assert_eq!(echo["annotations"]["readOnlyHint"], true, "{echo}");
    assert_eq!(echo["protocolVersion"], "2025-11-25", "{echo}");
    assert!(
        echo["inputSchema"]["properties"]["message"].is_object(),
        "{echo}"
    );

    let out = toolgate(&dir, &["call", "echo", r#"{"message": "by hand"}"#]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Echo: by hand");

    let out = toolgate(&dir, &["call", "no-such-tool"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tool 'no-such-tool'"));
    let out = toolgate(&dir, &["call", "echo", "not json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not JSON"));
    assert!(provider.received().is_empty(), "no model was involved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_are_managed_in_the_settings_file_the_app_reads() {
    let provider = ScriptedProvider::start(Vec::new()).await;
    let dir = data_dir("servers", &provider);
    let script = fault_server_script().to_string_lossy().into_owned();
    let out = toolgate(
        &dir,
        &[
            "servers", "add", "faults", "--name", "Faults", "--", "python3", &script, "ok",
        ],
    );
    assert!(
        !dir.join("history.sqlite3").exists(),
        "a command that only edits settings does not open (or create) the history"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = toolgate(&dir, &["servers", "restart", "faults"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("faults: ready"), "{said}");
    let out = toolgate(&dir, &["servers", "logs", "faults"]);
    assert_eq!(out.status.code(), Some(0));

    assert_eq!(
        toolgate(&dir, &["servers", "disable", "faults"])
            .status
            .code(),
        Some(0)
    );
    let list = stdout_json(&toolgate(&dir, &["servers", "list", "--json"]));
    let faults = list
        .as_array()
        .expect("a list")
        .iter()
        .find(|s| s["id"] == "faults")
        .expect("added");
    assert_eq!(faults["enabled"], false);
    assert_eq!(faults["name"], "Faults");

    // Refused: a clash, a hijacking variable, and a server that is not there.
    let out = toolgate(&dir, &["servers", "add", "faults", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    let out = toolgate(
        &dir,
        &[
            "servers",
            "add",
            "sneaky",
            "--env",
            "LD_PRELOAD=/tmp/x.so",
            "--",
            "true",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowEnv"));
    assert_eq!(
        toolgate(&dir, &["servers", "remove", "nope"]).status.code(),
        Some(1)
    );

    assert_eq!(
        toolgate(&dir, &["servers", "remove", "faults"])
            .status
            .code(),
        Some(0)
    );
    let servers = &settings_of(&dir)["settings"]["servers"];
    assert_eq!(servers.as_array().map(Vec::len), Some(1), "{servers}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_dry_run_reports_and_changes_nothing() {
    let provider = ScriptedProvider::start(Vec::new()).await;
    let dir = data_dir("import", &provider);
    let snippet = dir.join("claude_desktop_config.json");
    std::fs::write(
        &snippet,
        r#"{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "ghp_cli_canary_123456"}}}}"#,
    )
    .expect("write");
    let before = std::fs::read_to_string(dir.join("settings.json")).expect("settings");
    let out = toolgate(
        &dir,
        &["import", snippet.to_str().expect("utf-8"), "--dry-run"],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("github"), "{said}");
    assert!(
        !said.contains("ghp_cli_canary"),
        "the value is never printed: {said}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("settings.json")).expect("settings"),
        before
    );
    let out = toolgate(&dir, &["import", "/nonexistent/file.json"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn help_documents_the_exit_codes_and_bad_usage_exits_with_2() {
    let dir = temp_dir("cli-help");
    let out = toolgate(&dir, &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Exit codes:",
        "3  denied",
        "run",
        "chat",
        "import",
        "secrets",
    ] {
        assert!(help.contains(needle), "{needle} in:\n{help}");
    }
    assert_eq!(toolgate(&dir, &["frobnicate"]).status.code(), Some(2));
    assert_eq!(toolgate(&dir, &["run"]).status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_asks_at_the_terminal_and_always_becomes_a_saved_rule() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::tool_use(
            "toolu_cli_3",
            "echo",
            json!({"message": "asked at the prompt"}),
        )),
        Scripted::ok(anthropic::text("Done at the prompt.")),
    ])
    .await;
    let dir = data_dir("chat", &provider);
    // `script` gives the chat a real terminal; the lines typed are the message, the answer to
    // the approval question ("a": always), and /exit.
    let command = chat_command(&dir);
    let out = at_a_terminal(&command, b"Please echo\na\n/exit\n", |c| {
        c.env("ANTHROPIC_API_KEY", "sk-ant-cli-test");
    });
    let screen = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{screen}");
    assert!(
        screen.contains("echo on everything"),
        "the call was shown: {screen}"
    );
    assert!(
        screen.contains("asked at the prompt"),
        "with its arguments: {screen}"
    );
    assert!(
        screen.contains("Allow? [y]es, [n]o, [a]lways, [e]dit"),
        "{screen}"
    );
    assert!(screen.contains("Done at the prompt."), "{screen}");
    let rules = &settings_of(&dir)["settings"]["policy"]["rules"];
    assert_eq!(rules[0]["effect"], "allow", "{rules}");
    assert_eq!(rules[0]["target"]["tool"], "echo", "{rules}");
    let result = provider.received()[1].body["messages"][2].to_string();
    assert!(result.contains("Echo: asked at the prompt"), "{result}");
}

/// Typed at as a user types, waiting for each prompt: Ctrl-C at a question stops the turn, and
/// the next message typed reaches the model (before, the withdrawn question kept reading and took
/// it as its answer); Ctrl-C at the prompt ends the chat (before, after the first turn it did
/// nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_question_without_taking_the_next_message_and_ends_the_chat_at_the_prompt() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::tool_use(
            "toolu_ctrl_c",
            "echo",
            json!({"message": "never run"}),
        )),
        Scripted::ok(anthropic::text("The second message arrived.")),
    ])
    .await;
    let dir = data_dir("ctrl-c", &provider);
    let command = chat_command(&dir);
    let mut terminal = AtATerminal::start(&command, |c| {
        c.env("ANTHROPIC_API_KEY", "sk-ant-cli-test");
    });
    const CTRL_C: &[u8] = b"\x03";

    terminal.wait_for("you> ", 1);
    terminal.type_keys(b"Please echo\n");
    terminal.wait_for("Allow? [y]es, [n]o, [a]lways, [e]dit", 1);
    // Ctrl-C at the question: the turn stops and the question is withdrawn.
    terminal.type_keys(CTRL_C);
    terminal.wait_for("you> ", 2);
    terminal.type_keys(b"the second message\n");
    terminal.wait_for("The second message arrived.", 1);
    let received = provider.received();
    assert_eq!(received.len(), 2, "{}", terminal.screen());
    let second = received[1].body["messages"].to_string();
    assert!(second.contains("the second message"), "{second}");
    // Ctrl-C at the prompt: the chat ends, its servers stopped as /exit stops them.
    terminal.wait_for("you> ", 3);
    terminal.type_keys(CTRL_C);
    let (code, screen) = terminal.ended();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        !screen.contains("Echo: never run"),
        "the stopped call never ran: {screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_held_for_review_is_withheld_at_the_terminal_and_the_model_never_sees_it() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::tool_use(
            "toolu_cli_review",
            "echo",
            json!({"message": "private words"}),
        )),
        Scripted::ok(anthropic::text("Understood.")),
    ])
    .await;
    let dir = data_dir_with("review", &provider, |s| {
        s.servers[0].trust.review_results = vec!["echo".into()];
    });
    let command = chat_command(&dir);
    // The message, yes to the call, withhold its result, then leave.
    let out = at_a_terminal(&command, b"Please echo\ny\nw\n/exit\n", |c| {
        c.env("ANTHROPIC_API_KEY", "sk-ant-cli-test");
    });
    let screen = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{screen}");
    assert!(
        screen.contains("The result of echo on everything")
            && screen.contains("held for your review")
            && screen.contains("Echo: private words"),
        "the result was shown in full: {screen}"
    );
    assert!(
        screen.contains("Let the model see it? [p]ass, [e]dit (to redact), [w]ithhold"),
        "{screen}"
    );
    let sent = provider.received()[1].body["messages"].to_string();
    assert!(!sent.contains("Echo: private words"), "{sent}");
    assert!(sent.contains("withheld"), "{sent}");
    let history = toolgate_history::History::open(&dir.join("history.sqlite3")).expect("history");
    let reviews: Vec<String> = history
        .audit(&toolgate_history::AuditFilter::default())
        .expect("audit")
        .into_iter()
        .filter_map(|row| row.entry.reason)
        .filter(|r| r.starts_with("result review:"))
        .collect();
    assert_eq!(
        reviews,
        ["result review: withheld (the user withheld it: withheld at the prompt)"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_takes_as_many_rounds_as_it_is_given_and_says_when_it_needed_more() {
    let echo = |id: &str| {
        Scripted::ok(anthropic::tool_use(
            id,
            "echo",
            json!({"message": format!("round {id}")}),
        ))
    };
    // Three replies with calls, then the answer: 4 rounds.
    let script = || {
        vec![
            echo("1"),
            echo("2"),
            echo("3"),
            Scripted::ok(anthropic::text("Done.")),
        ]
    };
    // The script run with `rounds` rounds: how many requests the model got, and the report.
    let run = |rounds: &'static str| async move {
        let provider = ScriptedProvider::start(script()).await;
        let dir = data_dir(&format!("rounds-{rounds}"), &provider);
        let args = [
            "run",
            "Echo",
            "--json",
            "--approve",
            "echo",
            "--max-rounds",
            rounds,
        ];
        let out = toolgate(&dir, &args);
        (
            out.status.code(),
            provider.received().len(),
            stdout_json(&out),
            dir,
        )
    };
    let (code, asked, report, _) = run("2").await;
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(asked, 2, "two replies, then it stopped");
    assert_eq!(
        report["trace"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
    assert!(
        report["error"]
            .as_str()
            .unwrap_or_default()
            .contains("for 2 rounds without a final answer"),
        "{report}"
    );

    // Given the four it needs, it answers.
    let (code, _, report, dir) = run("4").await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["answer"], "Done.");
    assert_eq!(report["trace"].as_array().map(Vec::len), Some(3));

    // No round at all, or more than a turn may take, is refused before anything starts.
    for bad in ["0", "101", "many"] {
        let out = toolgate(&dir, &["run", "Echo", "--max-rounds", bad]);
        assert_eq!(out.status.code(), Some(2), "--max-rounds {bad}");
        assert!(
            stderr_of(&out).contains("--max-rounds"),
            "{}",
            stderr_of(&out)
        );
    }
}
