//! Per-call overhead: 1,000 sequential `echo` calls, then 1,000 with 32 in flight, to an instant
//! MCP server over stdio (`src/bin/bench-echo-server.rs`, the same binary for every client),
//! through:
//!
//! - Toolgate's full path: `Agent::gated_call_alone`, the path a model's call takes in a turn —
//!   the catalog of the ready servers resolves the name, `toolgate_policy::decide` finds the
//!   allow rule, the decision is written to the audit log in a real SQLite file before the call,
//!   `ServerManager::call_tool_with` runs it, and the audit entry is completed;
//! - the same path with the audit log streamed over OTLP (`toolgate-telemetry`'s exporter on the
//!   same history, sending to a collector in this process that acknowledges at once), for the
//!   export's cost per call (issue 28's target: at most +10 µs);
//! - the same path with the audit log in memory, the same path with no audit log at all (not a
//!   configuration any host has), and `ServerManager::call_tool_with` alone (to show where the
//!   time goes);
//! - the `rmcp` crate used directly (`serve_client` over the child's pipes, `call_tool`);
//! - the official TypeScript SDK's client (`ts_client.cjs`, run by node).
//!
//! Each client gets a fresh server and [`WARM_UP`] calls before the timing; the clients take turns
//! for [`ROUNDS`] rounds and the median round is reported, so load from other processes spreads
//! over all of them. Targets (issue 17): Toolgate's full path at most 1.3x `rmcp` used directly
//! one call at a time (about 0.75x the TypeScript client), and at most 2x `rmcp` with 32 in
//! flight (and at most 0.5x the TypeScript client).
//!
//! Besides the wall time, the table gives this process's CPU time a call with 32 in flight (all
//! its threads: the runtime's workers, the history's writer, the benchmark's own): on a machine
//! of two cores shared with the server, that is what bounds the calls in flight.
//!
//! Run: `cargo bench -p toolgate-tests --bench per_call`. Prints a table; asserts only that every
//! call succeeded, was allowed by the rule and was audited.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};
use toolgate_agent::{
    Agent, AgentParts, Decision, Gate, Lasting, MemoryPolicy, Reach, TurnEvent, TurnOptions,
};
use toolgate_history::{AuditFilter, History};
use toolgate_llm::{Message, ToolCall};
use toolgate_mcp::{CallOptions, ManagerOptions, ServerManager};
use toolgate_settings::ServerConfig;
use toolgate_tests::bench::{median, ms, summary, Summary};
use toolgate_tests::example_servers_dir;

const CALLS: usize = 1_000;
const IN_FLIGHT: usize = 32;
const WARM_UP: usize = 200;
const ROUNDS: usize = 5;

#[derive(Debug, Clone, Copy)]
struct Times {
    sequential: Duration,
    in_flight: Duration,
    /// The CPU time this process spent on the calls with 32 in flight, all its threads together
    /// (the runtime's workers, the history's writer thread, the bench's own), the history's
    /// writes for them committed too; `None` for the TypeScript client, which runs in node.
    in_flight_cpu: Option<Duration>,
}

/// The CPU time this process has used so far, all threads together.
#[cfg(unix)]
fn cpu_time() -> Option<Duration> {
    let spent = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    let nanos = u64::try_from(spent.tv_nsec).ok()?;
    Some(Duration::from_secs(u64::try_from(spent.tv_sec).ok()?) + Duration::from_nanos(nanos))
}

#[cfg(not(unix))]
fn cpu_time() -> Option<Duration> {
    None
}

fn echo_server() -> &'static str {
    env!("CARGO_BIN_EXE_bench-echo-server")
}

fn text(i: usize) -> String {
    format!("call {i}")
}

/// Warms up, then times [`CALLS`] calls one after another and [`CALLS`] with [`IN_FLIGHT`] at a
/// time (as a turn runs a round's calls: futures polled together in one task). `drain` waits
/// until the writes the calls left (the audit's) are committed: the CPU they cost counts with
/// the calls that made them, but a call's time ends when it returns, as the caller sees it.
async fn time_calls<F, Fut>(call: F, drain: impl Fn()) -> Times
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = ()>,
{
    for i in 0..WARM_UP {
        call(i).await;
    }
    let started = Instant::now();
    for i in 0..CALLS {
        call(i).await;
    }
    let sequential = started.elapsed();
    drain();
    let (started, cpu) = (Instant::now(), cpu_time());
    futures::stream::iter(0..CALLS)
        .map(&call)
        .buffer_unordered(IN_FLIGHT)
        .for_each(|()| async {})
        .await;
    let in_flight = started.elapsed();
    drain();
    Times {
        sequential,
        in_flight,
        in_flight_cpu: cpu.zip(cpu_time()).map(|(before, after)| after - before),
    }
}

