//! Importing other hosts' MCP configs, and exporting ours: one fixture per format under
//! `tests/fixtures/import/`, the exact errors for malformed input, round trips, and secrets kept
//! out of every message.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use toolgate_hosts::export::{export_claude_desktop, export_mcp_servers};
use toolgate_hosts::import::{
    plan_import, Applied, Clash, Format, ImportChoices, ImportError, ImportOptions, ImportPlan,
    SecretLocation, SecretMove, SkipReason, TransportKind,
};
use toolgate_policy::{
    decide, server_fingerprint, tool_fingerprint, Annotations, Binding, ChangeKind, Decision,
    Effect, Scope, ServerEndpoint, Subject, Target, ToolCall,
};
use toolgate_settings::{example_server, ServerConfig, Settings, Transport};

const NOW: i64 = 1_700_000_000_000;

/// Every secret value the fixtures hold.
const SECRETS: &[&str] = &[
    "ghp_FAKEsecretvalue0001",
    "BSA-FAKEsecretvalue0002",
    "FAKEsecretvalue0003",
    "lin_FAKEsecretvalue0004",
    "FAKEsecretvalue0005",
    "ghp_FAKEsecretvalue0006",
    "ghp_FAKEsecretvalue0007",
];

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn empty_settings() -> Settings {
    Settings {
        servers: Vec::new(),
        ..Settings::first_run(example_server(None))
    }
}

fn plan(settings: &Settings, name: &str) -> ImportPlan {
    plan_import(settings, &fixture(name), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn error(name: &str) -> String {
    plan_import(&empty_settings(), &fixture(name), &ImportOptions::default())
        .expect_err(name)
        .to_string()
}

fn server<'a>(settings: &'a Settings, id: &str) -> &'a ServerConfig {
    settings
        .servers
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no server {id}"))
}

fn stdio(config: &ServerConfig) -> (&str, &[String], &BTreeMap<String, String>) {
    match &config.transport {
        Transport::Stdio {
            command, args, env, ..
        } => (command, args, env),
        Transport::Http { .. } => panic!("{} is not stdio", config.id),
    }
}

fn http(config: &ServerConfig) -> (&str, &BTreeMap<String, String>) {
    match &config.transport {
        Transport::Http { url, headers, .. } => (url, headers),
        Transport::Stdio { .. } => panic!("{} is not http", config.id),
    }
}

fn ids(plan: &ImportPlan) -> Vec<&str> {
    plan.report().added.iter().map(|a| a.id.as_str()).collect()
}

fn warnings(plan: &ImportPlan) -> Vec<String> {
    plan.report()
        .warnings
        .iter()
        .map(|w| format!("{}: {}", w.server.as_deref().unwrap_or("-"), w.message))
        .collect()
}

fn has_warning(plan: &ImportPlan, server: &str, start: &str) -> bool {
    plan.report()
        .warnings
        .iter()
        .any(|w| w.server.as_deref() == Some(server) && w.message.starts_with(start))
}

fn choices(inputs: &[(&str, &str)], move_secrets: Vec<SecretMove>) -> ImportChoices {
    ImportChoices {
        inputs: inputs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        move_secrets,
    }
}

fn apply_all(plan: &ImportPlan, settings: &Settings, inputs: &[(&str, &str)]) -> Applied {
    plan.apply(settings, &choices(inputs, plan.move_all_secrets()), NOW)
        .expect("applies")
}

// ---------------------------------------------------------------------------------------------
// Formats

