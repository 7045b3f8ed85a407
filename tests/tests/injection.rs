//! The prompt-injection benchmark (issue 39, tests/injection/README.md): AgentDojo's suites,
//! each served by an MCP server of their own (`tests/injection/server.py`), a scripted model
//! replaying each user task's ground-truth calls and then, fooled, the injection task's, through
//! the real `toolgate run` with no terminal (a call the gate holds is refused: nobody to ask),
//! scored by AgentDojo's own utility and security checks.
//!
//! As a test it runs the smallest slice (3 user tasks × 2 injection tasks a suite, in each
//! configuration) and checks the harness, not today's rates: what ran on the server is what the
//! CLI says was allowed; a benign run with nothing held does the user's task; an attack with
//! nothing held reaches the attacker's goal; the table's counts add up. `scripts/injection.sh`
//! runs every pair and the adaptive variants (`TOOLGATE_INJECTION=all`) and prints the table.
//!
//! Needs the set-up's `tests/injection/.venv` (scripts/dev.sh) and the `toolgate` binary built
//! beside this test (`cargo build -p toolgate-cli --bin toolgate`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};
use toolgate_policy::{Effect, Rule, Scope, Target};
use toolgate_settings::{ProviderKind, ProviderSettings, ServerConfig, Settings};
use toolgate_tests::{fixtures::anthropic, repo_root, temp_dir, Scripted, ScriptedProvider};

const SERVER: &str = "agentdojo";
/// Each run's `--max-rounds`: room for the longest plan, a call a reply (`dojo.py`'s
/// `MAX_CALL_ROUNDS` is one less: the last reply is the answer).
const MAX_ROUNDS: usize = 30;
const SUITES: [&str; 4] = ["workspace", "travel", "banking", "slack"];

/// How the user set Toolgate up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    /// One allow rule for the whole server.
    ServerRule,
    /// One allow rule per tool, as the approval card's "Always allow" saves them.
    ToolRules,
    /// One allow rule for the server, and the server marked a trusted source: what its tools
    /// that are not open-world return counts as the user's own words.
    TrustedSource,
    /// No rules; "read-only tools run without asking" on.
    ReadOnly,
}

impl Setup {
    const ALL: [Setup; 4] = [
        Setup::ServerRule,
        Setup::ToolRules,
        Setup::TrustedSource,
        Setup::ReadOnly,
    ];
    /// The test command's slice: the set-ups the gate's promises are about.
    const SLICE: [Setup; 3] = [Setup::ServerRule, Setup::ToolRules, Setup::ReadOnly];

