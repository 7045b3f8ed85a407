//! Connect and undo on copies of each host's real config format, placed where the host keeps it
//! on Linux under a home folder of the test's own.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolgate_hosts::import::ImportChoices;
use toolgate_hosts::{
    apply, connected, plan, undo, undo_plan, ConnectCommand, HostError, HostKind, Os, Undone,
};
use toolgate_settings::{ServerConfig, Settings};

fn fixture(host: HostKind) -> Vec<u8> {
    let name = match host {
        HostKind::Goose => "goose.yaml".to_owned(),
        HostKind::Codex => "codex.toml".to_owned(),
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
    let text = std::str::from_utf8(bytes).expect("UTF-8");
    let doc: Value = match host {
        HostKind::Goose => {
            let yaml: yaml_serde::Value =
                yaml_serde::from_slice(bytes).expect("the rewritten file is YAML");
            serde_json::to_value(yaml).expect("json")
        }
        HostKind::Codex => toml::from_str(text).expect("the rewritten file is TOML"),
        _ => toolgate_hosts::import::parse_jsonc(text).expect("the rewritten file is JSONC"),
    };
    (doc[key_of(host)].clone(), doc)
}

fn key_of(host: HostKind) -> &'static str {
    match host {
        HostKind::VsCode => "servers",
        HostKind::Zed => "context_servers",
        HostKind::Goose => "extensions",
        HostKind::Codex => "mcp_servers",
        _ => "mcpServers",
    }
}