#[test]
fn claude_desktop_config() {
    let settings = empty_settings();
    let plan = plan(&settings, "claude_desktop.json");
    let report = plan.report();
    assert_eq!(report.format, Format::McpServers);
    assert_eq!(ids(&plan), ["filesystem", "github", "time"]);
    assert!(report.skipped.is_empty() && report.renamed.is_empty() && report.rules.is_empty());
    assert!(report.warnings.is_empty(), "{:?}", warnings(&plan));
    assert_eq!(report.secret_candidates.len(), 1);
    let candidate = &report.secret_candidates[0];
    assert_eq!(
        (
            candidate.server_id.as_str(),
            candidate.location,
            candidate.name.as_str(),
            candidate.suggested_secret.as_str()
        ),
        (
            "github",
            SecretLocation::Env,
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "GITHUB_PERSONAL_ACCESS_TOKEN"
        )
    );

    let applied = apply_all(&plan, &settings, &[]);
    let github = server(&applied.settings, "github");
    let (command, args, env) = stdio(github);
    assert_eq!(command, "npx");
    assert_eq!(args, ["-y", "@modelcontextprotocol/server-github"]);
    assert_eq!(
        env["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "${secret:GITHUB_PERSONAL_ACCESS_TOKEN}"
    );
    assert_eq!(applied.secrets.len(), 1);
    assert_eq!(applied.secrets[0].name, "GITHUB_PERSONAL_ACCESS_TOKEN");
    assert_eq!(applied.secrets[0].value, "ghp_FAKEsecretvalue0001");
    let time = server(&applied.settings, "time");
    assert_eq!(
        stdio(time).1,
        ["mcp-server-time", "--local-timezone=Europe/Paris"]
    );
    assert!(time.enabled && time.auto_restart);
    assert_eq!(
        (time.call_timeout_secs, time.max_call_timeout_secs),
        (60, 600)
    );
    applied.settings.validate().expect("valid");
}

#[test]
fn secrets_stay_literal_unless_the_user_moves_them() {
    let settings = empty_settings();
    let plan = plan(&settings, "claude_desktop.json");
    let applied = plan
        .apply(&settings, &ImportChoices::default(), NOW)
        .expect("applies");
    assert!(applied.secrets.is_empty());
    let (_, _, env) = stdio(server(&applied.settings, "github"));
    assert_eq!(
        env["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "ghp_FAKEsecretvalue0001"
    );
}

#[test]
fn cursor_config_with_extra_fields() {
    let settings = empty_settings();
    let plan = plan(&settings, "cursor.json");
    let report = plan.report();
    assert_eq!(
        ids(&plan),
        ["brave-search", "fetch", "legacy", "remote", "scratch"]
    );
    let added: Vec<_> = report
        .added
        .iter()
        .map(|a| (a.name.as_str(), a.transport, a.enabled))
        .collect();
    assert_eq!(
        added,
        [
            ("Brave Search", TransportKind::Stdio, true),
            ("fetch", TransportKind::Stdio, false),
            // The older SSE transport is imported: Toolgate speaks it.
            ("legacy", TransportKind::Sse, true),
            ("remote", TransportKind::Http, true),
            ("scratch", TransportKind::Stdio, true),
        ]
    );
    let skipped: Vec<_> = report
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), &s.reason))
        .collect();
    assert_eq!(
        skipped,
        [(
            "brave-search-old",
            &SkipReason::DisabledDuplicate {
                id: "brave-search".into(),
                existing: false
            }
        )]
    );
    let rules: Vec<_> = report
        .rules
        .iter()
        .map(|r| (r.server_id.as_str(), r.tool.as_str()))
        .collect();
    assert_eq!(
        rules,
        [
            ("brave-search", "brave_web_search"),
            ("brave-search", "brave_local_search"),
            ("legacy", "search")
        ]
    );
    let candidates: Vec<_> = report
        .secret_candidates
        .iter()
        .map(|c| {
            (
                c.server_id.as_str(),
                c.location,
                c.name.as_str(),
                c.suggested_secret.as_str(),
            )
        })
        .collect();
    assert_eq!(
        candidates,
        [
            (
                "brave-search",
                SecretLocation::Env,
                "BRAVE_API_KEY",
                "BRAVE_API_KEY"
            ),
            (
                "remote",
                SecretLocation::Header,
                "X-Api-Key",
                "REMOTE_X_API_KEY"
            ),
        ]
    );
    assert!(has_warning(
        &plan,
        "Brave Search",
        "read `timeout` 120 as seconds: calls time out after 120 s"
    ));
    assert!(has_warning(
        &plan,
        "fetch",
        "read `timeout` 30000 as milliseconds: calls time out after 30 s"
    ));
    assert!(has_warning(
        &plan,
        "Brave Search",
        "did not import the auto-approval `*`"
    ));
    // An SSE server is imported with its auto-approved tools (a rule above).
    assert!(!has_warning(
        &plan,
        "legacy",
        "its auto-approved tools were not imported"
    ));
    assert!(has_warning(
        &plan,
        "scratch",
        "kept `${workspaceFolder}` in `args` as written"
    ));
    assert!(has_warning(
        &plan,
        "scratch",
        "ignored the unknown field `description`"
    ));

    let applied = apply_all(&plan, &settings, &[]);
    let brave = server(&applied.settings, "brave-search");
    assert_eq!(brave.name, "Brave Search");
    assert_eq!(
        (brave.call_timeout_secs, brave.max_call_timeout_secs),
        (120, 600)
    );
    let Transport::Stdio { env, cwd, .. } = &brave.transport else {
        panic!("stdio")
    };
    assert_eq!(cwd.as_deref(), Some(std::path::Path::new("/home/me/work")));
    assert_eq!(env["BRAVE_API_KEY"], "${secret:BRAVE_API_KEY}");
    assert_eq!(env["LOG_LEVEL"], "info");
    let fetch = server(&applied.settings, "fetch");
    assert!(!fetch.enabled);
    assert_eq!(fetch.call_timeout_secs, 30);
    let (url, headers) = http(server(&applied.settings, "remote"));
    assert_eq!(url, "https://mcp.example.com/mcp");
    assert_eq!(headers["X-Api-Key"], "${secret:REMOTE_X_API_KEY}");
    let stored: Vec<_> = applied
        .secrets
        .iter()
        .map(|s| (s.name.as_str(), s.value.as_str()))
        .collect();
    assert_eq!(
        stored,
        [
            ("BRAVE_API_KEY", "BSA-FAKEsecretvalue0002"),
            ("REMOTE_X_API_KEY", "FAKEsecretvalue0003")
        ]
    );

    let rules = &applied.settings.policy.rules;
    assert_eq!(rules.len(), 3, "two for brave-search, one for legacy");
    let rule = &rules[0];
    assert_eq!(rule.id, "import-brave-search-brave_web_search");
    assert_eq!(rule.effect, Effect::Allow);
    assert_eq!(rule.scope, Scope::Always);
    assert_eq!(
        rule.target,
        Target::Tool {
            server_id: "brave-search".into(),
            tool: "brave_web_search".into()
        }
    );
    let args = vec![
        "-y".to_owned(),
        "@modelcontextprotocol/server-brave-search".to_owned(),
    ];
    assert_eq!(
        rule.bound_to,
        Some(Binding {
            server_fingerprint: server_fingerprint(&ServerEndpoint::Stdio {
                command: "npx",
                args: &args
            }),
            tool_fingerprint: None,
        })
    );
    assert_eq!(rule.created_at, NOW);
}

/// The fingerprint the agent computes for a running server: of its configured command line or URL
/// (`toolgate-mcp`'s `launch_of`, `toolgate-agent`'s `launch_fingerprint`).
fn running_fingerprint(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, args, .. } => {
            server_fingerprint(&ServerEndpoint::Stdio { command, args })
        }
        Transport::Http { url, .. } => server_fingerprint(&ServerEndpoint::Http { url }),
    }
}

