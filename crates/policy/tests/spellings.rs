//! A rule holds for every spelling of its target (threat model: "conditions dodged by spelling").
//!
//! The review's cases first (each ran before conditions compared canonical forms), then
//! properties: any spelling of a path under `/etc` is denied by "deny when `/path` matches
//! `/etc/**`", and "allow when `/url` starts with `https://api.example.com`" grants only URLs a
//! client would send to that host and port.

use proptest::prelude::*;
use serde_json::{json, Value};
use toolgate_policy::{
    decide, Annotations, ArgCondition, Decision, PolicySettings, Rule, Scope, Subject, ToolCall,
};
use url::Url;

fn call(tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        server_id: "fs".into(),
        tool: tool.into(),
        arguments,
        annotations: Annotations::default(),
        server_fingerprint: "s".into(),
        tool_fingerprint: "t".into(),
    }
}

/// The review's set-up: the server `fs` allowed, `write_file` denied under `/etc`.
fn deny_etc() -> PolicySettings {
    let mut settings = PolicySettings::default();
    let probe = call("write_file", json!({}));
    settings
        .add_rule(Rule::allow_server("all", &probe, Scope::Always, 0))
        .expect("a valid rule");
    settings
        .add_rule(
            Rule::deny_tool("etc", &probe, Scope::Always, 0)
                .with_conditions(vec![ArgCondition::glob("/path", "/etc/**")]),
        )
        .expect("a valid rule");
    settings
}

/// `fetch` allowed only towards `https://api.example.com`; nothing else allowed.
fn allow_api() -> PolicySettings {
    let mut settings = PolicySettings::default();
    let probe = call("fetch", json!({}));
    settings
        .add_rule(
            Rule::allow_tool("api", &probe, Scope::Always, 0).with_conditions(vec![
                ArgCondition::prefix("/url", "https://api.example.com"),
            ]),
        )
        .expect("a valid rule");
    settings
}

fn decision(settings: &PolicySettings, tool: &str, arguments: Value) -> Decision {
    decide(&Subject::ToolCall(call(tool, arguments)), settings, None, 0).decision
}

#[test]
fn the_reviews_path_spellings_are_denied() {
    let settings = deny_etc();
    for path in [
        "/etc/passwd",
        "//etc/passwd",
        "/./etc/passwd",
        "/etc//passwd",
        "///etc/./passwd/",
        "/tmp/../etc/passwd",
        "etc/passwd",
        "../../etc/passwd",
    ] {
        assert_eq!(
            decision(&settings, "write_file", json!({ "path": path })),
            Decision::Deny,
            "{path}"
        );
    }
    // What is plainly elsewhere still runs under the server-wide grant.
    for path in ["/home/me/notes.txt", "//home/me/./notes.txt", "/etcetera/x"] {
        assert_eq!(
            decision(&settings, "write_file", json!({ "path": path })),
            Decision::Allow,
            "{path}"
        );
    }
}

#[test]
fn the_reviews_url_spellings_are_not_granted() {
    let settings = allow_api();
    for url in [
        "https://api.example.com@evil.example/steal",
        "https://api.example.com:443@evil.example/steal",
        "https://api.example.com%40evil.example/",
        "https://api.example.com.evil.example/",
        "https://api.example.com:8443/v1",
        "http://api.example.com/v1",
        "api.example.com/v1",
        "https://evil.example/https://api.example.com",
        "https://api.example.com/v1 ; curl evil.example",
    ] {
        assert_ne!(
            decision(&settings, "fetch", json!({ "url": url })),
            Decision::Allow,
            "{url}"
        );
    }
    for url in [
        "https://api.example.com",
        "https://api.example.com/v1/models?limit=2&page=3",
        "HTTPS://API.EXAMPLE.COM/v1",
        "https://api.example.com:443/v1",
        "https://api.example.com./v1",
    ] {
        assert_eq!(
            decision(&settings, "fetch", json!({ "url": url })),
            Decision::Allow,
            "{url}"
        );
    }
}

