//! The catalog's naming: any server ids, prefixes and tool names (a server can call its tools
//! anything), in every naming mode. No panic, and what the design promises: every model-facing
//! name is valid for every provider, names are unique even ignoring case and `-`/`_`, each
//! resolves back to exactly the tool it was given for, and none begins with another server's prefix.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use toolgate_catalog::naming::{fold, prefix_for, starts_with_prefix};
use toolgate_catalog::{
    is_valid_name, Catalog, CatalogSettings, NamingMode, ServerToolSettings, SourceServer,
    SourceTool,
};

fuzz_target!(|data: &[u8]| {
    let Some(text) = toolgate_fuzz::text(data) else {
        return;
    };
    // First line: the naming mode. Then a block per server: `@id[ prefix]`, then tool names.
    let mut lines = text.lines();
    let naming = match lines.next().map(str::len).unwrap_or(0) % 3 {
        0 => NamingMode::Auto,
        1 => NamingMode::Always,
        _ => NamingMode::None,
    };
    let mut settings = CatalogSettings {
        naming,
        ..CatalogSettings::default()
    };
    let mut servers: Vec<SourceServer> = Vec::new();
    for line in lines {
        if let Some(header) = line.strip_prefix('@') {
            let (id, prefix) = header.split_once(' ').unwrap_or((header, ""));
            if !prefix.is_empty() {
                settings.servers.insert(
                    id.to_owned(),
                    ServerToolSettings {
                        prefix: Some(prefix.to_owned()),
                        ..ServerToolSettings::default()
                    },
                );
            }
            servers.push(SourceServer {
                id: id.to_owned(),
                name: id.to_owned(),
                enabled: true,
                tools: Vec::new(),
            });
        } else if let Some(server) = servers.last_mut() {
            server.tools.push(SourceTool {
                name: line.to_owned(),
                title: None,
                description: String::new(),
                input_schema: json!({"type": "object"}),
                annotations: Default::default(),
            });
        }
    }
    let Ok(catalog) = Catalog::build(&servers, &settings) else {
        return;
    };
    let prefix_of = |id: &str| {
        prefix_for(
            id,
            settings.servers.get(id).and_then(|s| s.prefix.as_deref()),
        )
    };
    let mut folded = std::collections::HashSet::new();
    for entry in catalog.entries() {
        assert!(is_valid_name(&entry.model_name), "{:?}", entry.model_name);
        assert!(
            folded.insert(entry.model_name.to_ascii_lowercase().replace('-', "_")),
            "two tools are named {:?} (ignoring case and -/_)",
            entry.model_name
        );
        let found = catalog.resolve(&entry.model_name).expect("resolves");
        assert_eq!(
            (&found.server_id, &found.tool.name),
            (&entry.server_id, &entry.tool.name)
        );
        let loose = catalog
            .resolve_loose(&entry.model_name.to_ascii_uppercase())
            .expect("resolves loosely");
        assert_eq!(loose.model_name, entry.model_name);
        // No name reads as another server's: it never begins with a prefix and separator that
        // are not its own server's (two servers may share one prefix by the user's choice).
        let own = prefix_of(&entry.server_id);
        for other in &servers {
            let theirs = prefix_of(&other.id);
            if fold(&theirs) != fold(&own) {
                assert!(
                    !starts_with_prefix(&entry.model_name, &theirs),
                    "{:?} of {:?} reads as {:?}'s",
                    entry.model_name,
                    entry.server_id,
                    other.id
                );
            }
        }
    }
    // Building again gives the same names: they never change between runs.
    let again = Catalog::build(&servers, &settings).expect("builds again");
    let names = |c: &Catalog| {
        c.entries()
            .iter()
            .map(|e| e.model_name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&catalog), names(&again));
});
