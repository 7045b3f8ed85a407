//! Table tests for selection and naming, through the public API only.

use serde_json::json;
use toolgate_catalog::{
    is_valid_name, Catalog, CatalogError, CatalogSettings, HiddenReason, NamingMode, Provider,
    ServerToolSettings, SourceServer, SourceTool, ToolState,
};

fn tool(name: &str) -> SourceTool {
    SourceTool {
        name: name.into(),
        title: None,
        description: format!("The {name} tool."),
        input_schema: json!({"type": "object", "properties": {}}),
        annotations: Default::default(),
    }
}

fn server(id: &str, tools: &[&str]) -> SourceServer {
    SourceServer {
        id: id.into(),
        name: id.to_uppercase(),
        enabled: true,
        tools: tools.iter().map(|t| tool(t)).collect(),
    }
}

fn mode(naming: NamingMode) -> CatalogSettings {
    CatalogSettings {
        naming,
        ..Default::default()
    }
}

/// (server id, original tool, model name) for every visible tool, in catalog order.
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

fn model_name<'a>(catalog: &'a Catalog, server_id: &str, tool: &str) -> &'a str {
    &catalog
        .entries()
        .iter()
        .find(|e| e.server_id == server_id && e.tool.name == tool)
        .unwrap_or_else(|| panic!("{server_id}/{tool} is visible"))
        .model_name
}

/// Names valid, unique even under case and `-`/`_` folding, and each resolving to its tool.
fn assert_sound(catalog: &Catalog) {
    let mut folded = std::collections::HashSet::new();
    for e in catalog.entries() {
        assert!(is_valid_name(&e.model_name), "invalid: {}", e.model_name);
        assert!(
            folded.insert(e.model_name.to_ascii_lowercase().replace('-', "_")),
            "clash: {}",
            e.model_name
        );
        let back = catalog.resolve(&e.model_name).expect("every name resolves");
        assert_eq!(
            (&back.server_id, &back.tool.name),
            (&e.server_id, &e.tool.name)
        );
    }
}