fn call(config: &ServerConfig, tool: &str) -> Subject {
    Subject::ToolCall(ToolCall {
        server_id: config.id.clone(),
        tool: tool.into(),
        arguments: json!({"query": "rust"}),
        annotations: Annotations::default(),
        server_fingerprint: running_fingerprint(config),
        tool_fingerprint: tool_fingerprint(tool, "Searches the web", &json!({"type": "object"})),
    })
}

#[test]
fn auto_approved_tools_are_allowed_by_decide_until_the_server_changes() {
    let settings = empty_settings();
    let applied = apply_all(&plan(&settings, "cursor.json"), &settings, &[]);
    let policy = &applied.settings.policy;
    let brave = server(&applied.settings, "brave-search").clone();

    let verdict = decide(&call(&brave, "brave_web_search"), policy, None, NOW + 1);
    assert_eq!(verdict.decision, Decision::Allow, "{}", verdict.reason);
    assert_eq!(
        verdict.rule_id.as_deref(),
        Some("import-brave-search-brave_web_search")
    );
    assert_eq!(
        verdict.reason,
        "allowed by your rule “brave_web_search in brave-search (auto-approved in the imported \
         config)” (always)"
    );
    // A tool the config did not auto-approve is asked about.
    let other = decide(&call(&brave, "brave_image_search"), policy, None, NOW + 1);
    assert_eq!(other.decision, Decision::Ask);
    // Moving a secret or changing env does not touch the grant; changing the command line does.
    let mut changed = brave.clone();
    if let Transport::Stdio { args, env, .. } = &mut changed.transport {
        env.insert("LOG_LEVEL".into(), "debug".into());
        args.push("--evil".into());
    }
    let lapsed = decide(&call(&changed, "brave_web_search"), policy, None, NOW + 1);
    assert_eq!(lapsed.decision, Decision::Ask);
    assert_eq!(lapsed.changed.len(), 1);
    assert_eq!(lapsed.changed[0].what, ChangeKind::ServerChanged);
}

#[test]
fn claude_code_mcp_json_with_http_servers_and_headers() {
    let settings = empty_settings();
    let plan = plan(&settings, "claude_code.mcp.json");
    let report = plan.report();
    assert_eq!(ids(&plan), ["db", "linear", "sentry"]);
    assert_eq!(
        report.added.iter().map(|a| a.transport).collect::<Vec<_>>(),
        [
            TransportKind::Stdio,
            TransportKind::Http,
            TransportKind::Http
        ]
    );
    // Only the literal token is a candidate: `${SENTRY_TOKEN}` and `${API_TOKEN}` are references.
    assert_eq!(report.secret_candidates.len(), 1);
    assert_eq!(
        report.secret_candidates[0].suggested_secret,
        "LINEAR_AUTHORIZATION"
    );
    assert!(has_warning(
        &plan,
        "sentry",
        "read `${SENTRY_TOKEN}` as the environment variable SENTRY_TOKEN"
    ));
    assert!(has_warning(
        &plan,
        "sentry",
        "the URL's query parameter `api_key` looks like a secret"
    ));
    assert!(has_warning(
        &plan,
        "db",
        "kept `${DATABASE_URL:…}` in `args` as written: Toolgate fills in references only in env values and headers"
    ));

    let applied = apply_all(&plan, &settings, &[]);
    let (url, headers) = http(server(&applied.settings, "linear"));
    assert_eq!(url, "https://mcp.linear.app/mcp");
    assert_eq!(
        headers["Authorization"],
        "Bearer ${secret:LINEAR_AUTHORIZATION}"
    );
    assert_eq!(applied.secrets.len(), 1);
    assert_eq!(applied.secrets[0].value, "lin_FAKEsecretvalue0004");
    let (_, headers) = http(server(&applied.settings, "sentry"));
    assert_eq!(headers["Authorization"], "Bearer ${env:SENTRY_TOKEN}");
    let (_, args, env) = stdio(server(&applied.settings, "db"));
    assert_eq!(env["API_TOKEN"], "${env:API_TOKEN}");
    assert_eq!(args[3], "${DATABASE_URL:-postgres://localhost/dev}");
}

#[test]
fn vscode_mcp_json_with_inputs() {
    let settings = empty_settings();
    let plan = plan(&settings, "vscode_mcp.json");
    let report = plan.report();
    assert_eq!(report.format, Format::VsCode);
    assert_eq!(ids(&plan), ["copilot", "files", "github", "old"]);
    assert!(report.skipped.is_empty());

    let inputs: Vec<_> = report
        .inputs
        .iter()
        .map(|i| {
            (
                i.id.as_str(),
                i.description.as_str(),
                i.password,
                i.secret_name.as_deref(),
                i.default.as_deref(),
                i.used_by.clone(),
            )
        })
        .collect();
    assert_eq!(
        inputs,
        [
            (
                "github-token",
                "GitHub Personal Access Token",
                true,
                Some("github-token"),
                None,
                vec!["copilot".to_owned(), "github".to_owned()]
            ),
            (
                "workspace",
                "Folder to serve",
                false,
                None,
                Some("/home/me/code"),
                vec!["files".to_owned()]
            ),
        ]
    );
    // Password inputs are keychain references already; nothing literal is left to offer.
    assert!(report.secret_candidates.is_empty());
    assert!(has_warning(&plan, "github", "did not read `envFile`"));
    let planned: Vec<_> = plan.servers().collect();
    let (_, _, env) = stdio(planned[2]);
    assert_eq!(
        env["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "${secret:github-token}"
    );
    assert_eq!(stdio(planned[1]).1[2], "${input:workspace}");

    let missing = plan
        .apply(
            &settings,
            &choices(&[("github-token", "ghp_x")], Vec::new()),
            NOW,
        )
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "the input `workspace` needs a value: ask the user for it"
    );

    let applied = apply_all(
        &plan,
        &settings,
        &[
            ("github-token", "ghp_FAKEsecretvalue0001"),
            ("workspace", "/srv/code"),
        ],
    );
    let (_, args, _) = stdio(server(&applied.settings, "files"));
    assert_eq!(
        args,
        ["-y", "@modelcontextprotocol/server-filesystem", "/srv/code"]
    );
    let (_, headers) = http(server(&applied.settings, "copilot"));
    assert_eq!(headers["Authorization"], "Bearer ${secret:github-token}");
    assert_eq!(applied.secrets.len(), 1);
    assert_eq!(
        (
            applied.secrets[0].name.as_str(),
            applied.secrets[0].value.as_str()
        ),
        ("github-token", "ghp_FAKEsecretvalue0001")
    );
}