/// (host, servers imported, entries kept in the host's file)
const CASES: [(HostKind, &[&str], &[&str]); 8] = [
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
    (HostKind::Codex, &["github", "time"], &["docs"]),
    (HostKind::Gemini, &["fetch", "linear"], &[]),
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
            HostKind::Codex => {
                assert_eq!(
                    doc["model_providers"]["local"]["base_url"],
                    "http://127.0.0.1:11434/v1"
                )
            }
            HostKind::Gemini => assert_eq!(doc["general"]["vimMode"], true),
            HostKind::Cursor => {}
        }
        // Only the server map changed: every line of the original outside it is still there,
        // in its order (Goose's YAML is rewritten whole, in its order).
        if host != HostKind::Goose {
            assert_outside_servers_kept(host, &original, &after);
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

        let (restored, how) = undo(host, &state, false).expect("undo");
        assert_eq!(restored, path);
        assert_eq!(how, Undone::Restored);
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

/// Lines of `original` that are not inside the server map, in order, found in `after` in the
/// same order: the host's own settings and comments survive connecting.
fn assert_outside_servers_kept(host: HostKind, original: &[u8], after: &[u8]) {
    let original = String::from_utf8_lossy(original);
    let after = String::from_utf8_lossy(after);
    let mut rest = after.as_ref();
    let mut inside = false;
    let lines: Vec<&str> = original.lines().collect();
    for (i, line) in lines.iter().copied().enumerate() {
        let t = line.trim();
        // A TOML table's leading comment goes with the table (toml_edit keeps it as its decor).
        let heads_a_server = lines
            .get(i + 1)
            .is_some_and(|next| next.starts_with("[mcp_servers."));
        if host == HostKind::Codex && t.starts_with('#') && heads_a_server {
            continue;
        }
        // The server map's lines, from its key to the line closing it (JSON) or to the next
        // table that is not a server (TOML).
        let opens = match host {
            HostKind::Codex => t.starts_with("[mcp_servers."),
            _ => t.starts_with(&format!("\"{}\"", key_of(host))),
        };
        if opens {
            inside = true;
        }
        if inside {
            let closes = match host {
                HostKind::Codex => t.starts_with('[') && !t.starts_with("[mcp_servers."),
                _ => line.starts_with("  }"),
            };
            if !closes {
                continue;
            }
            inside = false;
            if host != HostKind::Codex {
                continue;
            }
        }
        if t.is_empty() || t == "}," || t == "}" {
            continue;
        }
        match rest.find(line) {
            Some(at) => rest = &rest[at + line.len()..],
            None => panic!("{host:?}: {line:?} is gone or out of order in:\n{after}"),
        }
    }
}

/// Writes `text` over the host's file as the host itself would: its own setting changed and a
/// server of its own added, beside Toolgate's entry.
fn host_writes(host: HostKind, path: &Path) {
    let text = std::fs::read_to_string(path).expect("read");
    let text = match host {
        HostKind::Codex => format!("{text}\n[mcp_servers.added-later]\ncommand = \"node\"\nargs = [\"later.js\"]\n\n[notice]\nhide_full_access_warning = true\n"),
        HostKind::Goose => format!("{text}GOOSE_MODE: smart_approve\n").replace(
            "extensions:\n",
            "extensions:\n  added-later:\n    type: stdio\n    cmd: node\n    args: [later.js]\n    enabled: true\n",
        ),
        _ => {
            let key = format!("\"{}\": {{", key_of(host));
            let at = text.find(&key).expect("the server map") + key.len();
            let mut text = format!(
                "{}\n    \"added-later\": {{\"command\": \"node\", \"args\": [\"later.js\"]}},{}",
                &text[..at],
                &text[at..]
            );
            let end = text.rfind('}').expect("the closing brace");
            text.insert_str(end, "  ,\"writtenByTheHostLater\": {\"firstStartTime\": \"2026-11-26T10:00:00Z\"}\n");
            text
        }
    };
    std::fs::write(path, text).expect("the host writes its file");
}

#[test]
fn undo_keeps_what_the_host_wrote_since_and_puts_back_what_moved() {
    for (host, imported, kept) in CASES {
        let home = tempfile::tempdir().expect("home");
        let state = home.path().join("hosts.json");
        let path = placed(host, home.path());
        let original = std::fs::read(&path).expect("read");
        let plan = plan(host, &path, &empty_settings(), &connect()).expect("plan");
        apply(&plan, &state).expect("apply");
        host_writes(host, &path);
        let written = std::fs::read(&path).expect("read");

        let preview = undo_plan(host, &state, false).expect("undo plan");
        let mut expected: Vec<String> = imported.iter().map(|s| (*s).to_owned()).collect();
        expected.sort();
        match &preview.undone {
            Undone::Reversed {
                put_back,
                kept_current,
            } => {
                let mut put_back = put_back.clone();
                put_back.sort();
                assert_eq!(put_back, expected, "{host:?}");
                assert!(kept_current.is_empty(), "{host:?}");
            }
            other => panic!("{host:?}: {other:?}"),
        }
        assert_eq!(
            std::fs::read(&path).expect("read"),
            written,
            "a preview writes nothing"
        );

        let (_, how) = undo(host, &state, false).expect("undo");
        assert_eq!(how, preview.undone);
        let after = std::fs::read(&path).expect("read");
        let (servers, doc) = servers_after(host, &after);
        let (original_servers, _) = servers_after(host, &original);
        let mut names: Vec<&String> = servers.as_object().expect("map").keys().collect();
        names.sort();
        let mut want: Vec<String> = imported
            .iter()
            .chain(kept)
            .map(|s| (*s).to_owned())
            .chain(["added-later".to_owned()])
            .collect();
        want.sort();
        assert_eq!(
            names,
            want.iter().collect::<Vec<_>>(),
            "{host:?}: {servers}"
        );
        for name in imported {
            assert_eq!(
                servers[*name], original_servers[*name],
                "{host:?}: {name} as it was"
            );
        }
        match host {
            HostKind::Codex => assert_eq!(doc["notice"]["hide_full_access_warning"], true),
            HostKind::Goose => assert_eq!(doc["GOOSE_MODE"], "smart_approve"),
            _ => assert_eq!(
                doc["writtenByTheHostLater"]["firstStartTime"], "2026-11-26T10:00:00Z",
                "{host:?}"
            ),
        }
        if host != HostKind::Goose {
            // The host's own later lines survive, as written.
            assert_outside_servers_kept(host, &written, &after);
        }
        assert!(!toolgate_hosts::backup_of(&path).exists(), "{host:?}");
        assert!(connected(&state).is_empty());
    }
}

#[test]
fn a_server_the_host_added_again_under_a_moved_name_is_kept_as_the_host_has_it() {
    let home = tempfile::tempdir().expect("home");
    let state = home.path().join("hosts.json");
    let path = placed(HostKind::ClaudeCode, home.path());
    let plan = plan(HostKind::ClaudeCode, &path, &empty_settings(), &connect()).expect("plan");
    apply(&plan, &state).expect("apply");
    let text = std::fs::read_to_string(&path).expect("read").replacen(
        "\"mcpServers\": {",
        "\"mcpServers\": {\n    \"time\": {\"command\": \"my-time\"},",
        1,
    );
    std::fs::write(&path, text).expect("write");
    let (_, how) = undo(HostKind::ClaudeCode, &state, false).expect("undo");
    assert_eq!(
        how,
        Undone::Reversed {
            put_back: vec!["sentry".into()],
            kept_current: vec!["time".into()],
        }
    );
    let (servers, _) = servers_after(HostKind::ClaudeCode, &std::fs::read(&path).expect("read"));
    assert_eq!(servers["time"], json!({"command": "my-time"}));
    assert!(servers.get("toolgate").is_none());
}

#[test]
fn an_unreadable_file_is_left_alone_unless_forced() {
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
    std::fs::write(&path, b"{\"mcpServers\": ").expect("broken later");
    let message = undo(HostKind::ClaudeDesktop, &state, false)
        .expect_err("refused")
        .to_string();
    assert!(
        message.contains("--force") && message.contains(".toolgate-backup"),
        "{message}"
    );
    assert_eq!(std::fs::read(&path).expect("read"), b"{\"mcpServers\": ");
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