#[test]
fn a_url_deny_holds_for_every_spelling_of_its_host() {
    let mut settings = PolicySettings::default();
    let probe = call("fetch", json!({}));
    settings
        .add_rule(Rule::allow_server("all", &probe, Scope::Always, 0))
        .expect("a valid rule");
    settings
        .add_rule(
            Rule::deny_tool("evil", &probe, Scope::Always, 0)
                .with_conditions(vec![ArgCondition::glob("/url", "https://evil.example/**")]),
        )
        .expect("a valid rule");
    for url in [
        "https://evil.example/x",
        "HTTPS://EVIL.example/x",
        "https://evil.example:443/x",
        "https://evil.example./x",
        "https://evil.example/a/../x",
        "https://user@evil.example/x",
        "https://api.example.com@evil.example/x",
        "evil.example/x",
    ] {
        assert_eq!(
            decision(&settings, "fetch", json!({ "url": url })),
            Decision::Deny,
            "{url}"
        );
    }
    assert_eq!(
        decision(
            &settings,
            "fetch",
            json!({ "url": "https://good.example/x" })
        ),
        Decision::Allow
    );
}

/// One spelling of `/etc/<segments>`: each separator repeated, `.` segments inserted, a
/// trailing separator or `/.` added.
fn etc_spelling() -> impl Strategy<Value = String> {
    (
        prop::collection::vec("[a-z0-9_.-]{1,8}", 1..4),
        prop::collection::vec((1usize..4, any::<bool>()), 5),
        0usize..3,
    )
        .prop_filter("no `.` or `..` as a name", |(names, _, _)| {
            names.iter().all(|n| n != "." && n != "..")
        })
        .prop_map(|(names, seps, tail)| {
            let mut path = String::new();
            for (i, name) in std::iter::once("etc".to_owned()).chain(names).enumerate() {
                let (repeat, dot) = seps[i % seps.len()];
                path.push_str(&"/".repeat(repeat));
                if dot {
                    path.push_str("./");
                }
                path.push_str(&name);
            }
            path.push_str(["", "/", "/."][tail]);
            path
        })
}

/// A URL-ish string assembled from pieces an attacker would try.
fn url_spelling() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(&["https", "HTTPS", "http", "hTTps"][..]);
    let userinfo = prop::sample::select(&["", "api.example.com@", "u:p@", "@", "x%40y@"][..]);
    let host = prop::sample::select(
        &[
            "api.example.com",
            "API.EXAMPLE.COM",
            "api.example.com.",
            "evil.example",
            "api.example.com.evil.example",
            "api.example.com%2eevil.example",
            "127.0.0.1",
        ][..],
    );
    let port = prop::sample::select(&["", ":443", ":8443", ":80", "@evil.example"][..]);
    let path =
        prop::sample::select(&["", "/", "/v1", "/./v1", "/a/../v1", "/%2e%2e/x", "\\@evil"][..]);
    (scheme, userinfo, host, port, path)
        .prop_map(|(s, u, h, p, path)| format!("{s}://{u}{h}{p}{path}"))
}

proptest! {
    #[test]
    fn every_spelling_of_a_path_under_etc_is_denied(path in etc_spelling()) {
        prop_assert_eq!(decision(&deny_etc(), "write_file", json!({ "path": path })), Decision::Deny);
    }

    #[test]
    fn a_url_grant_reaches_only_its_host(url in url_spelling()) {
        let granted = decision(&allow_api(), "fetch", json!({ "url": url.clone() })) == Decision::Allow;
        if granted {
            // What a WHATWG client would connect to.
            let parsed = Url::parse(&url).expect("a granted URL parses");
            prop_assert_eq!(parsed.scheme(), "https");
            prop_assert_eq!(parsed.host_str().map(|h| h.trim_end_matches('.')), Some("api.example.com"));
            prop_assert_eq!(parsed.port_or_known_default(), Some(443));
            prop_assert!(parsed.username().is_empty() && parsed.password().is_none());
        }
    }
}
