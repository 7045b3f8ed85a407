//! Servers pinned and installed (issue 30, part 1), through the real `toolgate` binary against
//! the real npm and PyPI registries (the set-up's package access):
//!
//! - `npx -y @modelcontextprotocol/server-memory@<an older version>`: installed at exactly that
//!   version into Toolgate's folder, locked (`package-lock.json` with integrity hashes), run from
//!   there, and started again with no network at all (an empty network namespace); the newest
//!   version is offered, not taken, until `servers update`, which installs it beside the old;
//! - `uvx mcp-server-time` (no uv needed): the newest version resolved, installed into a venv
//!   from a `requirements.txt` whose every line has a sha256, and started again offline.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use toolgate_tests::temp_dir;

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");
const OLDER: &str = "2026.7.4";

fn toolgate(data: &Path, args: &[&str], offline: bool) -> Output {
    let mut command = if offline {
        let mut c = Command::new("unshare");
        c.args(["--net", TOOLGATE]);
        c
    } else {
        Command::new(TOOLGATE)
    };
    command
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("toolgate runs")
}

fn said(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn record(data: &Path, server: &str) -> Value {
    let text = std::fs::read_to_string(data.join("packages").join(server).join("record.json"))
        .expect("an install record");
    serde_json::from_str(&text).expect("json")
}

fn npm_latest(package: &str) -> String {
    let out = Command::new("npm")
        .args(["view", package, "version"])
        .output()
        .expect("npm runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn an_npm_server_runs_its_exact_locked_version_offline_and_updates_only_when_asked() {
    let dir = temp_dir("pinned-npm");
    let data = dir.join("data");
    let package = "@modelcontextprotocol/server-memory";
    let added = toolgate(
        &data,
        &[
            "servers",
            "add",
            "memory",
            "--",
            "npx",
            "-y",
            &format!("{package}@{OLDER}"),
        ],
        false,
    );
    assert!(added.status.success(), "{}", said(&added));

    let started = toolgate(&data, &["servers", "restart", "memory"], false);
    assert!(
        said(&started).contains("memory: ready"),
        "{}",
        said(&started)
    );
    let installed = record(&data, "memory");
    assert_eq!(installed["version"], OLDER);
    let folder = data.join("packages/memory").join(OLDER);
    assert_eq!(
        installed["program"].as_str().map(Path::new),
        Some(folder.join("node_modules/.bin/mcp-server-memory").as_path())
    );
    let lock = std::fs::read_to_string(folder.join("package-lock.json")).expect("a lockfile");
    assert!(
        lock.contains("\"integrity\": \"sha512-"),
        "locked with hashes"
    );
    assert!(lock.contains(&format!("\"version\": \"{OLDER}\"")));

    let offline = toolgate(&data, &["servers", "restart", "memory"], true);
    assert!(
        said(&offline).contains("memory: ready"),
        "started again with no network: {}",
        said(&offline)
    );

    let newest = npm_latest(package);
    assert_ne!(newest, OLDER, "the registry has a newer version to offer");
    let versions = toolgate(&data, &["servers", "versions", "--json"], false);
    let views: Value = serde_json::from_slice(&versions.stdout).expect("json");
    assert_eq!(views[0]["installed"], OLDER);
    assert_eq!(views[0]["available"], newest.as_str());
    assert_eq!(
        record(&data, "memory")["version"],
        OLDER,
        "offered, not taken"
    );

    // Installed again with no network at all: from npm's cache, as the exact version needs no
    // registry.
    std::fs::remove_dir_all(data.join("packages/memory")).expect("removed");
    let again = toolgate(&data, &["servers", "restart", "memory"], true);
    assert!(
        said(&again).contains("memory: ready"),
        "installed again from the cache, offline: {}",
        said(&again)
    );
    assert_eq!(record(&data, "memory")["version"], OLDER);

    let updated = toolgate(&data, &["servers", "update", "memory"], false);
    assert!(updated.status.success(), "{}", said(&updated));
    assert_eq!(record(&data, "memory")["version"], newest.as_str());
    assert!(folder.is_dir(), "the old version stays installed");
    let after = toolgate(&data, &["servers", "restart", "memory"], true);
    assert!(said(&after).contains("memory: ready"), "{}", said(&after));
}

#[test]
fn a_package_that_cannot_be_fetched_offline_says_so() {
    let dir = temp_dir("pinned-offline");
    let data = dir.join("data");
    // A name no registry and no cache has.
    let missing = "@toolgate-test/never-published-anywhere@9.9.9";
    let added = toolgate(
        &data,
        &["servers", "add", "gone", "--", "npx", "-y", missing],
        false,
    );
    assert!(added.status.success(), "{}", said(&added));
    let started = toolgate(&data, &["servers", "restart", "gone"], true);
    let words = said(&started);
    assert!(
        words.contains("gone: failed") && words.contains("could not be installed"),
        "{words}"
    );
    assert!(
        words.contains("the registry could not be reached and the files are not in the cache"),
        "says what to do: {words}"
    );
}

#[test]
fn a_pypi_server_runs_from_a_venv_installed_with_hashes_and_starts_offline() {
    let dir = temp_dir("pinned-pypi");
    let data = dir.join("data");
    let added = toolgate(
        &data,
        &["servers", "add", "time", "--", "uvx", "mcp-server-time"],
        false,
    );
    assert!(added.status.success(), "{}", said(&added));
    let started = toolgate(&data, &["servers", "restart", "time"], false);
    assert!(said(&started).contains("time: ready"), "{}", said(&started));
    let installed = record(&data, "time");
    let version = installed["version"].as_str().expect("a version").to_owned();
    let folder = data.join("packages/time").join(&version);
    let requirements =
        std::fs::read_to_string(folder.join("requirements.txt")).expect("requirements");
    assert!(requirements.starts_with(&format!("mcp-server-time=={version} --hash=sha256:")));
    assert!(
        requirements
            .lines()
            .all(|l| l.contains("==") && l.contains(" --hash=sha256:")),
        "every package exact and hashed: {requirements}"
    );
    assert!(folder.join("venv/bin/mcp-server-time").exists());
    let offline = toolgate(&data, &["servers", "restart", "time"], true);
    assert!(said(&offline).contains("time: ready"), "{}", said(&offline));
}
