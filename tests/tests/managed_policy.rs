//! The organisation's managed policy through the host, read from a folder of the test's own
//! (given in the host's options, as only the code that makes a host can): locked settings
//! refused, the organisation's server always present, its rules ranked above the user's allow,
//! a server denied while running stopped and refused when started again, a file the user could
//! write refused, and the signed remote form (good, forged, gone) with its kept copy.
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use ring::signature::KeyPair;
use serde_json::{json, Value};
use toolgate_host::{Host, HostOptions, ManagedSource};
use toolgate_mcp::{HostEnv, ServerStatus};
use toolgate_policy::{decide, Annotations, Decision, Subject, ToolCall};
use toolgate_secrets::MemoryStore;
use toolgate_settings::{ServerConfig, Settings};
use toolgate_tests::write_policy_file as write;
use toolgate_tests::{managed_policy_folder, python_server_bin, temp_dir, web_page, TestDir};

fn time_server(id: &str) -> ServerConfig {
    ServerConfig::stdio(
        id,
        python_server_bin("mcp-server-time").to_string_lossy(),
        Vec::<String>::new(),
    )
}

/// The policy folder, as an administrator leaves it, its managed.json written by the test.
fn policy_folder(dir: &Path) -> PathBuf {
    managed_policy_folder(dir, &json!({}))
}

fn open(dir: &Path, policy: &Path, user: &Settings) -> Arc<Host> {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data");
    if !data.join("settings.json").exists() {
        toolgate_settings::file::save(&data.join("settings.json"), user).expect("settings");
    }
    let owner = std::fs::metadata(policy).expect("policy").uid();
    Host::open(HostOptions {
        env: Some(HostEnv::inherited()),
        secrets: Arc::new(MemoryStore::default()),
        managed: ManagedSource::at(policy, owner),
        ..HostOptions::new(data)
    })
    .expect("host")
}

async fn status_of(host: &Host, id: &str) -> ServerStatus {
    host.servers()
        .snapshot()
        .await
        .into_iter()
        .find(|s| s.id == id)
        .map(|s| s.status)
        .unwrap_or(ServerStatus::Stopped)
}

