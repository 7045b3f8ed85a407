//! Which tools the model sees, under which names, and the way back to (server, tool).
//!
//! The walking skeleton's rule: a tool keeps its own name unless two running servers offer the
//! same name; then both are named `<server id>__<tool>`. (Filters, per-provider name rules and
//! budgets come with the catalog crate.)

use std::collections::HashMap;

use toolgate_llm::ToolSpec;
use toolgate_mcp::{ServerSnapshot, ServerStatus, ToolInfo};

#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// The name the model sees.
    pub name: String,
    pub server_id: String,
    pub server_name: String,
    pub tool: ToolInfo,
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<CatalogEntry>,
}

impl Catalog {
    pub fn from_servers(servers: &[ServerSnapshot]) -> Self {
        let running = || {
            servers
                .iter()
                .filter(|s| s.enabled && s.status == ServerStatus::Ready)
        };
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for tool in running().flat_map(|s| &s.tools) {
            *counts.entry(tool.name.as_str()).or_default() += 1;
        }
        let entries = running()
            .flat_map(|s| {
                let counts = &counts;
                s.tools.iter().map(move |t| CatalogEntry {
                    name: if counts.get(t.name.as_str()).copied().unwrap_or(0) > 1 {
                        format!("{}__{}", s.id, t.name)
                    } else {
                        t.name.clone()
                    },
                    server_id: s.id.clone(),
                    server_name: s.name.clone(),
                    tool: t.clone(),
                })
            })
            .collect();
        Self { entries }
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.entries
            .iter()
            .map(|e| ToolSpec {
                name: e.name.clone(),
                description: e.tool.description.clone(),
                input_schema: e.tool.input_schema.clone(),
            })
            .collect()
    }

    pub fn resolve(&self, model_name: &str) -> Option<&CatalogEntry> {
        self.entries.iter().find(|e| e.name == model_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(id: &str, status: ServerStatus, tools: &[&str]) -> ServerSnapshot {
        ServerSnapshot {
            id: id.into(),
            name: id.to_uppercase(),
            enabled: true,
            status,
            implementation: None,
            protocol_version: None,
            tools: tools
                .iter()
                .map(|n| ToolInfo::new(*n, "", json!({"type": "object"})))
                .collect(),
            resources: vec![],
            prompts: vec![],
        }
    }

    #[test]
    fn only_colliding_names_are_prefixed_and_resolve_back() {
        let catalog = Catalog::from_servers(&[
            server("a", ServerStatus::Ready, &["echo", "add"]),
            server("b", ServerStatus::Ready, &["echo"]),
            server("c", ServerStatus::Starting, &["secret"]),
        ]);
        let names: Vec<_> = catalog.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["a__echo", "add", "b__echo"]);
        let e = catalog.resolve("b__echo").expect("resolves");
        assert_eq!((e.server_id.as_str(), e.tool.name.as_str()), ("b", "echo"));
        assert!(
            catalog.resolve("secret").is_none(),
            "tools of servers not running are not offered"
        );
    }
}
