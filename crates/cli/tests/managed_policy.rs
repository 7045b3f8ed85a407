//! The organisation's managed policy at the terminal, read from the real place on Linux
//! (`/etc/toolgate`): each run of `toolgate` here is in a mount namespace of its own where the
//! test's policy folder is bound over `/etc/toolgate`, so the binary reads the path it reads on
//! a managed desktop and other tests never see it. Needs root (CI runs as root) for the mount.
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};
use toolgate_settings::{ServerConfig, Settings};
use toolgate_tests::{managed_policy_folder, temp_dir, under_managed_policy, write_policy_file};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// `toolgate --data-dir DATA ARGS…` with `policy` bound over /etc/toolgate.
fn toolgate(policy: &Path, data: &Path, args: &[&str]) -> Output {
    under_managed_policy(policy, Path::new(TOOLGATE))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .expect("unshare runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cli_shows_the_policy_and_refuses_what_it_locks() {
    let dir = temp_dir("cli-managed");
    let policy = managed_policy_folder(
        &dir,
        &json!({
            "settings": {"autoAllowReadOnly": false, "sandbox": true},
            "rules": [{"id": "no-push", "effect": "ask", "note": "pushes are asked",
                       "target": {"kind": "server", "serverId": "git"}}],
            "servers": {
                "deny": [{"npm": "bad-server"}],
                "required": [{"id": "org-tools", "name": "Org tools", "transport": "stdio",
                              "command": "/opt/org/mcp", "enabled": false}],
            },
        }),
    );
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data");
    let user = Settings::first_run(ServerConfig::stdio(
        "mine",
        "/usr/bin/true",
        Vec::<String>::new(),
    ));
    toolgate_settings::file::save(&data.join("settings.json"), &user).expect("settings");

    let (out, err) = text(&toolgate(&policy, &data, &["policy"]));
    assert!(
        out.contains("Your organisation's managed policy is in force"),
        "{out}{err}"
    );
    assert!(out.contains("/etc/toolgate/managed.json"), "{out}");
    assert!(
        out.contains("allow read-only tools without asking: off"),
        "{out}"
    );
    assert!(
        out.contains("local servers run in their sandbox: on"),
        "{out}"
    );
    assert!(
        out.contains("Your organisation's servers (always present): org-tools"),
        "{out}"
    );
    assert!(out.contains("ask: pushes are asked"), "{out}");

    let shown = toolgate(&policy, &data, &["policy", "--json"]);
    let shown: Value = serde_json::from_slice(&shown.stdout).expect("json");
    assert_eq!(shown["policy"]["locks"]["autoAllowReadOnly"], json!(false));
    assert_eq!(shown["rules"][0]["id"], "org:no-push");
    assert_eq!(shown["rules"][0]["managed"], json!(true));

    // The organisation's server cannot be removed, a denied one cannot be added.
    let removed = toolgate(&policy, &data, &["servers", "remove", "org-tools"]);
    let (_, err) = text(&removed);
    assert_eq!(removed.status.code(), Some(1), "{err}");
    assert!(
        err.contains("servers.org-tools is set by your organisation"),
        "{err}"
    );
    let added = toolgate(
        &policy,
        &data,
        &[
            "servers",
            "add",
            "bad",
            "--",
            "npx",
            "-y",
            "bad-server@1.0.0",
        ],
    );
    let (_, err) = text(&added);
    assert_eq!(added.status.code(), Some(1), "{err}");
    assert!(
        err.contains("servers.bad") && err.contains("deny list"),
        "{err}"
    );
    // The list shows the organisation's server; the user's file does not hold it.
    let listed = toolgate(&policy, &data, &["servers", "list"]);
    assert!(text(&listed).0.contains("org-tools"), "{}", text(&listed).0);
    let saved = std::fs::read_to_string(data.join("settings.json")).expect("settings");
    assert!(
        !saved.contains("org-tools"),
        "the organisation's server is not in the user's file"
    );

    // A drop-in file others can write is refused whole, with a warning.
    write_policy_file(
        &policy.join("managed.d/50-loose.json"),
        &json!({"settings": {"sandbox": false}}),
        0o666,
    );
    let (out, _) = text(&toolgate(&policy, &data, &["policy"]));
    assert!(out.contains("50-loose.json was not applied"), "{out}");
    assert!(
        out.contains("local servers run in their sandbox: on"),
        "{out}"
    );

    // Outside the namespace this machine has no policy.
    let plain = Command::new(TOOLGATE)
        .arg("--data-dir")
        .arg(&data)
        .arg("policy")
        .output()
        .expect("runs");
    assert!(
        text(&plain).0.contains("No managed policy"),
        "{}",
        text(&plain).0
    );
}
