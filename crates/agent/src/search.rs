//! Tool search: which tools a turn sends, and the `search_tools` tool that loads the others.
//!
//! Below the user's threshold (`tools.search` in the settings: a tool count and a token
//! estimate), every visible tool is sent, as before. Past it, a turn sends the tools the user
//! pinned as always loaded and one tool of Toolgate's own, `search_tools`, which ranks the other
//! tools by what they do (locally: [`toolgate_catalog::SearchIndex`]) and loads what it finds for
//! the rest of the turn. The system prompt says how many tools of which servers can be found.
//!
//! How "loaded" reaches the model depends on the provider:
//! - **Anthropic**: every tool is in every request, the ones not loaded with `defer_loading`, so
//!   they stay out of the model's context (and bill no tokens) until a search result names them
//!   with a `tool_reference` block, which the API expands into the definition. The tools part of
//!   the prompt never changes, so the prompt cache keeps it, and a tool found stays loaded as
//!   long as its search result is in the conversation.
//! - **Everyone else**: the request's tool list is the always-loaded tools, `search_tools`, and
//!   the tools found so far this turn (appended, so the prefix before them stays the same).
//!
//! The gate sees exactly the calls it saw before: a found tool's call is resolved in the same
//! catalog and decided, audited and run like any other. `search_tools` itself runs no server,
//! reads nothing but the tool list, and needs no approval.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};
use toolgate_catalog::{CatalogError, CatalogSettings};
use toolgate_llm::{ContentPart, Message, ToolCall, ToolSpec};

use crate::offer::Offer;
use crate::{ToolTarget, TurnEvent};

/// The search tool's name, unless a server's tool already has it.
const NAME: &str = "search_tools";
const FALLBACK_NAME: &str = "toolgate_search_tools";
/// Tools found by one search when the model does not say; and at most.
const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 20;

/// A tool a search found, for the UI and the CLI's trace.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct FoundTool {
    /// The name the model calls it by.
    pub name: String,
    pub server_id: String,
    pub server_name: String,
    /// The server's own name for it.
    pub tool: String,
}

/// The tools of one turn: what every request sends, and what searches have loaded.
pub(crate) struct TurnTools {
    target: ToolTarget,
    /// Sent with every request (for Anthropic, the deferred tools too).
    base: Vec<Arc<ToolSpec>>,
    search: Option<Search>,
}

struct Search {
    name: String,
    /// For the system prompt.
    note: String,
    /// Catalog entries loaded this turn (pinned ones are loaded from the start), in the order
    /// they were found.
    loaded: Vec<usize>,
    pinned: Vec<bool>,
    /// How many tools the provider takes in one request.
    room: usize,
}

/// Decides whether this turn searches, and what its requests send at first.
pub(crate) fn plan(
    offer: &Offer,
    settings: &CatalogSettings,
    target: ToolTarget,
) -> Result<TurnTools, CatalogError> {
    let specs = offer.specs(target);
    let entries = offer.catalog.entries();
    if !settings.search.applies(entries.len(), specs.tokens) {
        offer.check(target)?;
        return Ok(TurnTools {
            target,
            base: specs.loaded.clone(),
            search: None,
        });
    }
    let name = if offer.catalog.resolve_loose(NAME).is_some() {
        FALLBACK_NAME
    } else {
        NAME
    };
    let pinned: Vec<bool> = entries
        .iter()
        .map(|e| settings.is_pinned(&e.server_id, &e.tool.name))
        .collect();
    let always: Vec<usize> = (0..entries.len()).filter(|&i| pinned[i]).collect();
    let room = target.rules().max_tools;
    if always.len() + 1 > room {
        return Err(CatalogError::TooManyTools {
            provider: target,
            limit: room,
            enabled: always.len() + 1,
        });
    }
    let mut servers: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, entry) in entries.iter().enumerate() {
        if !pinned[i] {
            *servers.entry(entry.server_name.as_str()).or_default() += 1;
        }
    }
    let hidden: usize = servers.values().sum();
    let listed: Vec<String> = servers
        .iter()
        .map(|(server, count)| format!("{server} ({count})"))
        .collect();
    let note = format!(
        "Besides the tools listed, {hidden} more tools are available from these servers: {}. They \
         are not loaded: call `{name}` with what you need (for example \"create an issue\" or \
         \"read a file\") to find and load the ones that fit, then call them.",
        listed.join(", ")
    );
    // Always-loaded tools first and the search tool last of them: the prompt-cache breakpoint
    // goes on the last tool that is not deferred, and this order never changes.
    let mut base: Vec<Arc<ToolSpec>> = always.iter().map(|&i| specs.loaded[i].clone()).collect();
    base.push(Arc::new(spec(name, hidden, &listed)));
    if target == ToolTarget::Anthropic {
        base.extend(
            (0..entries.len())
                .filter(|&i| !pinned[i])
                .map(|i| specs.deferred[i].clone()),
        );
    }
    Ok(TurnTools {
        target,
        base,
        search: Some(Search {
            name: name.to_owned(),
            note,
            loaded: Vec::new(),
            pinned,
            room,
        }),
    })
}

