//! Registry entries made servers of the settings, on the test registry's fixture
//! (`tests/registry/fixture.json`, shaped as the registry's OpenAPI document says): each kind
//! pinned to its version, secrets bound for the keychain, deleted entries refused.

use std::collections::BTreeMap;

use toolgate_registry::model::ServerResponse;
use toolgate_registry::{build, plan, RegistryError};
use toolgate_settings::Transport;

const URL: &str = "https://registry.example.com";

fn entry(name: &str, version: &str) -> ServerResponse {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/registry/fixture.json"
    );
    let all: Vec<ServerResponse> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("reads");
    all.into_iter()
        .find(|e| e.server.name == name && e.server.version == version)
        .unwrap_or_else(|| panic!("{name} {version} is in the fixture"))
}

fn answers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect()
}

#[test]
fn a_pypi_server_is_pinned_its_secret_kept_apart_and_defaults_used() {
    let time = entry("io.github.modelcontextprotocol/time", "2026.10.19");
    let p = plan(&time).expect("plan");
    assert_eq!(p.suggested_id, "time");
    assert_eq!(p.runs, "uvx mcp-server-time==2026.10.19");
    let token = p
        .asks
        .iter()
        .find(|a| a.key == "env:TIME_API_TOKEN")
        .expect("asked");
    assert!(token.secret && !token.required);
    let tz = p.asks.iter().find(|a| a.key == "env:TZ").expect("asked");
    assert_eq!(tz.default.as_deref(), Some("UTC"));

    let built = build(
        &time,
        "time",
        &answers(&[("env:TIME_API_TOKEN", "tok-123")]),
        URL,
    )
    .expect("built");
    let Transport::Stdio {
        command, args, env, ..
    } = &built.config.transport
    else {
        panic!("stdio");
    };
    assert_eq!(command, "uvx");
    assert_eq!(
        args,
        &["mcp-server-time==2026.10.19", "--local-timezone", "UTC"]
    );
    assert_eq!(env["TIME_API_TOKEN"], "${secret:TIME_TIME_API_TOKEN}");
    assert_eq!(env["TZ"], "UTC");
    assert_eq!(
        built.secrets,
        [("TIME_TIME_API_TOKEN".to_owned(), "tok-123".to_owned())]
    );
    let origin = built.config.registry.clone().expect("origin");
    assert_eq!(
        (origin.url.as_str(), origin.version.as_str()),
        (URL, "2026.10.19")
    );
    assert!(!serde_json::to_string(&built.config)
        .expect("json")
        .contains("tok-123"));

    let wrong = build(&time, "time", &answers(&[("env:TZ", "Mars/Olympus")]), URL).unwrap_err();
    assert!(
        matches!(wrong, RegistryError::Invalid(ref m) if m.contains("TZ must be one of")),
        "{wrong}"
    );
}

#[test]
fn an_npm_server_runs_its_exact_version() {
    let everything = entry(
        "io.github.modelcontextprotocol/server-everything",
        "2026.8.31",
    );
    let built = build(&everything, "everything", &BTreeMap::new(), URL).expect("built");
    let Transport::Stdio { command, args, .. } = &built.config.transport else {
        panic!("stdio");
    };
    assert_eq!(command, "npx");
    assert_eq!(
        args,
        &[
            "-y",
            "@modelcontextprotocol/server-everything@2026.8.31",
            "stdio"
        ]
    );
}

#[test]
fn a_remote_fills_its_address_and_keeps_its_token_in_the_keychain() {
    let weather = entry("com.example/weather-remote", "1.1.0");
    let missing = build(&weather, "weather", &BTreeMap::new(), URL).unwrap_err();
    assert_eq!(missing, RegistryError::Missing("token".into()));
    let built = build(
        &weather,
        "weather",
        &answers(&[
            ("url:region", "us"),
            ("header:Authorization:token", "w-secret"),
        ]),
        URL,
    )
    .expect("built");
    let Transport::Http { url, headers, sse } = &built.config.transport else {
        panic!("http");
    };
    assert_eq!(url, "https://us.mcp.weather.example.com/mcp");
    assert!(!sse);
    assert_eq!(headers["Authorization"], "Bearer ${secret:WEATHER_TOKEN}");
    assert_eq!(headers["X-Units"], "metric");
    assert_eq!(
        built.secrets,
        [("WEATHER_TOKEN".to_owned(), "w-secret".to_owned())]
    );
}

#[test]
fn an_image_runs_in_docker_with_its_variables_passed_by_name() {
    let boxed = entry("io.github.acme/boxed", "1.2.3");
    let built = build(&boxed, "boxed", &answers(&[("env:ACME_API_KEY", "k")]), URL).expect("built");
    let Transport::Stdio { command, args, .. } = &built.config.transport else {
        panic!("stdio");
    };
    assert_eq!(command, "docker");
    assert_eq!(
        args,
        &[
            "run",
            "-i",
            "--rm",
            "-e",
            "ACME_API_KEY",
            "ghcr.io/acme/boxed-mcp:1.2.3"
        ]
    );
}

#[test]
fn deleted_entries_are_refused_and_deprecated_ones_say_so() {
    let gone = entry(
        "io.github.modelcontextprotocol/server-filesystem",
        "2026.8.31",
    );
    assert!(matches!(plan(&gone), Err(RegistryError::Deleted(_))));
    let old = entry("io.github.modelcontextprotocol/server-memory", "2026.8.31");
    let warning = plan(&old).expect("plan").warning.expect("warned");
    assert!(
        warning.starts_with("deprecated in the registry"),
        "{warning}"
    );
}
