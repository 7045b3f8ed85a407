//! Start-up benchmark: how long ten real servers take to be ready together, against the slowest
//! of them alone. Servers start concurrently, so the ratio should stay close to 1. Target: all ten
//! together within 1.1x the slowest alone, plus 50 ms.
//!
//! The login shell's PATH, which the app reads once when it starts, is read once here too, before
//! the timing, so the figures are the servers' own start-up. Each row also gives the CPU time the
//! servers had used when the last was ready (user + system, from `/proc/<pid>/stat`): when that is
//! more than the cores can give in the time the slowest takes alone, the servers cannot all be
//! ready together that fast, whatever the host does.
//!
//! Run: `cargo bench -p toolgate-tests --bench startup`. Prints a table; asserts only that every
//! server became ready.

use std::time::{Duration, Instant};

use toolgate_mcp::{HostEnv, ManagerOptions, ServerManager, ServerStatus};
use toolgate_settings::ServerConfig;
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

/// Median time from start to every server ready, and the median CPU time the servers had used by
/// then, over [`RUNS`] runs: all at once through `start_all`, or (`one_by_one`) each
/// waited for before the next starts, as a host without concurrent start-up would.
async fn median_ready(
    env: &HostEnv,
    configs: &[ServerConfig],
    one_by_one: bool,
) -> (Duration, Duration) {
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..RUNS {
        let servers = ServerManager::new(ManagerOptions {
            env: Some(env.clone()),
            ..ManagerOptions::default()
        });
        let started = Instant::now();
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
        cpu.push(servers_cpu());
        for s in servers.snapshot().await {
            assert_eq!(s.status, ServerStatus::Ready, "{}: {}", s.id, s.status);
        }
        servers.stop_all().await;
        times.push(elapsed);
    }
    (median(times), median(cpu))
}

#[tokio::main]
async fn main() {
    let started = Instant::now();
    let env = HostEnv::detect().await;
    let shell = started.elapsed();
    let alone = [
        ("server-everything (node)", vec![everything_server("e")]),
        ("fault_server.py ok (python)", vec![fault_server("f", "ok")]),
        ("mcp-server-time (python, 2026-07-28)", vec![time("t")]),
    ];
    let mut rows = Vec::new();
    for (name, configs) in &alone {
        let (ready, cpu) = median_ready(&env, configs, false).await;
        rows.push((format!("{name}, alone"), ready, cpu));
    }
    let slowest = rows.iter().map(|r| r.1).max().unwrap_or_default();
    let mut ten = Vec::new();
    for i in 0..4 {
        ten.push(everything_server(&format!("e{i}")));
        ten.push(fault_server(&format!("f{i}"), "ok"));
    }
    ten.push(time("t0"));
    ten.push(time("t1"));
    let (together, together_cpu) = median_ready(&env, &ten, false).await;
    let (serial, serial_cpu) = median_ready(&env, &ten, true).await;
    rows.push((
        "all 10 together (4 everything, 4 fault, 2 time)".to_owned(),
        together,
        together_cpu,
    ));
    rows.push((
        "the same 10, one after another".to_owned(),
        serial,
        serial_cpu,
    ));

    println!("\nStart-up until ready (median of {RUNS} runs)\n");
    println!("| servers | ready after | vs slowest alone | CPU the servers used until ready |");
    println!("|---|---:|---:|---:|");
    for (name, ready, cpu) in &rows {
        println!(
            "| {name} | {:.0} ms | {:.2}x | {:.0} ms |",
            ms(*ready),
            ready.as_secs_f64() / slowest.as_secs_f64(),
            ms(*cpu)
        );
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "\nReading the login shell's PATH (once per app start, not counted above) took {:.0} ms.",
        ms(shell)
    );
    println!(
        "Concurrent start-up is {:.1}x faster than one after another. The ten servers need \
         {:.0} ms of CPU to get ready; {cores} cores give at most {:.0} ms of CPU in the time the \
         slowest takes alone.",
        serial.as_secs_f64() / together.as_secs_f64(),
        ms(together_cpu),
        ms(slowest) * cores as f64,
    );
    let target = slowest.mul_f64(1.1) + Duration::from_millis(50);
    let met = together <= target;
    println!(
        "\nTarget: all 10 together ≤ 1.1x the slowest alone + 50 ms = {:.0} ms: {:.0} ms, {}",
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
        compared_with: format!("slowest alone {:.0} ms", ms(slowest)),
        ratio: format!("{:.2}x", together.as_secs_f64() / slowest.as_secs_f64()),
        target: "≤ 1.1x + 50 ms",
        met,
    });
}
