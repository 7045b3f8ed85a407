//! Start-up benchmark: how long ten real servers take to be ready together, against the slowest
//! of them alone. Servers start concurrently, so the ratio should stay close to 1.
//!
//! Run: `cargo bench -p toolgate-tests --bench startup`. Prints a table; asserts nothing.

use std::time::{Duration, Instant};

use toolgate_mcp::{ManagerOptions, ServerManager, ServerStatus};
use toolgate_settings::ServerConfig;
use toolgate_tests::{everything_server, fault_server, python_server_bin};

const RUNS: usize = 5;

fn time(id: &str) -> ServerConfig {
    ServerConfig::stdio(
        id,
        python_server_bin("mcp-server-time").to_string_lossy(),
        ["--local-timezone", "UTC"],
    )
}

/// Median time from start to every server ready, over [`RUNS`] runs: all at once through
/// `start_all`, or (`one_by_one`) each waited for before the next starts, as a host without
/// concurrent start-up would.
async fn median_ready(configs: &[ServerConfig], one_by_one: bool) -> Duration {
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let servers = ServerManager::new(ManagerOptions::default());
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
        for s in servers.snapshot().await {
            assert_eq!(s.status, ServerStatus::Ready, "{}: {}", s.id, s.status);
        }
        servers.stop_all().await;
        times.push(elapsed);
    }
    times.sort();
    times[RUNS / 2]
}

#[tokio::main]
async fn main() {
    let alone = [
        ("server-everything (node)", vec![everything_server("e")]),
        ("fault_server.py ok (python)", vec![fault_server("f", "ok")]),
        ("mcp-server-time (python, 2026-07-28)", vec![time("t")]),
    ];
    let mut rows = Vec::new();
    for (name, configs) in &alone {
        rows.push((name.to_string(), median_ready(configs, false).await));
    }
    let slowest = rows.iter().map(|(_, d)| *d).max().unwrap_or_default();
    let mut ten = Vec::new();
    for i in 0..4 {
        ten.push(everything_server(&format!("e{i}")));
        ten.push(fault_server(&format!("f{i}"), "ok"));
    }
    ten.push(time("t0"));
    ten.push(time("t1"));
    let together = median_ready(&ten, false).await;
    let serial = median_ready(&ten, true).await;

    println!("\nStart-up until ready (median of {RUNS} runs)\n");
    println!("| servers | ready after | vs slowest alone |");
    println!("|---|---:|---:|");
    for (name, d) in &rows {
        println!(
            "| {name}, alone | {:.0} ms | {:.2}x |",
            d.as_secs_f64() * 1000.0,
            d.as_secs_f64() / slowest.as_secs_f64()
        );
    }
    println!(
        "| all 10 together (4 everything, 4 fault, 2 time) | {:.0} ms | {:.2}x |",
        together.as_secs_f64() * 1000.0,
        together.as_secs_f64() / slowest.as_secs_f64()
    );
    println!(
        "| the same 10, one after another | {:.0} ms | {:.2}x |",
        serial.as_secs_f64() * 1000.0,
        serial.as_secs_f64() / slowest.as_secs_f64()
    );
    println!(
        "\nConcurrent start-up is {:.1}x faster than one after another. On {} cores the ten \
         processes compete for CPU, so together cannot match the slowest alone.",
        serial.as_secs_f64() / together.as_secs_f64(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
}
