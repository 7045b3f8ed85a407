//! Parallel tool calls: a turn in which the model asks for 5, then 32, 1-second calls of
//! server-everything's `trigger-long-running-operation` at once, all approved at the gate, against
//! a turn with one such call. The model is the scripted provider (a reply with the calls, then a
//! closing text). Approved calls run in parallel, so five should take about as long as one.
//! Target: the turn with 5 calls in 1.05 s or less.
//!
//! Run: `cargo bench -p toolgate-tests --bench parallel_calls`. Prints a table; asserts only that
//! every call succeeded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolgate_agent::{Agent, AgentParts, Decision, Gate, TurnEvent};
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_tests::bench::{median, ms, summary, Summary};
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
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
    });
    let succeeded = Arc::new(AtomicUsize::new(0));
    let counted = succeeded.clone();
    let on_event = move |event: TurnEvent| match event {
        TurnEvent::ApprovalRequested(p) => {
            let gate = gate.clone();
            tokio::spawn(async move { gate.answer(&p.id, Decision::Approve) });
        }
        TurnEvent::ToolFinished {
            is_error: false, ..
        } => {
            counted.fetch_add(1, Ordering::Relaxed);
        }
        _ => {}
    };
    let started = Instant::now();
    agent
        .run_turn(&provider, "m", &mut Vec::new(), "go", &on_event)
        .await
        .expect("turn");
    let elapsed = started.elapsed();
    assert_eq!(
        succeeded.load(Ordering::Relaxed),
        calls,
        "every call succeeded"
    );
    elapsed
}

async fn median_turn(servers: &Arc<ServerManager>, calls: usize) -> Duration {
    let mut times = Vec::new();
    for _ in 0..RUNS {
        times.push(turn_with_calls(servers, calls).await);
    }
    median(times)
}

#[tokio::main]
async fn main() {
    let servers = ServerManager::new(ManagerOptions::default());
    servers.start_all(&[everything_server("everything")]).await;
    let one = median_turn(&servers, 1).await;
    let five = median_turn(&servers, 5).await;
    let many = median_turn(&servers, 32).await;
    servers.stop_all().await;
    println!("\nA turn with 1-second tool calls, all approved (median of {RUNS})\n");
    println!("| calls in the turn | turn time | vs one call | one after another would take |");
    println!("|---:|---:|---:|---:|");
    for (calls, time) in [(1, one), (5, five), (32, many)] {
        println!(
            "| {calls} | {:.0} ms | {:.2}x | {:.0} ms |",
            ms(time),
            time.as_secs_f64() / one.as_secs_f64(),
            calls as f64 * ms(one)
        );
    }
    let target = Duration::from_millis(1050);
    println!(
        "\nTarget: 5 calls ≤ 1.05 s: {:.0} ms, {}",
        ms(five),
        if five <= target { "met" } else { "missed" }
    );
    summary(Summary {
        benchmark: "Parallel tool calls, a turn with 5 approved 1-s calls",
        result: format!("{:.0} ms (32 calls: {:.0} ms)", ms(five), ms(many)),
        compared_with: format!("1 call {:.0} ms", ms(one)),
        ratio: format!("{:.2}x", five.as_secs_f64() / one.as_secs_f64()),
        target: "≤ 1.05 s",
        met: five <= target,
    });
}
