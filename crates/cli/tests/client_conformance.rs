//! Toolgate as an MCP client, measured by the official MCP conformance suite: every client
//! scenario of `@modelcontextprotocol/conformance` without a sign-in (installed by the set-up in
//! `tests/conformance/`, with the Node.js 22 it needs), each run against the `toolgate` CLI
//! through `tests/conformance/client.sh`, which drives it as a user would (add the server by its
//! address, try to sign in, list its tools, make the calls the scenario is about, answering a
//! server's questions at the terminal). The sign-in scenarios are `auth_conformance.rs`'s.
//!
//! A scenario passes when the suite records no failed check and no warning; its verdicts are
//! read from its `checks.json`, never re-judged here. The skills extension's four scenarios
//! (SEP-2640) run too: Toolgate does not implement that extension, never lists skills, and the
//! suite records them as skipped, which passes; a client that read a skill's files anyway would
//! fail them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use toolgate_tests::{repo_root, temp_dir};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// Every client scenario of the suite that is not about signing in (`auth/…`).
const SCENARIOS: [&str; 15] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

fn suite_bin() -> PathBuf {
    let bin = repo_root().join("tests/conformance/node_modules/.bin");
    assert!(
        bin.join("conformance").exists(),
        "{} is missing: run the README's test command, which installs the conformance suite",
        bin.display()
    );
    bin
}

fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Every `checks.json` under `dir`.
fn checks_in(dir: &Path) -> Vec<Value> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(checks_in(&path));
        } else if path.file_name().is_some_and(|n| n == "checks.json") {
            let text = std::fs::read_to_string(&path).expect("checks.json");
            if let Ok(Value::Array(checks)) = serde_json::from_str(&text) {
                found.extend(checks);
            }
        }
    }
    found
}

/// The client scenarios the installed suite has, as it lists them when asked for one it does
/// not know (`conformance list` leaves out those not tied to a spec version).
fn suite_client_scenarios(bin: &Path) -> Vec<String> {
    let out = Command::new(bin.join("conformance"))
        .args([
            "client",
            "--command",
            "true",
            "--scenario",
            "no-such-scenario",
        ])
        .env("PATH", path_with(bin))
        .output()
        .expect("the conformance suite runs");
    let text = String::from_utf8_lossy(&out.stderr);
    let listed: Vec<String> = text
        .split("Available client scenarios:")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(str::to_owned)
        .collect();
    assert!(!listed.is_empty(), "the suite listed no scenarios:\n{text}");
    listed
}

#[test]
fn every_client_scenario_without_a_sign_in_of_the_official_suite_passes_through_the_cli() {
    let bin = suite_bin();
    let path = path_with(&bin);

    // A scenario the suite gains (a new pin) is run here too, or this says which is missing.
    let missing: Vec<String> = suite_client_scenarios(&bin)
        .into_iter()
        .filter(|s| !s.starts_with("auth/") && !SCENARIOS.contains(&s.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "client scenarios of the suite not run here: {missing:?}"
    );

    let client = repo_root().join("tests/conformance/client.sh");
    let dir = temp_dir("client-conformance");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let mut failed = Vec::new();
    for scenario in SCENARIOS {
        let out = dir.join(scenario);
        let run = Command::new(bin.join("conformance"))
            .args(["client", "--command"])
            .arg(&client)
            .args(["--scenario", scenario, "-o"])
            .arg(&out)
            .env("PATH", &path)
            .env("TOOLGATE", TOOLGATE)
            .env("TMPDIR", &tmp)
            .output()
            .expect("the conformance suite runs");
        let checks = checks_in(&out);
        if checks.is_empty() {
            failed.push(format!(
                "{scenario}: the suite recorded no checks ({})\n{}",
                run.status,
                String::from_utf8_lossy(&run.stderr)
            ));
            continue;
        }
        for check in checks {
            let id = check["id"].as_str().unwrap_or_default();
            let why = check["errorMessage"]
                .as_str()
                .or(check["description"].as_str())
                .unwrap_or_default();
            match check["status"].as_str() {
                Some("FAILURE") => failed.push(format!("{scenario}: {id}: {why}")),
                Some("WARNING") => failed.push(format!("{scenario}: warning {id}: {why}")),
                _ => {}
            }
        }
    }
    assert!(
        failed.is_empty(),
        "client scenarios failing:\n{}",
        failed.join("\n")
    );
}