async fn echo_manager() -> Arc<ServerManager> {
    let servers = ServerManager::new(ManagerOptions::default());
    let config = ServerConfig::stdio("bench", echo_server(), Vec::<String>::new());
    servers.start_all(&[config]).await;
    servers
}

/// A collector that acknowledges every OTLP/HTTP request at once, counting them; its base URL.
async fn collector() -> (String, Arc<AtomicUsize>) {
    use axum::routing::post;
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let app = axum::Router::new().route(
        "/v1/{signal}",
        post(move |_body: axum::body::Bytes| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), received)
}

/// Where the full path writes its audit log.
enum AuditTo {
    /// A SQLite file, as the app does.
    File(PathBuf),
    /// A SQLite database in memory.
    Memory,
    /// Nowhere: not a configuration the app or the CLI has (every host's agent audits); for
    /// what the audit costs beside the rest of the path.
    Nowhere,
}

/// Toolgate's full path, the audit log written as `audit` says; with `collector`, the audit
/// streamed to it while the calls run.
async fn toolgate(audit: AuditTo, collector: Option<&str>) -> Times {
    let servers = echo_manager().await;
    let history = match &audit {
        AuditTo::File(path) => History::open(path),
        AuditTo::Memory | AuditTo::Nowhere => History::open_in_memory(),
    };
    let history = Arc::new(history.expect("history"));
    let conversation = history
        .create("per-call benchmark")
        .expect("conversation")
        .id;
    let exporter = collector.map(|endpoint| {
        let otlp = toolgate_settings::OtlpSettings {
            endpoint: Some(endpoint.to_owned()),
            ..Default::default()
        };
        match toolgate_telemetry::resolve(None, Some(&otlp), &|_| None) {
            toolgate_telemetry::Resolution::On(config) => toolgate_telemetry::Exporter::start(
                history.clone(),
                config,
                Box::new(|value: &str| Ok(value.to_owned())),
            ),
            other => panic!("export is not on: {other:?}"),
        }
    });
    let gate = Arc::new(Gate::default());
    let agent = Agent::new(AgentParts {
        policy: Arc::new(MemoryPolicy::default()),
        history: (!matches!(audit, AuditTo::Nowhere)).then(|| history.clone()),
        conversation: Some(conversation.clone()),
        ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
    });
    let options = TurnOptions::default();
    // The first call is asked at the gate and answered "always allow this tool", which makes the
    // rule the app would make; every later call is allowed by it without asking.
    let asked = AtomicUsize::new(0);
    let on_event = |event: TurnEvent| {
        if let TurnEvent::ApprovalRequested(pending) = event {
            asked.fetch_add(1, Ordering::Relaxed);
            let always = Decision::Allow {
                reach: Reach::Tool,
                lasting: Lasting::Always,
            };
            gate.answer(&pending.id, always).expect("answer");
        }
    };
    let call = |i: usize| {
        let (agent, options, on_event) = (&agent, &options, &on_event);
        async move {
            let call = ToolCall {
                id: format!("toolu_{i}"),
                name: "echo".into(),
                arguments: json!({"text": text(i)}),
            };
            let result = agent
                .gated_call_alone(&call, options, on_event)
                .await
                .expect("catalog");
            match result {
                Message::ToolResult {
                    is_error: false, ..
                } => {}
                other => panic!("the call failed: {other:?}"),
            }
        }
    };
    call(0).await;
    let times = time_calls(call, || history.flush()).await;
    assert_eq!(
        asked.load(Ordering::Relaxed),
        1,
        "only the first call was asked"
    );
    let audited = history
        .audit(&AuditFilter {
            conversation_id: Some(conversation),
            ..AuditFilter::default()
        })
        .expect("audit log");
    let expected = match audit {
        AuditTo::Nowhere => 0,
        _ => 1 + WARM_UP + 2 * CALLS,
    };
    assert_eq!(audited.len(), expected, "every call audited");
    if let Some(exporter) = exporter {
        let destination = exporter.config().destination().to_owned();
        tokio::task::spawn_blocking(move || exporter.stop(Duration::from_secs(10)))
            .await
            .expect("stopped");
        let backlog = history.export_backlog(&destination).expect("cursor");
        assert_eq!(backlog.map(|b| b.waiting), Some(0), "every entry exported");
    }
    servers.stop_all().await;
    times
}

