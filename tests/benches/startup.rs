//! Start-up benchmark: how long ten real servers take to be ready together through Toolgate's
//! `ServerManager`, as the app starts them, against the same ten started together by a bare
//! `rmcp` client in the same run (each spawned and handshaken in a task of its own, its tools,
//! resources and prompts listed: what "ready" means for Toolgate). Target (issue 17): Toolgate
//! within 1.1x the bare client, plus 50 ms. The two take turns for [`RUNS`] runs; medians.
//!
//! Toolgate's side is the app's path: the manager finds the login shell's PATH from the answer it
//! kept at an earlier start (`login-shell-path.json`, valid while the shell's start-up files are
//! unchanged), so no shell runs; asking the shell the first time is timed apart. Each row also
//! gives the CPU time the servers had used when the last was ready (user + system, from
//! `/proc/<pid>/stat`), and the rows of each server alone and of the ten one after another show
//! what concurrency gains.
//!
//! Run: `cargo bench -p toolgate-tests --bench startup`. Prints a table; asserts only that every
//! server became ready.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use toolgate_mcp::{ManagerOptions, ServerManager, ServerStatus};
use toolgate_settings::{ServerConfig, Transport};
use toolgate_tests::bench::{median, ms, summary, Summary};
use toolgate_tests::{children_of, everything_server, fault_server, python_server_bin};

const RUNS: usize = 5;

fn time(id: &str) -> ServerConfig {
    ServerConfig::stdio(
        id,
        python_server_bin("mcp-server-time").to_string_lossy(),
        ["--local-timezone", "UTC"],
    )
}

/// CPU time (user + system) the running servers (this process's children) have used so far,
/// with what their own exited children used (a launcher's, say): fields 14 to 17 of
/// `/proc/<pid>/stat`, in the USER_HZ ticks of 1/100 s that Linux reports in.
fn servers_cpu() -> Duration {
    let ticks: u64 = children_of(std::process::id())
        .into_iter()
        .map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // Fields after the command's closing parenthesis start at field 3.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().collect())
                .unwrap_or_default();
            (11..=14)
                .filter_map(|i| fields.get(i)?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum();
    Duration::from_millis(ticks * 10)
}

/// A manager as the app makes one: the login shell's PATH from what `state` keeps.
fn app_manager(state: &Path) -> std::sync::Arc<ServerManager> {
    ServerManager::new(ManagerOptions {
        env: None,
        state_dir: Some(state.to_owned()),
        ..ManagerOptions::default()
    })
}

/// One run of Toolgate: time from creating the manager to every server ready, and the CPU
/// time the servers had used by then: all at once through `start_all`, or (`one_by_one`) each
/// waited for before the next starts, as a host without concurrent start-up would.
async fn toolgate_ready(
    state: &Path,
    configs: &[ServerConfig],
    one_by_one: bool,
) -> (Duration, Duration) {
    let started = Instant::now();
    let servers = app_manager(state);
    if one_by_one {
        let disabled: Vec<ServerConfig> = configs
            .iter()
            .cloned()
            .map(|mut c| {
                c.enabled = false;
                c
            })
            .collect();
        servers.start_all(&disabled).await;
        for c in configs {
            servers.start(&c.id).await;
        }
    } else {
        servers.start_all(configs).await;
    }
    let elapsed = started.elapsed();
    let cpu = servers_cpu();
    for s in servers.snapshot().await {
        assert_eq!(s.status, ServerStatus::Ready, "{}: {}", s.id, s.status);
    }
    servers.stop_all().await;
    (elapsed, cpu)
}

/// One run of a bare rmcp client: every server spawned and handshaken in a task of its own (the
/// `Auto` lifecycle, as both protocol eras need), its tools (and resources and prompts, when it
/// offers them) listed; time until the last is ready, and the servers' CPU time by then.
async fn bare_ready(configs: &[ServerConfig]) -> (Duration, Duration) {
    let started = Instant::now();
    let tasks: Vec<_> = configs
        .iter()
        .map(|config| {
            let Transport::Stdio { command, args, .. } = &config.transport else {
                panic!("stdio servers only");
            };
            let mut child = tokio::process::Command::new(command)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("spawn a server");
            tokio::spawn(async move {
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    panic!("no pipes");
                };
                let mode = ClientLifecycleMode::Auto {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    legacy_version: Some(ProtocolVersion::V_2025_11_25),
                };
                let client =
                    ().serve_with_lifecycle(AsyncRwTransport::new_client(stdout, stdin), mode)
                        .await
                        .expect("handshake");
                let capabilities = client
                    .peer_info()
                    .map(|i| i.capabilities.clone())
                    .unwrap_or_default();
                client.list_all_tools().await.expect("tools/list");
                if capabilities.resources.is_some() {
                    let _ = client.list_all_resources().await;
                }
                if capabilities.prompts.is_some() {
                    let _ = client.list_all_prompts().await;
                }
                (client, child)
            })
        })
        .collect();
    let mut running = Vec::new();
    for task in tasks {
        running.push(task.await.expect("a server's start"));
    }
    let elapsed = started.elapsed();
    let cpu = servers_cpu();
    for (client, mut child) in running {
        let _ = client.cancel().await;
        let _ = child.kill().await;
    }
    (elapsed, cpu)
}