#[test]
fn a_plain_input_in_a_secret_looking_variable_can_still_move() {
    let text = r#"{
        "inputs": [{"type": "promptString", "id": "key", "description": "API key"}],
        "servers": {"s": {"command": "srv", "env": {"API_KEY": "${input:key}"}}}
    }"#;
    let settings = empty_settings();
    let plan = plan_import(&settings, text, &ImportOptions::default()).unwrap();
    assert_eq!(plan.report().secret_candidates.len(), 1);
    let applied = apply_all(&plan, &settings, &[("key", "typed-by-the-user")]);
    let (_, _, env) = stdio(server(&applied.settings, "s"));
    assert_eq!(env["API_KEY"], "${secret:API_KEY}");
    assert_eq!(applied.secrets[0].value, "typed-by-the-user");
}

#[test]
fn a_bare_inner_object() {
    let plan = plan(&empty_settings(), "inner_object.json");
    assert_eq!(plan.report().format, Format::ServerMap);
    assert_eq!(ids(&plan), ["memory", "sequential-thinking"]);
}

#[test]
fn a_single_server_pasted_alone() {
    let settings = empty_settings();
    let plan = plan(&settings, "single_server.json");
    assert_eq!(plan.report().format, Format::SingleServer);
    assert_eq!(ids(&plan), ["server-github"]);
    assert_eq!(plan.report().added[0].name, "server-github");
    assert_eq!(plan.report().secret_candidates.len(), 1);

    let named = plan_import(
        &settings,
        &fixture("single_server.json"),
        &ImportOptions {
            format: None,
            name: Some("GitHub".into()),
        },
    )
    .unwrap();
    assert_eq!(ids(&named), ["github"]);
    assert_eq!(named.report().added[0].name, "GitHub");

    let url = plan_import(
        &settings,
        r#"{"url": "https://mcp.example.com/sse"}"#,
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(ids(&url), ["mcp-example-com"]);
    // Reached over SSE if it turns Streamable HTTP down: nothing to warn about.
    assert!(!has_warning(&url, "mcp.example.com", "/sse"));
}

#[test]
fn the_caller_may_name_the_format() {
    let settings = empty_settings();
    let text = fixture("claude_desktop.json");
    let options = |format| ImportOptions {
        format: Some(format),
        name: None,
    };
    assert!(plan_import(&settings, &text, &options(Format::McpServers)).is_ok());
    assert_eq!(
        plan_import(&settings, &text, &options(Format::VsCode))
            .unwrap_err()
            .to_string(),
        "no `servers` object found at the top of the JSON"
    );
    assert_eq!(
        plan_import(&settings, &text, &options(Format::SingleServer))
            .unwrap_err()
            .to_string(),
        "the server: needs a `command` (a program to start) or a `url` (a server to reach)"
    );
}

#[test]
fn references_are_filled_in_only_in_env_and_headers() {
    let text = r#"{"mcpServers": {"s": {
        "command": "${HOME}/bin/srv",
        "args": ["--root", "${HOME}", "${env:PROJECT}"],
        "env": {"A": "${HOME}", "B": "${env:B}", "C": "${userHome}/x"}
    }}}"#;
    let settings = empty_settings();
    let plan = plan_import(&settings, text, &ImportOptions::default()).unwrap();
    // Claude Code's `${NAME}` becomes `${env:NAME}` where Toolgate fills it in, and stays as
    // written (with a warning) where it does not.
    let planned: Vec<_> = plan.servers().collect();
    let (command, args, env) = stdio(planned[0]);
    assert_eq!(command, "${HOME}/bin/srv");
    assert_eq!(args, ["--root", "${HOME}", "${env:PROJECT}"]);
    assert_eq!(env["A"], "${env:HOME}");
    assert_eq!(env["B"], "${env:B}");
    assert_eq!(env["C"], "${userHome}/x");
    assert_eq!(
        warnings(&plan),
        [
            "s: read `${HOME}` as the environment variable HOME (Claude Code's spelling) and \
             wrote it as `${env:HOME}`",
            "s: kept `${userHome}` as written: Toolgate fills in only `${env:NAME}` and \
             `${secret:NAME}`, so replace it if the server needs a real value",
            "s: kept `${HOME}`, `${env:PROJECT}` in `args` as written: Toolgate fills in \
             references only in env values and headers, so the server receives this text as it is",
            "s: kept `${HOME}` in `command` as written: Toolgate fills in references only in env \
             values and headers, so the server receives this text as it is",
        ]
    );

    // A malformed `${secret:…}` is refused where it would be filled in, and kept elsewhere.
    let err = plan_import(
        &settings,
        r#"{"mcpServers": {"s": {"command": "x", "env": {"K": "${secret:}"}}}}"#,
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "mcpServers.s.env.K: `${secret:}` does not name a variable or secret: a name starts with \
         a letter or `_` and has only letters, digits, `_`, `.` and `-`"
    );
    assert!(plan_import(
        &settings,
        r#"{"mcpServers": {"s": {"command": "x", "args": ["${secret:}"]}}}"#,
        &ImportOptions::default(),
    )
    .is_ok());
}