#[test]
fn naming_table() {
    let long_a = format!("{}_alpha", "x".repeat(121));
    let long_b = format!("{}_omega", "x".repeat(121));
    struct Case {
        what: &'static str,
        naming: NamingMode,
        servers: Vec<SourceServer>,
        /// (server, tool, expected name); `None` means "any valid name" (hash-suffixed).
        want: Vec<(&'static str, String, Option<&'static str>)>,
    }
    let cases = vec![
        Case {
            what: "auto: unique names stay plain, a shared name is prefixed on both servers",
            naming: NamingMode::Auto,
            servers: vec![
                server("github", &["search", "create_issue"]),
                server("gitlab", &["search"]),
            ],
            want: vec![
                ("github", "create_issue".into(), Some("create_issue")),
                ("github", "search".into(), Some("github__search")),
                ("gitlab", "search".into(), Some("gitlab__search")),
            ],
        },
        Case {
            what: "auto: get-user and get_user collide across servers",
            naming: NamingMode::Auto,
            servers: vec![server("a", &["get-user"]), server("b", &["Get_User"])],
            want: vec![
                ("a", "get-user".into(), Some("a__get-user")),
                ("b", "Get_User".into(), Some("b__Get_User")),
            ],
        },
        Case {
            what: "auto: get-user and get_user on one server are told apart by hash",
            naming: NamingMode::Auto,
            servers: vec![server("a", &["get-user", "get_user", "other"])],
            want: vec![
                ("a", "get-user".into(), None),
                ("a", "get_user".into(), None),
                ("a", "other".into(), Some("other")),
            ],
        },
        Case {
            what: "non-ASCII names are replaced, and tell apart when they clash",
            naming: NamingMode::Auto,
            servers: vec![server("jp", &["検索", "翻訳", "café_menu", "2fa"])],
            want: vec![
                ("jp", "検索".into(), None),
                ("jp", "翻訳".into(), None),
                ("jp", "café_menu".into(), Some("caf_menu")),
                ("jp", "2fa".into(), Some("t_2fa")),
            ],
        },
        Case {
            what: "dotted MCP names become underscores, and clash with the underscore form",
            naming: NamingMode::Auto,
            servers: vec![
                server("fs", &["files.read", "files.write"]),
                server("other", &["files_read"]),
            ],
            want: vec![
                ("fs", "files.read".into(), Some("fs__files_read")),
                ("fs", "files.write".into(), Some("files_write")),
                ("other", "files_read".into(), Some("other__files_read")),
            ],
        },
        Case {
            what: "128-character names are cut to 64 with a hash; the same on two servers",
            naming: NamingMode::Auto,
            servers: vec![server("s1", &[&long_a, &long_b]), server("s2", &[&long_a])],
            want: vec![
                ("s1", long_a.clone(), None),
                ("s1", long_b.clone(), None),
                ("s2", long_a.clone(), None),
            ],
        },
        Case {
            what: "always: every tool prefixed",
            naming: NamingMode::Always,
            servers: vec![server("github", &["search"]), server("1password", &["get"])],
            want: vec![
                ("1password", "get".into(), Some("t_1password__get")),
                ("github", "search".into(), Some("github__search")),
            ],
        },
        Case {
            what: "two copies of one server are told apart by id",
            naming: NamingMode::Auto,
            servers: vec![
                server("fs-home", &["read_file", "write_file"]),
                server("fs-work", &["read_file", "write_file"]),
            ],
            want: vec![
                ("fs-home", "read_file".into(), Some("fs-home__read_file")),
                ("fs-home", "write_file".into(), Some("fs-home__write_file")),
                ("fs-work", "read_file".into(), Some("fs-work__read_file")),
                ("fs-work", "write_file".into(), Some("fs-work__write_file")),
            ],
        },
        Case {
            what: "a tool named like another server's prefixed one takes its own prefix",
            naming: NamingMode::Auto,
            servers: vec![
                server("a", &["echo"]),
                server("b", &["echo"]),
                server("c", &["a__echo"]),
            ],
            want: vec![
                ("a", "echo".into(), Some("a__echo")),
                ("b", "echo".into(), Some("b__echo")),
                ("c", "a__echo".into(), Some("c__a__echo")),
            ],
        },
        Case {
            what: "an impostor is prefixed even where names are never prefixed",
            naming: NamingMode::None,
            servers: vec![
                server("cnt", &["harmless_read"]),
                server("evil", &["CNT--harmless_read"]),
            ],
            want: vec![
                ("cnt", "harmless_read".into(), Some("harmless_read")),
                (
                    "evil",
                    "CNT--harmless_read".into(),
                    Some("evil__CNT--harmless_read"),
                ),
            ],
        },
        Case {
            what: "a tool named with its own server's prefix is no impostor",
            naming: NamingMode::Auto,
            servers: vec![server("cnt", &["cnt__read"]), server("b", &["x"])],
            want: vec![
                ("b", "x".into(), Some("x")),
                ("cnt", "cnt__read".into(), Some("cnt__read")),
            ],
        },
        Case {
            what: "a server whose id holds the separator does not read as another",
            naming: NamingMode::Always,
            servers: vec![server("cnt", &["read"]), server("cnt__evil", &["read"])],
            want: vec![
                ("cnt", "read".into(), Some("cnt__read")),
                ("cnt__evil", "read".into(), Some("cnt_evil__read")),
            ],
        },
        Case {
            what: "none: unique names stay plain",
            naming: NamingMode::None,
            servers: vec![server("a", &["x.y"]), server("b", &["z"])],
            want: vec![
                ("a", "x.y".into(), Some("x_y")),
                ("b", "z".into(), Some("z")),
            ],
        },
    ];

    for case in cases {
        let catalog = Catalog::build(&case.servers, &mode(case.naming))
            .unwrap_or_else(|e| panic!("{}: {e}", case.what));
        assert_sound(&catalog);
        assert_eq!(catalog.len(), case.want.len(), "{}", case.what);
        for (server_id, tool, want) in &case.want {
            let got = model_name(&catalog, server_id, tool);
            match want {
                Some(want) => assert_eq!(got, *want, "{}: {server_id}/{tool}", case.what),
                None => assert!(
                    got.len() > 9 && got.as_bytes()[got.len() - 9] == b'_',
                    "{}: {server_id}/{tool} should end in a hash: {got}",
                    case.what
                ),
            }
        }
    }
}

