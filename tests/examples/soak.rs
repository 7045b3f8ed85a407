//! The soak test: the real host core under a long, hostile session. Run by `scripts/soak.sh`,
//! not by CI (it takes minutes).
//!
//! Ten servers (eight `fault_server.py`, two server-everything) run under one `ServerManager`.
//! `TURNS` turns (default 1,000) go through `Agent::run_turn_with` against the scripted provider,
//! each asking for one to four calls at once: mostly echoes, some slow calls, and at random a call
//! that crashes its server, one that hangs until its timeout, one to a tool that does not exist,
//! and calls that need the user's answer (approved or denied at random). Some turns are stopped
//! part-way, as a user pressing Stop would. Every ten turns a new conversation starts.
//!
//! At the end it checks, and prints:
//! - no server process is left after `stop_all` (by the tag in their environment);
//! - every tool call that reached a fault server (its own log says `recv tools/call`) has an
//!   allowed decision in the audit log;
//! - the history opens afresh and every conversation in it is valid to continue (every call has
//!   exactly one result, after it);
//! - the process's memory (VmRSS) grew by at most 10% from turn 100 to the end.
//!
//! Usage: `cargo run -p toolgate-tests --example soak [--release] -- [TURNS] [SEED]`.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use toolgate_agent::{
    Agent, AgentParts, Decision, Gate, HistoryRecorder, MemoryPolicy, TurnEvent, TurnOptions,
};
use toolgate_catalog::CatalogSettings;
use toolgate_history::{AuditDecision, AuditFilter, History};
use toolgate_llm::Message;
use toolgate_mcp::{ManagerOptions, ServerManager, ServerStatus};
use toolgate_policy::{Effect, PolicySettings, Rule, Scope, Target};
use toolgate_settings::{ServerConfig, Transport};
use toolgate_tests::fixtures::anthropic::{message, text, tool_use_block};
use toolgate_tests::{
    everything_server, fault_server, processes_with, temp_dir, ProcField, Scripted,
    ScriptedProvider,
};

const FAULT_SERVERS: usize = 8;
/// Turns asked of this server's tools need the user's answer: no rule allows them.
const ASKING_SERVER: &str = "everything1";

/// xorshift64*: deterministic for a seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn tagged(mut config: ServerConfig, tag: &str) -> ServerConfig {
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("TOOLGATE_SOAK_TAG".into(), tag.to_owned());
    }
    config
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn allow_server(id: &str) -> Rule {
    Rule {
        id: format!("allow-{id}"),
        effect: Effect::Allow,
        scope: Scope::Always,
        target: Target::Server {
            server_id: id.to_owned(),
        },
        conditions: Vec::new(),
        bound_to: None,
        created_at: 0,
        expires_at: None,
        note: None,
        client: None,
        managed: false,
    }
}

/// One call the scripted model will ask for: (server, tool, arguments).
fn pick_call(rng: &mut Rng, ready: &[String]) -> (String, String, Value) {
    let server = ready[rng.below(ready.len() as u64) as usize].clone();
    if server.starts_with("everything") {
        return (server, "echo".into(), json!({"message": "soak"}));
    }
    let roll = rng.below(1000);
    let (tool, arguments) = match roll {
        0..=14 => ("crash", json!({})),
        15..=22 => ("hang", json!({})),
        23..=99 => ("slow", json!({"seconds": 0.05})),
        _ => ("echo", json!({"text": format!("call {roll}")})),
    };
    (server, tool.into(), arguments)
}

