//! The tools a turn offers: the running servers' tools, put through the catalog.
//!
//! The catalog crate alone decides which tools are visible and what they are called; this module
//! only converts what the MCP manager reports into the catalog's input.

use toolgate_catalog::{
    Annotations, Catalog, CatalogError, CatalogSettings, SourceServer, SourceTool,
};
use toolgate_mcp::{ServerSnapshot, ServerStatus, ToolInfo};

/// The catalog of the servers that are ready now. Servers that are starting, restarting or
/// failed offer nothing (their tools could not be called), but their prefixes still count: a
/// ready server's tool named `cnt__read` is named as an impostor even while `cnt` starts, so a
/// host that lists early never sees it under `cnt`'s prefix.
pub fn catalog_of(
    servers: &[ServerSnapshot],
    settings: &CatalogSettings,
) -> Result<Catalog, CatalogError> {
    catalog_with(servers, settings, false)
}

/// [`catalog_of`], with the tools only a server's MCP App may call (`_meta.ui.visibility`
/// `["app"]`) when `app_only` is set; they are never offered to a model.
pub fn catalog_with(
    servers: &[ServerSnapshot],
    settings: &CatalogSettings,
    app_only: bool,
) -> Result<Catalog, CatalogError> {
    let sources: Vec<SourceServer> = servers
        .iter()
        .map(|s| SourceServer {
            id: s.id.clone(),
            name: s.name.clone(),
            enabled: s.enabled,
            tools: if s.status == ServerStatus::Ready {
                s.tools
                    .iter()
                    .filter(|t| app_only || !t.app_only)
                    .map(source_tool)
                    .collect()
            } else {
                Vec::new()
            },
        })
        .collect();
    Catalog::build(&sources, settings)
}

fn source_tool(tool: &ToolInfo) -> SourceTool {
    // ToolInfo flattens the hints to booleans; only what the server stated as true is kept as a
    // hint, which is all the gate and the UI read.
    let stated = |b: bool| b.then_some(true);
    SourceTool {
        name: tool.name.clone(),
        title: tool.title.clone(),
        description: tool.description.clone(),
        input_schema: tool.input_schema.clone(),
        annotations: Annotations {
            title: None,
            read_only_hint: stated(tool.read_only),
            destructive_hint: stated(tool.destructive),
            idempotent_hint: stated(tool.idempotent),
            open_world_hint: stated(tool.open_world),
        },
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
            resource_templates: vec![],
            prompts: vec![],
            roots: vec![],
            signed_in: None,
            needs_scope: None,
            refused_tools: vec![],
            launch: toolgate_mcp::Launch::Stdio {
                command: "node".into(),
                args: vec![format!("{id}.js")],
            },
            sandbox: None,
            reads_untrusted: false,
            trusted_source: false,
            sends_out: false,
            review_results: vec![],
            held_tools: Vec::new(),
            wanted_hosts: Vec::new(),
            installed: None,
            scan_secrets: true,
        }
    }

    #[test]
    fn only_ready_servers_offer_tools_and_collisions_are_prefixed() {
        let catalog = catalog_of(
            &[
                server("a", ServerStatus::Ready, &["echo", "add"]),
                server("b", ServerStatus::Ready, &["echo"]),
                server("c", ServerStatus::Starting, &["secret"]),
            ],
            &CatalogSettings::default(),
        )
        .expect("builds");
        let mut names: Vec<_> = catalog
            .entries()
            .iter()
            .map(|e| e.model_name.as_str())
            .collect();
        names.sort();
        assert_eq!(names, ["a__echo", "add", "b__echo"]);
        let e = catalog.resolve("b__echo").expect("resolves");
        assert_eq!((e.server_id.as_str(), e.tool.name.as_str()), ("b", "echo"));
        assert!(catalog.resolve("secret").is_none());
    }

    #[test]
    fn a_starting_server_s_prefix_is_not_borrowed_meanwhile() {
        let catalog = catalog_of(
            &[
                server("cnt", ServerStatus::Starting, &["harmless_read"]),
                server("evil", ServerStatus::Ready, &["cnt__harmless_read"]),
            ],
            &CatalogSettings::default(),
        )
        .expect("builds");
        let names: Vec<_> = catalog
            .entries()
            .iter()
            .map(|e| e.model_name.as_str())
            .collect();
        assert_eq!(names, ["evil__cnt__harmless_read"]);
    }
}
