//! The built catalog: the visible tools under their model-facing names, every source tool's
//! state for the UI, and the way back from a name the model used to (server, tool).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::naming::{
    assign_names, fold, prefix_for, sanitize, start_with_letter, starts_with_prefix, NameInput,
};
use crate::provider::for_provider;
use crate::settings::{HiddenReason, ToolFilter};
use crate::{
    Annotations, CatalogError, CatalogSettings, Provider, ServerToolSettings, SourceServer,
    SourceTool,
};

/// One tool the model sees.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The name the model sees and calls; valid for every [`Provider`].
    pub model_name: String,
    pub server_id: String,
    pub server_name: String,
    /// The tool exactly as the server listed it; call the server with `tool.name`. Shared with
    /// [`Catalog::listing`], so a build copies each tool once.
    pub tool: Arc<SourceTool>,
    /// The other server whose prefixed name this tool's own name imitates (see
    /// [`ListedTool::imitates`]).
    pub imitates: Option<String>,
}

impl Entry {
    /// The input schema as the server wrote it (what a connected client gets); use
    /// [`Entry::schema_for`] when sending to a model.
    pub fn schema(&self) -> &Value {
        &self.tool.input_schema
    }

    /// The input schema to send to `provider`: the server's, changed only where that provider
    /// needs it ([`crate::provider::SchemaFix`]). Borrowed when nothing changes, which is most
    /// schemas: a build of 1,000 tools copies none of them for nothing.
    pub fn schema_for(&self, provider: Provider) -> Cow<'_, Value> {
        for_provider(&self.tool.input_schema, provider)
    }

    /// The server's hints about the tool, for the approval gate and the UI.
    pub fn annotations(&self) -> &Annotations {
        &self.tool.annotations
    }
}

/// Every tool a running server offers, shown or not, for the UI's tool list.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ListedTool {
    pub server_id: String,
    pub server_name: String,
    pub tool: Arc<SourceTool>,
    pub state: ToolState,
    /// The id of another server when this tool's own name looks like that server's prefixed
    /// name (`files__read` offered by server `evil`, beside a server `files`): a name chosen to
    /// be mistaken for, or to catch grants meant for, the other server's tool. Shown as a
    /// warning; the tool is still named and resolved as its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub imitates: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(
    tag = "state",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ToolState {
    Visible { model_name: String },
    Hidden { reason: HiddenReason },
}

/// How much of a provider's allowance the visible tools use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub tools: usize,
    pub limit: usize,
    /// Rough prompt tokens the tool definitions cost on every request: for each tool, the bytes
    /// of its name, description and compact schema JSON, divided by 4 (the usual ratio for
    /// English text and JSON under BPE tokenizers). Providers add their own framing per tool, so
    /// treat this as a lower bound good for comparing settings, not for billing.
    pub estimated_tokens: usize,
}

impl Budget {
    /// How many tools must go before the request is accepted.
    pub fn excess(&self) -> usize {
        self.tools.saturating_sub(self.limit)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Sorted by (server id, tool name): a stable order keeps provider prompt caches warm.
    entries: Vec<Entry>,
    listing: Vec<ListedTool>,
    by_name: HashMap<String, usize>,
    by_fold: HashMap<String, usize>,
}

/// One source tool on its way into the catalog.
struct Pending<'a> {
    server: &'a SourceServer,
    tool: &'a SourceTool,
    prefix: usize,
    hidden: Option<HiddenReason>,
}

impl Catalog {
    /// Decides which tools the model sees and names them.
    ///
    /// `servers` are the running ones, in any order; the result depends only on the set of
    /// servers and tools, never on their order. Fails on duplicate server ids, on a pattern that
    /// does not compile (see [`CatalogSettings::validate`]), and in naming mode `none` on a
    /// collision.
    pub fn build(
        servers: &[SourceServer],
        settings: &CatalogSettings,
    ) -> Result<Catalog, CatalogError> {
        let mut servers: Vec<&SourceServer> = servers.iter().collect();
        servers.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(pair) = servers.windows(2).find(|pair| pair[0].id == pair[1].id) {
            return Err(CatalogError::DuplicateServerId(pair[0].id.clone()));
        }

        let no_settings = ServerToolSettings::default();
        let mut prefixes = Vec::with_capacity(servers.len());
        let mut pending = Vec::new();
        for &server in &servers {
            let server_settings = settings.servers.get(&server.id).unwrap_or(&no_settings);
            let filter = ToolFilter::compile(&server.id, server_settings)?;
            prefixes.push(prefix_for(&server.id, server_settings.prefix.as_deref()));

            let mut tools: Vec<&SourceTool> = server.tools.iter().collect();
            // Stable, so of two tools a server lists under one name the first listed is kept.
            tools.sort_by(|a, b| a.name.cmp(&b.name));
            let mut previous: Option<&str> = None;
            for tool in tools {
                let hidden = if !server.enabled {
                    Some(HiddenReason::ServerDisabled)
                } else if previous == Some(tool.name.as_str()) {
                    Some(HiddenReason::DuplicateName)
                } else {
                    filter.hidden_reason(&tool.name)
                };
                previous = Some(&tool.name);
                pending.push(Pending {
                    server,
                    tool,
                    prefix: prefixes.len() - 1,
                    hidden,
                });
            }
        }

        // The other server whose prefix the tool's own name begins with, judged on the name as
        // it would be offered unprefixed; a server sharing the tool's own prefix is no other.
        // Each server's prefix, to spot a tool named as if it were another's.
        let servers_and_prefixes: Vec<(&str, &str)> = servers
            .iter()
            .zip(&prefixes)
            .map(|(s, prefix)| (s.id.as_str(), prefix.as_str()))
            .collect();
        let imitated = |p: &Pending<'_>| -> Option<String> {
            let name = start_with_letter(sanitize(&p.tool.name));
            let own = fold(&prefixes[p.prefix]);
            servers_and_prefixes
                .iter()
                .find(|(id, prefix)| {
                    *id != p.server.id && fold(prefix) != own && starts_with_prefix(&name, prefix)
                })
                .map(|(id, _)| (*id).to_owned())
        };
        let imitates: Vec<Option<String>> = pending.iter().map(imitated).collect();