/// Whether a stored conversation can be continued: every call has one result, after it, and
/// every result answers a call.
fn valid(messages: &[Message]) -> Result<(), String> {
    let mut open: HashMap<String, usize> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        match m {
            Message::User { .. } => {
                if let Some(id) = open.keys().next() {
                    return Err(format!("message {i}: call {id} has no result before it"));
                }
            }
            Message::Assistant { tool_calls, .. } => {
                if let Some(id) = open.keys().next() {
                    return Err(format!("message {i}: call {id} has no result before it"));
                }
                for call in tool_calls {
                    if open.insert(call.id.clone(), i).is_some() {
                        return Err(format!("message {i}: call id {} twice", call.id));
                    }
                }
            }
            Message::ToolResult { call_id, .. } => {
                if open.remove(call_id).is_none() {
                    return Err(format!("message {i}: a result for no call ({call_id})"));
                }
            }
        }
    }
    match open.keys().next() {
        Some(id) => Err(format!("call {id} never got a result")),
        None => Ok(()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let turns: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let seed: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| u64::from(std::process::id()) | 1);
    let mut rng = Rng(seed.max(1));
    let tag = format!("soak-{}", std::process::id());
    let dir = temp_dir(&tag);
    let logs = dir.join("logs");
    println!(
        "soak: {turns} turns, seed {seed}, data in {}",
        dir.display()
    );

    let mut configs = Vec::new();
    for i in 0..FAULT_SERVERS {
        let mut config = tagged(fault_server(&format!("fault{i}"), "ok"), &tag);
        config.call_timeout_secs = 1;
        configs.push(config);
    }
    for i in 0..2 {
        configs.push(tagged(everything_server(&format!("everything{i}")), &tag));
    }
    let servers = ServerManager::new(ManagerOptions {
        log_dir: Some(logs.clone()),
        state_dir: Some(dir.join("state")),
        restart_delay: Duration::from_millis(200),
        stop_grace: Duration::from_millis(500),
        ..ManagerOptions::default()
    });
    servers.start_all(&configs).await;

    let mut policy = PolicySettings::default();
    for config in &configs {
        if config.id != ASKING_SERVER {
            policy.add_rule(allow_server(&config.id)).expect("rule");
        }
    }
    let policy = Arc::new(MemoryPolicy::new(policy));
    let history = Arc::new(History::open(&dir.join("history.sqlite3")).expect("history"));
    let script = ScriptedProvider::start(Vec::new()).await;
    let provider = script.anthropic_client("sk-soak");
    let gate = Arc::new(Gate::default());

    let started = Instant::now();
    let questions = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut rss_at_100 = 0;
    let mut counts: HashMap<&'static str, usize> = HashMap::new();
    let mut conversation = String::new();
    let mut messages: Vec<Message> = Vec::new();
    for turn in 0..turns {
        if turn % 10 == 0 {
            conversation = history
                .create(&format!("Soak {turn}"))
                .expect("conversation")
                .id;
            messages.clear();
        }
        // A server that crashed too often in a row stays failed until restarted by hand.
        let snapshot = servers.snapshot().await;
        for s in &snapshot {
            if matches!(s.status, ServerStatus::Failed { .. }) {
                *counts.entry("restarted by hand").or_default() += 1;
                let _ = servers.restart(&s.id).await;
            }
        }
        let snapshot = servers.snapshot().await;
        let ready: Vec<String> = snapshot
            .iter()
            .filter(|s| s.status == ServerStatus::Ready)
            .map(|s| s.id.clone())
            .collect();
        let catalog =
            toolgate_agent::catalog_of(&snapshot, &CatalogSettings::default()).expect("catalog");
        let mut blocks = Vec::new();
        if !ready.is_empty() {
            for i in 0..=rng.below(4) {
                let (server, tool, arguments) = pick_call(&mut rng, &ready);
                let name = catalog
                    .entries_for_server(&server)
                    .find(|e| e.tool.name == tool)
                    .map_or_else(|| "no_such_tool".to_owned(), |e| e.model_name.clone());
                *counts
                    .entry(match tool.as_str() {
                        "crash" => "calls that crash their server",
                        "hang" => "calls that hang until their timeout",
                        "slow" => "slow calls",
                        _ => "echo calls",
                    })
                    .or_default() += 1;
                blocks.push(tool_use_block(&format!("t{turn}_{i}"), &name, arguments));
            }
        }
        if rng.chance(2) {
            blocks.push(tool_use_block(
                &format!("t{turn}_x"),
                "no_such_tool",
                json!({}),
            ));
        }
        script.forget_received();
        script.push([
            Scripted::ok(message(blocks, "tool_use")),
            Scripted::ok(text("done")),
        ]);

        let agent = Agent::new(AgentParts {
            policy: policy.clone(),
            history: Some(history.clone()),
            conversation: Some(conversation.clone()),
            recorder: Some(Arc::new(HistoryRecorder::new(
                history.clone(),
                conversation.clone(),
            ))),
            ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
        });
        let options = TurnOptions {
            cancel: CancellationToken::new(),
            approval_timeout: Duration::from_secs(5),
            retries: 0,
            ..TurnOptions::default()
        };
        if rng.chance(4) {
            let cancel = options.cancel.clone();
            let after = Duration::from_millis(rng.below(60));
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                cancel.cancel();
            });
        }
        let approve = rng.chance(70);
        let answering = gate.clone();
        let asked = questions.clone();
        let on_event = move |event: TurnEvent| {
            if let TurnEvent::ApprovalRequested(pending) = event {
                asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let gate = answering.clone();
                tokio::spawn(async move {
                    let decision = if approve {
                        Decision::Approve
                    } else {
                        Decision::Deny {
                            reason: Some("soak".into()),
                        }
                    };
                    let _ = gate.answer(&pending.id, decision);
                });
            }
        };
        let outcome = agent
            .run_turn_with(&provider, "m", &mut messages, "go", &options, &on_event)
            .await;
        *counts
            .entry(match outcome {
                Ok(_) => "turns finished",
                Err(toolgate_agent::AgentError::Cancelled) => "turns stopped",
                Err(_) => "turns failed",
            })
            .or_default() += 1;
        if turn + 1 == 100.min(turns) {
            rss_at_100 = rss_kib();
        }
        if (turn + 1) % 100 == 0 {
            println!(
                "soak: {} turns in {:.0} s, VmRSS {} KiB",
                turn + 1,
                started.elapsed().as_secs_f64(),
                rss_kib()
            );
        }
    }
    let rss_end = rss_kib();
    servers.stop_all().await;

    let mut failures = Vec::new();

    // 1. No orphan process.
    let left =
        toolgate_tests::wait_until_none(10, || processes_with(&tag, ProcField::Environ)).await;
    if !left.is_empty() {
        failures.push(format!("server processes left after stop_all: {left:?}"));
    }

    // 2. Every call that reached a fault server has an allowed decision in the audit log.
    let audit = history.audit(&AuditFilter::default()).expect("audit");
    let mut allowed: HashMap<String, usize> = HashMap::new();
    for row in &audit {
        if row.entry.decision == AuditDecision::Allowed {
            *allowed.entry(row.entry.server_id.clone()).or_default() += 1;
        }
    }
    let mut received_total = 0;
    for i in 0..FAULT_SERVERS {
        let id = format!("fault{i}");
        let received: usize = ["log.1", "log"]
            .iter()
            .filter_map(|ext| std::fs::read_to_string(logs.join(format!("{id}.{ext}"))).ok())
            .map(|text| {
                text.lines()
                    .filter(|l| l.ends_with("recv tools/call"))
                    .count()
            })
            .sum();
        received_total += received;
        let logged = allowed.get(&id).copied().unwrap_or(0);
        if received > logged {
            failures.push(format!(
                "{id} received {received} calls but the audit log allows only {logged}"
            ));
        }
    }

    // 3. The history opens afresh and every conversation is valid to continue.
    drop(history);
    let reopened = History::open(&dir.join("history.sqlite3")).expect("the history opens");
    let conversations = reopened.list(None).expect("conversations");
    for c in &conversations {
        let stored = reopened.messages(&c.id).expect("messages");
        if let Err(e) = valid(&toolgate_agent::restore(&stored)) {
            failures.push(format!("conversation {} is not valid: {e}", c.title));
        }
    }

    // 4. Memory.
    let growth = if rss_at_100 > 0 {
        rss_end as f64 / rss_at_100 as f64
    } else {
        1.0
    };
    if growth > 1.10 {
        failures.push(format!(
            "VmRSS grew {:.1}% from turn 100 ({rss_at_100} KiB) to the end ({rss_end} KiB)",
            (growth - 1.0) * 100.0
        ));
    }

    println!(
        "\nsoak: {turns} turns in {:.0} s (seed {seed})",
        started.elapsed().as_secs_f64()
    );
    let mut keys: Vec<_> = counts.into_iter().collect();
    keys.sort();
    for (what, n) in keys {
        println!("  {what}: {n}");
    }
    println!(
        "  calls put to the user (answered at random): {}",
        questions.load(std::sync::atomic::Ordering::Relaxed)
    );
    println!("  tool calls received by the fault servers: {received_total}");
    println!("  audit entries: {}", audit.len());
    println!("  conversations checked: {}", conversations.len());
    println!(
        "  VmRSS: {rss_at_100} KiB after 100 turns, {rss_end} KiB at the end ({:+.1}%)",
        (growth - 1.0) * 100.0
    );
    println!("  server processes left: {}", left.len());
    if failures.is_empty() {
        println!("soak: passed");
        ExitCode::SUCCESS
    } else {
        for f in &failures {
            println!("soak: FAILED: {f}");
        }
        ExitCode::FAILURE
    }
}
