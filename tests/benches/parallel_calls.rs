//! Parallel tool calls: a turn in which the model asks for five 1-second calls of
//! server-everything's `trigger-long-running-operation` at once, all approved, against a turn
//! with one such call. Approved calls run in parallel, so five should take about as long as one.
//!
//! Run: `cargo bench -p toolgate-tests --bench parallel_calls`. Prints a table; asserts nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolgate_agent::{Agent, Decision, Gate, TurnEvent};
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_tests::{everything_server, fixtures::anthropic::*, Scripted, ScriptedProvider};

const RUNS: usize = 3;

async fn turn_with_calls(servers: &Arc<ServerManager>, calls: usize) -> Duration {
    let blocks = (0..calls)
        .map(|i| {
            tool_use_block(
                &format!("toolu_{i}"),
                "trigger-long-running-operation",
                json!({"duration": 1, "steps": 1}),
            )
        })
        .collect();
    let script = ScriptedProvider::start(vec![
        Scripted::ok(message(blocks, "tool_use")),
        Scripted::ok(text("done")),
    ])
    .await;
    let provider = script.anthropic_client("k");
    let gate = Arc::new(Gate::default());
    let agent = Agent::new(servers.clone(), gate.clone());
    let on_event = move |event: TurnEvent| {
        if let TurnEvent::ApprovalRequested(p) = event {
            let gate = gate.clone();
            tokio::spawn(async move { gate.answer(&p.id, Decision::Approve) });
        }
    };
    let started = Instant::now();
    agent
        .run_turn(&provider, "m", &mut Vec::new(), "go", &on_event)
        .await
        .expect("turn");
    started.elapsed()
}

async fn median(servers: &Arc<ServerManager>, calls: usize) -> Duration {
    let mut times = Vec::new();
    for _ in 0..RUNS {
        times.push(turn_with_calls(servers, calls).await);
    }
    times.sort();
    times[RUNS / 2]
}

#[tokio::main]
async fn main() {
    let servers = ServerManager::new(ManagerOptions::default());
    servers.start_all(&[everything_server("everything")]).await;
    let one = median(&servers, 1).await;
    let five = median(&servers, 5).await;
    println!("\nA turn with 1-second tool calls, all approved (median of {RUNS})\n");
    println!("| calls in the turn | turn time | vs one call |");
    println!("|---:|---:|---:|");
    println!("| 1 | {:.0} ms | 1.00x |", one.as_secs_f64() * 1000.0);
    println!(
        "| 5 in parallel | {:.0} ms | {:.2}x |",
        five.as_secs_f64() * 1000.0,
        five.as_secs_f64() / one.as_secs_f64()
    );
    println!(
        "\nRun one after another, five calls would take about {:.0} ms.",
        5.0 * one.as_secs_f64() * 1000.0
    );
    servers.stop_all().await;
}
