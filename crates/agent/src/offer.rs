//! What a turn offers the model, built when its inputs change rather than on every turn or call.
//!
//! An [`Offer`] is the catalog of the ready servers under the user's tool settings, with what
//! every turn and call needs from it made once: each server's launch fingerprint, each tool's
//! fingerprint (on first use), what the gate knows of each server, the MCP Apps its tools
//! link, the tool specs per provider, the search index, and whether the
//! provider's limits hold. [`Offers`] keeps them by their inputs: the manager's
//! [`ServerManager::version`] (every start, stop, crash and list change moves it), the tool
//! settings and the servers a client's profile shows. A turn or call whose inputs match takes
//! the kept one; building a catalog of a thousand tools takes about 25 ms, taking a kept one a
//! few hundred nanoseconds.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use toolgate_catalog::{Catalog, CatalogError, CatalogSettings, Entry, SearchIndex};
use toolgate_llm::ToolSpec;
use toolgate_mcp::{ServerManager, ServerSnapshot};

use crate::{approval, catalog_of, exposure, ToolTarget};

/// How many sets of inputs are kept: the chat's, and a few connected clients' profiles.
const KEPT: usize = 8;

/// The tools of a set of inputs, and what calls and turns derive from them.
pub struct Offer {
    pub(crate) catalog: Catalog,
    /// Each server's launch fingerprint, which grants are bound to.
    pub(crate) fingerprints: HashMap<String, String>,
    /// What the gate knows of each server (its way out, its untrusted output, results to
    /// review).
    pub(crate) facts: exposure::Facts,
    /// (server id, tool) → the `ui://` resource of the MCP App that shows its results.
    pub(crate) apps: HashMap<(String, String), String>,
    /// Each tool's fingerprint, by model-facing name, made on its first call.
    tool_prints: Mutex<HashMap<String, Arc<str>>>,
    /// The specs sent to each provider, in catalog order, made on first use.
    specs: [OnceLock<Specs>; 4],
    /// Whether the provider accepts every tool at once, per provider.
    checks: [OnceLock<Result<(), CatalogError>>; 4],
    search: OnceLock<SearchIndex>,
}

/// The tools as sent to one provider.
pub(crate) struct Specs {
    /// One per catalog entry.
    pub loaded: Vec<Arc<ToolSpec>>,
    /// The same, deferred (Anthropic's tool search); made only for Anthropic.
    pub deferred: Vec<Arc<ToolSpec>>,
    /// The definitions' estimated tokens (see `toolgate_catalog::Budget`).
    pub tokens: usize,
}

fn slot(target: ToolTarget) -> usize {
    match target {
        ToolTarget::Anthropic => 0,
        ToolTarget::OpenAi => 1,
        ToolTarget::Gemini => 2,
        ToolTarget::OpenAiCompatible => 3,
    }
}

impl Offer {
    pub(crate) fn new(catalog: Catalog, snapshot: &[ServerSnapshot]) -> Self {
        let fingerprints = snapshot
            .iter()
            .map(|s| (s.id.clone(), approval::launch_fingerprint(&s.launch)))
            .collect();
        let apps = snapshot
            .iter()
            .flat_map(|s| {
                s.tools.iter().filter_map(|t| {
                    let uri = t.ui_resource.clone()?;
                    Some(((s.id.clone(), t.name.clone()), uri))
                })
            })
            .collect();
        let facts = snapshot
            .iter()
            .map(|s| (s.id.clone(), exposure::ServerFacts::of(s)))
            .collect();
        Self {
            catalog,
            fingerprints,
            facts,
            apps,
            tool_prints: Mutex::default(),
            specs: Default::default(),
            checks: Default::default(),
            search: OnceLock::new(),
        }
    }

    /// The launch fingerprint grants on `server` are bound to; empty (no grant's) when unknown.
    pub(crate) fn fingerprint(&self, server: &str) -> &str {
        self.fingerprints.get(server).map_or("", String::as_str)
    }

    /// The fingerprint of `entry`'s tool (its name, description and schema), which grants are
    /// bound to: hashed once per tool listing, not per call.
    pub(crate) fn tool_print(&self, entry: &Entry) -> Arc<str> {
        let mut prints = self.tool_prints.lock().unwrap_or_else(|p| p.into_inner());
        prints
            .entry(entry.model_name.clone())
            .or_insert_with(|| approval::tool_print(entry).into())
            .clone()
    }

    /// Whether `target` takes every visible tool at once.
    pub(crate) fn check(&self, target: ToolTarget) -> Result<(), CatalogError> {
        self.checks[slot(target)]
            .get_or_init(|| self.catalog.check(target))
            .clone()
    }

    pub(crate) fn specs(&self, target: ToolTarget) -> &Specs {
        self.specs[slot(target)].get_or_init(|| {
            let loaded: Vec<Arc<ToolSpec>> = self
                .catalog
                .entries()
                .iter()
                .map(|e| {
                    Arc::new(ToolSpec::new(
                        e.model_name.clone(),
                        e.tool.description.clone(),
                        e.schema_for(target).into_owned(),
                    ))
                })
                .collect();
            let deferred = match target {
                ToolTarget::Anthropic => loaded
                    .iter()
                    .map(|s| Arc::new(ToolSpec::clone(s).deferred()))
                    .collect(),
                _ => Vec::new(),
            };
            Specs {
                loaded,
                deferred,
                tokens: self.catalog.budget(target).estimated_tokens,
            }
        })
    }

    pub(crate) fn search_index(&self) -> &SearchIndex {
        self.search.get_or_init(|| SearchIndex::new(&self.catalog))
    }
}

/// What an offer is built from, besides the manager's version.
#[derive(PartialEq)]
struct Inputs {
    tools: CatalogSettings,
    only: Option<BTreeSet<String>>,
}

/// Offers kept by their inputs; share one per host so every turn and call uses it.
#[derive(Default)]
pub struct Offers {
    kept: Mutex<Vec<(u64, Inputs, Arc<Offer>)>>,
}

impl Offers {
    /// The offer for `servers` as they are now under `tools`, limited to `only` (a profile's
    /// servers): the kept one when nothing changed, else built and kept.
    pub(crate) async fn get(
        &self,
        servers: &ServerManager,
        tools: &CatalogSettings,
        only: Option<&BTreeSet<String>>,
    ) -> Result<Arc<Offer>, CatalogError> {
        // Read before the snapshot: a change after it moves the version, and the next turn
        // builds again.
        let version = servers.version();
        {
            let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            let found = kept.iter().find(|(v, inputs, _)| {
                *v == version && inputs.tools == *tools && inputs.only.as_ref() == only
            });
            if let Some((_, _, offer)) = found {
                return Ok(offer.clone());
            }
        }
        let mut snapshot = servers.snapshot().await;
        if let Some(only) = only {
            snapshot.retain(|s| only.contains(&s.id));
        }
        let catalog = catalog_of(&snapshot, tools)?;
        let offer = Arc::new(Offer::new(catalog, &snapshot));
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|(_, inputs, _)| !(inputs.tools == *tools && inputs.only.as_ref() == only));
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push((
            version,
            Inputs {
                tools: tools.clone(),
                only: only.cloned(),
            },
            offer.clone(),
        ));
        Ok(offer)
    }
}
