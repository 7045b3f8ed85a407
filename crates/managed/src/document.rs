//! What a managed policy file says, and how several are put together.
//!
//! Every object refuses fields it does not know, so a misspelt key is an error that names it,
//! never a lock silently not applied. Several files (`managed.json`, then `managed.d/*.json` in
//! name order, then the signed remote document) are merged as JSON before they are read as one:
//! objects key by key, lists one after the other, and a later value replacing an earlier one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_policy::{ArgCondition, DefaultDecision, Effect, Rule, Scope, Target};
use toolgate_settings::{IdentityProvider, NetworkAccess, TelemetrySettings};

use crate::remote::RemotePolicy;
use crate::servers::{ServerMatch, ServerPolicy};

/// One managed policy document, or several merged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Document {
    /// Which servers may run, and the servers that always do.
    #[serde(default)]
    pub servers: ServerPolicy,
    /// Rules that rank with the user's own: a deny or ask here is never undone by the user.
    #[serde(default)]
    pub rules: Vec<ManagedRule>,
    /// Settings the user cannot change, each key locked on its own.
    #[serde(default)]
    pub settings: Locks,
    /// Where the audit is streamed (OpenTelemetry); the user cannot turn it off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<TelemetrySettings>,
    /// The registry servers are added from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistryPolicy>,
    /// The organisation's identity provider, for enterprise-managed sign-in; the user's own
    /// `identityProvider` setting cannot replace it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_provider: Option<IdentityProvider>,
    /// A signed document fetched from the organisation, merged over the local files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemotePolicy>,
}

/// A rule as the organisation writes it: no scope (it always applies), no fingerprint binding.
/// It binds servers by what they run (`crate::identity`): those `runs` matches, or, without
/// it, every server that runs what the server its target names runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManagedRule {
    pub id: String,
    pub effect: Effect,
    pub target: Target,
    /// The servers the rule applies to, by what they run (as an allow or deny entry names it),
    /// whatever their ids; the target's `serverId` is then only a label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<ServerMatch>,
    #[serde(default)]
    pub conditions: Vec<ArgCondition>,
    /// Only for calls from this connected client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// What the user is shown as the rule's name ("no pushes from agents").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ManagedRule {
    /// The rule the gate decides by, marked as the organisation's; its id is kept apart from
    /// the user's by an `org:` prefix.
    pub fn to_rule(&self) -> Rule {
        Rule {
            conditions: self.conditions.clone(),
            client: self.client.clone(),
            note: self.note.clone(),
            managed: true,
            ..Rule::new(
                format!("org:{}", self.id),
                self.effect,
                self.target.clone(),
                Scope::Always,
                0,
            )
        }
    }
}

/// Settings the organisation fixes. Each key present is locked to its value; absent keys
/// stay the user's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Locks {
    /// Allow tools their server marks read-only without asking (usually locked off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub auto_allow_read_only: Option<bool>,
    /// What happens when no rule decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub default_decision: Option<DefaultDecision>,
    /// How long a call waits for the user's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub approval_timeout_secs: Option<u64>,
    /// `true`: every local server runs in its sandbox; the user cannot switch it off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox: Option<bool>,
    /// The most network a local server's sandbox may give it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub network_at_most: Option<NetworkAccess>,
    /// Per server id, tools whose results the user reviews before the model sees them (`*`:
    /// all of them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub review_results: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegistryPolicy {
    /// The MCP Registry API's base address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `true`: servers are added from that registry only.
    #[serde(default)]
    pub registry_only: bool,
}

/// Why a document cannot be used: it is refused whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl Document {
    /// Reads one document and checks everything a server start or a decision would otherwise
    /// trip over later: matchers, version ranges, rules, required servers.
    pub fn parse(value: Value) -> Result<Self, Invalid> {
        let document: Document =
            serde_json::from_value(value).map_err(|e| Invalid(e.to_string()))?;
        document.check()?;
        Ok(document)
    }

    fn check(&self) -> Result<(), Invalid> {
        for (list, entries) in [("allow", &self.servers.allow), ("deny", &self.servers.deny)] {
            for (i, entry) in entries.iter().enumerate() {
                crate::servers::check_match(entry)
                    .map_err(|e| Invalid(format!("servers.{list}[{i}]: {e}")))?;
            }
        }
        for (i, rule) in self.rules.iter().enumerate() {
            if let Some(entry) = &rule.runs {
                crate::servers::check_match(entry)
                    .map_err(|e| Invalid(format!("rules[{i}].runs: {e}")))?;
            }
        }
        let rules = toolgate_policy::PolicySettings {
            rules: self.rules.iter().map(ManagedRule::to_rule).collect(),
            ..Default::default()
        };
        rules
            .validate()
            .map_err(|e| Invalid(format!("rules: {e}")))?;
        if let Some(first) = self.servers.required.first() {
            let mut settings = toolgate_settings::Settings::first_run(first.clone());
            settings.servers = self.servers.required.clone();
            settings
                .validate()
                .map_err(|e| Invalid(format!("servers.required: {e}")))?;
        }
        if let Some(remote) = &self.remote {
            crate::remote::check(remote).map_err(|e| Invalid(format!("remote: {e}")))?;
        }
        Ok(())
    }
}

/// `later` merged over `earlier`: objects key by key, lists appended, anything else replaced.
pub fn merge(earlier: &mut Value, later: Value) {
    match (earlier, later) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                match into.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        into.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(into), Value::Array(from)) => into.extend(from),
        (slot, value) => *slot = value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_misspelt_key_is_refused_by_name() {
        let e = Document::parse(json!({"settings": {"autoAllowReadonly": false}})).unwrap_err();
        assert!(e.0.contains("autoAllowReadonly"), "{e}");
    }

    #[test]
    fn files_merge_objects_by_key_and_append_lists() {
        let mut a = json!({"servers": {"deny": [{"npm": "a"}]}, "settings": {"sandbox": true}});
        merge(
            &mut a,
            json!({"servers": {"deny": [{"npm": "b"}], "allowUserServers": false}, "settings": {"approvalTimeoutSecs": 60}}),
        );
        let d = Document::parse(a).expect("valid");
        assert_eq!(d.servers.deny.len(), 2);
        assert!(!d.servers.allow_user_servers);
        assert_eq!(d.settings.sandbox, Some(true));
        assert_eq!(d.settings.approval_timeout_secs, Some(60));
    }

    #[test]
    fn a_rule_with_a_bad_condition_refuses_the_document() {
        let e = Document::parse(json!({"rules": [{"id": "x", "effect": "deny",
            "target": {"kind": "tool", "serverId": "s", "tool": "t"},
            "conditions": [{"pointer": "path", "matcher": {"kind": "glob", "value": "/etc/**"}}]}]}))
        .unwrap_err();
        assert!(e.0.starts_with("rules:"), "{e}");
    }

    #[test]
    fn managed_rules_are_marked_and_prefixed() {
        let d = Document::parse(json!({"rules": [{"id": "no-push", "effect": "ask",
            "target": {"kind": "server", "serverId": "git"}}]}))
        .expect("valid");
        let rule = d.rules[0].to_rule();
        assert!(rule.managed);
        assert_eq!(rule.id, "org:no-push");
    }
}