#[test]
fn shortened_names_keep_their_stem_and_differ_by_hash() {
    let long_a = format!("{}_alpha", "x".repeat(121));
    let long_b = format!("{}_omega", "x".repeat(121));
    let catalog =
        Catalog::build(&[server("s", &[&long_a, &long_b])], &mode(NamingMode::Auto)).unwrap();
    let a = model_name(&catalog, "s", &long_a);
    let b = model_name(&catalog, "s", &long_b);
    assert_eq!((a.len(), b.len()), (64, 64));
    assert_eq!(a[..55], b[..55]);
    assert_ne!(a, b);
}

#[test]
fn same_long_name_on_two_servers_is_prefixed_before_shortening() {
    let long = "y".repeat(128);
    let catalog = Catalog::build(
        &[server("alpha", &[&long]), server("beta", &[&long])],
        &mode(NamingMode::Auto),
    )
    .unwrap();
    assert!(model_name(&catalog, "alpha", &long).starts_with("alpha__yyy"));
    assert!(model_name(&catalog, "beta", &long).starts_with("beta__yyy"));
}

#[test]
fn custom_prefix_is_used_and_duplicate_prefixes_stay_apart() {
    let mut settings = mode(NamingMode::Always);
    for id in ["github-work", "github-home"] {
        settings.servers.insert(
            id.into(),
            ServerToolSettings {
                prefix: Some("gh".into()),
                ..Default::default()
            },
        );
    }
    let catalog = Catalog::build(
        &[
            server("github-work", &["search"]),
            server("github-home", &["search"]),
            server("jira", &["search"]),
        ],
        &settings,
    )
    .unwrap();
    assert_sound(&catalog);
    assert!(model_name(&catalog, "github-work", "search").starts_with("gh__search_"));
    assert!(model_name(&catalog, "github-home", "search").starts_with("gh__search_"));
    assert_eq!(model_name(&catalog, "jira", "search"), "jira__search");
}

#[test]
fn none_mode_collision_names_both_servers_and_the_tool() {
    let err = Catalog::build(
        &[server("github", &["search"]), server("gitlab", &["search"])],
        &mode(NamingMode::None),
    )
    .unwrap_err();
    let CatalogError::NameCollision {
        name,
        first,
        second,
    } = &err
    else {
        panic!("expected a collision, got {err:?}");
    };
    assert_eq!(name, "search");
    assert_eq!(
        (first.server_id.as_str(), second.server_id.as_str()),
        ("github", "gitlab")
    );
    let message = err.to_string();
    for part in ["GITHUB", "GITLAB", "`search`"] {
        assert!(message.contains(part), "{message}");
    }

    // Folding counts in `none` too.
    let err = Catalog::build(
        &[server("a", &["get-user", "get_user"])],
        &mode(NamingMode::None),
    );
    assert!(matches!(err, Err(CatalogError::NameCollision { .. })));
}

#[test]
fn auto_drops_the_prefix_once_the_other_tool_is_disabled() {
    let servers = [server("github", &["search"]), server("gitlab", &["search"])];
    let mut settings = CatalogSettings::default();
    settings.set_tool_enabled("gitlab", "search", false);
    let catalog = Catalog::build(&servers, &settings).unwrap();
    assert_eq!(
        names(&catalog),
        [("github".into(), "search".into(), "search".into())]
    );
}

