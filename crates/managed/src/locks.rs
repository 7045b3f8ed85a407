//! The settings as the organisation has them: locked keys at their values and its servers
//! present ([`apply`]), and what a change would loosen ([`violations`]).
//!
//! Every change the user makes is applied to the settings as the organisation has them, then
//! checked: a change that leaves any locked key off its value, removes or alters one of the
//! organisation's servers, or loosens a local server's sandbox past the lock, is refused whole,
//! naming each key. The organisation's servers are never written into the user's file
//! ([`strip`]); a locked key is saved at its locked value.

use toolgate_settings::{NetworkAccess, Settings};

use crate::document::Document;

/// One locked thing the user tried to change, in words, with the settings key it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where it is in the settings (`policy.autoAllowReadOnly`, `servers.mail.sandbox`).
    pub key: String,
    /// What the organisation set, for people.
    pub words: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is set by your organisation ({})",
            self.key, self.words
        )
    }
}

fn rank(network: NetworkAccess) -> u8 {
    match network {
        NetworkAccess::None => 0,
        NetworkAccess::Loopback => 1,
        NetworkAccess::Hosts => 2,
        NetworkAccess::Any => 3,
    }
}

/// Puts the organisation's servers and locked values into `settings`.
pub fn apply(document: &Document, settings: &mut Settings) {
    let locks = &document.settings;
    let policy = &mut settings.policy;
    if let Some(v) = locks.auto_allow_read_only {
        policy.auto_allow_read_only = v;
    }
    if let Some(v) = locks.default_decision {
        policy.default = v;
    }
    if let Some(v) = locks.approval_timeout_secs {
        policy.approval_timeout_secs = Some(v);
    }
    if let Some(idp) = &document.identity_provider {
        settings.identity_provider = Some(idp.clone());
    }
    for required in document.servers.required.iter().rev() {
        settings.servers.retain(|s| s.id != required.id);
        settings.servers.insert(0, required.clone());
    }
    for server in &mut settings.servers {
        if let Some(mut sandbox) = server.sandbox_settings() {
            let before = sandbox.clone();
            if locks.sandbox == Some(true) {
                sandbox.enabled = true;
            }
            if let Some(max) = locks.network_at_most {
                if rank(sandbox.network) > rank(max) {
                    sandbox.network = max;
                }
            }
            if sandbox != before {
                server.sandbox = Some(sandbox);
            }
        }
        if let Some(tools) = locks.review_results.get(&server.id) {
            for tool in tools {
                if !server.trust.review_results.contains(tool) {
                    server.trust.review_results.push(tool.clone());
                }
            }
        }
    }
}

/// Takes the organisation's servers out again, before the settings are saved to the user's
/// file.
pub fn strip(document: &Document, settings: &mut Settings) {
    settings
        .servers
        .retain(|s| !document.servers.required.iter().any(|r| r.id == s.id));
}

/// What in `settings` goes against the organisation's policy (settings after a change,
/// starting from [`apply`]'s).
pub fn violations(document: &Document, settings: &Settings) -> Vec<Violation> {
    let locks = &document.settings;
    let policy = &settings.policy;
    let mut found = Vec::new();
    let mut say = |key: String, words: String| found.push(Violation { key, words });
    if let Some(v) = locks
        .auto_allow_read_only
        .filter(|v| *v != policy.auto_allow_read_only)
    {
        say(
            "policy.autoAllowReadOnly".into(),
            format!("allowing read-only tools without asking is {}", on_off(v)),
        );
    }
    if let Some(v) = locks.default_decision.filter(|v| *v != policy.default) {
        say(
            "policy.default".into(),
            format!("what no rule covers: {v:?}"),
        );
    }
    if let Some(v) = locks
        .approval_timeout_secs
        .filter(|v| Some(*v) != policy.approval_timeout_secs)
    {
        say(
            "policy.approvalTimeoutSecs".into(),
            format!("a call waits {v} s for an answer"),
        );
    }
    if let Some(idp) = document
        .identity_provider
        .as_ref()
        .filter(|idp| settings.identity_provider.as_ref() != Some(*idp))
    {
        say(
            "identityProvider".into(),
            format!("sign-in goes through {}", idp.issuer),
        );
    }
    for required in &document.servers.required {
        match settings.servers.iter().find(|s| s.id == required.id) {
            None => say(
                format!("servers.{}", required.id),
                "this server is always present".into(),
            ),
            Some(server) if server != required => say(
                format!("servers.{}", required.id),
                "this server's settings are the organisation's".into(),
            ),
            Some(_) => {}
        }
    }
    for server in &settings.servers {
        if let Some(sandbox) = server.sandbox_settings() {
            if locks.sandbox == Some(true) && !sandbox.enabled {
                say(
                    format!("servers.{}.sandbox", server.id),
                    "every local server runs in its sandbox".into(),
                );
            }
            if let Some(max) = locks
                .network_at_most
                .filter(|m| rank(sandbox.network) > rank(*m))
            {
                say(
                    format!("servers.{}.sandbox.network", server.id),
                    format!("a server may reach at most: {}", max.as_str()),
                );
            }
        }
        if let Some(tools) = locks.review_results.get(&server.id) {
            if tools
                .iter()
                .any(|t| !server.trust.review_results.contains(t))
            {
                say(
                    format!("servers.{}.trust.reviewResults", server.id),
                    format!(
                        "results of {} are reviewed before the model sees them",
                        tools.join(", ")
                    ),
                );
            }
        }
    }
    found
}

