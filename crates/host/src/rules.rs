//! The rule editor's two operations: preview a rule against the recent audit log, and save it.

use serde::Serialize;
use toolgate_history::{AuditFilter, AuditRow};
use toolgate_policy::{PastRequest, PolicyError, PolicySettings, Rule};

use crate::Host;

/// How many of the latest audit entries a preview looks at.
pub const PREVIEW_WINDOW: usize = 200;

/// Why a rule could not be previewed or saved; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum RuleEditError {
    #[error(transparent)]
    Invalid(#[from] PolicyError),
    #[error(transparent)]
    Bind(#[from] toolgate_agent::BindError),
    #[error(transparent)]
    Settings(#[from] toolgate_settings::file::FileError),
    #[error("the audit log cannot be read: {0}")]
    History(String),
}

/// Which of the recent requests a rule would have matched.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RulePreview {
    /// How many recent requests were looked at (the newest first).
    pub checked: usize,
    /// Those the rule would have matched, newest first.
    pub matched: Vec<AuditRow>,
}

impl Host {
    /// Which of the last [`PREVIEW_WINDOW`] requests in the audit log `rule` would have matched.
    /// The rule is checked first, as saving would check it, so a mistake shows before saving.
    pub fn preview_rule(&self, rule: &Rule) -> Result<RulePreview, RuleEditError> {
        PolicySettings {
            rules: vec![rule.clone()],
            ..PolicySettings::default()
        }
        .validate()?;
        let history = self.history.clone().map_err(RuleEditError::History)?;
        let recent = history
            .audit(&AuditFilter {
                limit: Some(PREVIEW_WINDOW),
                ..AuditFilter::default()
            })
            .map_err(|e| RuleEditError::History(e.to_string()))?;
        let checked = recent.len();
        let matched = recent
            .into_iter()
            .filter(|row| {
                let entry = &row.entry;
                rule.would_have_matched(&PastRequest {
                    server_id: &entry.server_id,
                    tool: &entry.tool,
                    arguments: &entry.arguments,
                    conversation_id: entry.conversation_id.as_deref(),
                    client: entry.client.as_deref(),
                })
            })
            .collect();
        Ok(RulePreview { checked, matched })
    }

    /// Saves a rule written or edited by hand: it replaces the rule with its id, or is added.
    /// A grant is bound to the server and tool as they run now (unless only narrowed; see
    /// [`toolgate_agent::bind_edited`]). Returns the policy as saved.
    pub async fn save_rule(&self, rule: Rule) -> Result<PolicySettings, RuleEditError> {
        let servers = self.servers.manager.snapshot().await;
        let previous = self
            .settings()
            .policy
            .rules
            .iter()
            .find(|r| r.id == rule.id)
            .cloned();
        let rule = toolgate_agent::bind_edited(rule, previous.as_ref(), &servers)?;
        let mut refused = None;
        let saved = self.update_settings(|s| {
            if let Err(e) = s.policy.save_rule(rule) {
                refused = Some(e);
            }
        })?;
        match refused {
            Some(e) => Err(e.into()),
            None => Ok(saved.policy),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use toolgate_history::{AuditDecision, AuditEntry, DecidedBy};
    use toolgate_policy::{ArgCondition, Effect, Scope, Target};
    use toolgate_secrets::MemoryStore;

    use super::*;
    use crate::HostOptions;

    fn host(dir: &std::path::Path) -> Arc<Host> {
        Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir)
        })
        .unwrap()
    }

    fn ask_before(pattern: &str) -> Rule {
        let target = Target::Tool {
            server_id: "fs".into(),
            tool: "write_file".into(),
        };
        Rule::new("r1", Effect::Ask, target, Scope::Always, 0)
            .with_conditions(vec![ArgCondition::glob("/path", pattern)])
    }

    #[tokio::test]
    async fn a_preview_lists_the_recent_calls_a_rule_would_have_matched() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        let history = host.history.clone().unwrap();
        for path in ["/etc/hosts", "/home/me/a.txt", "/etc/passwd"] {
            let entry = AuditEntry::new(
                "fs",
                "write_file",
                json!({ "path": path }),
                AuditDecision::Allowed,
                DecidedBy::User,
            );
            history.record_audit(&entry).unwrap();
        }
        let preview = host.preview_rule(&ask_before("/etc/**")).unwrap();
        assert_eq!(preview.checked, 3);
        let paths: Vec<&str> = preview
            .matched
            .iter()
            .filter_map(|row| row.entry.arguments["path"].as_str())
            .collect();
        assert_eq!(paths, ["/etc/passwd", "/etc/hosts"]);

        let err = host.preview_rule(&ask_before("/etc/[")).unwrap_err();
        assert!(err.to_string().contains("conditions[0].matcher"), "{err}");
    }

    #[tokio::test]
    async fn a_saved_rule_replaces_its_old_self_in_the_settings_file() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        host.save_rule(ask_before("/etc/**")).await.unwrap();
        let saved = host.save_rule(ask_before("/var/**")).await.unwrap();
        assert_eq!(saved.rules, vec![ask_before("/var/**")]);
        let on_disk = std::fs::read_to_string(host.settings_path()).unwrap();
        assert!(on_disk.contains("/var/**") && !on_disk.contains("/etc/**"));

        // A grant for a server that does not exist cannot be bound, and is not saved.
        let mut grant = ask_before("/tmp/**");
        grant.effect = Effect::Allow;
        let err = host.save_rule(grant).await.unwrap_err();
        assert!(matches!(err, RuleEditError::Bind(_)), "{err}");
        assert_eq!(host.settings().policy.rules, vec![ask_before("/var/**")]);
    }
}
