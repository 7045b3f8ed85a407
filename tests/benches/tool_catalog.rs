//! A thousand tools: what a turn costs Toolgate before the model is asked, and what tool search
//! saves in every request.
//!
//! 1. **Turn overhead**, 1,000 tools from 20 real servers (`tests/catalog_server.py`, 50 distinct
//!    tools each): `Agent::first_request` (the catalog, taken from the host's `Offers` when
//!    nothing changed, the tools the turn sends and the request, exactly as a turn builds them)
//!    plus the request body as the HTTP client sends it. Median of [`TURNS`] turns, model time
//!    excluded; for tool search on (the default past 40 tools) in both wire formats, and off
//!    (every tool sent, Anthropic). Also timed apart: the first turn after the servers or
//!    settings changed, which builds the catalog. Target (issue 17): at most 1 ms.
//! 2. **Request size**, 500 tools from one server: the first request of a turn with tool search
//!    on against the same with every tool sent. In the OpenAI format (held to Gemini's limit of
//!    512 tools, so that all 500 can be sent) the found tools are listed when loaded, so the
//!    request itself shrinks. In the Anthropic format every tool is still sent, deferred, and
//!    the saving is in the prompt: deferred tools are not in the model's context and are not
//!    billed until a search loads them; its row compares the prompt's estimated tokens (the
//!    bytes of everything not deferred, over 4) and gives the bytes too. Target: at most 0.1x.
//!
//! Run: `cargo bench -p toolgate-tests --bench tool_catalog`. Prints tables; asserts only that
//! the servers started and listed their tools.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use toolgate_agent::{Agent, AgentParts, Gate, Offers, ToolTarget};
use toolgate_catalog::{CatalogSettings, SearchMode};
use toolgate_llm::{anthropic, openai, ChatRequest, Message};
use toolgate_mcp::{HostEnv, ManagerOptions, ServerManager, ServerStatus};
use toolgate_settings::ServerConfig;
use toolgate_tests::bench::{median, percentile, summary, Summary};
use toolgate_tests::repo_root;

const TURNS: usize = 500;
const COLD: usize = 15;

fn catalog(id: &str, count: usize, offset: usize) -> ServerConfig {
    let script = repo_root().join("tests/catalog_server.py");
    ServerConfig::stdio(
        id,
        "python3",
        [
            script.to_string_lossy().into_owned(),
            count.to_string(),
            offset.to_string(),
        ],
    )
}

async fn started(configs: &[ServerConfig], tools: usize) -> Arc<ServerManager> {
    let servers = ServerManager::new(ManagerOptions {
        env: Some(HostEnv::inherited()),
        ..ManagerOptions::default()
    });
    servers.start_all(configs).await;
    let snapshot = servers.snapshot().await;
    for s in &snapshot {
        assert_eq!(s.status, ServerStatus::Ready, "{}: {}", s.id, s.status);
    }
    assert_eq!(snapshot.iter().map(|s| s.tools.len()).sum::<usize>(), tools);
    servers
}

/// The body the HTTP client sends for `request`.
fn body(request: &ChatRequest, target: ToolTarget) -> Vec<u8> {
    let written = match target {
        ToolTarget::Anthropic => {
            let mut wire = anthropic::to_wire(request);
            wire.stream = true;
            serde_json::to_vec(&wire)
        }
        _ => {
            let mut wire = openai::to_wire(request);
            wire.stream = true;
            serde_json::to_vec(&wire)
        }
    };
    written.expect("a request serializes")
}

fn conversation() -> Vec<Message> {
    vec![Message::User {
        text: "Find the open invoices of ACME and summarize them.".into(),
    }]
}

fn settings(mode: SearchMode) -> CatalogSettings {
    let mut settings = CatalogSettings::default();
    settings.search.mode = mode;
    settings
}

/// One turn's own work: the request and its body.
async fn one_turn(agent: &Agent, target: ToolTarget, history: &[Message]) -> (Duration, usize) {
    let started = Instant::now();
    let request = agent
        .first_request("claude-sonnet-4-5", history)
        .await
        .expect("the request");
    let bytes = body(&request, target).len();
    (started.elapsed(), bytes)
}

struct Overhead {
    name: &'static str,
    warm: Duration,
    p99: Duration,
    cold: Duration,
    bytes: usize,
}

async fn overhead(
    servers: &Arc<ServerManager>,
    name: &'static str,
    target: ToolTarget,
    mode: SearchMode,
) -> Overhead {
    let history = conversation();
    let agent = |offers: Arc<Offers>| {
        Agent::new(AgentParts {
            tools: settings(mode),
            target,
            offers,
            ..toolgate_tests::agent_parts(servers.clone(), Arc::new(Gate::default()))
        })
    };
    // The first turn after a change builds the catalog: a fresh `Offers` each time.
    let mut cold = Vec::new();
    for _ in 0..COLD {
        cold.push(one_turn(&agent(Arc::default()), target, &history).await.0);
    }
    // Every later turn: one `Offers`, as the host keeps it; a new agent per turn, as the app
    // makes one.
    let offers: Arc<Offers> = Arc::default();
    let (mut warm, mut bytes) = (Vec::new(), 0);
    one_turn(&agent(offers.clone()), target, &history).await;
    for _ in 0..TURNS {
        let (took, size) = one_turn(&agent(offers.clone()), target, &history).await;
        warm.push(took);
        bytes = size;
    }
    warm.sort();
    Overhead {
        name,
        warm: median(warm.clone()),
        p99: percentile(&warm, 99.0),
        cold: median(cold),
        bytes,
    }
}