#[tokio::main]
async fn main() {
    let state = toolgate_tests::temp_dir("bench-startup");
    // The first start ever asks the login shell (and keeps its answer); a later start reads it.
    let first = Instant::now();
    app_manager(&state).host_env().await;
    let shell = first.elapsed();
    let later = Instant::now();
    app_manager(&state).host_env().await;
    let kept = later.elapsed();

    let alone = [
        ("server-everything (node)", vec![everything_server("e")]),
        ("fault_server.py ok (python)", vec![fault_server("f", "ok")]),
        ("mcp-server-time (python, 2026-07-28)", vec![time("t")]),
    ];
    let mut rows = Vec::new();
    for (name, configs) in &alone {
        let mut runs = Vec::new();
        for _ in 0..RUNS {
            runs.push(toolgate_ready(&state, configs, false).await);
        }
        let (ready, cpu) = medians(&runs);
        rows.push((format!("{name}, alone, through Toolgate"), ready, cpu));
    }
    let mut ten = Vec::new();
    for i in 0..4 {
        ten.push(everything_server(&format!("e{i}")));
        ten.push(fault_server(&format!("f{i}"), "ok"));
    }
    ten.push(time("t0"));
    ten.push(time("t1"));
    let (mut ours, mut bare, mut serial) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        ours.push(toolgate_ready(&state, &ten, false).await);
        bare.push(bare_ready(&ten).await);
    }
    for _ in 0..RUNS {
        serial.push(toolgate_ready(&state, &ten, true).await);
    }
    let (together, together_cpu) = medians(&ours);
    let (baseline, baseline_cpu) = medians(&bare);
    let (one_by_one, serial_cpu) = medians(&serial);
    rows.push((
        "all 10 together through Toolgate (4 everything, 4 fault, 2 time)".to_owned(),
        together,
        together_cpu,
    ));
    rows.push((
        "the same 10 together, bare rmcp client".to_owned(),
        baseline,
        baseline_cpu,
    ));
    rows.push((
        "the same 10 through Toolgate, one after another".to_owned(),
        one_by_one,
        serial_cpu,
    ));

    println!("\nStart-up until ready (median of {RUNS} runs)\n");
    println!(
        "| servers | ready after | vs bare rmcp, 10 together | CPU the servers used until ready |"
    );
    println!("|---|---:|---:|---:|");
    for (name, ready, cpu) in &rows {
        println!(
            "| {name} | {:.0} ms | {:.2}x | {:.0} ms |",
            ms(*ready),
            ready.as_secs_f64() / baseline.as_secs_f64(),
            ms(*cpu)
        );
    }
    println!(
        "\nThe login shell's PATH: asked at the first start ever in {:.0} ms, read from what was \
         kept in {:.1} ms at later starts (included in every Toolgate row).",
        ms(shell),
        ms(kept)
    );
    println!(
        "Concurrent start-up is {:.1}x faster than one after another.",
        one_by_one.as_secs_f64() / together.as_secs_f64(),
    );
    let target = baseline.mul_f64(1.1) + Duration::from_millis(50);
    let met = together <= target;
    println!(
        "\nTarget: Toolgate ≤ 1.1x the bare rmcp client + 50 ms = {:.0} ms: {:.0} ms, {}",
        ms(target),
        ms(together),
        if met { "met" } else { "missed" }
    );
    summary(Summary {
        benchmark: "Start-up, 10 servers until ready",
        result: format!(
            "{:.0} ms together ({:.0} ms of CPU)",
            ms(together),
            ms(together_cpu)
        ),
        compared_with: format!("the same 10 by a bare rmcp client {:.0} ms", ms(baseline)),
        ratio: format!("{:.2}x", together.as_secs_f64() / baseline.as_secs_f64()),
        target: "≤ 1.1x + 50 ms",
        met,
    });
}

/// The median time and the median CPU time of some runs.
fn medians(runs: &[(Duration, Duration)]) -> (Duration, Duration) {
    (
        median(runs.iter().map(|r| r.0).collect()),
        median(runs.iter().map(|r| r.1).collect()),
    )
}