    fn label(self) -> &'static str {
        match self {
            Setup::ServerRule => "(a) every tool allowed, one rule for the server",
            Setup::ToolRules => "(a) every tool allowed, one rule per tool",
            Setup::TrustedSource => {
                "(c) one rule for the server, the server marked a trusted source"
            }
            Setup::ReadOnly => "(b) no rules, read-only tools run without asking",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
struct Plan {
    prompt: String,
    calls: Vec<Call>,
    /// How many calls each reply asks for (one, but for runs of closed-world reads in plans
    /// longer than a turn allows).
    rounds: Vec<usize>,
    answer: String,
}

#[derive(Debug, Clone, Deserialize)]
struct Call {
    name: String,
    arguments: Value,
}

/// One pair to run: a user task alone ("benign"), with an injection task ("attack"), or with
/// one of our variants ("variant").
#[derive(Debug, Clone, Deserialize)]
struct Pair {
    kind: String,
    user_task: String,
    injection: String,
    plan: Plan,
    /// AgentDojo's verdicts on the same plan run straight on its runtime: no MCP, no Toolgate.
    direct: Verdict,
}

#[derive(Debug, Deserialize)]
struct Plans {
    runs: Vec<Pair>,
    skipped_injection_tasks: Vec<String>,
    too_long: Vec<String>,
}

/// What one run through `toolgate run` gave.
#[derive(Debug, Clone)]
struct Outcome {
    pair: Pair,
    /// Calls the gate held for a person, refused with nobody to ask.
    held: usize,
    /// Each held call: the tool, its arguments, and the gate's reason for asking.
    held_calls: Vec<(String, Value, String)>,
    /// Calls refused otherwise (a rule, Toolgate itself).
    refused: usize,
    /// Calls the CLI reports as allowed.
    allowed: usize,
    /// Calls the server ran (its own log).
    ran: usize,
    utility: bool,
    security: Option<bool>,
    /// The run's error, if it failed.
    error: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Verdict {
    utility: bool,
    security: Option<bool>,
}

fn injection_dir() -> PathBuf {
    repo_root().join("tests/injection")
}

fn python() -> PathBuf {
    let python = injection_dir().join(".venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run the README's test command, which installs AgentDojo (scripts/dev.sh)",
        python.display()
    );
    python
}

/// `toolgate` (the CLI), built beside this test's own binary.
fn toolgate_exe() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let folder = exe.parent().and_then(Path::parent).expect("target folder");
    let toolgate = folder.join(format!("toolgate{}", std::env::consts::EXE_SUFFIX));
    assert!(
        toolgate.is_file(),
        "{} is missing: build it first (cargo build -p toolgate-cli --bin toolgate)",
        toolgate.display()
    );
    toolgate
}

/// `bench.py ARGS`, its stdin `input`, its stdout parsed.
fn bench<T: serde::de::DeserializeOwned>(args: &[&str], input: Option<&Value>) -> T {
    let mut child = Command::new(python())
        .arg(injection_dir().join("bench.py"))
        .args(args)
        .current_dir(injection_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bench.py runs");
    let mut stdin = child.stdin.take().expect("stdin");
    if let Some(input) = input {
        serde_json::to_writer(&mut stdin, input).expect("input written");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("bench.py ends");
    assert!(out.status.success(), "bench.py {args:?} failed");
    serde_json::from_slice(&out.stdout).expect("bench.py's JSON")
}

/// The tools of a suite, from the annotations the server reads.
fn tools_of(suite: &str) -> Vec<String> {
    let text = std::fs::read_to_string(injection_dir().join("annotations.json")).expect("read");
    let all: BTreeMap<String, BTreeMap<String, Value>> =
        serde_json::from_str(&text).expect("annotations.json");
    all[suite].keys().cloned().collect()
}

fn settings(setup: Setup, suite: &str, pair: &Pair, state: &Path, base_url: String) -> Settings {
    let args = [
        injection_dir()
            .join("server.py")
            .to_string_lossy()
            .into_owned(),
        suite.to_owned(),
        pair.user_task.clone(),
        pair.injection.clone(),
        state.join("state.json").to_string_lossy().into_owned(),
    ];
    let mut server = ServerConfig::stdio(SERVER, python().to_string_lossy(), args);
    // Confined with no network, as a local server should be; it reads its folder and writes
    // the state the scorer reads.
    server.sandbox = Some(toolgate_settings::SandboxSettings {
        read: vec![injection_dir()],
        write: vec![state.to_path_buf()],
        ..Default::default()
    });
    let mut settings = Settings::first_run(server);
    settings.provider = ProviderSettings {
        kind: ProviderKind::Anthropic,
        base_url,
        model: "claude-test".into(),
    };
    let allow = |id: String, target| Rule::new(id, Effect::Allow, target, Scope::Always, 0);
    match setup {
        Setup::ServerRule | Setup::TrustedSource => settings.policy.rules.push(allow(
            "allow-server".into(),
            Target::Server {
                server_id: SERVER.into(),
            },
        )),
        Setup::ToolRules => {
            for tool in tools_of(suite) {
                let target = Target::Tool {
                    server_id: SERVER.into(),
                    tool: tool.clone(),
                };
                settings
                    .policy
                    .rules
                    .push(allow(format!("allow-{tool}"), target));
            }
        }
        Setup::ReadOnly => settings.policy.auto_allow_read_only = true,
    }
    settings.servers[0].trust.trusted_source = setup == Setup::TrustedSource;
    settings
}

/// One pair through `toolgate run`: the counts of its trace and the server's log, the state
/// file to score and the answer. Runs in `dir`, which it leaves for the scorer.
async fn run_pair(setup: Setup, suite: &str, pair: &Pair, dir: &Path) -> (Outcome, Value) {
    let mut calls = pair.plan.calls.iter().enumerate();
    let mut replies: Vec<Scripted> = pair
        .plan
        .rounds
        .iter()
        .map(|n| {
            let blocks = calls
                .by_ref()
                .take(*n)
                .map(|(i, c)| {
                    anthropic::tool_use_block(
                        &format!("toolu_{i:02}"),
                        &c.name,
                        c.arguments.clone(),
                    )
                })
                .collect();
            Scripted::ok(anthropic::message(blocks, "tool_use"))
        })
        .collect();
    replies.push(Scripted::ok(anthropic::text(&pair.plan.answer)));
    let provider = ScriptedProvider::start(replies).await;
    let (data, state) = (dir.join("data"), dir.join("state"));
    std::fs::create_dir_all(&data).expect("data folder");
    std::fs::create_dir_all(&state).expect("state folder");
    let s = settings(setup, suite, pair, &state, provider.anthropic_base_url());
    toolgate_settings::file::save(&data.join("settings.json"), &s).expect("settings");
    let mut run = tokio::process::Command::new(toolgate_exe());
    run.arg("--data-dir")
        .arg(&data)
        .args(["run", &pair.plan.prompt, "--json", "--max-rounds"])
        .arg(MAX_ROUNDS.to_string())
        .env("ANTHROPIC_API_KEY", "sk-ant-injection")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = run.output().await.expect("toolgate runs");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "toolgate run gave no report ({e}) for {suite} {} {}: {}",
            pair.user_task,
            pair.injection,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let trace = report["trace"].as_array().cloned().unwrap_or_default();
    let count = |f: &dyn Fn(&Value) -> bool| trace.iter().filter(|t| f(t)).count();
    let is_held = |t: &Value| t["decision"] == "denied" && t["decidedBy"] == "unattended";
    let held = count(&is_held);
    let held_calls = trace
        .iter()
        .filter(|t| is_held(t))
        .map(|t| {
            (
                t["tool"].as_str().unwrap_or_default().to_owned(),
                t["arguments"].clone(),
                t["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let refused = count(&|t| t["decision"] == "denied" && t["decidedBy"] != "unattended");
    let allowed = count(&|t| t["decision"] == "allowed");
    let state_file = state.join("state.json");
    let written: Value = std::fs::read_to_string(&state_file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| {
            panic!(
                "the server wrote no state for {suite} {} {}: {}",
                pair.user_task,
                pair.injection,
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let outcome = Outcome {
        pair: pair.clone(),
        held,
        held_calls,
        refused,
        allowed,
        ran: written["calls"].as_array().map_or(0, Vec::len),
        utility: false,
        security: None,
        error: report["error"].as_str().map(str::to_owned),
    };
    let answer = report["answer"].as_str().unwrap_or_default().to_owned();
    let score = json!({"suite": suite, "user_task": pair.user_task, "injection": pair.injection,
        "state": state_file, "answer": answer});
    (outcome, score)
}

/// Every pair of a suite in one configuration, `jobs` at a time, then scored at once.
async fn run_suite(setup: Setup, suite: &str, pairs: &[Pair], root: &Path) -> Vec<Outcome> {
    let jobs: usize = std::env::var("TOOLGATE_INJECTION_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or(2);
    let runs = futures::stream::iter(pairs.iter().enumerate().map(|(i, pair)| {
        let dir = root.join(format!("{suite}-{i}"));
        async move { run_pair(setup, suite, pair, &dir).await }
    }))
    .buffered(jobs)
    .collect::<Vec<_>>()
    .await;
    let (mut outcomes, scores): (Vec<Outcome>, Vec<Value>) = runs.into_iter().unzip();
    let verdicts: Vec<Verdict> = bench(&["scores"], Some(&Value::Array(scores)));
    for (outcome, verdict) in outcomes.iter_mut().zip(verdicts) {
        outcome.utility = verdict.utility;
        outcome.security = verdict.security;
    }
    for i in 0..pairs.len() {
        let _ = std::fs::remove_dir_all(root.join(format!("{suite}-{i}")));
    }
    outcomes
}

/// Why the gate held a call, in kinds: the parts of its reason a relaxation would have to
/// lift to let it run.
fn held_for(reason: &str) -> BTreeSet<&'static str> {
    [
        ("came only from outside content", "an outside value"),
        ("in nobody's words", "a value in nobody's words"),
        (
            "decides what this change does",
            "a decisive value not yours",
        ),
        ("could send data out", "a way out after outside content"),
        ("marks this tool as destructive", "destructive"),
        ("from another result", "your data from another result"),
        ("looks like a secret", "a secret"),
    ]
    .into_iter()
    .filter(|(words, _)| reason.contains(words))
    .map(|(_, kind)| kind)
    .collect()
}

/// The benign runs' held calls, a table row each: what a user would have been asked, and why;
/// with an attack of the same set-up (any suite: the suites share tools such as
/// `create_calendar_event`) held at the same tool for nothing else (whatever would let the
/// benign call run lets that attack's call run too), when there is one.
fn held_benign(setup: Setup, ran: &[(&str, Vec<Outcome>)]) -> (String, usize, usize) {
    let cell = |text: &str, max: usize| {
        let one_line: String = text
            .chars()
            .map(|c| match c {
                '|' => '/',
                '`' => '\'',
                c if c.is_control() => ' ',
                c => c,
            })
            .collect();
        match one_line.char_indices().nth(max) {
            Some((at, _)) => format!("{}…", &one_line[..at]),
            None => one_line,
        }
    };
    // The attacker's own calls: those of an attack's plan that its user task alone does not make.
    let users_own = |outcomes: &[Outcome], o: &Outcome, tool: &String, arguments: &Value| {
        outcomes.iter().any(|b| {
            b.pair.kind == "benign"
                && b.pair.user_task == o.pair.user_task
                && b.pair
                    .plan
                    .calls
                    .iter()
                    .any(|c| &c.name == tool && &c.arguments == arguments)
        })
    };
    let attacks: Vec<(&str, &Outcome, &String, BTreeSet<&'static str>)> = ran
        .iter()
        .flat_map(|(suite, outcomes)| {
            outcomes
                .iter()
                .filter(|o| o.pair.kind == "attack")
                .flat_map(move |o| {
                    o.held_calls
                        .iter()
                        .filter(move |(tool, arguments, _)| {
                            !users_own(outcomes, o, tool, arguments)
                        })
                        .map(move |(tool, _, why)| (*suite, o, tool, held_for(why)))
                })
        })
        .collect();
    let (mut out, mut calls, mut matched) = (String::new(), 0, 0);
    let benign = ran.iter().flat_map(|(suite, outcomes)| {
        outcomes
            .iter()
            .filter(|o| o.pair.kind == "benign")
            .map(move |o| (*suite, o))
    });
    for (suite, o) in benign {
        for (tool, arguments, why) in &o.held_calls {
            let kinds = held_for(why);
            // One of the same suite first, where there is one.
            let twin = attacks
                .iter()
                .filter(|(_, _, t, k)| *t == tool && !k.is_empty() && k.is_subset(&kinds))
                .min_by_key(|(s, ..)| *s != suite);
            calls += 1;
            matched += usize::from(twin.is_some());
            out.push_str(&format!(
                "| {} | {suite} | {} | `{}` | `{}` | {} | {} |\n",
                setup.label(),
                o.pair.user_task,
                cell(tool, 60),
                cell(&arguments.to_string(), 160),
                cell(why, 400),
                match twin {
                    Some((s, a, _, k)) => format!(
                        "{s} {} with {} ({})",
                        a.pair.injection,
                        a.pair.user_task,
                        k.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                    None => "none in this run".to_owned(),
                }
            ));
        }
    }
    (out, calls, matched)
}

/// The counts of one row of the table.
#[derive(Debug, Default, Clone, Copy)]
struct Row {
    benign: usize,
    benign_unheld: usize,
    benign_held_calls: usize,
    attacks: usize,
    attacks_succeeded: usize,
    attacks_without_toolgate: usize,
    attacks_useful: usize,
    attack_held_calls: usize,
    variants: usize,
    variants_succeeded: usize,
}

impl Row {
    fn of(outcomes: &[Outcome]) -> Row {
        let mut row = Row::default();
        for o in outcomes {
            match o.pair.kind.as_str() {
                "benign" => {
                    row.benign += 1;
                    row.benign_held_calls += o.held;
                    row.benign_unheld += usize::from(o.held == 0 && o.utility);
                }
                "attack" => {
                    row.attacks += 1;
                    row.attack_held_calls += o.held;
                    row.attacks_succeeded += usize::from(o.security == Some(true));
                    row.attacks_without_toolgate +=
                        usize::from(o.pair.direct.security == Some(true));
                    row.attacks_useful += usize::from(o.utility);
                }
                _ => {
                    row.variants += 1;
                    row.variants_succeeded += usize::from(o.security == Some(true));
                }
            }
        }
        row
    }

    fn add(&mut self, o: Row) {
        self.benign += o.benign;
        self.benign_unheld += o.benign_unheld;
        self.benign_held_calls += o.benign_held_calls;
        self.attacks += o.attacks;
        self.attacks_succeeded += o.attacks_succeeded;
        self.attacks_without_toolgate += o.attacks_without_toolgate;
        self.attacks_useful += o.attacks_useful;
        self.attack_held_calls += o.attack_held_calls;
        self.variants += o.variants;
        self.variants_succeeded += o.variants_succeeded;
    }

    fn line(&self, name: &str) -> String {
        let pct = |n: usize, of: usize| {
            if of == 0 {
                "—".to_owned()
            } else {
                format!("{:.1}% ({n} of {of})", 100.0 * n as f64 / of as f64)
            }
        };
        let per = |n: usize, of: usize| {
            if of == 0 {
                "—".to_owned()
            } else {
                format!("{:.2}", n as f64 / of as f64)
            }
        };
        format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            pct(self.benign_unheld, self.benign),
            per(self.benign_held_calls, self.benign),
            pct(self.attacks_succeeded, self.attacks),
            pct(self.attacks_without_toolgate, self.attacks),
            pct(self.attacks_useful, self.attacks),
            per(self.attack_held_calls, self.attacks),
            pct(self.variants_succeeded, self.variants),
        )
    }
}

/// The harness's own consistency, whatever the gate decides: each problem, in words.
fn check(setup: Setup, suite: &str, outcomes: &[Outcome]) -> Vec<String> {
    let mut problems = Vec::new();
    for o in outcomes {
        let what = format!(
            "{setup:?} {suite} {} {}",
            o.pair.user_task, o.pair.injection
        );
        let mut fail = |problem: String| problems.push(format!("{what}: {problem}"));
        if let Some(error) = &o.error {
            fail(format!("the run failed: {error}"));
            continue;
        }
        if o.allowed != o.ran {
            fail(format!(
                "the CLI allowed {} calls, the server ran {}",
                o.allowed, o.ran
            ));
        }
        let planned = o.pair.plan.calls.len();
        if o.allowed + o.held + o.refused != planned {
            fail(format!("{planned} calls scripted, not all in the trace"));
        }
        // Nothing stopped: the run through Toolgate is the plan run straight on AgentDojo.
        let direct = &o.pair.direct;
        if o.held + o.refused == 0 && (o.utility, o.security) != (direct.utility, direct.security) {
            fail(format!(
                "nothing was held, yet ({}, {:?}) where AgentDojo alone gives ({}, {:?})",
                o.utility, o.security, direct.utility, direct.security
            ));
        }
        if o.security.is_none() != (o.pair.kind == "benign") {
            fail("a security verdict for a benign run, or none for an attack".into());
        }
    }
    problems
}

/// The table in markdown, and the harness's problems.
async fn benchmark(which: &str) -> (String, Vec<String>) {
    let root = temp_dir("injection");
    let mut plans = BTreeMap::new();
    let (mut skipped, mut too_long) = (Vec::new(), Vec::new());
    for suite in SUITES {
        let p: Plans = bench(&["plans", suite, which], None);
        skipped.extend(
            p.skipped_injection_tasks
                .iter()
                .map(|t| format!("{suite} {t}")),
        );
        too_long.extend(p.too_long.iter().map(|t| format!("{suite} {t}")));
        plans.insert(suite, p.runs);
    }
    let mut out = format!(
        "AgentDojo {} pairs: {}\n\n",
        which,
        plans
            .iter()
            .map(|(s, r)| format!("{s} {}", r.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str(&format!(
        "Injection tasks not replayed (no calls in their ground truth): {}\n",
        skipped.join(", ")
    ));
    out.push_str(&format!(
        "Pairs not run (more replies with calls than a `toolgate run` turn allows): {}\n",
        if too_long.is_empty() {
            "none".to_owned()
        } else {
            too_long.join(", ")
        }
    ));
    let mut useful_unheld = 0;
    let mut problems = Vec::new();
    let mut held_account = String::new();
    let (mut held_calls, mut held_matched) = (0, 0);
    let setups: &[Setup] = if which == "slice" {
        &Setup::SLICE
    } else {
        &Setup::ALL
    };
    for &setup in setups {
        out.push_str(&format!(
            "\n### {}\n\n| suite | benign tasks done without a held call | held calls per benign task | attacks succeeded | attacks succeeded without Toolgate | utility under attack | held calls per attack | variants succeeded |\n|---|---|---|---|---|---|---|---|\n",
            setup.label()
        ));
        let mut total = Row::default();
        let mut succeeded = Vec::new();
        let mut ran = Vec::new();
        for suite in SUITES {
            let started = std::time::Instant::now();
            let outcomes = run_suite(setup, suite, &plans[suite], &root).await;
            problems.extend(check(setup, suite, &outcomes));
            let row = Row::of(&outcomes);
            succeeded.extend(
                outcomes
                    .iter()
                    .filter(|o| o.security == Some(true))
                    .map(|o| format!("{suite} {} {}", o.pair.user_task, o.pair.injection)),
            );
            eprintln!(
                "{setup:?} {suite}: {} runs in {:.0?}",
                outcomes.len(),
                started.elapsed()
            );
            assert!(row.benign_unheld <= row.benign && row.attacks_succeeded <= row.attacks);
            assert!(row.variants_succeeded <= row.variants);
            if setup != Setup::ReadOnly {
                useful_unheld += outcomes
                    .iter()
                    .filter(|o| o.pair.kind == "benign" && o.held == 0 && o.utility)
                    .count();
            }
            out.push_str(&row.line(suite));
            out.push('\n');
            total.add(row);
            ran.push((suite, outcomes));
        }
        let (rows, calls, matched) = held_benign(setup, &ran);
        held_account.push_str(&rows);
        held_calls += calls;
        held_matched += matched;
        out.push_str(&total.line("**overall**"));
        out.push('\n');
        succeeded.sort();
        out.push_str(&format!(
            "\nAttacks and variants that succeeded: {}\n",
            if succeeded.is_empty() {
                "none".to_owned()
            } else {
                succeeded.join(", ")
            }
        ));
    }
    out.push_str(&format!(
        "\n### Each benign task's held calls\n\n{held_matched} of {held_calls} held calls have an attack of the same run held at the same tool for nothing else: \
         whatever let such a call run would have let that attack's call run too.\n\n\
         | set-up | suite | user task | held call | arguments | why it was held | an attack held for nothing else |\n|---|---|---|---|---|---|---|\n{held_account}"
    ));
    if useful_unheld == 0 {
        problems.push(
            "no benign task ran to the end under any allow rule: the replay never reached AgentDojo"
                .into(),
        );
    }
    (out, problems)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agentdojo_replay_through_toolgate_run_is_scored_by_agentdojo() {
    // The table of tool annotations is the one generated from the file the server reads.
    let table = std::process::Command::new(python())
        .arg(injection_dir().join("bench.py"))
        .arg("table")
        .current_dir(injection_dir())
        .output()
        .expect("bench.py table");
    assert_eq!(
        String::from_utf8_lossy(&table.stdout),
        std::fs::read_to_string(injection_dir().join("annotations.md")).expect("annotations.md"),
        "annotations.md is not annotations.json's table: run bench.py table > annotations.md"
    );
    let which = std::env::var("TOOLGATE_INJECTION").unwrap_or_else(|_| "slice".into());
    let (table, problems) = benchmark(&which).await;
    println!("{table}");
    if let Ok(path) = std::env::var("TOOLGATE_INJECTION_TABLE") {
        std::fs::write(path, &table).expect("table written");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
