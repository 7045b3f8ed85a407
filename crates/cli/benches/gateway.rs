//! What the gateway adds to a call: the official TypeScript SDK client calling `echo` through
//! `toolgate connect` → the gateway → the server, against the same client calling the same
//! server directly. 1,000 sequential calls and 1,000 with 32 in flight, allowed by a rule, after
//! 200 warm-up calls; the two take turns for [`ROUNDS`] rounds and the median is reported.
//!
//! Behind the gateway is the real host, as the app runs it: the settings' allow rule decides,
//! every decision is written to the audit log in a SQLite file before the call runs, and the
//! call goes to the server through `ServerManager`. The server is `tests/fault_server.py` in its
//! well-behaved mode (its `echo` answers at once), the same process type for both paths.
//!
//! The shim hands the host's stdin and stdout to the gateway (Linux and macOS); the same path
//! with `toolgate connect --relay`, every message copied through the shim as before, is timed
//! beside it.
//!
//! Target: the gateway adds at most 0.15 ms a call (sequential; issue 25, 0.3 ms before).
//!
//! Run: `cargo bench -p toolgate-cli --bench gateway` (after the README's set-up). Prints a
//! table; asserts only that the calls succeeded.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolgate_host::{Host, HostOptions};
use toolgate_mcp::{HostEnv, ServerStatus};
use toolgate_policy::{Effect, Rule, Scope, Target};
use toolgate_settings::Settings;
use toolgate_tests::bench::{median, ms, summary, Summary};
use toolgate_tests::{example_servers_dir, fault_server, fault_server_script, repo_root};

const CALLS: usize = 1_000;
const IN_FLIGHT: usize = 32;
const WARM_UP: usize = 200;
const ROUNDS: usize = 3;
const TARGET_MS: f64 = 0.15;

#[derive(Clone, Copy)]
struct Times {
    sequential: Duration,
    in_flight: Duration,
}

/// `ts_client.cjs` (the per-call benchmark's client) against `command`.
fn typescript(command: &[String]) -> Times {
    let output = std::process::Command::new("node")
        .arg(repo_root().join("tests/benches/ts_client.cjs"))
        .arg(example_servers_dir())
        .args([CALLS, IN_FLIGHT, WARM_UP].map(|n| n.to_string()))
        .arg("--")
        .args(command)
        .stderr(Stdio::inherit())
        .output()
        .expect("run node");
    assert!(output.status.success(), "ts_client.cjs failed");
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON from ts_client.cjs");
    let millis = |key: &str| Duration::from_secs_f64(report[key].as_f64().expect(key) / 1000.0);
    Times {
        sequential: millis("sequential_ms"),
        in_flight: millis("in_flight_ms"),
    }
}