fn spec(name: &str, hidden: usize, servers: &[String]) -> ToolSpec {
    ToolSpec::new(
        name,
        format!(
            "Finds tools by what they do and loads them for the rest of this turn. {hidden} tools \
             of these servers are available but not loaded: {}. Describe the task in a few \
             words; the tools found can be called right after.",
            servers.join(", ")
        ),
        json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool should do, in a few words: \"list files in a folder\", \"create a calendar event\"."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "How many tools to load at most (5 when left out)."
                }
            },
            "required": ["query"]
        }),
    )
}

impl TurnTools {
    /// A line for the system prompt when search is on.
    pub(crate) fn note(&self) -> Option<String> {
        self.search.as_ref().map(|s| s.note.clone())
    }

    pub(crate) fn is_search(&self, name: &str) -> bool {
        self.search.as_ref().is_some_and(|s| s.name == name)
    }

    /// The tools of the next request.
    pub(crate) fn specs(&self, offer: &Offer) -> Vec<Arc<ToolSpec>> {
        let mut tools = self.base.clone();
        if let Some(search) = &self.search {
            // Anthropic loads found tools from their references; others get them listed.
            if self.target != ToolTarget::Anthropic {
                let specs = offer.specs(self.target);
                tools.extend(search.loaded.iter().map(|&i| specs.loaded[i].clone()));
            }
        }
        tools
    }

    /// Answers one `search_tools` call: ranks the tools, loads what it finds, and tells the
    /// model (and the UI) which.
    pub(crate) fn search(
        &mut self,
        offer: &Offer,
        call: &ToolCall,
        on_event: &(dyn Fn(TurnEvent) + Send + Sync),
    ) -> Message {
        let target = self.target;
        let Some(search) = self.search.as_mut() else {
            return Message::tool_text(call.id.clone(), "Tool search is off.", true);
        };
        let query = call
            .arguments
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_owned();
        if query.is_empty() {
            return Message::tool_text(
                call.id.clone(),
                format!(
                    "`{}` needs a `query`: what the tool should do, in a few words.",
                    search.name
                ),
                true,
            );
        }
        let limit = call
            .arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_LIMIT, |n| usize::try_from(n).unwrap_or(MAX_LIMIT))
            .clamp(1, MAX_LIMIT);
        let entries = offer.catalog.entries();
        let hits = offer.search_index().search(&query, limit);
        let pinned = count(&search.pinned);
        for &i in &hits {
            // For providers that list loaded tools, never past their tool limit.
            let room_left = search.room.saturating_sub(1 + search.loaded.len() + pinned);
            if !search.pinned[i] && !search.loaded.contains(&i) && room_left > 0 {
                search.loaded.push(i);
            }
        }
        let found: Vec<FoundTool> = hits
            .iter()
            .map(|&i| FoundTool {
                name: entries[i].model_name.clone(),
                server_id: entries[i].server_id.clone(),
                server_name: entries[i].server_name.clone(),
                tool: entries[i].tool.name.clone(),
            })
            .collect();
        on_event(TurnEvent::ToolsSearched {
            call_id: call.id.clone(),
            query: query.clone(),
            found: found.clone(),
        });
        if hits.is_empty() {
            return Message::tool_text(
                call.id.clone(),
                format!(
                    "No tool matches \"{query}\". Try other words for what the tool does; the tools \
                     not loaded are listed by server in the description of `{}`.",
                    search.name
                ),
                false,
            );
        }
        let mut text = format!(
            "Found {} tool{}; {} loaded now and can be called directly:",
            hits.len(),
            if hits.len() == 1 { "" } else { "s" },
            if hits.len() == 1 { "it is" } else { "they are" }
        );
        for &i in &hits {
            let e = &entries[i];
            text.push_str(&format!(
                "\n- {} ({}): {}",
                e.model_name,
                e.server_name,
                e.tool.description.lines().next().unwrap_or_default()
            ));
        }
        let mut content = vec![ContentPart::text(text)];
        if target == ToolTarget::Anthropic {
            // Only deferred tools take a reference; a pinned one is loaded already.
            content.extend(hits.iter().filter(|&&i| !search.pinned[i]).map(|&i| {
                ContentPart::ToolReference {
                    tool_name: entries[i].model_name.clone(),
                }
            }));
        }
        Message::ToolResult {
            call_id: call.id.clone(),
            content,
            is_error: false,
        }
    }
}

fn count(flags: &[bool]) -> usize {
    flags.iter().filter(|f| **f).count()
}
