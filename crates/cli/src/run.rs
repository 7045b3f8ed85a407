//! `toolgate run` (one goal in, a trace out) and `toolgate chat` (a conversation at the prompt),
//! both on the app's tool loop and gate.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;
use toolgate_agent::{AgentError, TurnEvent, TurnOptions};
use toolgate_llm::{ContentPart, Message, Usage};
use toolgate_policy::{Effect, Rule, Scope, Target};

use crate::context::Context;
use crate::screen;

/// One tool call of the run, as the model asked for it and as it ended.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceEntry {
    pub tool: String,
    pub server: Option<String>,
    pub arguments: Value,
    /// "allowed" or "denied".
    pub decision: &'static str,
    /// Who decided: "rule", "user", "unattended" (the rules left it to the user, and no
    /// terminal was attached to ask), or "toolgate" (an unknown tool, bad arguments, refused;
    /// or Toolgate's own `search_tools`, which runs no server and needs no approval).
    pub decided_by: &'static str,
    pub reason: Option<String>,
    pub success: bool,
    pub output: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub goal: String,
    pub trace: Vec<TraceEntry>,
    pub answer: Option<String>,
    pub error: Option<String>,
    /// The tokens of every model call of the run: input, output, cache read and cache write.
    pub usage: Usage,
    /// Their estimated cost in millionths of a US dollar, from the dated price table in
    /// `toolgate_llm::pricing`; absent when the model's price is not known.
    pub cost_micro_usd: Option<u64>,
}

impl RunReport {
    /// 0 done, 1 error, 3 a call was denied.
    pub fn exit_code(&self) -> u8 {
        if self.error.is_some() {
            1
        } else if self.trace.iter().any(|t| t.decision == "denied") {
            3
        } else {
            0
        }
    }
}

/// What the events said about each call, by the model's call id.
#[derive(Default, Clone)]
struct Seen {
    server: Option<String>,
    tool: Option<String>,
    by: Option<&'static str>,
    denied: bool,
    reason: Option<String>,
    /// Toolgate's own tool search, with what it found.
    searched: Option<Vec<String>>,
}

/// Grants for this run only: allow the tools whose model-facing name matches a glob.
///
/// Only the name the catalog gave the tool counts, never the server's own name for it: a server
/// could otherwise name a tool after another server's prefixed tool (`files__read` on server
/// `evil`) and catch a grant meant for that one. Each match is one tool of one server.
fn grants(globs: &[String], catalog: &toolgate_catalog::Catalog) -> Result<Vec<Rule>> {
    let mut rules = Vec::new();
    for glob in globs {
        let matcher = globset::Glob::new(glob)
            .map_err(|e| anyhow::anyhow!("--approve {glob}: not a glob pattern: {e}"))?
            .compile_matcher();
        let matching: Vec<_> = catalog
            .entries()
            .iter()
            .filter(|e| matcher.is_match(&e.model_name))
            .collect();
        if matching.is_empty() {
            eprintln!(
                "toolgate: --approve {glob} matches no tool of the running servers (it matches the names `toolgate tools list` shows)"
            );
        }
        for entry in &matching {
            if let Some(other) = &entry.imitates {
                eprintln!(
                    "toolgate: warning: --approve {glob} allows {} of server {}, whose own name imitates a tool of server {other}",
                    entry.model_name, entry.server_id
                );
            }
        }
        for entry in matching {
            let target = Target::Tool {
                server_id: entry.server_id.clone(),
                tool: entry.tool.name.clone(),
            };
            let id = format!("cli-approve-{}", rules.len());
            rules.push(Rule {
                note: Some(format!("--approve {glob}, for this run")),
                ..Rule::new(id, Effect::Allow, target, Scope::Always, 0)
            });
        }
    }
    Ok(rules)
}

/// A session: servers started, the gate answered at the terminal (or not at all).
pub struct Session {
    pub ctx: Context,
    /// The gated agent and the conversation this run is saved as (its tokens added up there).
    chat: toolgate_host::Chat,
    pub model: String,
    provider: Arc<toolgate_llm::HttpProvider>,
}

