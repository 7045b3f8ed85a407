//! Every call that reached a server has its decision in the audit log, however the app dies.
//!
//! The test runs its own binary again as a child process (only the ignored test `caller_child`,
//! told what to do through environment variables): a host with the real `ServerManager`, the
//! real agent and gate with an allow rule, and the audit log in a SQLite file, making calls to
//! `bench-echo-server` as fast as it can, 16 at a time. The server writes each call's text to a
//! file the moment it reads the call. The parent SIGKILLs the child at a random moment, then
//! opens the database: every text the server received must be an allowed decision in the log.
//! The same database is used for every round, so each round also opens a file a kill left.
//!
//! An allowed decision is appended to the history's audit journal (a file of the process, in
//! the operating system once written) before the call goes out, and queued for the database;
//! completions are queued without waiting. The next open inserts what a killed process's
//! journal holds that the database does not. Without the journal (the decision only queued),
//! calls reach the server with their decision still in the queue, and a kill loses it: this
//! test fails then in the first rounds (tried by hand: all 126 calls of round 2 missing).
//!
//! The randomness is a xorshift seeded from the clock; the seed is printed, and
//! `TOOLGATE_KILL_SEED=<seed>` replays a run.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use serde_json::json;
use toolgate_agent::{
    Agent, AgentParts, Decision, Gate, Lasting, MemoryPolicy, Reach, TurnEvent, TurnOptions,
};
use toolgate_history::{AuditDecision, AuditFilter, History};
use toolgate_llm::ToolCall;
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_settings::ServerConfig;