/// The prompt's estimated tokens: the bytes of everything in the body but deferred tools, over
/// 4.
fn prompt_tokens(body: &[u8]) -> usize {
    let mut value: Value = serde_json::from_slice(body).expect("json");
    if let Some(tools) = value.get_mut("tools").and_then(Value::as_array_mut) {
        tools.retain(|t| t["defer_loading"] != Value::Bool(true));
    }
    value.to_string().len().div_ceil(4)
}

async fn first_body(servers: &Arc<ServerManager>, target: ToolTarget, mode: SearchMode) -> Vec<u8> {
    let agent = Agent::new(AgentParts {
        tools: settings(mode),
        target,
        ..toolgate_tests::agent_parts(servers.clone(), Arc::new(Gate::default()))
    });
    let request = agent
        .first_request("m", &conversation())
        .await
        .expect("the request");
    body(&request, target)
}

#[tokio::main]
async fn main() {
    // 1. Turn overhead.
    let twenty: Vec<ServerConfig> = (0..20)
        .map(|i| catalog(&format!("catalog{i:02}"), 50, i * 50))
        .collect();
    let servers = started(&twenty, 1_000).await;
    let rows = [
        overhead(
            &servers,
            "tool search on (default), Anthropic",
            ToolTarget::Anthropic,
            SearchMode::Auto,
        )
        .await,
        overhead(
            &servers,
            "tool search on (default), OpenAI",
            ToolTarget::OpenAi,
            SearchMode::Auto,
        )
        .await,
        overhead(
            &servers,
            "tool search off, every tool sent, Anthropic",
            ToolTarget::Anthropic,
            SearchMode::Never,
        )
        .await,
    ];
    servers.stop_all().await;
    println!(
        "\nTurn overhead with 1,000 tools from 20 servers: the catalog and the first request, \
         body written (median of {TURNS} turns; model time excluded)\n"
    );
    println!("| configuration | per turn | p99 | first turn after a change (builds the catalog) | request body |");
    println!("|---|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {:.3} ms | {:.3} ms | {:.1} ms | {:.1} kB |",
            r.name,
            r.warm.as_secs_f64() * 1e3,
            r.p99.as_secs_f64() * 1e3,
            r.cold.as_secs_f64() * 1e3,
            r.bytes as f64 / 1e3
        );
    }
    let worst = rows.iter().map(|r| r.warm).max().unwrap_or_default();
    let met = worst <= Duration::from_millis(1);
    println!(
        "\nTarget: ≤ 1 ms a turn: at most {:.3} ms, {}",
        worst.as_secs_f64() * 1e3,
        if met { "met" } else { "missed" }
    );
    summary(Summary {
        benchmark: "Turn overhead, 1,000 tools from 20 servers (catalog + request), model excluded",
        result: format!(
            "{:.3} ms a turn at most (search on: {:.3} / {:.3} ms; all sent: {:.3} ms)",
            worst.as_secs_f64() * 1e3,
            rows[0].warm.as_secs_f64() * 1e3,
            rows[1].warm.as_secs_f64() * 1e3,
            rows[2].warm.as_secs_f64() * 1e3,
        ),
        compared_with: format!(
            "the first turn after a change, {:.1} ms",
            rows.iter()
                .map(|r| r.cold)
                .max()
                .unwrap_or_default()
                .as_secs_f64()
                * 1e3
        ),
        ratio: "—".into(),
        target: "≤ 1 ms",
        met,
    });

    // 2. Request size.
    let servers = started(&[catalog("catalog", 500, 0)], 500).await;
    let openai_on = first_body(&servers, ToolTarget::Gemini, SearchMode::Auto).await;
    let openai_all = first_body(&servers, ToolTarget::Gemini, SearchMode::Never).await;
    let anthropic_on = first_body(&servers, ToolTarget::Anthropic, SearchMode::Auto).await;
    let anthropic_all = first_body(&servers, ToolTarget::Anthropic, SearchMode::Never).await;
    servers.stop_all().await;
    let ratio = |a: usize, b: usize| a as f64 / b as f64;
    let openai_ratio = ratio(openai_on.len(), openai_all.len());
    let (tokens_on, tokens_all) = (prompt_tokens(&anthropic_on), prompt_tokens(&anthropic_all));
    let anthropic_ratio = ratio(tokens_on, tokens_all);
    println!("\nRequest size with 500 tools: tool search on vs every tool sent (a turn's first request)\n");
    println!("| format | search on | every tool sent | ratio |");
    println!("|---|---:|---:|---:|");
    println!(
        "| OpenAI format (Gemini's 512-tool limit), request body | {:.1} kB | {:.1} kB | {openai_ratio:.3}x |",
        openai_on.len() as f64 / 1e3,
        openai_all.len() as f64 / 1e3
    );
    println!(
        "| Anthropic, prompt tokens (deferred tools not in it) | {tokens_on} | {tokens_all} | {anthropic_ratio:.3}x |"
    );
    println!(
        "| Anthropic, request body (deferred tools still sent) | {:.1} kB | {:.1} kB | {:.3}x |",
        anthropic_on.len() as f64 / 1e3,
        anthropic_all.len() as f64 / 1e3,
        ratio(anthropic_on.len(), anthropic_all.len())
    );
    for (what, on, all, r) in [
        (
            "OpenAI format, request body",
            format!("{:.1} kB", openai_on.len() as f64 / 1e3),
            format!("{:.1} kB", openai_all.len() as f64 / 1e3),
            openai_ratio,
        ),
        (
            "Anthropic, prompt tokens",
            format!("{tokens_on} tokens"),
            format!("{tokens_all}"),
            anthropic_ratio,
        ),
    ] {
        summary(Summary {
            benchmark: &format!("Request size, 500 tools, tool search on ({what})"),
            result: on,
            compared_with: format!("every tool sent {all}"),
            ratio: format!("{r:.3}x"),
            target: "≤ 0.1x",
            met: r <= 0.1,
        });
    }
}