impl Session {
    pub async fn start(ctx: Context, approve: &[String], title: &str) -> Result<Self> {
        let (provider, model) = ctx.provider().await?;
        let provider = Arc::new(provider);
        let servers = ctx.servers().clone();
        // Every server ready (or failed) before the first turn.
        if let Err(e) = ctx.host.run().await {
            eprintln!("toolgate: the servers could not be started: {e}");
        }
        for server in servers.snapshot().await {
            if let toolgate_mcp::ServerStatus::Failed { reason } = &server.status {
                eprintln!(
                    "toolgate: server {} is not available: {}",
                    server.id,
                    screen::line(reason, 2000)
                );
            }
        }
        let snapshot = servers.snapshot().await;
        let catalog = toolgate_agent::catalog_of(&snapshot, &ctx.settings.tools)?;
        ctx.host.grant_for_this_run(grants(approve, &catalog)?);
        let chat = ctx
            .host
            .chat(None, title, &[], |e| {
                eprintln!("toolgate: this run will not be saved: {e}")
            })
            .await;
        Ok(Self {
            ctx,
            chat,
            model,
            provider,
        })
    }

    /// One turn of at most `max_rounds` model replies; `print` streams the model's text to
    /// stdout and the calls to stderr. With a `schema` the answer must be a JSON value valid
    /// against it, and is not streamed: a first answer sent back to be repaired must not reach
    /// stdout.
    pub async fn turn(
        &self,
        history: &mut Vec<Message>,
        text: &str,
        (print, max_rounds): (bool, usize),
        schema: Option<Value>,
    ) -> (Result<String, AgentError>, Vec<TraceEntry>, Spent) {
        let seen: Arc<Mutex<HashMap<String, Seen>>> = Arc::default();
        let usage = Arc::new(Mutex::new(Spent::default()));
        let stream_text = print && schema.is_none();
        let options = TurnOptions {
            approval_timeout: self.ctx.settings.policy.approval_timeout(),
            answer_schema: schema,
            max_rounds,
            ..TurnOptions::default()
        };
        let cancel = options.cancel.clone();
        let on_ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
        let record = {
            let (seen, usage, chat) = (seen.clone(), usage.clone(), &self.chat);
            move |event: TurnEvent| {
                let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
                match event {
                    TurnEvent::TextDelta { text } if stream_text => {
                        print!("{}", screen::stream(&text));
                        let _ = std::io::stdout().flush();
                    }
                    TurnEvent::DecidedByRule { call, allowed } => {
                        if print {
                            let verb = if allowed { "allowed" } else { "denied" };
                            eprintln!(
                                "\n[{} on {}: {verb} by a rule]",
                                screen::line(&call.tool, 80),
                                screen::line(&call.server_name, 80)
                            );
                        }
                        let entry = seen.entry(call.call_id.clone()).or_default();
                        entry.server = Some(call.server_id.clone());
                        entry.tool = Some(call.tool.clone());
                        entry.by = Some("rule");
                        entry.denied = !allowed;
                        entry.reason = Some(call.reason);
                    }
                    TurnEvent::Unattended { call } => {
                        let entry = seen.entry(call.call_id.clone()).or_default();
                        entry.server = Some(call.server_id.clone());
                        entry.tool = Some(call.tool.clone());
                        entry.by = Some("unattended");
                    }
                    TurnEvent::ApprovalRequested(call) => {
                        let entry = seen.entry(call.call_id.clone()).or_default();
                        entry.server = Some(call.server_id.clone());
                        entry.tool = Some(call.tool.clone());
                        entry.by = Some("user");
                    }
                    TurnEvent::ToolDenied { call_id, reason } => {
                        let entry = seen.entry(call_id).or_default();
                        entry.denied = true;
                        if print {
                            eprintln!(
                                "\n[{} denied: {}]",
                                screen::line(entry.tool.as_deref().unwrap_or("call"), 80),
                                screen::line(reason.as_deref().unwrap_or("by the user"), 2000)
                            );
                        }
                        entry.reason = reason;
                    }
                    TurnEvent::ToolFinished {
                        call_id, is_error, ..
                    } if print => {
                        let entry = seen.entry(call_id).or_default();
                        let how = if is_error { "failed" } else { "done" };
                        eprintln!(
                            "[{} {how}]",
                            screen::line(entry.tool.as_deref().unwrap_or("call"), 80)
                        );
                    }
                    TurnEvent::Retrying {
                        delay_ms, reason, ..
                    } if print => {
                        eprintln!(
                            "\n[{}; trying again in {delay_ms} ms]",
                            screen::line(&reason, 500)
                        );
                    }
                    TurnEvent::ToolsSearched {
                        call_id,
                        query,
                        found,
                    } => {
                        let names: Vec<String> = found.into_iter().map(|f| f.name).collect();
                        if print {
                            eprintln!(
                                "\n[searched the tools for \"{}\": {}]",
                                screen::line(&query, 200),
                                if names.is_empty() {
                                    "nothing found".to_owned()
                                } else {
                                    format!("loaded {}", screen::line(&names.join(", "), 2000))
                                }
                            );
                        }
                        seen.entry(call_id).or_default().searched = Some(names);
                    }
                    // Added up call by call, so a turn that fails still counts what it used.
                    TurnEvent::Usage {
                        usage: u,
                        cost_micro_usd,
                    } => {
                        // Queued; the run's history is flushed when it is closed.
                        chat.count(&TurnEvent::Usage {
                            usage: u,
                            cost_micro_usd,
                        });
                        let mut spent = usage.lock().unwrap_or_else(|p| p.into_inner());
                        spent.usage += u;
                        spent.cost = match (spent.calls, spent.cost, cost_micro_usd) {
                            (0, _, cost) => cost,
                            (_, Some(a), Some(b)) => Some(a.saturating_add(b)),
                            _ => None,
                        };
                        spent.calls += 1;
                    }
                    _ => {}
                }
            }
        };
        let start = history.len();
        let result = self
            .chat
            .agent
            .run_turn_with(
                self.provider.as_ref(),
                &self.model,
                history,
                text,
                &options,
                &record,
            )
            .await;
        on_ctrl_c.abort();
        if stream_text {
            println!();
        }
        let seen = seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let usage = *usage.lock().unwrap_or_else(|p| p.into_inner());
        (result, trace(&history[start..], &seen), usage)
    }
}