/// `ServerManager::call_tool_with` alone: no catalog, no rules, no audit.
async fn manager_only() -> Times {
    let servers = echo_manager().await;
    let times = time_calls(
        |i| {
            let servers = &servers;
            async move {
                let output = servers
                    .call_tool_with(
                        "bench",
                        "echo",
                        json!({"text": text(i)}),
                        CallOptions::default(),
                    )
                    .await
                    .expect("call");
                assert!(!output.is_error);
            }
        },
        || {},
    )
    .await;
    servers.stop_all().await;
    times
}

/// The rmcp crate on its own, over the child's stdin and stdout.
async fn raw_rmcp() -> Times {
    let mut child = tokio::process::Command::new(echo_server())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the echo server");
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        panic!("no pipes to the echo server");
    };
    let client = rmcp::service::serve_client((), (stdout, stdin))
        .await
        .expect("handshake");
    client.list_all_tools().await.expect("tools/list");
    let peer = client.peer();
    let times = time_calls(
        |i| async move {
            let mut arguments = serde_json::Map::new();
            arguments.insert("text".into(), Value::String(text(i)));
            let result = peer
                .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
                .await
                .expect("call");
            assert_ne!(result.is_error, Some(true));
        },
        || {},
    )
    .await;
    let _ = client.cancel().await;
    let _ = child.wait().await;
    times
}

