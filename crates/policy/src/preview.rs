//! Rules as the user edits them: which past requests a rule would have matched, and saving an
//! edited rule in place.
//!
//! The preview answers "what would this rule have caught?" from the audit log, before the rule
//! is saved. It uses the same target and condition checks as [`crate::decide`] (so a condition
//! reads what it cannot check the way the rule's effect leans), and the same client limit. It
//! does not know what the audit log does not keep: the tool's annotations, and whether the
//! server or tool has changed since (a grant bound to an older launch would not apply to it).

use serde_json::Value;

use crate::rule::{Rule, Scope};
use crate::settings::{PolicyError, PolicySettings};
use crate::subject::{Annotations, Subject, ToolCall};

/// The method a server's sampling request is recorded under in the audit log.
pub const SAMPLING_METHOD: &str = "sampling/createMessage";
/// The method a server's question is recorded under in the audit log.
pub const ELICITATION_METHOD: &str = "elicitation/create";

/// A request as the audit log recorded it.
#[derive(Debug, Clone, Copy)]
pub struct PastRequest<'a> {
    pub server_id: &'a str,
    /// The tool, or the method of a server's own request ([`SAMPLING_METHOD`],
    /// [`ELICITATION_METHOD`]).
    pub tool: &'a str,
    /// The arguments as they reached the server (after any edit by the user).
    pub arguments: &'a Value,
    pub conversation_id: Option<&'a str>,
    /// The connected client that asked, if one did.
    pub client: Option<&'a str>,
}

impl PastRequest<'_> {
    fn subject(&self) -> Subject {
        let server_id = self.server_id.to_owned();
        // Fingerprints are not compared here (see the module docs), so none are needed.
        let server_fingerprint = String::new();
        match self.tool {
            SAMPLING_METHOD => Subject::Sampling {
                server_id,
                server_fingerprint,
            },
            ELICITATION_METHOD => Subject::Elicitation {
                server_id,
                server_fingerprint,
            },
            tool => Subject::ToolCall(ToolCall {
                server_id,
                tool: tool.to_owned(),
                arguments: self.arguments.clone(),
                annotations: Annotations::default(),
                server_fingerprint,
                tool_fingerprint: String::new(),
            }),
        }
    }
}

impl Rule {
    /// Whether this rule would have applied to `past`: its target and conditions cover it, it is
    /// for that caller, and a rule for one conversation only to requests of that conversation.
    /// Expiry and bindings are left out: the preview is about what the rule says.
    pub fn would_have_matched(&self, past: &PastRequest<'_>) -> bool {
        let in_scope = match &self.scope {
            Scope::Once => false,
            Scope::Conversation { id } => past.conversation_id == Some(id.as_str()),
            Scope::Always => true,
        };
        let for_client = self
            .client
            .as_deref()
            .is_none_or(|c| past.client == Some(c));
        in_scope && for_client && self.covers(&past.subject())
    }
}

impl PolicySettings {
    /// Saves a rule the user edited: it replaces the rule with the same id, or is added when
    /// no rule has that id. Every rule is checked afterwards; on an error nothing changes, and
    /// the error names the field.
    pub fn save_rule(&mut self, rule: Rule) -> Result<(), PolicyError> {
        let mut next = self.clone();
        match next.rules.iter_mut().find(|r| r.id == rule.id) {
            Some(slot) => *slot = rule,
            None => next.rules.push(rule),
        }
        next.validate()?;
        *self = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::condition::ArgCondition;
    use crate::rule::{Effect, Target};
    use crate::settings::RuleProblem;
    use serde_json::json;

    fn past<'a>(tool: &'a str, arguments: &'a Value) -> PastRequest<'a> {
        PastRequest {
            server_id: "shell",
            tool,
            arguments,
            conversation_id: Some("c1"),
            client: None,
        }
    }

    fn tool_rule(effect: Effect, conditions: Vec<ArgCondition>) -> Rule {
        let target = Target::Tool {
            server_id: "shell".into(),
            tool: "run".into(),
        };
        Rule::new("r", effect, target, Scope::Always, 0).with_conditions(conditions)
    }

    #[test]
    fn a_rule_matches_the_past_calls_its_target_and_conditions_cover() {
        let status = json!({"command": "git status"});
        let push = json!({"command": "git add . && git push"});
        let missing = json!({});
        let allow = tool_rule(
            Effect::Allow,
            vec![ArgCondition::prefix("/command", "git status")],
        );
        let ask = tool_rule(
            Effect::Ask,
            vec![ArgCondition::prefix("/command", "git push")],
        );
        let cases = [
            (&allow, past("run", &status), true),
            (&allow, past("run", &push), false),
            // What cannot be checked earns no grant, and escapes no restriction.
            (&allow, past("run", &missing), false),
            (&ask, past("run", &missing), true),
            (&ask, past("run", &push), true),
            (&ask, past("run", &status), false),
            (&allow, past("other", &status), false),
        ];
        for (rule, request, expected) in cases {
            assert_eq!(
                rule.would_have_matched(&request),
                expected,
                "{} on {request:?}",
                rule.label()
            );
        }
    }

    #[test]
    fn server_requests_clients_and_conversations_narrow_the_match() {
        let none = Value::Null;
        let server = Rule::new(
            "s",
            Effect::Allow,
            Target::Server {
                server_id: "shell".into(),
            },
            Scope::Always,
            0,
        );
        assert!(server.would_have_matched(&past("anything", &none)));
        assert!(
            !server.would_have_matched(&past(SAMPLING_METHOD, &none)),
            "a server-wide rule is about its tools, not its requests"
        );
        let sampling = Rule::new(
            "q",
            Effect::Deny,
            Target::Sampling {
                server_id: "shell".into(),
            },
            Scope::Always,
            0,
        );
        assert!(sampling.would_have_matched(&past(SAMPLING_METHOD, &none)));
        assert!(!sampling.would_have_matched(&past(ELICITATION_METHOD, &none)));

        let mut for_cursor = server.clone();
        for_cursor.client = Some("cursor".into());
        assert!(!for_cursor.would_have_matched(&past("run", &none)));
        let from_cursor = PastRequest {
            client: Some("cursor"),
            ..past("run", &none)
        };
        assert!(for_cursor.would_have_matched(&from_cursor));

        let mut in_c2 = server;
        in_c2.scope = Scope::Conversation { id: "c2".into() };
        assert!(!in_c2.would_have_matched(&past("run", &none)));
    }

    #[test]
    fn an_edited_rule_replaces_its_old_self_or_is_refused_whole() {
        let mut settings = PolicySettings::default();
        settings
            .save_rule(tool_rule(Effect::Allow, Vec::new()))
            .unwrap();
        let narrowed = tool_rule(Effect::Allow, vec![ArgCondition::glob("/path", "/home/**")]);
        settings.save_rule(narrowed.clone()).unwrap();
        assert_eq!(settings.rules, vec![narrowed.clone()]);

        let broken = tool_rule(Effect::Allow, vec![ArgCondition::glob("path", "/x")]);
        let err = settings.save_rule(broken).unwrap_err();
        assert!(
            matches!(
                &err,
                PolicyError::InvalidRule { field, problem: RuleProblem::BadPointer(_), .. }
                    if field == "conditions[0].pointer"
            ),
            "{err}"
        );
        assert_eq!(settings.rules, vec![narrowed], "nothing changed");
    }
}