/// The tokens of a turn's model calls, and their cost when every call's price is known.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    pub usage: Usage,
    pub cost: Option<u64>,
    calls: u32,
}

impl Spent {
    /// `12,345 in, 678 out, 10,000 cache read, 2,000 cache write tokens; ≈ $0.0123`.
    pub fn describe(&self) -> String {
        let u = &self.usage;
        let mut text = format!("{} in, {} out", u.input_tokens, u.output_tokens);
        if u.cache_read_tokens + u.cache_write_tokens > 0 {
            text.push_str(&format!(
                ", {} cache read, {} cache write",
                u.cache_read_tokens, u.cache_write_tokens
            ));
        }
        text.push_str(" tokens");
        match self.cost {
            Some(micro) => text.push_str(&format!("; ≈ ${:.4}", micro as f64 / 1e6)),
            None if self.calls > 0 => text.push_str("; cost unknown (no price for this model)"),
            None => {}
        }
        text
    }
}

impl Session {
    pub async fn stop(self) {
        self.ctx.host.shutdown("the command ended").await;
    }
}

/// The calls of a turn's messages, with what the events said about them.
fn trace(messages: &[Message], seen: &HashMap<String, Seen>) -> Vec<TraceEntry> {
    let results: HashMap<&str, (&Vec<ContentPart>, bool)> = messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult {
                call_id,
                content,
                is_error,
            } => Some((call_id.as_str(), (content, *is_error))),
            _ => None,
        })
        .collect();
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .map(|call| {
            let info = seen.get(&call.id).cloned().unwrap_or_default();
            if let Some(found) = &info.searched {
                return TraceEntry {
                    tool: call.name.clone(),
                    server: None,
                    arguments: call.arguments.clone(),
                    decision: "allowed",
                    decided_by: "toolgate",
                    reason: Some(if found.is_empty() {
                        "Toolgate's tool search: nothing found".to_owned()
                    } else {
                        format!("Toolgate's tool search: loaded {}", found.join(", "))
                    }),
                    success: true,
                    output: String::new(),
                };
            }
            let (output, is_error) = results
                .get(call.id.as_str())
                .map(|(content, is_error)| {
                    let text = content
                        .iter()
                        .filter_map(|p| match p {
                            ContentPart::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    (text, *is_error)
                })
                .unwrap_or_default();
            // A call that never reached the gate (unknown tool, bad arguments) was refused by
            // Toolgate itself.
            let refused = info.by.is_none();
            TraceEntry {
                tool: info.tool.clone().unwrap_or_else(|| call.name.clone()),
                server: info.server.clone(),
                arguments: call.arguments.clone(),
                decision: if info.denied || refused {
                    "denied"
                } else {
                    "allowed"
                },
                decided_by: info.by.unwrap_or("toolgate"),
                reason: info
                    .reason
                    .clone()
                    .or_else(|| refused.then(|| output.clone())),
                success: !is_error && !info.denied && !refused,
                output,
            }
        })
        .collect()
}

/// The JSON Schema of `--schema FILE`, or what is wrong with it, before anything starts.
fn read_schema(path: &std::path::Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("--schema {}: cannot read it: {e}", path.display()))?;
    let schema: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "--schema {}: not JSON (line {}, column {}): {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    toolgate_policy::compile_schema(&schema)
        .map_err(|e| anyhow::anyhow!("--schema {}: {e}", path.display()))?;
    Ok(schema)
}