/// The host the app would run on `dir`; `audit`: with its history and audit log (the app's
/// case), else without (to show what the gateway itself costs).
async fn host_on(dir: &Path, audit: bool) -> Arc<Host> {
    let mut settings = Settings::first_run(fault_server("echo-server", "ok"));
    let target = Target::Tool {
        server_id: "echo-server".into(),
        tool: "echo".into(),
    };
    let rule = Rule::new("allow-echo", Effect::Allow, target, Scope::Always, 0);
    settings.policy.rules.push(rule);
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
    let host = Host::open(HostOptions {
        env: Some(HostEnv::inherited()),
        secrets: Arc::new(toolgate_secrets::MemoryStore::default()),
        open_history: audit,
        ..HostOptions::new(dir)
    })
    .expect("host");
    host.servers().start_all(&settings.servers).await;
    while host.servers().snapshot().await[0].status != ServerStatus::Ready {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    host
}

/// A gateway for a host on `dir`; returns the command a client runs to reach it.
async fn gateway_on(
    dir: &Path,
    audit: bool,
) -> (Arc<Host>, tokio_util::sync::CancellationToken, Vec<String>) {
    std::fs::create_dir_all(dir).expect("temp dir");
    let host = host_on(dir, audit).await;
    let gateway = toolgate_gateway::Gateway::bind(host.clone(), toolgate_gateway::socket_path(dir))
        .expect("gateway");
    let stop = gateway.stopper();
    tokio::spawn(gateway.serve());
    let command = vec![
        env!("CARGO_BIN_EXE_toolgate").to_owned(),
        "--data-dir".to_owned(),
        dir.to_string_lossy().into_owned(),
        "connect".to_owned(),
        "--no-start".to_owned(),
    ];
    (host, stop, command)
}

#[tokio::main]
async fn main() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gateway-{}", std::process::id()));
    let (host, stop, audited_command) = gateway_on(&dir.join("audited"), true).await;
    let (bare_host, bare_stop, bare_command) = gateway_on(&dir.join("no-audit"), false).await;
    // The server's stderr (a line per message) is not part of the measure.
    let direct_command = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!(
            "exec python3 '{}' ok 2>/dev/null",
            fault_server_script().to_string_lossy()
        ),
    ];
    let mut relayed_command = audited_command.clone();
    relayed_command.push("--relay".to_owned());
    let mut rounds: [Vec<Times>; 4] = Default::default();
    for round in 0..ROUNDS {
        eprintln!("gateway: round {} of {ROUNDS}", round + 1);
        for (times, command) in rounds.iter_mut().zip([
            &direct_command,
            &audited_command,
            &bare_command,
            &relayed_command,
        ]) {
            let command = command.clone();
            times.push(
                tokio::task::spawn_blocking(move || typescript(&command))
                    .await
                    .expect("joins"),
            );
        }
    }
    stop.cancel();
    bare_stop.cancel();
    host.servers().stop_all().await;
    bare_host.servers().stop_all().await;
    let audited = host
        .audit_log(toolgate_history::AuditFilter::default())
        .await
        .expect("audit")
        .len();
    assert!(
        audited >= CALLS,
        "every call through the gateway was audited ({audited})"
    );
    let _ = std::fs::remove_dir_all(&dir);

    let med = |all: &[Times]| Times {
        sequential: median(all.iter().map(|t| t.sequential).collect()),
        in_flight: median(all.iter().map(|t| t.in_flight).collect()),
    };
    let [direct, through, bare, relayed] = [
        med(&rounds[0]),
        med(&rounds[1]),
        med(&rounds[2]),
        med(&rounds[3]),
    ];
    let per_call = |d: Duration| d.as_secs_f64() * 1e6 / CALLS as f64;
    let added = |ours: Duration, theirs: Duration| (ms(ours) - ms(theirs)) / CALLS as f64;
    println!(
        "\nGateway: the TypeScript SDK client, {CALLS} echo calls allowed by a rule \
         (median of {ROUNDS} rounds, {WARM_UP} warm-up calls each)\n"
    );
    println!("| path | sequential, per call | added | {IN_FLIGHT} in flight, per call | added |");
    println!("|---|---:|---:|---:|---:|");
    for (name, t) in [
        ("client → server", direct),
        (
            "client → toolgate connect → gateway (rule, audit in SQLite) → server",
            through,
        ),
        ("the same, no audit log (the gateway's own cost)", bare),
        (
            "the same as the second, `toolgate connect --relay` (the shim copies)",
            relayed,
        ),
    ] {
        println!(
            "| {name} | {:.0} µs | +{:.3} ms | {:.0} µs | +{:.3} ms |",
            per_call(t.sequential),
            added(t.sequential, direct.sequential),
            per_call(t.in_flight),
            added(t.in_flight, direct.in_flight),
        );
    }
    for (workload, ours, theirs) in [
        ("sequential", through.sequential, direct.sequential),
        ("32 in flight", through.in_flight, direct.in_flight),
    ] {
        let added_ms = added(ours, theirs);
        let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
        println!(
            "\nThe gateway adds {added_ms:.3} ms a call, {workload} ({ratio:.2}x the direct path); target ≤ {TARGET_MS} ms"
        );
        summary(Summary {
            benchmark: &format!("Gateway, {CALLS} calls, {workload}"),
            result: format!("+{added_ms:.3} ms a call"),
            compared_with: format!("TypeScript SDK direct {:.0} µs", per_call(theirs)),
            ratio: format!("{ratio:.2}x"),
            target: if workload == "sequential" {
                "≤ +0.15 ms a call"
            } else {
                "none set"
            },
            met: workload != "sequential" || added_ms <= TARGET_MS,
        });
    }
}
