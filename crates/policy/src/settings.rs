//! The policy part of the user's settings, and the edits the UI makes to it.

use serde::{Deserialize, Serialize};

use crate::condition::{compile_glob, pointer_problem, Matcher};
use crate::rule::{Rule, Scope, Target};

/// Everything the gate decides by, apart from the request itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicySettings {
    /// Deny everything, whatever the rules say: the user's emergency stop.
    pub paused: bool,
    /// Allow tools their server marks read-only without asking. Off by default because the
    /// mark is the server's claim, not something Toolgate can check.
    pub auto_allow_read_only: bool,
    /// What happens when no rule and no annotation decides.
    pub default: DefaultDecision,
    /// Seconds a call waits for the user's answer before it is denied; none means 10 minutes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approval_timeout_secs: Option<u64>,
    pub rules: Vec<Rule>,
}

impl PolicySettings {
    /// How long a call waits for an answer.
    pub fn approval_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.approval_timeout_secs.unwrap_or(600).clamp(5, 86_400))
    }
}

/// The last word when nothing else decides. There is deliberately no "allow": a request that
/// no rule covers is one the user has not seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum DefaultDecision {
    #[default]
    Ask,
    Deny,
}

/// Why the policy settings, or an edit to them, were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// `field` is a path inside the rule, such as `target.tool` or `conditions[1].pointer`.
    #[error("rule {index} ({id:?}), {field}: {problem}")]
    InvalidRule {
        index: usize,
        id: String,
        field: String,
        problem: RuleProblem,
    },
    #[error("no rule has the id {0:?}; it may have been revoked already")]
    UnknownRule(String),
}

/// What is wrong with one field of a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleProblem {
    #[error("must not be empty")]
    Empty,
    #[error("is not a JSON pointer: {0}")]
    BadPointer(String),
    #[error("is not a valid glob: {0}")]
    BadGlob(String),
    #[error("is already the id of rule {0}")]
    DuplicateId(usize),
    #[error("a rule for one call (scope “once”) is never stored")]
    OnceStored,
    #[error("conditions apply to tool calls only; this rule's target has no arguments")]
    ConditionsWithoutArguments,
    #[error("a tool fingerprint only makes sense on a rule for one tool")]
    ToolFingerprintWithoutTool,
}

impl PolicySettings {
    /// Checks every rule; the error names the first bad rule by index and id, and the field.
    pub fn validate(&self) -> Result<(), PolicyError> {
        for (index, rule) in self.rules.iter().enumerate() {
            validate_rule(index, rule)?;
            if let Some(first) = self.rules[..index].iter().position(|r| r.id == rule.id) {
                return Err(invalid(index, rule, "id", RuleProblem::DuplicateId(first)));
            }
        }
        Ok(())
    }

    /// Stores a rule made from the user's answer, after checking it against the others.
    pub fn add_rule(&mut self, rule: Rule) -> Result<(), PolicyError> {
        let index = self.rules.len();
        validate_rule(index, &rule)?;
        if let Some(first) = self.rules.iter().position(|r| r.id == rule.id) {
            return Err(invalid(index, &rule, "id", RuleProblem::DuplicateId(first)));
        }
        self.rules.push(rule);
        Ok(())
    }

    /// Removes the rule with this id and returns it.
    pub fn revoke(&mut self, rule_id: &str) -> Result<Rule, PolicyError> {
        let index = self
            .rules
            .iter()
            .position(|r| r.id == rule_id)
            .ok_or_else(|| PolicyError::UnknownRule(rule_id.to_owned()))?;
        Ok(self.rules.remove(index))
    }

    /// Drops the rules scoped to this conversation (when it is deleted); returns how many.
    pub fn forget_conversation(&mut self, conversation_id: &str) -> usize {
        self.retain_counting(
            |r| !matches!(&r.scope, Scope::Conversation { id } if id == conversation_id),
        )
    }