#[test]
fn a_password_input_in_args_is_kept_out_of_the_settings_with_a_warning() {
    let text = r#"{
        "inputs": [{"type": "promptString", "id": "token", "password": true}],
        "servers": {"s": {"command": "srv", "args": ["--token", "${input:token}"]}}
    }"#;
    let settings = empty_settings();
    let plan = plan_import(&settings, text, &ImportOptions::default()).unwrap();
    assert!(has_warning(
        &plan,
        "s",
        "the password input `${input:token}` in `args` became a keychain reference, but \
         Toolgate fills in secrets only in env values and headers"
    ));
    let applied = apply_all(&plan, &settings, &[("token", "ghp_FAKEsecretvalue0001")]);
    let (_, args, _) = stdio(server(&applied.settings, "s"));
    assert_eq!(args, ["--token", "${secret:token}"]);
    assert_eq!(applied.secrets[0].name, "token");
}

#[test]
fn env_that_can_hijack_the_program_is_skipped_unless_the_entry_allows_it() {
    let text = r#"{"mcpServers": {
        "risky": {"command": "node", "args": ["s.js"], "env": {"NODE_OPTIONS": "--require /tmp/x.js"}},
        "fine": {"command": "node", "args": ["f.js"]}
    }}"#;
    let settings = empty_settings();
    let plan = plan_import(&settings, text, &ImportOptions::default()).unwrap();
    assert_eq!(ids(&plan), ["fine"]);
    assert_eq!(
        plan.report().skipped[0].reason,
        SkipReason::UnsafeEnv {
            variable: "NODE_OPTIONS".into()
        }
    );
    assert_eq!(
        plan.report().skipped[0].reason.to_string(),
        "its env sets NODE_OPTIONS, which can make its program load other code, so Toolgate \
         would refuse to start it; if you trust it, add \"allowEnv\": [\"NODE_OPTIONS\"] to the \
         entry and import it again"
    );

    let allowed = text.replace(
        r#""env": {"NODE_OPTIONS""#,
        r#""allowEnv": ["NODE_OPTIONS"], "env": {"NODE_OPTIONS""#,
    );
    let plan = plan_import(&settings, &allowed, &ImportOptions::default()).unwrap();
    assert_eq!(ids(&plan), ["fine", "risky"]);
    let applied = apply_all(&plan, &settings, &[]);
    let risky = server(&applied.settings, "risky");
    assert_eq!(risky.allow_env, ["NODE_OPTIONS"]);
    assert!(risky.unsafe_env().is_none());
}

// ---------------------------------------------------------------------------------------------
// Merging into existing settings

#[test]
fn merging_renames_clashing_ids_and_skips_identical_servers() {
    let mut settings = empty_settings();
    // A different server already called github, and an identical time server under another id.
    settings
        .servers
        .push(ServerConfig::stdio("github", "node", ["my-github.js"]));
    settings.servers.push(ServerConfig::stdio(
        "clock",
        "uvx",
        ["mcp-server-time", "--local-timezone=Europe/Paris"],
    ));
    // The existing server already keeps a secret under the name the import would suggest.
    if let Transport::Stdio { env, .. } = &mut settings.servers[0].transport {
        env.insert(
            "GITHUB_PERSONAL_ACCESS_TOKEN".into(),
            "${secret:GITHUB_PERSONAL_ACCESS_TOKEN}".into(),
        );
    }
    let plan = plan(&settings, "claude_desktop.json");
    let report = plan.report();
    assert_eq!(ids(&plan), ["filesystem", "github-2"]);
    assert_eq!(report.renamed.len(), 1);
    assert_eq!(
        (
            report.renamed[0].wanted_id.as_str(),
            report.renamed[0].id.as_str(),
            report.renamed[0].clash
        ),
        ("github", "github-2", Clash::ExistingServer)
    );
    assert_eq!(
        report.skipped[0].reason,
        SkipReason::Identical {
            id: "clock".into(),
            existing: true
        }
    );
    // The secret name the existing server uses is not suggested again.
    assert_eq!(
        report.secret_candidates[0].suggested_secret,
        "GITHUB_2_GITHUB_PERSONAL_ACCESS_TOKEN"
    );

    let applied = apply_all(&plan, &settings, &[]);
    assert_eq!(applied.settings.servers.len(), 4);
    assert_eq!(server(&applied.settings, "github-2").name, "github");
    let (command, _, _) = stdio(server(&applied.settings, "github"));
    assert_eq!(command, "node", "the existing server is untouched");

    // Importing the same text again adds nothing.
    let again = plan_import(
        &applied.settings,
        &fixture("claude_desktop.json"),
        &ImportOptions::default(),
    )
    .unwrap();
    assert!(again.report().added.is_empty());
    assert_eq!(again.report().skipped.len(), 3);
}