/// The TypeScript SDK's client, in node; returns its times and the SDK's version.
async fn typescript() -> (Times, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/ts_client.cjs");
    let output = tokio::process::Command::new("node")
        .arg(script)
        .arg(example_servers_dir())
        .args([CALLS, IN_FLIGHT, WARM_UP].map(|n| n.to_string()))
        .arg("--")
        .arg(echo_server())
        .stderr(Stdio::inherit())
        .output()
        .await
        .expect("run node");
    assert!(
        output.status.success(),
        "ts_client.cjs failed (is @modelcontextprotocol/sdk installed in mcp-servers? run the \
         README's set-up)"
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON from ts_client.cjs");
    let millis = |key: &str| Duration::from_secs_f64(report[key].as_f64().expect(key) / 1000.0);
    let times = Times {
        sequential: millis("sequential_ms"),
        in_flight: millis("in_flight_ms"),
        in_flight_cpu: None,
    };
    (times, report["sdk"].as_str().unwrap_or("?").to_owned())
}

#[tokio::main]
async fn main() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("per-call-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut sdk = String::new();
    let mut rounds: [Vec<Times>; 7] = Default::default();
    let (endpoint, exported) = collector().await;
    for round in 0..ROUNDS {
        eprintln!("per_call: round {} of {ROUNDS}", round + 1);
        let file = dir.join(format!("history-{round}.sqlite3"));
        rounds[0].push(toolgate(AuditTo::File(file), None).await);
        let file = dir.join(format!("history-{round}-exported.sqlite3"));
        rounds[5].push(toolgate(AuditTo::File(file), Some(&endpoint)).await);
        rounds[1].push(toolgate(AuditTo::Memory, None).await);
        rounds[6].push(toolgate(AuditTo::Nowhere, None).await);
        rounds[2].push(manager_only().await);
        rounds[3].push(raw_rmcp().await);
        let (times, version) = typescript().await;
        rounds[4].push(times);
        sdk = version;
    }
    let _ = std::fs::remove_dir_all(&dir);

    let names = [
        "Toolgate, full path (catalog, allow rule, audit in a SQLite file)".to_owned(),
        "Toolgate, same path, audit log in memory".to_owned(),
        "Toolgate, `ServerManager::call_tool_with` only".to_owned(),
        "rmcp 3.11.0 used directly".to_owned(),
        format!("TypeScript SDK {sdk} client (node {})", node_version()),
        "Toolgate, full path, audit also streamed over OTLP".to_owned(),
        "Toolgate, same path, no audit log (for what the audit costs)".to_owned(),
    ];
    assert!(
        exported.load(Ordering::Relaxed) > 0,
        "the collector was sent the audit"
    );
    let medians: Vec<Times> = rounds
        .iter()
        .map(|r| Times {
            sequential: median(r.iter().map(|t| t.sequential).collect()),
            in_flight: median(r.iter().map(|t| t.in_flight).collect()),
            in_flight_cpu: r
                .iter()
                .map(|t| t.in_flight_cpu)
                .collect::<Option<Vec<_>>>()
                .map(median),
        })
        .collect();
    let ts = medians[4];
    let per_call = |d: Duration| d.as_secs_f64() * 1e6 / CALLS as f64;
    println!(
        "\nPer-call overhead: {CALLS} echo calls to an instant stdio server \
         (median of {ROUNDS} rounds, {WARM_UP} warm-up calls each)\n"
    );
    println!(
        "| client | {CALLS} sequential | per call | vs TypeScript | {CALLS}, {IN_FLIGHT} in flight | per call | vs TypeScript | CPU a call, {IN_FLIGHT} in flight |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, t) in names.iter().zip(&medians) {
        println!(
            "| {name} | {:.0} ms | {:.0} µs | {:.2}x | {:.0} ms | {:.0} µs | {:.2}x | {} |",
            ms(t.sequential),
            per_call(t.sequential),
            t.sequential.as_secs_f64() / ts.sequential.as_secs_f64(),
            ms(t.in_flight),
            per_call(t.in_flight),
            t.in_flight.as_secs_f64() / ts.in_flight.as_secs_f64(),
            t.in_flight_cpu
                .map_or("–".to_owned(), |cpu| format!("{:.0} µs", per_call(cpu))),
        );
    }
    let (full, rmcp, streamed) = (medians[0], medians[3], medians[5]);
    for (workload, off, on) in [
        ("sequential", full.sequential, streamed.sequential),
        ("32 in flight", full.in_flight, streamed.in_flight),
    ] {
        let added = per_call(on) - per_call(off);
        let met = added <= 10.0;
        println!(
            "\nTarget, {workload}: the audit streamed over OTLP adds at most 10 µs a call: \
             {added:+.1} µs ({:.2}x), {}",
            on.as_secs_f64() / off.as_secs_f64(),
            if met { "met" } else { "missed" }
        );
        summary(Summary {
            benchmark: &format!("Audit streamed over OTLP, per call, {CALLS} calls, {workload}"),
            result: format!("{:.0} µs a call ({added:+.1} µs)", per_call(on)),
            compared_with: format!("export off {:.0} µs", per_call(off)),
            ratio: format!("{:.2}x", on.as_secs_f64() / off.as_secs_f64()),
            target: "≤ +10 µs a call",
            met,
        });
    }
    for (workload, ours, direct, theirs, limit, target) in [
        (
            "sequential",
            full.sequential,
            rmcp.sequential,
            ts.sequential,
            1.3,
            "≤ 1.3x rmcp (≈ 0.75x TS SDK)",
        ),
        (
            "32 in flight",
            full.in_flight,
            rmcp.in_flight,
            ts.in_flight,
            2.0,
            "≤ 2x rmcp and ≤ 0.5x TS SDK",
        ),
    ] {
        let ratio = ours.as_secs_f64() / direct.as_secs_f64();
        let vs_ts = ours.as_secs_f64() / theirs.as_secs_f64();
        // Sequential: 1.3x rmcp ("and so about 0.75x" the TypeScript client follows from the
        // figures the issue measured, not a second target); in flight: both bounds.
        let met = ratio <= limit && (limit < 1.5 || vs_ts <= 0.5);
        println!(
            "\nTarget, {workload}: Toolgate's full path {target}: {ratio:.2}x rmcp, {vs_ts:.2}x the \
             TypeScript SDK, {}",
            if met { "met" } else { "missed" }
        );
        summary(Summary {
            benchmark: &format!(
                "Full host path per call (catalog, allow rule, audit in SQLite), {CALLS} calls, {workload}"
            ),
            result: format!(
                "{:.0} µs a call ({vs_ts:.2}x TS SDK's {:.0} µs)",
                per_call(ours),
                per_call(theirs)
            ),
            compared_with: format!("rmcp used directly {:.0} µs", per_call(direct)),
            ratio: format!("{ratio:.2}x"),
            target,
            met,
        });
    }
}

fn node_version() -> String {
    std::process::Command::new("node")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_owned())
        .unwrap_or_default()
}