        let inputs: Vec<NameInput<'_>> = pending
            .iter()
            .zip(&imitates)
            .filter(|(p, _)| p.hidden.is_none())
            .map(|(p, imitates)| NameInput {
                server_id: &p.server.id,
                server_name: &p.server.name,
                tool: &p.tool.name,
                prefix: &prefixes[p.prefix],
                imitates: imitates.is_some(),
            })
            .collect();
        let mut names = assign_names(&inputs, settings.naming)?.into_iter();

        let mut catalog = Catalog {
            entries: Vec::with_capacity(inputs.len()),
            listing: Vec::with_capacity(pending.len()),
            by_name: HashMap::with_capacity(inputs.len()),
            by_fold: HashMap::with_capacity(inputs.len()),
        };
        for (p, imitates) in pending.into_iter().zip(imitates) {
            let tool = Arc::new(p.tool.clone());
            let state = match p.hidden {
                Some(reason) => ToolState::Hidden { reason },
                None => {
                    // `assign_names` returns one name per visible tool, so this always yields.
                    let Some(model_name) = names.next() else {
                        continue;
                    };
                    let index = catalog.entries.len();
                    catalog.by_name.insert(model_name.clone(), index);
                    catalog.by_fold.insert(fold(&model_name), index);
                    catalog.entries.push(Entry {
                        model_name: model_name.clone(),
                        server_id: p.server.id.clone(),
                        server_name: p.server.name.clone(),
                        tool: Arc::clone(&tool),
                        imitates: imitates.clone(),
                    });
                    ToolState::Visible { model_name }
                }
            };
            catalog.listing.push(ListedTool {
                server_id: p.server.id.clone(),
                server_name: p.server.name.clone(),
                tool,
                state,
                imitates,
            });
        }
        Ok(catalog)
    }

    /// The visible tools, sorted by server id, then tool name.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The tool the model means by `model_name`, by exact name.
    pub fn resolve(&self, model_name: &str) -> Option<&Entry> {
        self.by_name.get(model_name).map(|&i| &self.entries[i])
    }

    /// Like [`Catalog::resolve`], but also accepts the name with different ASCII case or `-`
    /// and `_` swapped, as models sometimes send it. Safe because names are unique under that
    /// folding; the approval gate still shows the resolved tool before anything runs.
    pub fn resolve_loose(&self, model_name: &str) -> Option<&Entry> {
        self.resolve(model_name).or_else(|| {
            self.by_fold
                .get(&fold(model_name))
                .map(|&i| &self.entries[i])
        })
    }

    /// Every tool of every server passed to [`Catalog::build`], visible or not, in the same
    /// order as [`Catalog::entries`].
    pub fn listing(&self) -> &[ListedTool] {
        &self.listing
    }

    /// The visible tools of one server.
    pub fn entries_for_server<'a>(&'a self, server_id: &'a str) -> impl Iterator<Item = &'a Entry> {
        self.entries
            .iter()
            .filter(move |e| e.server_id == server_id)
    }

    /// How the visible tools measure against `provider`'s limit.
    pub fn budget(&self, provider: Provider) -> Budget {
        let estimated_tokens = self
            .entries
            .iter()
            .map(|e| {
                let bytes = e.model_name.len()
                    + e.tool.description.len()
                    + json_len(&e.schema_for(provider));
                bytes.div_ceil(4)
            })
            .sum();
        Budget {
            tools: self.entries.len(),
            limit: provider.rules().max_tools,
            estimated_tokens,
        }
    }

    /// An error to show the user when `provider` would refuse this many tools.
    pub fn check(&self, provider: Provider) -> Result<(), CatalogError> {
        let limit = provider.rules().max_tools;
        if self.entries.len() > limit {
            return Err(CatalogError::TooManyTools {
                provider,
                limit,
                enabled: self.entries.len(),
            });
        }
        Ok(())
    }
}

/// Length of `value` as compact JSON, without building the string.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}
