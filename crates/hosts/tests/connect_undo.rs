//! Connect and undo on copies of each host's real config format, placed where the host keeps it
//! on Linux under a home folder of the test's own.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolgate_hosts::{apply, connected, plan, undo, ConnectCommand, HostError, HostKind, Os};
use toolgate_settings::import::ImportChoices;
use toolgate_settings::{ServerConfig, Settings};

fn fixture(host: HostKind) -> Vec<u8> {
    let name = match host {
        HostKind::Goose => "goose.yaml".to_owned(),
        host => format!("{}.json", host.id()),
    };
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .expect("fixture")
}

/// The host's file at its Linux place under `home`, holding the fixture.
fn placed(host: HostKind, home: &Path) -> PathBuf {
    let var = |name: &str| (name == "HOME").then(|| OsString::from(home));
    let path = toolgate_hosts::config_path(host, Os::Linux, &var).expect("a Linux path");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    std::fs::write(&path, fixture(host)).expect("write");
    path
}

fn connect() -> ConnectCommand {
    ConnectCommand {
        command: "/usr/bin/toolgate".into(),
        args: vec!["connect".into(), "--profile".into(), "HOST".into()],
    }
}

fn empty_settings() -> Settings {
    Settings {
        servers: Vec::new(),
        ..Settings::first_run(ServerConfig::stdio("x", "node", ["x.js"]))
    }
}

/// The servers in the rewritten file, whatever its format.
fn servers_after(host: HostKind, bytes: &[u8]) -> (Value, Value) {
    let doc: Value = match host {
        HostKind::Goose => {
            let yaml: yaml_serde::Value =
                yaml_serde::from_slice(bytes).expect("the rewritten file is YAML");
            serde_json::to_value(yaml).expect("json")
        }
        _ => serde_json::from_slice(bytes).expect("the rewritten file is JSON"),
    };
    let key = match host {
        HostKind::VsCode => "servers",
        HostKind::Zed => "context_servers",
        HostKind::Goose => "extensions",
        _ => "mcpServers",
    };
    (doc[key].clone(), doc)
}

/// (host, servers imported, entries kept in the host's file)
const CASES: [(HostKind, &[&str], &[&str]); 6] = [
    // The older SSE transport moves too: Toolgate speaks it.
    (
        HostKind::ClaudeDesktop,
        &["filesystem", "github", "legacy-sse"],
        &[],
    ),
    (HostKind::ClaudeCode, &["sentry", "time"], &[]),
    (HostKind::Cursor, &["linear", "memory"], &[]),
    (HostKind::VsCode, &["fetch", "perplexity"], &[]),
    (HostKind::Goose, &["github"], &["developer"]),
    (HostKind::Zed, &["postgres"], &["mcp-server-context7"]),
];

