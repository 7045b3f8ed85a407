//! Signing in, measured by the official MCP conformance suite: every core client authorization
//! scenario of `@modelcontextprotocol/conformance` (installed by the set-up in
//! `tests/conformance/`, with the Node.js 22 it needs), each run against the `toolgate` CLI
//! through `tests/oauth/conformance_client.sh`, which drives it as a user would (add the server
//! by its address, sign in with the stand-in browser, list and call its tools). A scenario passes
//! when the suite records no failed check; the suite's own verdicts are read from its
//! `checks.json`, never re-judged here.
//!
//! All six extension scenarios run too: the machine client's (client credentials with a secret
//! and with `private_key_jwt`), DPoP-bound tokens (with and without the servers' nonces),
//! enterprise-managed authorization (the identity provider's token exchange, then the JWT
//! bearer grant) and workload identity (the JWT bearer grant with the workload's token).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use toolgate_tests::{repo_root, temp_dir};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// The core scenarios of the suite's client authorization set (both spec eras), and its
/// extension scenarios.
const CORE: [&str; 33] = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
];

/// Warnings (a SHOULD not met) that are known and why: none fails a scenario, but a new one
/// shows up here as a failure until it is looked at.
const KNOWN_WARNINGS: [(&str, &str); 1] = [(
    // The scenario's server answers `initialize` without a sign-in and asks for `mcp:basic`
    // only on `tools/list`; a sign-in started before any listing (`servers login`) has no such
    // challenge to read and asks for the scopes the resource metadata lists.
    "auth/scope-step-up",
    "scope-step-up-initial",
)];

fn suite_bin() -> PathBuf {
    let bin = repo_root().join("tests/conformance/node_modules/.bin");
    assert!(
        bin.join("conformance").exists(),
        "{} is missing: run the README's test command, which installs the conformance suite",
        bin.display()
    );
    bin
}

/// Every `checks.json` under `dir`, with the scenario folder it is in.
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

#[test]
fn every_core_and_extension_sign_in_scenario_of_the_official_suite_passes_through_the_cli() {
    let bin = suite_bin();
    let client = repo_root().join("tests/oauth/conformance_client.sh");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = temp_dir("auth-conformance");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let mut failed = Vec::new();
    for scenario in CORE {
        let out = dir.join(scenario.replace('/', "_"));
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
            let known = KNOWN_WARNINGS.contains(&(scenario, id));
            match check["status"].as_str() {
                Some("FAILURE") => {
                    failed.push(format!("{scenario}: {id}: {}", check["description"]))
                }
                Some("WARNING") if !known => failed.push(format!(
                    "{scenario}: warning {id}: {}",
                    check["description"]
                )),
                _ => {}
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