#[test]
fn clashing_names_inside_one_import_are_renamed_too() {
    let text = r#"{"mcpServers": {
        "GitHub": {"command": "a"},
        "github": {"command": "b"},
        "copy": {"command": "a"}
    }}"#;
    let plan = plan_import(&empty_settings(), text, &ImportOptions::default()).unwrap();
    assert_eq!(ids(&plan), ["github", "github-2"]);
    assert_eq!(plan.report().renamed[0].clash, Clash::ImportedServer);
    assert_eq!(
        plan.report().skipped[0].reason,
        SkipReason::Identical {
            id: "github".into(),
            existing: false
        }
    );
}

#[test]
fn applying_checks_the_users_choices() {
    let settings = empty_settings();
    let plan = plan(&settings, "cursor.json");
    let mv = |server_id: &str, location, name: &str, secret_name: Option<&str>| SecretMove {
        server_id: server_id.into(),
        location,
        name: name.into(),
        secret_name: secret_name.map(Into::into),
    };
    let apply = |moves: Vec<SecretMove>| {
        plan.apply(&settings, &choices(&[], moves), NOW)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        apply(vec![mv(
            "brave-search",
            SecretLocation::Env,
            "LOG_LEVEL",
            None
        )]),
        "brave-search: env `LOG_LEVEL` is not one of the values offered for the keychain"
    );
    assert_eq!(
        apply(vec![mv(
            "brave-search",
            SecretLocation::Env,
            "BRAVE_API_KEY",
            Some("has space")
        )]),
        "`has space` cannot name a secret: use letters, digits, `_`, `.` and `-`, starting with a \
         letter or `_`"
    );
    assert_eq!(
        apply(vec![
            mv("brave-search", SecretLocation::Env, "BRAVE_API_KEY", None),
            mv(
                "remote",
                SecretLocation::Header,
                "X-Api-Key",
                Some("BRAVE_API_KEY")
            ),
        ]),
        "`BRAVE_API_KEY` cannot name a secret: another server or value already uses it"
    );
    assert_eq!(
        apply(vec![
            mv("brave-search", SecretLocation::Env, "BRAVE_API_KEY", None),
            mv(
                "brave-search",
                SecretLocation::Env,
                "BRAVE_API_KEY",
                Some("OTHER")
            ),
        ]),
        "brave-search: env `BRAVE_API_KEY` is chosen twice"
    );
    // A name of the user's choosing.
    let applied = plan
        .apply(
            &settings,
            &choices(
                &[],
                vec![mv(
                    "brave-search",
                    SecretLocation::Env,
                    "BRAVE_API_KEY",
                    Some("brave.key"),
                )],
            ),
            NOW,
        )
        .unwrap();
    let (_, _, env) = stdio(server(&applied.settings, "brave-search"));
    assert_eq!(env["BRAVE_API_KEY"], "${secret:brave.key}");

    // Settings that gained the id since planning are refused whole.
    let mut changed = settings.clone();
    changed
        .servers
        .push(ServerConfig::stdio("fetch", "other", Vec::<String>::new()));
    assert_eq!(
        plan.apply(&changed, &ImportChoices::default(), NOW)
            .unwrap_err(),
        ImportError::Stale { id: "fetch".into() }
    );
}

// ---------------------------------------------------------------------------------------------
// Malformed input: each error exactly

#[test]
fn malformed_input_gets_a_clear_error() {
    assert_eq!(error("empty.json"), "nothing to import: the text is empty");
    assert_eq!(
        error("invalid_json.json"),
        "the text is not valid JSON: expected `,` or `}` at line 5 column 7"
    );
    assert_eq!(
        error("wrong_type.json"),
        "servers.github.command: expected a string, found a number"
    );
    assert_eq!(
        error("wrong_type_env.json"),
        "mcpServers.github.env.GITHUB_TOKEN: expected a string, found a list"
    );
    assert_eq!(
        error("missing_command_and_url.json"),
        "mcpServers.broken: needs a `command` (a program to start) or a `url` (a server to reach)"
    );
    assert_eq!(
        error("not_a_config.json"),
        "no `mcpServers` or `servers` object found: paste the whole JSON from the server's README"
    );
}