    /// Drops the rules that have expired by `now_ms`; returns how many. Expired rules already
    /// have no effect, so this only tidies the list the user sees.
    pub fn forget_expired(&mut self, now_ms: i64) -> usize {
        self.retain_counting(|r| r.expires_at.is_none_or(|end| now_ms < end))
    }

    fn retain_counting(&mut self, keep: impl FnMut(&Rule) -> bool) -> usize {
        let before = self.rules.len();
        self.rules.retain(keep);
        before - self.rules.len()
    }
}

fn invalid(
    index: usize,
    rule: &Rule,
    field: impl Into<String>,
    problem: RuleProblem,
) -> PolicyError {
    PolicyError::InvalidRule {
        index,
        id: rule.id.clone(),
        field: field.into(),
        problem,
    }
}

fn validate_rule(index: usize, rule: &Rule) -> Result<(), PolicyError> {
    let fail = |field: String, problem| Err(invalid(index, rule, field, problem));
    let empty = |text: &str| text.trim().is_empty();

    if empty(&rule.id) {
        return fail("id".into(), RuleProblem::Empty);
    }
    match &rule.scope {
        Scope::Once => return fail("scope".into(), RuleProblem::OnceStored),
        Scope::Conversation { id } if empty(id) => {
            return fail("scope.id".into(), RuleProblem::Empty)
        }
        Scope::Conversation { .. } | Scope::Always => {}
    }
    let (server_id, is_tool) = match &rule.target {
        Target::Tool { server_id, tool } => {
            if empty(tool) {
                return fail("target.tool".into(), RuleProblem::Empty);
            }
            (server_id, true)
        }
        Target::Server { server_id } => (server_id, false),
        Target::Sampling { server_id } | Target::Elicitation { server_id } => {
            if !rule.conditions.is_empty() {
                return fail("conditions".into(), RuleProblem::ConditionsWithoutArguments);
            }
            (server_id, false)
        }
    };
    if empty(server_id) {
        return fail("target.serverId".into(), RuleProblem::Empty);
    }
    for (i, condition) in rule.conditions.iter().enumerate() {
        if let Some(reason) = pointer_problem(&condition.pointer) {
            let field = format!("conditions[{i}].pointer");
            return fail(field, RuleProblem::BadPointer(reason.to_owned()));
        }
        let field = format!("conditions[{i}].matcher");
        match &condition.matcher {
            Matcher::Glob(pattern) if empty(pattern) => return fail(field, RuleProblem::Empty),
            Matcher::Glob(pattern) => {
                if let Err(reason) = compile_glob(pattern) {
                    return fail(field, RuleProblem::BadGlob(reason));
                }
            }
            Matcher::Prefix(prefix) if empty(prefix) => return fail(field, RuleProblem::Empty),
            Matcher::Prefix(_) | Matcher::Equals(_) => {}
        }
    }
    if let Some(binding) = &rule.bound_to {
        if empty(&binding.server_fingerprint) {
            return fail("boundTo.serverFingerprint".into(), RuleProblem::Empty);
        }
        match &binding.tool_fingerprint {
            Some(_) if !is_tool => {
                return fail(
                    "boundTo.toolFingerprint".into(),
                    RuleProblem::ToolFingerprintWithoutTool,
                )
            }
            Some(fingerprint) if empty(fingerprint) => {
                return fail("boundTo.toolFingerprint".into(), RuleProblem::Empty)
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::condition::ArgCondition;
    use crate::rule::Binding;
    use crate::subject::{Annotations, ToolCall};
    use serde_json::{json, Value};

    fn call() -> ToolCall {
        ToolCall {
            server_id: "shell".into(),
            tool: "run".into(),
            arguments: json!({"command": "git status"}),
            annotations: Annotations::default(),
            server_fingerprint: "s1".into(),
            tool_fingerprint: "t1".into(),
        }
    }

    fn sample() -> PolicySettings {
        let c = call();
        PolicySettings {
            paused: false,
            auto_allow_read_only: true,
            default: DefaultDecision::Deny,
            approval_timeout_secs: None,
            rules: vec![
                Rule::allow_tool("r1", &c, Scope::Always, 1_700_000_000_000)
                    .with_conditions(vec![ArgCondition::prefix("/command", "git status")])
                    .with_note("git status in shell"),
                Rule::ask_tool("r2", &c, Scope::Always, 1)
                    .with_conditions(vec![ArgCondition::prefix("/command", "git push")]),
                Rule::allow_server("r3", &c, Scope::Conversation { id: "c1".into() }, 2)
                    .expiring_at(10),
                Rule::deny_tool("r4", &c, Scope::Always, 3).with_conditions(vec![
                    ArgCondition::glob("/path", "/etc/**"),
                    ArgCondition::equals("/force", json!(true)),
                ]),
            ],
        }
    }

    #[test]
    fn settings_round_trip_through_json() {
        let settings = sample();
        settings.validate().unwrap();
        let text = serde_json::to_string_pretty(&settings).unwrap();
        let back: PolicySettings = serde_json::from_str(&text).unwrap();
        assert_eq!(back, settings);
    }

    #[test]
    fn stored_form_is_camel_case_and_tagged() {
        let value = serde_json::to_value(sample()).unwrap();
        assert_eq!(value["autoAllowReadOnly"], json!(true));
        assert_eq!(value["default"], json!("deny"));
        let first = &value["rules"][0];
        assert_eq!(first["effect"], json!("allow"));
        assert_eq!(first["scope"], json!({"kind": "always"}));
        assert_eq!(
            first["target"],
            json!({"kind": "tool", "serverId": "shell", "tool": "run"})
        );
        assert_eq!(
            first["conditions"],
            json!([{"pointer": "/command", "matcher": {"kind": "prefix", "value": "git status"}}])
        );
        assert_eq!(
            first["boundTo"],
            json!({"serverFingerprint": "s1", "toolFingerprint": "t1"})
        );
        assert_eq!(first["createdAt"], json!(1_700_000_000_000_i64));
        assert_eq!(
            value["rules"][2]["scope"],
            json!({"kind": "conversation", "id": "c1"})
        );
        assert_eq!(value["rules"][2]["expiresAt"], json!(10));
        // Deny rules are not bound.
        assert_eq!(value["rules"][3].get("boundTo"), None);
    }

    #[test]
    fn missing_fields_take_the_safe_defaults() {
        let settings: PolicySettings = serde_json::from_value(json!({})).unwrap();
        assert_eq!(settings, PolicySettings::default());
        assert!(!settings.paused);
        assert!(!settings.auto_allow_read_only);
        assert_eq!(settings.default, DefaultDecision::Ask);
    }

    fn error_of(mutate: impl FnOnce(&mut Rule)) -> (usize, String, RuleProblem) {
        let mut settings = sample();
        mutate(&mut settings.rules[1]);
        match settings.validate() {
            Err(PolicyError::InvalidRule {
                index,
                field,
                problem,
                ..
            }) => (index, field, problem),
            other => panic!("expected an invalid rule, got {other:?}"),
        }
    }

    #[test]
    fn validate_names_the_rule_and_the_field() {
        use RuleProblem::*;
        type Mutation = Box<dyn FnOnce(&mut Rule)>;
        let cases: Vec<(Mutation, &str, RuleProblem)> = vec![
            (Box::new(|r| r.id = " ".into()), "id", Empty),
            (Box::new(|r| r.id = "r1".into()), "id", DuplicateId(0)),
            (Box::new(|r| r.scope = Scope::Once), "scope", OnceStored),
            (
                Box::new(|r| r.scope = Scope::Conversation { id: String::new() }),
                "scope.id",
                Empty,
            ),
            (
                Box::new(|r| {
                    r.target = Target::Tool {
                        server_id: "shell".into(),
                        tool: String::new(),
                    }
                }),
                "target.tool",
                Empty,
            ),
            (
                Box::new(|r| {
                    r.target = Target::Server {
                        server_id: String::new(),
                    }
                }),
                "target.serverId",
                Empty,
            ),
            (
                Box::new(|r| {
                    r.target = Target::Sampling {
                        server_id: "shell".into(),
                    }
                }),
                "conditions",
                ConditionsWithoutArguments,
            ),
            (
                Box::new(|r| r.conditions[0].pointer = "command".into()),
                "conditions[0].pointer",
                BadPointer("a JSON pointer starts with `/`, like `/path`".into()),
            ),
            (
                Box::new(|r| r.conditions.push(ArgCondition::prefix("/a", ""))),
                "conditions[1].matcher",
                Empty,
            ),
            (
                Box::new(|r| {
                    r.bound_to = Some(Binding {
                        server_fingerprint: String::new(),
                        tool_fingerprint: None,
                    })
                }),
                "boundTo.serverFingerprint",
                Empty,
            ),
            (
                Box::new(|r| {
                    r.target = Target::Server {
                        server_id: "shell".into(),
                    };
                    r.bound_to = Some(Binding {
                        server_fingerprint: "s".into(),
                        tool_fingerprint: Some("t".into()),
                    })
                }),
                "boundTo.toolFingerprint",
                ToolFingerprintWithoutTool,
            ),
        ];
        for (mutate, field, problem) in cases {
            assert_eq!(error_of(mutate), (1, field.to_owned(), problem));
        }
    }

    #[test]
    fn a_bad_glob_is_named_with_its_reason() {
        let (index, field, problem) =
            error_of(|r| r.conditions.push(ArgCondition::glob("/path", "/home/{a")));
        assert_eq!((index, field.as_str()), (1, "conditions[1].matcher"));
        assert!(matches!(problem, RuleProblem::BadGlob(_)), "{problem:?}");
        let mut settings = sample();
        settings.rules[1]
            .conditions
            .push(ArgCondition::glob("/path", "/home/{a"));
        let message = settings.validate().unwrap_err().to_string();
        assert!(message.starts_with("rule 1 (\"r2\"), conditions[1].matcher: is not a valid glob"));
    }

    #[test]
    fn add_revoke_and_forget() {
        let mut settings = sample();
        let c = call();
        let once = Rule::allow_tool("r5", &c, Scope::Once, 4);
        assert!(matches!(
            settings.add_rule(once),
            Err(PolicyError::InvalidRule {
                index: 4,
                problem: RuleProblem::OnceStored,
                ..
            })
        ));
        let dup = Rule::allow_tool("r1", &c, Scope::Always, 4);
        assert!(settings.add_rule(dup).is_err());
        let convo = Rule::allow_tool("r5", &c, Scope::Conversation { id: "c2".into() }, 4);
        settings.add_rule(convo).unwrap();
        assert_eq!(settings.rules.len(), 5);

        assert_eq!(settings.revoke("r2").unwrap().id, "r2");
        assert_eq!(
            settings.revoke("r2"),
            Err(PolicyError::UnknownRule("r2".into()))
        );

        assert_eq!(settings.forget_conversation("c2"), 1);
        assert_eq!(settings.forget_conversation("c2"), 0);
        assert_eq!(settings.forget_expired(9), 0);
        assert_eq!(settings.forget_expired(10), 1);
        let ids: Vec<_> = settings.rules.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["r1", "r4"]);
    }

    #[test]
    fn unknown_scope_kind_is_refused_not_guessed() {
        let mut value = serde_json::to_value(sample()).unwrap();
        value["rules"][0]["scope"] = json!({"kind": "forever"});
        assert!(serde_json::from_value::<PolicySettings>(value).is_err());
        let value: Value = json!({"rules": [{"id": "x", "effect": "allow"}]});
        assert!(serde_json::from_value::<PolicySettings>(value).is_err());
    }
}
