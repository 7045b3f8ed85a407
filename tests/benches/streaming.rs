//! Streaming latency: from a token leaving the scripted provider to its `TurnEvent::TextDelta`
//! reaching the front-end callback of `Agent::run_turn_with`.
//!
//! The scripted provider streams a reply of [`TOKENS`] text deltas, [`GAP`] apart, and stamps the
//! instant it hands each event to the HTTP connection ([`SendTimes`]); the callback stamps each
//! delta as it arrives, and each delta is matched to its event by its text (every token is
//! unique). The comparison, in the same run: the same stream read by a bare `reqwest` client,
//! stamped when the chunk holding the token arrives, which is what the loopback connection and
//! HTTP stack alone cost. Both wire formats. Target: 5 ms or less at p99.
//!
//! Run: `cargo bench -p toolgate-tests --bench streaming`. Prints a table; asserts only that every
//! token arrived.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolgate_agent::{Agent, AgentParts, Gate, TurnEvent, TurnOptions};
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_tests::bench::{ms, percentile, summary, Summary};
use toolgate_tests::fixtures::{anthropic_stream, openai_stream};
use toolgate_tests::{Scripted, ScriptedProvider, SendTimes};

const TOKENS: usize = 2_000;
const GAP: Duration = Duration::from_millis(2);
const TARGET: Duration = Duration::from_millis(5);

#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    Anthropic,
    OpenAi,
}

fn token(k: usize) -> String {
    format!("w{k:05} ")
}

/// The token at the start of `bytes`, if one starts there (`w`, five digits, a space).
fn token_at(bytes: &[u8]) -> Option<&str> {
    let candidate = bytes.get(..7)?;
    let shaped = candidate[0] == b'w'
        && candidate[1..6].iter().all(u8::is_ascii_digit)
        && candidate[6] == b' ';
    shaped
        .then(|| std::str::from_utf8(candidate).ok())
        .flatten()
}

/// The scripted reply, and the position in the stream of each token's event.
fn reply(format: Format) -> (Vec<Value>, HashMap<String, usize>) {
    let tokens: Vec<String> = (0..TOKENS).map(token).collect();
    let pieces: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let events = match format {
        Format::Anthropic => anthropic_stream::text(&pieces),
        Format::OpenAi => openai_stream::text(&pieces),
    };
    let positions = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let text = match format {
                Format::Anthropic => &e["delta"]["text"],
                Format::OpenAi => &e["choices"][0]["delta"]["content"],
            };
            Some((text.as_str().filter(|t| !t.is_empty())?.to_owned(), i))
        })
        .collect();
    (events, positions)
}

/// Latencies of every token through the agent to the front-end callback.
async fn through_agent(format: Format) -> Vec<Duration> {
    let (events, positions) = reply(format);
    let sent = SendTimes::default();
    let script = ScriptedProvider::start(vec![Scripted::stream(events).paced(GAP, &sent)]).await;
    let provider = match format {
        Format::Anthropic => script.anthropic_client("k"),
        Format::OpenAi => script.openai_client("k"),
    };
    let agent = Agent::new(AgentParts {
        ..toolgate_tests::agent_parts(
            ServerManager::new(ManagerOptions::default()),
            Arc::new(Gate::default()),
        )
    });
    let received = Mutex::new(Vec::with_capacity(TOKENS));
    let on_event = |event: TurnEvent| {
        if let TurnEvent::TextDelta { text } = event {
            let at = Instant::now();
            received.lock().expect("lock").push((text, at));
        }
    };
    agent
        .run_turn_with(
            &provider,
            "m",
            &mut Vec::new(),
            "go",
            &TurnOptions::default(),
            &on_event,
        )
        .await
        .expect("turn");
    let received = received.into_inner().expect("lock");
    latencies(&positions, &sent.get(), received)
}

/// Latencies of every token to a bare HTTP client: when the chunk holding it arrived.
async fn bare_client(format: Format) -> Vec<Duration> {
    let (events, positions) = reply(format);
    let sent = SendTimes::default();
    let script = ScriptedProvider::start(vec![Scripted::stream(events).paced(GAP, &sent)]).await;
    let url = match format {
        Format::Anthropic => format!("{}/v1/messages", script.anthropic_base_url()),
        Format::OpenAi => format!("{}/chat/completions", script.openai_base_url()),
    };
    let mut response = reqwest::Client::new()
        .post(url)
        .json(&json!({"model": "m", "stream": true, "messages": []}))
        .send()
        .await
        .expect("request");
    let mut received = Vec::with_capacity(TOKENS);
    let mut pending: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await.expect("chunk") {
        let at = Instant::now();
        pending.extend_from_slice(&chunk);
        // Whole lines only: a token is never read in two halves.
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            if let Some(t) = (0..line.len()).find_map(|i| token_at(&line[i..])) {
                received.push((t.to_owned(), at));
            }
        }
    }
    latencies(&positions, &sent.get(), received)
}

fn latencies(
    positions: &HashMap<String, usize>,
    sent: &[Instant],
    received: Vec<(String, Instant)>,
) -> Vec<Duration> {
    let mut latencies: Vec<Duration> = received
        .into_iter()
        .filter_map(|(text, at)| Some(at.duration_since(sent[*positions.get(&text)?])))
        .collect();
    assert_eq!(latencies.len(), TOKENS, "every token arrived, once");
    latencies.sort();
    latencies
}

#[tokio::main]
async fn main() {
    let mut rows = Vec::new();
    for (format, name) in [
        (Format::Anthropic, "Anthropic Messages"),
        (Format::OpenAi, "OpenAI Chat Completions"),
    ] {
        let bare = bare_client(format).await;
        let agent = through_agent(format).await;
        rows.push((name, agent, bare));
    }
    println!(
        "\nStreaming: token leaves the scripted provider → reaches the callback \
         ({TOKENS} tokens per format, {} ms apart)\n",
        GAP.as_millis()
    );
    println!("| format | path | p50 | p99 | max | p99 vs bare client |");
    println!("|---|---|---:|---:|---:|---:|");
    for (name, agent, bare) in &rows {
        for (path, l) in [
            ("Toolgate: `TurnEvent::TextDelta` callback", agent),
            ("bare reqwest client: chunk arrived", bare),
        ] {
            println!(
                "| {name} | {path} | {:.3} ms | {:.3} ms | {:.3} ms | {:.2}x |",
                ms(percentile(l, 50.0)),
                ms(percentile(l, 99.0)),
                ms(percentile(l, 100.0)),
                percentile(l, 99.0).as_secs_f64() / percentile(bare, 99.0).as_secs_f64()
            );
        }
    }
    println!();
    for (name, agent, bare) in &rows {
        let p99 = percentile(agent, 99.0);
        println!(
            "Target, {name}: p99 ≤ {} ms: {:.3} ms, {}",
            TARGET.as_millis(),
            ms(p99),
            if p99 <= TARGET { "met" } else { "missed" }
        );
        summary(Summary {
            benchmark: &format!("Streaming, token to UI callback, p99 ({name})"),
            result: format!(
                "{:.2} ms (p50 {:.2} ms)",
                ms(p99),
                ms(percentile(agent, 50.0))
            ),
            compared_with: format!("bare HTTP client p99 {:.2} ms", ms(percentile(bare, 99.0))),
            ratio: format!(
                "{:.2}x",
                p99.as_secs_f64() / percentile(bare, 99.0).as_secs_f64()
            ),
            target: "p99 ≤ 5 ms",
            met: p99 <= TARGET,
        });
    }
}