#[test]
fn a_tool_that_disappears_and_comes_back_keeps_its_disabled_choice() {
    let mut settings = CatalogSettings::default();
    settings.set_tool_enabled("fs", "write_file", false);

    let without = Catalog::build(&[server("fs", &["read_file"])], &settings).unwrap();
    assert_eq!(without.len(), 1);
    // Building never edits the settings, so nothing prunes the choice meanwhile.
    assert!(settings.servers["fs"].disabled_tools.contains("write_file"));

    let back = Catalog::build(&[server("fs", &["read_file", "write_file"])], &settings).unwrap();
    assert!(back.resolve("write_file").is_none());
    let listed = back
        .listing()
        .iter()
        .find(|t| t.tool.name == "write_file")
        .unwrap();
    assert_eq!(
        listed.state,
        ToolState::Hidden {
            reason: HiddenReason::DisabledByUser
        }
    );
}

#[test]
fn include_and_exclude_globs_select_tools_with_reasons() {
    let mut settings = CatalogSettings::default();
    settings.servers.insert(
        "github".into(),
        ServerToolSettings {
            include: vec!["issue_*".into(), "pr_?ist".into()],
            exclude: vec!["*_delete".into(), "issue_lock*".into()],
            ..Default::default()
        },
    );
    let servers = [
        server(
            "github",
            &[
                "issue_create",
                "issue_delete",
                "issue_lock",
                "pr_list",
                "repo_get",
            ],
        ),
        server("other", &["anything"]),
    ];
    let catalog = Catalog::build(&servers, &settings).unwrap();
    let states: Vec<(&str, &ToolState)> = catalog
        .listing()
        .iter()
        .map(|t| (t.tool.name.as_str(), &t.state))
        .collect();
    let visible = |name: &str| ToolState::Visible {
        model_name: name.into(),
    };
    let hidden = |reason| ToolState::Hidden { reason };
    assert_eq!(
        states,
        [
            ("issue_create", &visible("issue_create")),
            (
                "issue_delete",
                &hidden(HiddenReason::Excluded {
                    pattern: "*_delete".into()
                })
            ),
            (
                "issue_lock",
                &hidden(HiddenReason::Excluded {
                    pattern: "issue_lock*".into()
                })
            ),
            ("pr_list", &visible("pr_list")),
            ("repo_get", &hidden(HiddenReason::NotIncluded)),
            ("anything", &visible("anything")),
        ]
    );
    assert_eq!(catalog.entries_for_server("github").count(), 2);
}

#[test]
fn bad_glob_in_build_names_server_and_pattern() {
    let mut settings = CatalogSettings::default();
    settings.servers.insert(
        "github".into(),
        ServerToolSettings {
            include: vec!["{unclosed".into()],
            ..Default::default()
        },
    );
    let err = Catalog::build(&[server("github", &["x"])], &settings).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("github") && message.contains("{unclosed"),
        "{message}"
    );
}

#[test]
fn disabled_servers_and_duplicate_names_are_listed_as_hidden() {
    let mut off = server("off", &["a"]);
    off.enabled = false;
    let mut dup = server("dup", &["same", "same"]);
    dup.tools[1].description = "second copy".into();
    let catalog = Catalog::build(&[off, dup], &CatalogSettings::default()).unwrap();
    let reasons: Vec<_> = catalog
        .listing()
        .iter()
        .map(|t| (t.server_id.as_str(), t.state.clone()))
        .collect();
    assert_eq!(
        reasons,
        [
            (
                "dup",
                ToolState::Visible {
                    model_name: "same".into()
                }
            ),
            (
                "dup",
                ToolState::Hidden {
                    reason: HiddenReason::DuplicateName
                }
            ),
            (
                "off",
                ToolState::Hidden {
                    reason: HiddenReason::ServerDisabled
                }
            ),
        ]
    );
    assert_eq!(
        catalog.resolve("same").unwrap().tool.description,
        "The same tool."
    );
}

#[test]
fn duplicate_server_ids_are_refused() {
    let err = Catalog::build(
        &[server("a", &["x"]), server("a", &["y"])],
        &Default::default(),
    );
    assert_eq!(
        err.unwrap_err(),
        CatalogError::DuplicateServerId("a".into())
    );
}

