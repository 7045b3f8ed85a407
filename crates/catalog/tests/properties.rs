//! Property tests: whatever the servers call their tools, every name is valid for every
//! provider, unique, resolves back, and does not depend on input order.

use std::collections::{BTreeMap, HashSet};

use proptest::prelude::*;
use regex::Regex;
use serde_json::json;
use toolgate_catalog::naming::prefix_for;
use toolgate_catalog::{
    Catalog, CatalogError, CatalogSettings, NamingMode, ServerToolSettings, SourceServer,
    SourceTool,
};

/// Tool names: mostly arbitrary Unicode of 1..=128 characters, mixed with short ASCII names
/// from a tiny alphabet so that collisions (`a-b`/`a_b`/`A.b`) are common rather than rare.
fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::collection::vec(any::<char>(), 1..=128)
            .prop_map(|chars| chars.into_iter().collect::<String>()),
        3 => "[aAbB][-_.]?[aAbB]?",
        1 => "[a-z]{100,128}",
        1 => "[a-z]{1,8}__[a-z]{1,8}",
        // Names that begin with another server's prefix, as an impostor's would.
        2 => "([ab0]|t_0)(__|--|_-)[a-z]{1,3}",
    ]
}

fn server_set() -> impl Strategy<Value = Vec<SourceServer>> {
    // Ids are unique by construction (map keys); some share their first 24 characters.
    let ids = proptest::collection::btree_set(
        prop_oneof![
            "[a-z0-9.-]{1,8}",
            "[a-z]{24}[0-9]",
            "[0-9]{1,3}",
            "[ab0]",
            "[ab]__[ab]_?"
        ],
        1..6,
    );
    ids.prop_flat_map(|ids| {
        let n = ids.len();
        (
            Just(ids.into_iter().collect::<Vec<_>>()),
            proptest::collection::vec(proptest::collection::vec(tool_name(), 0..12), n),
            proptest::collection::vec(any::<bool>(), n),
        )
    })
    .prop_map(|(ids, tools, enabled)| {
        ids.into_iter()
            .zip(tools)
            .zip(enabled)
            .map(|((id, tools), on)| SourceServer {
                name: format!("Server {id}"),
                id,
                // Mostly enabled, so most cases have something to name.
                enabled: on || tools.len() % 2 == 0,
                tools: tools
                    .into_iter()
                    .map(|name| SourceTool {
                        name,
                        title: None,
                        description: String::new(),
                        input_schema: json!({"type": "object"}),
                        annotations: Default::default(),
                    })
                    .collect(),
            })
            .collect()
    })
}

fn settings() -> impl Strategy<Value = CatalogSettings> {
    let naming = prop_oneof![
        Just(NamingMode::Auto),
        Just(NamingMode::Always),
        Just(NamingMode::None)
    ];
    let prefix = proptest::option::of("[a-z]{1,3}");
    (naming, prefix).prop_map(|(naming, prefix)| {
        let mut servers = BTreeMap::new();
        // A shared custom prefix on two ids the generator often makes, to exercise clashes.
        for id in ["a", "b", "0"] {
            servers.insert(
                id.to_owned(),
                ServerToolSettings {
                    prefix: prefix.clone(),
                    ..Default::default()
                },
            );
        }
        CatalogSettings {
            naming,
            servers,
            ..CatalogSettings::default()
        }
    })
}

/// A deterministic shuffle of servers and of each server's tools, from `seed`.
fn shuffled(servers: &[SourceServer], seed: u64) -> Vec<SourceServer> {
    let mut state = seed | 1;
    let mut out = servers.to_vec();
    for s in &mut out {
        shuffle(&mut s.tools, &mut state);
    }
    shuffle(&mut out, &mut state);
    out
}

/// Fisher-Yates driven by xorshift64: enough to permute a test input.
fn shuffle<T>(items: &mut [T], state: &mut u64) {
    for i in (1..items.len()).rev() {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        items.swap(i, (*state % (i as u64 + 1)) as usize);
    }
}

fn names(catalog: &Catalog) -> Vec<(String, String, String)> {
    catalog
        .entries()
        .iter()
        .map(|e| {
            (
                e.server_id.clone(),
                e.tool.name.clone(),
                e.model_name.clone(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn names_are_valid_unique_reversible_and_order_free(
        servers in server_set(),
        settings in settings(),
        seed in any::<u64>(),
    ) {
        let valid = Regex::new("^[a-zA-Z][a-zA-Z0-9_-]{0,63}$").unwrap();
        let built = Catalog::build(&servers, &settings);
        let again = Catalog::build(&shuffled(&servers, seed), &settings);

        let catalog = match built {
            Ok(catalog) => catalog,
            Err(CatalogError::NameCollision { first, second, .. }) => {
                prop_assert_eq!(settings.naming, NamingMode::None);
                prop_assert!(first != second);
                // The shuffled input fails the same way.
                let same_error = matches!(again, Err(CatalogError::NameCollision { .. }));
                prop_assert!(same_error, "the shuffled input must fail alike");
                return Ok(());
            }
            Err(other) => return Err(TestCaseError::fail(format!("unexpected error: {other}"))),
        };

        let mut folded = HashSet::new();
        for e in catalog.entries() {
            prop_assert!(valid.is_match(&e.model_name), "invalid name {:?}", e.model_name);
            prop_assert!(
                folded.insert(e.model_name.to_ascii_lowercase().replace('-', "_")),
                "name clash (after folding) on {:?}", e.model_name
            );
            let back = catalog.resolve(&e.model_name).unwrap();
            prop_assert_eq!(&back.server_id, &e.server_id);
            prop_assert_eq!(&back.tool.name, &e.tool.name);
            let loose = catalog.resolve_loose(&e.model_name.to_ascii_uppercase()).unwrap();
            prop_assert_eq!(&loose.model_name, &e.model_name);
        }

        // No name begins with the prefix and separator of a server other than its own (unless
        // the two servers share one prefix): a host showing only names cannot be misled.
        let prefix_of = |id: &str| {
            prefix_for(id, settings.servers.get(id).and_then(|s| s.prefix.as_deref()))
        };
        let folded_mark = |id: &str| format!("{}__", prefix_of(id).to_ascii_lowercase().replace('-', "_"));
        for e in catalog.entries() {
            let name = e.model_name.to_ascii_lowercase().replace('-', "_");
            for other in &servers {
                let mark = folded_mark(&other.id);
                if other.id != e.server_id && mark != folded_mark(&e.server_id) {
                    prop_assert!(
                        !name.starts_with(&mark),
                        "{:?} of server {:?} reads as server {:?}'s", e.model_name, e.server_id, other.id
                    );
                }
            }
        }

        // Every (server, tool) pair an enabled server offers is visible exactly once.
        let offered: HashSet<(&str, &str)> = servers
            .iter()
            .filter(|s| s.enabled)
            .flat_map(|s| s.tools.iter().map(move |t| (s.id.as_str(), t.name.as_str())))
            .collect();
        prop_assert_eq!(catalog.len(), offered.len());
        prop_assert_eq!(
            catalog.listing().len(),
            servers.iter().map(|s| s.tools.len()).sum::<usize>()
        );

        let again = again.unwrap();
        prop_assert_eq!(names(&catalog), names(&again));
    }
}