/// Waits up to 30 s for `id`'s status to satisfy `want`.
async fn wait_for(host: &Host, id: &str, what: &str, want: impl Fn(&ServerStatus) -> bool) {
    for _ in 0..300 {
        if want(&status_of(host, id).await) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{id} never became {what}: {:?}", status_of(host, id).await);
}

fn call(server: &str, tool: &str) -> Subject {
    Subject::ToolCall(ToolCall {
        server_id: server.into(),
        tool: tool.into(),
        arguments: json!({"timezone": "UTC"}),
        annotations: Annotations::default(),
        server_fingerprint: String::new(),
        tool_fingerprint: String::new(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_rules_and_servers_apply_and_a_server_denied_while_running_is_stopped() {
    let dir = temp_dir("managed-host");
    let policy = policy_folder(&dir);
    let org_time = time_server("org-time");
    write(
        &policy.join("managed.json"),
        &json!({
            "settings": {"autoAllowReadOnly": false, "approvalTimeoutSecs": 120},
            "rules": [{"id": "no-time", "effect": "deny", "note": "no clocks for agents",
                       "target": {"kind": "tool", "serverId": "time", "tool": "get_current_time"}}],
            "servers": {"required": [org_time]},
        }),
        0o644,
    );
    let mut user = Settings::first_run(time_server("time"));
    user.policy.auto_allow_read_only = true;
    user.policy.rules.push(toolgate_policy::Rule::new(
        "mine",
        toolgate_policy::Effect::Allow,
        toolgate_policy::Target::Server {
            server_id: "time".into(),
        },
        toolgate_policy::Scope::Always,
        0,
    ));
    let host = open(&dir, &policy, &user);

    // The settings as the organisation has them.
    let seen = host.settings().clone();
    assert!(!seen.policy.auto_allow_read_only);
    assert_eq!(seen.policy.approval_timeout_secs, Some(120));
    assert_eq!(seen.servers[0].id, "org-time");
    let view = host.managed_view();
    assert!(view.active);
    assert_eq!(view.required_servers, ["org-time"]);

    // Each lock refused, naming it; nothing written.
    let file = dir.join("data/settings.json");
    let before = std::fs::read(&file).expect("file");
    let refused = host
        .update_settings(|s| s.policy.auto_allow_read_only = true)
        .expect_err("refused")
        .to_string();
    assert!(
        refused.contains("policy.autoAllowReadOnly is set by your organisation"),
        "{refused}"
    );
    let refused = host
        .update_settings(|s| s.servers.retain(|x| x.id != "org-time"))
        .expect_err("refused")
        .to_string();
    assert!(
        refused.contains("servers.org-time is set by your organisation"),
        "{refused}"
    );
    let refused = host
        .update_settings(|s| s.policy.approval_timeout_secs = Some(600))
        .expect_err("refused")
        .to_string();
    assert!(refused.contains("policy.approvalTimeoutSecs"), "{refused}");
    assert_eq!(
        std::fs::read(&file).expect("file"),
        before,
        "nothing written"
    );
    // A change the policy leaves to the user is saved, without the organisation's server.
    host.update_settings(|s| s.policy.paused = false)
        .expect("allowed");
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("test data")).expect("test data");
    assert!(
        !saved.to_string().contains("org-time"),
        "the organisation's server stays out of the user's file: {saved}"
    );

    // The organisation's deny beats the user's allow of the whole server.
    let verdict = decide(
        &call("time", "get_current_time"),
        &host.policy_settings(),
        None,
        0,
    );
    assert_eq!(verdict.decision, Decision::Deny);
    assert_eq!(
        verdict.reason,
        "denied by your organisation's rule “no clocks for agents”"
    );
    let other = decide(
        &call("time", "convert_time"),
        &host.policy_settings(),
        None,
        0,
    );
    assert_eq!(other.decision, Decision::Allow, "{}", other.reason);

    host.run().await.expect("started");
    wait_for(&host, "time", "ready", |s| *s == ServerStatus::Ready).await;
    wait_for(&host, "org-time", "ready", |s| *s == ServerStatus::Ready).await;

    // The organisation denies the program while it runs: stopped, and refused when started.
    let deny = policy.join("managed.d/10-deny.json");
    write(
        &deny,
        &json!({"servers": {"deny": [{"command": "*/mcp-server-time"}]}}),
        0o644,
    );
    let denied = |s: &ServerStatus| matches!(s, ServerStatus::Failed { reason } if reason.contains("deny list"));
    wait_for(&host, "time", "denied", denied).await;
    host.servers().restart("time").await.ok();
    assert!(
        denied(&status_of(&host, "time").await),
        "refused when started again"
    );
    host.set_server_enabled("time", true).await.ok();
    assert!(
        denied(&status_of(&host, "time").await),
        "refused when enabled again"
    );
    assert_eq!(
        status_of(&host, "org-time").await,
        ServerStatus::Ready,
        "its own server stays"
    );

    // The deny lifted: the server starts again.
    std::fs::remove_file(&deny).expect("removed");
    wait_for(&host, "time", "ready again", |s| *s == ServerStatus::Ready).await;

    // A file the user could have written is refused whole, and said so.
    let open_file = policy.join("managed.d/20-open.json");
    write(
        &open_file,
        &json!({"servers": {"deny": [{"command": "*"}]}}),
        0o666,
    );
    for _ in 0..100 {
        if !host.managed_view().warnings.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let warnings = host.managed_view().warnings.join("\n");
    assert!(
        warnings.contains("20-open.json was not applied")
            && warnings.contains("can be changed by other users"),
        "{warnings}"
    );
    assert_eq!(
        status_of(&host, "time").await,
        ServerStatus::Ready,
        "its deny was not applied"
    );
    host.shutdown("the test ended").await;
}

fn signed(key: &ring::signature::Ed25519KeyPair, policy: &Value) -> String {
    let e = base64::engine::general_purpose::STANDARD;
    let payload = serde_json::to_vec(policy).expect("test data");
    json!({"payload": e.encode(&payload), "signature": e.encode(key.sign(&payload).as_ref())})
        .to_string()
}

fn key(seed: u8) -> ring::signature::Ed25519KeyPair {
    ring::signature::Ed25519KeyPair::from_seed_unchecked(&[seed; 32]).expect("test data")
}

fn point_at(policy: &Path, url: &str, org: &ring::signature::Ed25519KeyPair) {
    let public = base64::engine::general_purpose::STANDARD.encode(org.public_key().as_ref());
    write(
        &policy.join("managed.json"),
        &json!({"remote": {"url": url, "publicKey": public}}),
        0o644,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remote_policy_applies_only_when_signed_and_its_last_good_copy_serves_offline_starts() {
    let dir: TestDir = temp_dir("managed-remote");
    let policy = policy_folder(&dir);
    let org = key(7);
    let (port, _) = web_page(signed(
        &org,
        &json!({"settings": {"approvalTimeoutSecs": 77}}),
    ))
    .await;
    point_at(&policy, &format!("http://127.0.0.1:{port}/policy"), &org);
    let user = Settings::first_run(time_server("time"));
    let host = open(&dir, &policy, &user);
    assert!(
        host.managed_view()
            .warnings
            .join(" ")
            .contains("has not been fetched yet"),
        "{:?}",
        host.managed_view().warnings
    );
    host.fetch_remote_policy().await.expect("fetched");
    assert_eq!(host.settings().policy.approval_timeout_secs, Some(77));
    assert!(host
        .managed_view()
        .origins
        .iter()
        .any(|o| o.place.contains(&port.to_string())));

    // A document signed with another key is not used: the last good one stays, and it says so.
    let (forged, _) = web_page(signed(
        &key(8),
        &json!({"settings": {"approvalTimeoutSecs": 5}}),
    ))
    .await;
    point_at(&policy, &format!("http://127.0.0.1:{forged}/policy"), &org);
    host.reload_managed().await;
    let why = host
        .fetch_remote_policy()
        .await
        .expect_err("refused")
        .to_string();
    assert!(why.contains("signature"), "{why}");
    assert_eq!(
        host.settings().policy.approval_timeout_secs,
        Some(77),
        "last good kept"
    );
    assert!(host
        .managed_view()
        .warnings
        .iter()
        .any(|w| w.contains("signature")));
    drop(host);

    // The server gone: a new start uses the kept copy.
    point_at(
        &policy,
        &format!("http://127.0.0.1:{}/policy", toolgate_tests::free_port()),
        &org,
    );
    let host = open(&dir, &policy, &user);
    assert_eq!(
        host.settings().policy.approval_timeout_secs,
        Some(77),
        "from the kept copy"
    );
    assert!(host.fetch_remote_policy().await.is_err());
    assert_eq!(host.settings().policy.approval_timeout_secs, Some(77));
}

/// The review's first case: the same command added again under another id is bound by the
/// organisation's rule on the server it names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_rule_binds_the_same_server_under_another_id() {
    let dir = temp_dir("managed-identity");
    let policy = policy_folder(&dir);
    write(
        &policy.join("managed.json"),
        &json!({"rules": [{"id": "no-time", "effect": "deny", "note": "no clocks",
            "target": {"kind": "tool", "serverId": "time", "tool": "get_current_time"}}]}),
        0o644,
    );
    let mut user = Settings::first_run(time_server("time"));
    user.servers.push(time_server("time2"));
    let host = open(&dir, &policy, &user);
    for id in ["time", "time2"] {
        let verdict = decide(
            &call(id, "get_current_time"),
            &host.policy_settings(),
            None,
            0,
        );
        assert_eq!(verdict.decision, Decision::Deny, "{id}: {}", verdict.reason);
    }
}

/// The review's second case: an allow-list of `@modelcontextprotocol/*` and the user's own
/// script named `npx`, given a flag the old parser skipped: not started, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_own_npx_is_not_the_allow_listed_launcher() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("managed-npx");
    let policy = policy_folder(&dir);
    write(
        &policy.join("managed.json"),
        &json!({"servers": {"allow": [{"npm": "@modelcontextprotocol/*"}]}}),
        0o644,
    );
    // The user's own folder: one others (the user) can write.
    let bin = dir.join("home/bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o777)).expect("mode");
    let npx = bin.join("npx");
    std::fs::write(&npx, "#!/bin/sh\nexit 0\n").expect("npx");
    std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).expect("mode");
    let server = ServerConfig::stdio(
        "mem",
        "npx",
        [
            "--node-options=--require=/tmp/x.js",
            "@modelcontextprotocol/server-memory",
        ],
    );
    let user = Settings::first_run(server);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data");
    toolgate_settings::file::save(&data.join("settings.json"), &user).expect("settings");
    let owner = std::fs::metadata(&policy).expect("policy").uid();
    let host = Host::open(HostOptions {
        env: Some(HostEnv::from_dirs(vec![
            bin.clone(),
            "/usr/bin".into(),
            "/bin".into(),
        ])),
        secrets: Arc::new(MemoryStore::default()),
        managed: ManagedSource::at(&policy, owner),
        ..HostOptions::new(data)
    })
    .expect("host");
    host.run().await.expect("started");
    wait_for(&host, "mem", "refused", |s| {
        matches!(s, ServerStatus::Failed { reason } if reason.contains("real package launcher"))
    })
    .await;
    host.shutdown("the test ended").await;
}

/// The review's third case: the kept copy deleted and the fetch blocked. No server runs, the
/// doctor says why; a verified copy kept where only root writes lets them run again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_policy_that_cannot_be_had_runs_no_server() {
    let dir: TestDir = temp_dir("managed-closed");
    let policy = policy_folder(&dir);
    let org = key(9);
    point_at(
        &policy,
        &format!("http://127.0.0.1:{}/policy", toolgate_tests::free_port()),
        &org,
    );
    let user = Settings::first_run(time_server("time"));
    let host = open(&dir, &policy, &user);
    host.run().await.expect("started");
    let closed = |s: &ServerStatus| matches!(s, ServerStatus::Failed { reason } if reason.contains("no server runs until it is fetched"));
    wait_for(&host, "time", "refused", closed).await;
    let checks = host.doctor().await.expect("doctor");
    let check = checks
        .iter()
        .find(|c| c.name == "organisation's remote policy")
        .expect("a check");
    assert!(
        !check.ok && check.detail.contains("has not been fetched"),
        "{check:?}"
    );

    // The system's copy, written by its owner: applied, and the server starts.
    write(
        &policy.join("managed-remote.json"),
        &serde_json::from_str::<Value>(&signed(
            &org,
            &json!({"settings": {"approvalTimeoutSecs": 42}}),
        ))
        .expect("json"),
        0o644,
    );
    wait_for(&host, "time", "ready", |s| *s == ServerStatus::Ready).await;
    assert_eq!(host.settings().policy.approval_timeout_secs, Some(42));
    host.shutdown("the test ended").await;
}