#[test]
fn order_of_servers_and_tools_does_not_matter() {
    let servers = vec![
        server("b", &["search", "get-user", "files.read", "検索"]),
        server("a", &["search", "get_user", "zeta"]),
        server("c", &["Files_Read", "検索"]),
    ];
    let mut reversed = servers.clone();
    reversed.reverse();
    for s in &mut reversed {
        s.tools.reverse();
    }
    for naming in [NamingMode::Auto, NamingMode::Always] {
        let one = Catalog::build(&servers, &mode(naming)).unwrap();
        let two = Catalog::build(&reversed, &mode(naming)).unwrap();
        assert_eq!(names(&one), names(&two));
        assert_eq!(one.listing(), two.listing());
    }
}

#[test]
fn loose_resolution_forgives_case_and_dashes() {
    let catalog = Catalog::build(&[server("a", &["get-user"])], &Default::default()).unwrap();
    assert!(catalog.resolve("get_user").is_none());
    assert_eq!(
        catalog.resolve_loose("Get_User").unwrap().tool.name,
        "get-user"
    );
    assert!(catalog.resolve_loose("get_users").is_none());
}

#[test]
fn budget_and_check_per_provider() {
    let tools: Vec<String> = (0..140).map(|i| format!("tool_{i}")).collect();
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    let catalog = Catalog::build(&[server("s", &tools)], &Default::default()).unwrap();

    let budget = catalog.budget(Provider::OpenAi);
    assert_eq!(
        (budget.tools, budget.limit, budget.excess()),
        (140, 128, 12)
    );
    assert!(budget.estimated_tokens > 140 * 10, "{budget:?}");
    assert_eq!(
        catalog.check(Provider::OpenAi).unwrap_err().to_string(),
        "OpenAI accepts at most 128 tools; 140 are enabled. \
         Disable 12 tools or add exclude patterns in Tools settings."
    );
    assert!(catalog.check(Provider::Anthropic).is_ok());
    assert!(catalog.check(Provider::Gemini).is_ok());
    assert!(Catalog::default().check(Provider::OpenAi).is_ok());
}

#[test]
fn entries_carry_annotations_and_schemas_as_each_provider_needs_them() {
    let mut source = server("s", &["t"]);
    source.tools[0].annotations.read_only_hint = Some(true);
    source.tools[0].input_schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "additionalProperties": false
    });
    let catalog = Catalog::build(&[source], &Default::default()).unwrap();
    let entry = catalog.resolve("t").unwrap();
    assert_eq!(entry.annotations().read_only_hint, Some(true));
    // As written, for Anthropic and OpenAI alike; Gemini gets its OpenAPI subset.
    assert!(entry
        .schema_for(Provider::Anthropic)
        .get("$schema")
        .is_some());
    assert!(entry.schema_for(Provider::OpenAi).get("$schema").is_some());
    assert!(entry.schema_for(Provider::Gemini).get("$schema").is_none());
    assert_eq!(
        entry.schema_for(Provider::OpenAi)["additionalProperties"],
        false
    );
    assert!(entry
        .schema_for(Provider::Gemini)
        .get("additionalProperties")
        .is_none());
    // The original is kept untouched for display and audit.
    assert!(entry.tool.input_schema.get("$schema").is_some());
}

#[test]
fn listing_serializes_for_the_ui() {
    let mut settings = CatalogSettings::default();
    settings.set_tool_enabled("s", "off", false);
    let catalog = Catalog::build(&[server("s", &["off", "on"])], &settings).unwrap();
    let value = serde_json::to_value(catalog.listing()).unwrap();
    assert_eq!(
        value[0]["state"],
        json!({"state": "hidden", "reason": {"kind": "disabledByUser"}})
    );
    assert_eq!(
        value[1]["state"],
        json!({"state": "visible", "modelName": "on"})
    );
    assert_eq!(value[1]["serverId"], "s");
}