fn on_off(v: bool) -> &'static str {
    if v {
        "on"
    } else {
        "off"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate_settings::ServerConfig;

    fn document(value: serde_json::Value) -> Document {
        Document::parse(value).expect("valid")
    }

    fn settings() -> Settings {
        let server: ServerConfig = serde_json::from_value(json!({"id": "web", "name": "Web",
            "transport": "stdio", "command": "uvx", "args": ["mcp-server-fetch"],
            "sandbox": {"enabled": false, "network": "any"}}))
        .expect("server");
        let mut s = Settings::first_run(server);
        s.policy.auto_allow_read_only = true;
        s
    }

    #[test]
    fn applied_settings_break_no_lock_and_each_change_of_a_lock_is_named() {
        let d = document(json!({
            "settings": {"autoAllowReadOnly": false, "sandbox": true, "networkAtMost": "loopback",
                         "approvalTimeoutSecs": 120, "reviewResults": {"web": ["*"]}},
            "servers": {"required": [{"id": "org", "name": "Org", "transport": "stdio", "command": "/opt/org"}]},
        }));
        let mut s = settings();
        assert_eq!(violations(&d, &s).len(), 6, "{:?}", violations(&d, &s));
        apply(&d, &mut s);
        assert_eq!(violations(&d, &s), Vec::new());
        let web = s.servers.iter().find(|x| x.id == "web").expect("web");
        let sandbox = web.sandbox.clone().expect("sandbox");
        assert!(sandbox.enabled);
        assert_eq!(sandbox.network, NetworkAccess::Loopback);
        assert!(web.trust.reviews("anything"));

        // The user turns the sandbox off and removes the organisation's server: both named.
        let mut changed = s.clone();
        changed.servers.retain(|x| x.id != "org");
        changed.servers[0]
            .sandbox
            .as_mut()
            .expect("sandbox")
            .enabled = false;
        let keys: Vec<String> = violations(&d, &changed)
            .into_iter()
            .map(|v| v.key)
            .collect();
        assert_eq!(keys, ["servers.org", "servers.web.sandbox"]);

        // A change the locks allow: the network narrowed to none.
        let mut narrowed = s.clone();
        narrowed.servers[1]
            .sandbox
            .as_mut()
            .expect("sandbox")
            .network = NetworkAccess::None;
        assert_eq!(violations(&d, &narrowed), Vec::new());

        strip(&d, &mut s);
        assert!(s.servers.iter().all(|x| x.id != "org"));
    }

    #[test]
    fn the_organisations_identity_provider_replaces_the_users_and_cannot_be_changed() {
        let idp = json!({"issuer": "https://idp.example.com",
            "tokenEndpoint": "https://idp.example.com/token", "clientId": "toolgate",
            "idToken": "${secret:IDP_ID_TOKEN}"});
        let d = document(json!({ "identityProvider": idp }));
        let mut s = settings();
        assert_eq!(
            violations(&d, &s)
                .into_iter()
                .map(|v| v.key)
                .collect::<Vec<_>>(),
            ["identityProvider"]
        );
        apply(&d, &mut s);
        assert_eq!(
            s.identity_provider.as_ref().map(|i| i.issuer.as_str()),
            Some("https://idp.example.com")
        );
        assert_eq!(violations(&d, &s), Vec::new());
        let mut moved = s.clone();
        if let Some(i) = moved.identity_provider.as_mut() {
            i.issuer = "https://elsewhere.example.com".into();
        }
        let said = violations(&d, &moved);
        assert_eq!(said.len(), 1);
        assert!(
            said[0].to_string().contains("https://idp.example.com"),
            "{}",
            said[0]
        );
    }
}