/// How `toolgate run` answers: as JSON, as a value of a schema, and in how many rounds.
pub struct Shape<'a> {
    pub json: bool,
    pub schema: Option<&'a std::path::Path>,
    pub max_rounds: usize,
}

/// `toolgate run`: one goal, its trace, and the answer.
pub async fn run(ctx: Context, goal: &str, approve: &[String], shape: Shape<'_>) -> Result<u8> {
    let Shape {
        json,
        schema,
        max_rounds,
    } = shape;
    let schema = schema.map(read_schema).transpose()?;
    let structured = schema.is_some();
    let session = Session::start(ctx, approve, goal).await?;
    let mut history = Vec::new();
    let (result, trace, spent) = session
        .turn(&mut history, goal, (!json, max_rounds), schema)
        .await;
    session.stop().await;
    let report = RunReport {
        goal: goal.to_owned(),
        trace,
        answer: result.as_ref().ok().cloned(),
        error: result.err().map(|e| e.to_string()),
        usage: spent.usage,
        cost_micro_usd: spent.cost,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if let (true, Some(answer)) = (structured, &report.answer) {
            // The value alone on stdout, for a script to read; the trace stays on stderr.
            // Raw for a script; escaped when a person reads it on a terminal.
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                println!("{}", screen::stream(answer));
            } else {
                println!("{answer}");
            }
        }
        if let Some(error) = &report.error {
            eprintln!("toolgate: {}", screen::stream(error));
        }
        eprintln!(
            "[{} tool call(s); {}]",
            report.trace.len(),
            spent.describe()
        );
    }
    Ok(report.exit_code())
}

/// The line typed at the chat's prompt; `None` at the end of input or on Ctrl-C. The line is
/// read on a thread of its own, which stops reading once the prompt is left (see
/// [`crate::terminal`]), and which the process never waits for on its way out.
async fn prompt() -> Option<String> {
    let left = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (typed, line) = tokio::sync::oneshot::channel();
    let reading = left.clone();
    std::thread::spawn(move || {
        let line = crate::terminal::read_line(|| !reading.load(Ordering::Relaxed));
        let _ = typed.send(line);
    });
    tokio::select! {
        line = line => line.ok().flatten(),
        _ = tokio::signal::ctrl_c() => {
            left.store(true, Ordering::Relaxed);
            eprintln!();
            None
        }
    }
}

/// `toolgate chat`: turns until end of input, `/exit`, or Ctrl-C at the prompt.
pub async fn chat(ctx: Context, approve: &[String]) -> Result<u8> {
    let session = Session::start(ctx, approve, "Chat from the terminal").await?;
    eprintln!(
        "Chatting with {} ({}). Each tool call asks here first; Ctrl-C stops a turn. /exit, Ctrl-D or Ctrl-C at the prompt to end.",
        session.model, session.ctx.settings.provider.base_url
    );
    let mut history = Vec::new();
    loop {
        eprint!("\nyou> ");
        let _ = std::io::stderr().flush();
        let Some(line) = prompt().await else {
            break;
        };
        let text = line.trim();
        if text == "/exit" {
            break;
        }
        if text.is_empty() {
            continue;
        }
        let rounds = TurnOptions::default().max_rounds;
        let (result, _, spent) = session.turn(&mut history, text, (true, rounds), None).await;
        if let Err(e) = result {
            eprintln!("toolgate: {}", screen::stream(&e.to_string()));
        }
        eprintln!("[{}]", spent.describe());
    }
    session.stop().await;
    Ok(0)
}