#[test]
fn each_host_is_connected_through_toolgate_and_undone_byte_for_byte() {
    for (host, imported, kept) in CASES {
        let home = tempfile::tempdir().expect("home");
        let state = home.path().join("toolgate/hosts.json");
        let path = placed(host, home.path());
        let original = std::fs::read(&path).expect("read");
        let settings = empty_settings();

        let plan = plan(host, &path, &settings, &connect()).expect("plan");
        let import = plan.import.as_ref().expect("servers to import");
        let mut added: Vec<&str> = import
            .report()
            .added
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        added.sort();
        assert_eq!(added, imported, "{host:?}");
        let kept_names: Vec<&str> = plan.kept.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(kept_names, kept, "{host:?}");

        // The import moves secrets to the keychain: none stays in Toolgate's settings.
        let mut choices = ImportChoices {
            move_secrets: import.move_all_secrets(),
            ..ImportChoices::default()
        };
        for input in &import.report().inputs {
            choices
                .inputs
                .insert(input.id.clone(), "pplx-fixture-key".into());
        }
        let applied = import
            .apply(&settings, &choices, 0)
            .expect("import applies");
        let saved = serde_json::to_string(&applied.settings).expect("json");
        assert!(
            !saved.contains("ghp_") && !saved.contains("pplx-"),
            "{host:?}: {saved}"
        );
        assert_eq!(applied.settings.servers.len(), imported.len(), "{host:?}");

        // Nothing touched before apply.
        assert_eq!(std::fs::read(&path).expect("read"), original, "{host:?}");
        apply(&plan, &state).expect("apply");
        let after = std::fs::read(&path).expect("read");
        let (servers, doc) = servers_after(host, &after);
        let mut names: Vec<&str> = servers
            .as_object()
            .expect("servers")
            .keys()
            .map(String::as_str)
            .collect();
        names.sort();
        let mut expected: Vec<&str> = kept.iter().copied().chain(["toolgate"]).collect();
        expected.sort();
        assert_eq!(names, expected, "{host:?}: {servers}");
        let toolgate = &servers["toolgate"];
        let command = toolgate
            .get("command")
            .or_else(|| toolgate.get("cmd"))
            .cloned();
        assert_eq!(command, Some(json!("/usr/bin/toolgate")), "{host:?}");
        assert_eq!(toolgate["args"], json!(["connect", "--profile", "HOST"]));
        // The host's other settings are kept.
        match host {
            HostKind::ClaudeDesktop => assert_eq!(doc["globalShortcut"], "Ctrl+Space"),
            HostKind::ClaudeCode => {
                assert_eq!(doc["numStartups"], 42);
                assert!(doc["projects"]["/home/ada/code/app"]["mcpServers"]["local"].is_object());
            }
            HostKind::VsCode => assert_eq!(doc["inputs"][0]["id"], "perplexity-key"),
            HostKind::Goose => assert_eq!(doc["GOOSE_MODEL"], "claude-sonnet-4-5"),
            HostKind::Zed => assert_eq!(doc["theme"], "One Dark"),
            HostKind::Cursor => {}
        }
        assert!(
            !String::from_utf8_lossy(&after).contains("ghp_"),
            "{host:?}: the secrets left the host's file"
        );
        assert_eq!(
            std::fs::read(toolgate_hosts::backup_of(&path)).expect("backup"),
            original
        );
        assert!(connected(&state).contains_key(host.id()));

        // Connected already: a second connect is refused and changes nothing.
        let again = toolgate_hosts::plan(host, &path, &settings, &connect());
        assert!(
            matches!(again, Err(HostError::AlreadyConnected { .. })),
            "{host:?}"
        );

        let restored = undo(host, &state, false).expect("undo");
        assert_eq!(restored, path);
        assert_eq!(
            std::fs::read(&path).expect("read"),
            original,
            "{host:?}: byte for byte"
        );
        assert!(!toolgate_hosts::backup_of(&path).exists());
        assert!(!connected(&state).contains_key(host.id()));
        assert!(matches!(
            undo(host, &state, false),
            Err(HostError::NotConnected { .. })
        ));
    }
}

#[test]
fn a_file_that_changed_since_the_preview_is_not_overwritten() {
    let home = tempfile::tempdir().expect("home");
    let state = home.path().join("hosts.json");
    let path = placed(HostKind::Cursor, home.path());
    let plan = plan(HostKind::Cursor, &path, &empty_settings(), &connect()).expect("plan");
    let edited = b"{\"mcpServers\": {\"new\": {\"command\": \"node\"}}}".to_vec();
    std::fs::write(&path, &edited).expect("the user edits it meanwhile");
    let refused = apply(&plan, &state);
    assert!(
        matches!(refused, Err(HostError::ChangedSincePreview { .. })),
        "{:?}",
        refused.err()
    );
    assert_eq!(std::fs::read(&path).expect("read"), edited);
    assert!(!toolgate_hosts::backup_of(&path).exists());
    assert!(connected(&state).is_empty());
}

#[test]
fn undo_refuses_to_lose_edits_made_after_connecting_unless_forced() {
    let home = tempfile::tempdir().expect("home");
    let state = home.path().join("hosts.json");
    let path = placed(HostKind::ClaudeDesktop, home.path());
    let original = std::fs::read(&path).expect("read");
    let plan = plan(
        HostKind::ClaudeDesktop,
        &path,
        &empty_settings(),
        &connect(),
    )
    .expect("plan");
    apply(&plan, &state).expect("apply");
    std::fs::write(&path, b"{\"mcpServers\": {}}").expect("edited later");
    let refused = undo(HostKind::ClaudeDesktop, &state, false);
    let message = refused.expect_err("refused").to_string();
    assert!(
        message.contains("--force") && message.contains(".toolgate-backup"),
        "{message}"
    );
    undo(HostKind::ClaudeDesktop, &state, true).expect("forced");
    assert_eq!(std::fs::read(&path).expect("read"), original);
}

#[test]
fn a_host_without_a_config_says_where_it_looked() {
    let home = tempfile::tempdir().expect("home");
    let path = home.path().join(".cursor/mcp.json");
    let missing = plan(HostKind::Cursor, &path, &empty_settings(), &connect());
    let message = missing.err().expect("refused").to_string();
    assert!(
        message.contains("Cursor has no config at") && message.contains("mcp.json"),
        "{message}"
    );
}
