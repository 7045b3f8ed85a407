//! Servers from an MCP registry at the terminal, against a local registry that answers as the
//! registry's OpenAPI document says (`tests/registry/server.py`, fixture
//! `tests/registry/fixture.json`): search by name or description, paging by cursor, deleted
//! entries hidden, an npm server added pinned and started for real, a PyPI server added pinned
//! with its secret variable read without echo into the keychain, and `registryOnly` (the
//! organisation's managed policy) refusing a server added by hand. Needs a keychain session
//! and, for the policy, root (both as the README's test command runs).
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use toolgate_secrets::SecretStore;
use toolgate_settings::{ServerConfig, Settings, Transport};
use toolgate_tests::{
    example_servers_dir, managed_policy_folder, temp_dir, under_managed_policy, LocalRegistry,
};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

fn toolgate(data: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(TOOLGATE)
        .arg("--data-dir")
        .arg(data)
        .args(args)
        // npx finds the pinned packages the set-up installed here, as it would in a user's cache.
        .current_dir(example_servers_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("typed");
    child.wait_with_output().expect("ends")
}

fn out(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn settings_of(data: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data.join("settings.json")).expect("settings"))
        .expect("json")
}

#[test]
fn servers_are_found_paged_added_pinned_and_started_from_a_registry() {
    let dir = temp_dir("cli-registry");
    let local = LocalRegistry::start(&dir.join("registry.jsonl"));
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data");
    let mut user = Settings::first_run(ServerConfig::stdio(
        "mine",
        "/bin/true",
        Vec::<String>::new(),
    ));
    user.registry.url = Some(local.url.clone());
    toolgate_settings::file::save(&data.join("settings.json"), &user).expect("settings");

    // Paging by cursor through the latest version of each server; the deleted one never shows.
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..5 {
        let mut args = vec!["servers", "search", "--limit", "2", "--json"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c]);
        }
        let o = toolgate(&data, &args, "");
        assert!(o.status.success(), "{}", out(&o));
        let page: Value = serde_json::from_slice(&o.stdout).expect("json");
        for s in page["servers"].as_array().expect("servers") {
            names.push(s["name"].as_str().expect("name").to_owned());
        }
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(
        names,
        [
            "com.example/weather-remote",
            "io.github.acme/boxed",
            "io.github.modelcontextprotocol/server-everything",
            "io.github.modelcontextprotocol/server-memory",
            "io.github.modelcontextprotocol/time",
        ]
    );
    let requests: Vec<Value> = toolgate_tests::json_lines(&dir.join("registry.jsonl"));
    assert!(
        requests.iter().all(|r| r["query"]["version"] == "latest"),
        "{requests:?}"
    );
    assert!(
        requests.iter().any(|r| r["query"].get("cursor").is_some()),
        "paged by cursor"
    );

    // Search by description; deprecated ones say so; deleted ones are not found.
    let found = out(&toolgate(&data, &["servers", "search", "knowledge"], ""));
    assert!(
        found.contains("io.github.modelcontextprotocol/server-memory@2026.8.31"),
        "{found}"
    );
    assert!(found.contains("deprecated:"), "{found}");
    let gone = out(&toolgate(&data, &["servers", "search", "filesystem"], ""));
    assert!(gone.contains("No server"), "{gone}");
    let refused = toolgate(
        &data,
        &[
            "servers",
            "add",
            "fs",
            "--registry",
            "io.github.modelcontextprotocol/server-filesystem",
        ],
        "",
    );
    assert_eq!(refused.status.code(), Some(1), "{}", out(&refused));

    // An npm server, pinned, started for real.
    let added = toolgate(
        &data,
        &[
            "servers",
            "add",
            "everything",
            "--registry",
            "io.github.modelcontextprotocol/server-everything",
        ],
        "",
    );
    assert!(added.status.success(), "{}", out(&added));
    assert!(
        out(&added).contains("pinned to that version"),
        "{}",
        out(&added)
    );
    let started = toolgate(&data, &["servers", "restart", "everything"], "");
    assert!(
        out(&started).contains("everything: ready"),
        "{}",
        out(&started)
    );

    // A PyPI server, pinned, its secret read from stdin (no terminal) into the keychain.
    let added = toolgate(
        &data,
        &[
            "servers",
            "add",
            "time",
            "--registry",
            "io.github.modelcontextprotocol/time@2026.10.19",
            "--set",
            "env:TZ=Asia/Tokyo",
        ],
        "time-token-canary\n",
    );
    assert!(added.status.success(), "{}", out(&added));
    let settings = settings_of(&data);
    let time: ServerConfig = serde_json::from_value(
        settings["settings"]["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .find(|s| s["id"] == "time")
            .expect("time")
            .clone(),
    )
    .expect("server");
    let Transport::Stdio {
        command, args, env, ..
    } = &time.transport
    else {
        panic!("stdio");
    };
    assert_eq!(command, "uvx");
    assert_eq!(args[0], "mcp-server-time==2026.10.19");
    assert_eq!(env["TZ"], "Asia/Tokyo");
    assert_eq!(env["TIME_API_TOKEN"], "${secret:TIME_TIME_API_TOKEN}");
    assert_eq!(
        time.registry.as_ref().map(|r| r.version.as_str()),
        Some("2026.10.19")
    );
    assert!(!std::fs::read_to_string(data.join("settings.json"))
        .expect("file")
        .contains("time-token-canary"));
    let keychain = toolgate_secrets::Keychain::default();
    let stored = keychain
        .get(&toolgate_settings::secret_item("TIME_TIME_API_TOKEN"))
        .expect("keychain");
    assert_eq!(stored.as_deref(), Some("time-token-canary"));
    keychain
        .delete(&toolgate_settings::secret_item("TIME_TIME_API_TOKEN"))
        .expect("cleaned up");

    // registryOnly: a server by hand is refused; one from the organisation's registry is not.
    let policy = managed_policy_folder(
        &dir,
        &json!({"registry": {"url": local.url, "registryOnly": true}}),
    );
    let by_hand = under_managed_policy(&policy, Path::new(TOOLGATE))
        .arg("--data-dir")
        .arg(&data)
        .args(["servers", "add", "own", "--", "/bin/true"])
        .output()
        .expect("runs");
    assert_eq!(by_hand.status.code(), Some(1), "{}", out(&by_hand));
    assert!(
        out(&by_hand).contains("runs only servers added from its registry"),
        "{}",
        out(&by_hand)
    );
    let from_registry = under_managed_policy(&policy, Path::new(TOOLGATE))
        .arg("--data-dir")
        .arg(&data)
        .args([
            "servers",
            "add",
            "memory",
            "--registry",
            "io.github.modelcontextprotocol/server-memory",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert!(from_registry.status.success(), "{}", out(&from_registry));
}