const DB_VAR: &str = "TOOLGATE_AUDIT_KILL_DB";
const ROUND_VAR: &str = "TOOLGATE_AUDIT_KILL_ROUND";
const LOG_VAR: &str = "TOOLGATE_ECHO_LOG";
const ROUNDS: u64 = 60;
const IN_FLIGHT: usize = 16;
/// Calls the child makes before it says it is calling, so the kill lands among calls.
const WARM_UP: usize = 32;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The texts the server received, one per complete line.
fn received(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_call_that_reached_a_server_has_its_decision_in_the_log() {
    let seed = std::env::var("TOOLGATE_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    println!("seed {seed} (TOOLGATE_KILL_SEED={seed} replays this run)");
    let mut rng = XorShift(seed);
    let dir = tempfile_dir();
    let db = dir.join("history.sqlite3");
    let started = Instant::now();
    let (mut reached_total, mut unfinished_total, mut recovered_total) = (0, 0, 0);
    for round in 1..=ROUNDS {
        // A folder of its own, given to the echo server to write (the history is beside it).
        let log = dir.join("echo").join(format!("received-{round}.log"));
        std::fs::create_dir_all(dir.join("echo")).expect("log folder");
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args(["caller_child", "--exact", "--ignored", "--nocapture"])
            .env(DB_VAR, &db)
            .env(ROUND_VAR, round.to_string())
            .env(LOG_VAR, &log)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the caller");
        let stdout = child.stdout.take().expect("child stdout");
        let calling = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            // `ends_with`: the test harness may print "test caller_child ... " on the same line.
            .any(|line| line.trim_end().ends_with("calling"));
        if !calling {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                let _ = pipe.read_to_string(&mut stderr);
            }
            let _ = child.kill();
            let _ = child.wait();
            panic!("round {round}: the caller never started calling:\n{stderr}");
        }
        std::thread::sleep(Duration::from_micros(rng.next() % 20_000));
        child.kill().expect("SIGKILL the caller");
        child.wait().expect("reap the caller");
        // The server dies with its host (the parent-death signal); its last line is written.
        std::thread::sleep(Duration::from_millis(50));

        let reached = received(&log);
        let history = History::open(&db)
            .unwrap_or_else(|e| panic!("round {round} (seed {seed}): the database: {e}"));
        recovered_total += history.recovered_entries();
        let rows = history
            .audit(&AuditFilter {
                conversation_id: Some(format!("round-{round}")),
                ..AuditFilter::default()
            })
            .expect("the audit log");
        let allowed: HashSet<String> = rows
            .iter()
            .filter(|r| r.entry.decision == AuditDecision::Allowed)
            .filter_map(|r| r.entry.arguments["text"].as_str().map(str::to_owned))
            .collect();
        let missing: Vec<&String> = reached.iter().filter(|t| !allowed.contains(*t)).collect();
        assert!(
            missing.is_empty(),
            "round {round} (seed {seed}): {} of {} calls reached the server with no decision in \
             the log, e.g. {:?}",
            missing.len(),
            reached.len(),
            missing.first()
        );
        assert!(
            reached.len() >= WARM_UP,
            "round {round}: only {} calls reached the server",
            reached.len()
        );
        reached_total += reached.len();
        unfinished_total += rows
            .iter()
            .filter(|r| r.entry.decision == AuditDecision::Allowed && r.entry.duration_ms.is_none())
            .count();
    }
    println!(
        "{ROUNDS} kills in {:.1?}: {reached_total} calls reached the server, every one with its \
         decision in the log ({recovered_total} of the decisions from the killed processes' \
         journals); {unfinished_total} were in flight or not yet completed in the log when killed",
        started.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh folder in the system's temporary folder for this test.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-audit-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The child's half: calls `echo` through the gated path until killed.
#[test]
#[ignore = "run by every_call_that_reached_a_server_has_its_decision_in_the_log as its child"]
fn caller_child() {
    let (Some(db), Some(round)) = (std::env::var_os(DB_VAR), std::env::var(ROUND_VAR).ok()) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        // The servers' folders in the test's folder, as the host keeps them in its data folder:
        // a killed caller leaves its server's temporary folder there, not in the system's.
        let folder = std::path::Path::new(&db)
            .parent()
            .map(|d| d.join("servers"));
        let servers = ServerManager::new(ManagerOptions {
            server_data: folder,
            ..ManagerOptions::default()
        });
        let mut echo = ServerConfig::stdio(
            "echo",
            env!("CARGO_BIN_EXE_bench-echo-server"),
            Vec::<String>::new(),
        );
        // Named in the server's own settings, and its folder given to it in its sandbox
        // settings: a path in its environment opens nothing by itself.
        if let (toolgate_settings::Transport::Stdio { env, .. }, Ok(log)) =
            (&mut echo.transport, std::env::var(LOG_VAR))
        {
            env.insert(LOG_VAR.to_owned(), log.clone());
            if let Some(folder) = std::path::Path::new(&log).parent() {
                let mut sandbox = echo.sandbox_settings().unwrap_or_default();
                sandbox.write.push(folder.to_owned());
                echo.sandbox = Some(sandbox);
            }
        }
        servers.start_all(&[echo]).await;
        let history = Arc::new(History::open(db.as_ref()).expect("open the history"));
        let gate = Arc::new(Gate::default());
        let agent = Agent::new(AgentParts {
            policy: Arc::new(MemoryPolicy::default()),
            history: Some(history),
            conversation: Some(format!("round-{round}")),
            ..toolgate_tests::agent_parts(servers.clone(), gate.clone())
        });
        let options = TurnOptions::default();
        // The first call is answered "always allow", as the app would; the rest go by the rule.
        let on_event = |event: TurnEvent| {
            if let TurnEvent::ApprovalRequested(pending) = event {
                let always = Decision::Allow {
                    reach: Reach::Tool,
                    lasting: Lasting::Always,
                };
                let _ = gate.answer(&pending.id, always);
            }
        };
        let done = AtomicUsize::new(0);
        let call = |i: usize| {
            let (agent, options, on_event, done, round) =
                (&agent, &options, &on_event, &done, &round);
            async move {
                let call = ToolCall {
                    id: format!("c{i}"),
                    name: "echo".into(),
                    arguments: json!({"text": format!("r{round}-c{i}")}),
                };
                agent
                    .gated_call_alone(&call, options, on_event)
                    .await
                    .expect("the catalog");
                if done.fetch_add(1, Ordering::Relaxed) + 1 == WARM_UP {
                    println!("calling");
                }
            }
        };
        call(0).await;
        futures::stream::iter(1..)
            .map(call)
            .buffer_unordered(IN_FLIGHT)
            .for_each(|()| async {})
            .await;
    });
}