#[test]
fn more_malformed_shapes() {
    let err = |text: &str| {
        plan_import(&empty_settings(), text, &ImportOptions::default())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(err("   \n"), "nothing to import: the text is empty");
    assert_eq!(
        err("[1, 2]"),
        "the JSON must be an object like {\"mcpServers\": {…}}, but it is a list"
    );
    assert_eq!(err("{}"), err("{\"a\": 1}"));
    assert_eq!(
        err(r#"{"mcpServers": {}}"#),
        "`mcpServers` is empty: there is no server to import"
    );
    assert_eq!(
        err(r#"{"mcpServers": []}"#),
        "mcpServers: expected an object of servers by name, found a list"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": {"command": "x"}}, "servers": {}}"#),
        "the JSON has both `mcpServers` and `servers`: choose which format to import"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": "npx"}}"#),
        "mcpServers.a: expected an object with a `command` or a `url`, found a string"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"my server": {"command": "x", "args": "-y pkg"}}}"#),
        "mcpServers[\"my server\"].args: expected a list of strings, found a string"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": {"command": "x", "args": ["-y", 3]}}}"#),
        "mcpServers.a.args[1]: expected a string, found a number"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": {"command": "  "}}}"#),
        "mcpServers.a.command: must name the program that starts the server, for example npx"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": {"type": "stdio", "url": "https://x"}}}"#),
        "mcpServers.a.command: missing: a stdio server needs the program to start, for example npx"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": {"type": "http", "command": "x"}}}"#),
        "mcpServers.a.url: missing: an HTTP server needs the address to reach"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": {"url": "ftp://files.example.com/?token=abc"}}}"#),
        "mcpServers.a.url: must start with http:// or https://"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": {"command": "x", "url": "https://x"}}}"#),
        "mcpServers.a: has both `command` and a URL: add `\"type\": \"stdio\"` or `\"type\": \
         \"http\"` to say which to use"
    );
    assert_eq!(
        err(r#"{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}"#),
        "mcpServers.a.disabled: expected true or false, found a string"
    );
    assert_eq!(
        err(r#"{"servers": {"a": {"command": "x", "env": {"K": "${input:nope}"}}}}"#),
        "servers.a.env.K: `${input:nope}` names no entry of `inputs`"
    );
    assert_eq!(
        err(r#"{"servers": {"a": {"command": "x"}}, "inputs": [{"type": "promptString"}]}"#),
        "inputs[0].id: missing: every input needs an id"
    );
}

// ---------------------------------------------------------------------------------------------
// Export and round trips

/// What must survive a round trip: name, transport and switch; ids follow from names.
fn essentials(settings: &Settings) -> Vec<(String, String, Transport, bool)> {
    settings
        .servers
        .iter()
        .filter(|s| s.enabled)
        .map(|s| (s.id.clone(), s.name.clone(), s.transport.clone(), s.enabled))
        .collect()
}

#[test]
fn import_export_import_gives_the_same_servers() {
    // (fixture, answers to its inputs, move its secrets)
    type Case = (&'static str, &'static [(&'static str, &'static str)], bool);
    let cases: &[Case] = &[
        ("claude_desktop.json", &[], true),
        ("claude_desktop.json", &[], false),
        ("cursor.json", &[], true),
        ("claude_code.mcp.json", &[], true),
        ("claude_code.mcp.json", &[], false),
        (
            "vscode_mcp.json",
            &[("github-token", "t0ken-value"), ("workspace", "/srv")],
            true,
        ),
        ("inner_object.json", &[], false),
        ("single_server.json", &[], true),
    ];
    for (name, inputs, move_secrets) in cases {
        let empty = empty_settings();
        let first = plan(&empty, name);
        let moves = if *move_secrets {
            first.move_all_secrets()
        } else {
            Vec::new()
        };
        let once = first
            .apply(&empty, &choices(inputs, moves), NOW)
            .expect("applies")
            .settings;
        let exported = export_claude_desktop(&once);
        let text = serde_json::to_string_pretty(&exported).unwrap();
        let second = plan_import(&empty, &text, &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{name}: the export does not import: {e}"));
        // `${secret:…}` references come back as references: nothing left to move.
        if *move_secrets {
            assert!(second.report().secret_candidates.is_empty(), "{name}");
        }
        let twice = second
            .apply(&empty, &ImportChoices::default(), NOW)
            .unwrap()
            .settings;
        assert_eq!(essentials(&twice), essentials(&once), "{name}");
    }
}

#[test]
fn export_forms() {
    let mut settings = empty_settings();
    let mut github = ServerConfig::stdio(
        "github",
        "npx",
        ["-y", "@modelcontextprotocol/server-github"],
    );
    github.name = "GitHub".into();
    if let Transport::Stdio { env, cwd, .. } = &mut github.transport {
        env.insert("GITHUB_TOKEN".into(), "${secret:GITHUB_TOKEN}".into());
        *cwd = Some("/srv".into());
    }
    let mut linear = ServerConfig::http("linear", "https://mcp.linear.app/mcp");
    if let Transport::Http { headers, .. } = &mut linear.transport {
        headers.insert("Authorization".into(), "Bearer ${secret:LINEAR}".into());
    }
    let mut off = ServerConfig::stdio("off", "node", ["x.js"]);
    off.enabled = false;
    settings.servers = vec![github, linear, off];

    let export = export_mcp_servers(&settings);
    assert_eq!(
        export.json,
        json!({"mcpServers": {
            "GitHub": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": {"GITHUB_TOKEN": "${secret:GITHUB_TOKEN}"},
                "cwd": "/srv"
            },
            "linear": {
                "type": "http",
                "url": "https://mcp.linear.app/mcp",
                "headers": {"Authorization": "Bearer ${secret:LINEAR}"}
            }
        }})
    );
    assert_eq!(export.left_out.len(), 1);
    assert_eq!(export.left_out[0].id, "off");
    assert_eq!(export_claude_desktop(&settings), export.json);

    // Names that clash fall back to ids as keys.
    settings.servers[1].name = "GitHub".into();
    let keys: Vec<String> = export_claude_desktop(&settings)["mcpServers"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["github", "linear"]);
}

// ---------------------------------------------------------------------------------------------
// Secrets never appear in messages

fn assert_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} shows {secret}: {text}");
        // Not even most of it.
        assert!(
            !text.contains(&secret[..secret.len() - 4]),
            "{what}: {text}"
        );
    }
}

#[test]
fn secret_values_never_appear_in_errors_reports_or_debug_output() {
    let settings = empty_settings();
    for name in [
        "claude_desktop.json",
        "cursor.json",
        "claude_code.mcp.json",
        "single_server.json",
    ] {
        let plan = plan(&settings, name);
        assert_no_secret("report Display", &plan.report().to_string());
        assert_no_secret("report Debug", &format!("{:?}", plan.report()));
        assert_no_secret(
            "report JSON",
            &serde_json::to_string(plan.report()).unwrap(),
        );
        assert_no_secret("plan Debug", &format!("{plan:?}"));
        assert_no_secret("plan Debug", &format!("{plan:#?}"));
        let applied = apply_all(&plan, &settings, &[]);
        let debug = format!("{applied:?}");
        assert_no_secret("applied Debug", &debug);
        for secret in &applied.secrets {
            let shown = format!("{secret:?}");
            assert_no_secret("secret Debug", &shown);
            let tail: String = secret
                .value
                .chars()
                .rev()
                .take(4)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            assert!(shown.contains(&format!("…{tail}")), "{shown}");
        }
        // Not moved: the values stay in the settings, and still not in the Debug text.
        let kept = plan
            .apply(&settings, &ImportChoices::default(), NOW)
            .unwrap();
        assert_no_secret("applied Debug", &format!("{kept:?}"));
    }
    // Password answers are secrets too.
    let vscode = plan(&settings, "vscode_mcp.json");
    let answers = choices(
        &[("github-token", SECRETS[0]), ("workspace", "/srv")],
        Vec::new(),
    );
    assert_no_secret("choices Debug", &format!("{answers:?}"));
    let applied = vscode.apply(&settings, &answers, NOW).unwrap();
    assert_no_secret("applied Debug", &format!("{applied:?}"));

    // Errors about a misplaced secret name the field only.
    assert_no_secret("error", &error("wrong_type_env.json"));
    let err = plan_import(
        &settings,
        r#"{"mcpServers": {"a": {"url": "ftp://x/?token=ghp_FAKEsecretvalue0001"}}}"#,
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert_no_secret("error", &err.to_string());
    assert_no_secret("error Debug", &format!("{err:?}"));
    let err = plan_import(
        &settings,
        r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "ghp_FAKEsecretvalue0001"}}"#,
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert_no_secret("JSON error", &err.to_string());
}

#[test]
fn the_report_reads_well() {
    let settings = empty_settings();
    let text = plan(&settings, "cursor.json").report().to_string();
    let expected = [
        "From an `mcpServers` config (Claude Desktop, Cursor, Claude Code, …): 5 servers to add, 1 skipped.",
        "  add brave-search \"Brave Search\" (stdio)",
        "  add fetch \"fetch\" (stdio, disabled)",
        "  add legacy \"legacy\" (sse)",
        "  add remote \"remote\" (http)",
        "  add scratch \"scratch\" (stdio)",
        "  skip \"brave-search-old\": disabled, and the server brave-search earlier in this import runs the same command or URL",
        "Approval rules to create:",
        "  always allow brave_web_search in brave-search",
        "  always allow brave_local_search in brave-search",
        "  always allow search in legacy",
        "Values that can move to the keychain:",
        "  brave-search: env BRAVE_API_KEY as ${secret:BRAVE_API_KEY}",
        "  remote: header X-Api-Key as ${secret:REMOTE_X_API_KEY}",
    ];
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(&lines[..expected.len()], expected, "{text}");

    let report = serde_json::to_value(plan(&settings, "vscode_mcp.json").report()).unwrap();
    assert_eq!(report["format"], json!("vsCode"));
    assert_eq!(
        report["added"][3],
        json!({
            "id": "old",
            "name": "old",
            "transport": "sse",
            "enabled": true,
            "runs": "https://old.example.com/sse"
        })
    );
    assert_eq!(
        report["inputs"][0],
        json!({
            "id": "github-token",
            "description": "GitHub Personal Access Token",
            "password": true,
            "secretName": "github-token",
            "default": null,
            "usedBy": ["copilot", "github"]
        })
    );
    let rendered: Value = report["added"][0].clone();
    assert_eq!(
        rendered,
        json!({
            "id": "copilot",
            "name": "copilot",
            "transport": "http",
            "enabled": true,
            "runs": "https://api.githubcopilot.com/mcp/"
        })
    );
}

#[test]
fn oauth_fields_of_claude_code_and_vs_code_come_along_without_secrets() {
    let settings = empty_settings();
    let claude_code = plan_import(
        &settings,
        r#"{"mcpServers": {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp",
            "oauth": {"clientId": "toolgate-app", "callbackPort": 47123, "scopes": "read write",
                      "clientSecret": "FAKEsecretvalue0009"}}}}"#,
        &ImportOptions::default(),
    )
    .unwrap();
    let config = claude_code
        .servers()
        .find(|s| s.id == "linear")
        .expect("planned");
    let oauth = config.oauth.as_ref().expect("the oauth fields");
    assert_eq!(oauth.client_id.as_deref(), Some("toolgate-app"));
    assert_eq!(oauth.callback_port, Some(47123));
    assert_eq!(oauth.scopes, ["read", "write"]);
    assert_eq!(
        oauth.client_secret, None,
        "a written-out secret is not imported"
    );
    assert!(has_warning(
        &claude_code,
        "linear",
        "did not import `oauth.clientSecret`"
    ));
    let planned: Vec<_> = claude_code.servers().collect();
    assert_no_secret("plan", &format!("{planned:?}"));

    let vscode = plan_import(
        &settings,
        r#"{"servers": {"notion": {"type": "sse", "url": "https://mcp.notion.com/sse",
            "oauth": {"clientId": "abc", "scopes": ["read"]}}}}"#,
        &ImportOptions::default(),
    )
    .unwrap();
    let config = vscode
        .servers()
        .find(|s| s.id == "notion")
        .expect("planned");
    assert!(matches!(
        config.transport,
        Transport::Http { sse: true, .. }
    ));
    assert_eq!(config.oauth.as_ref().unwrap().scopes, ["read"]);

    let bad = plan_import(
        &settings,
        r#"{"mcpServers": {"x": {"url": "https://x.example/mcp", "oauth": {"callbackPort": 0}}}}"#,
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(bad.to_string().contains("oauth.callbackPort"), "{bad}");
}
