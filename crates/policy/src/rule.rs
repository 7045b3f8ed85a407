//! The user's rules: what they allowed, denied or want to be asked about, and for how long.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::condition::{ArgCondition, Leaning};
use crate::subject::{Subject, ToolCall};

/// One rule, as stored in the user's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Unique among the rules; chosen by the caller (this crate makes no random ids).
    pub id: String,
    pub effect: Effect,
    pub scope: Scope,
    pub target: Target,
    /// All must hold for the rule to apply. On a Deny or Ask rule a value that cannot be
    /// checked counts as holding, on an Allow rule as not (see [`crate::condition`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ArgCondition>,
    /// For Allow rules: the grant holds only while the server and tool are the ones the user
    /// saw. Deny and Ask rules ignore it: a restriction never lapses because something changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_to: Option<Binding>,
    /// When the rule was made, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When the rule stops applying, in milliseconds since the Unix epoch ("allow for an hour").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// The user's name for the rule, used in place of a generated description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Applies only to calls from this connected client (a host such as Claude Code, by its
    /// profile or `clientInfo.name`); `None`: to every call, Toolgate's own chat included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Set by the organisation's managed policy, never by the user: it ranks with the user's
    /// own (so a managed deny or ask beats any allow, and the user may still deny or ask where
    /// it allows), is named as the organisation's, and is never saved in the user's settings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub managed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum Effect {
    Allow,
    Deny,
    Ask,
}

/// How long a rule lasts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Scope {
    /// Answers one call and is never stored: [`crate::PolicySettings::add_rule`] refuses it,
    /// and [`crate::decide`] ignores one found in settings, so "allow once" cannot quietly
    /// become "allow always".
    Once,
    /// Applies only while the gate decides for this conversation.
    Conversation {
        id: String,
    },
    Always,
}

/// What a rule is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[ts(rename = "RuleTarget")]
pub enum Target {
    /// One tool of one server, by the tool's own name.
    #[serde(rename_all = "camelCase")]
    Tool { server_id: String, tool: String },
    /// Every tool of one server. A server-wide Allow does not cover tools the server marks
    /// destructive: those need a rule that names them (see [`crate::decide`]).
    #[serde(rename_all = "camelCase")]
    Server { server_id: String },
    /// The server's requests to generate text with the user's model.
    #[serde(rename_all = "camelCase")]
    Sampling { server_id: String },
    /// The server's questions to the user.
    #[serde(rename_all = "camelCase")]
    Elicitation { server_id: String },
}

/// What a grant was given to; see [`crate::fingerprint`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub server_fingerprint: String,
    /// Set for grants on one tool; absent for server-wide grants and server requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_fingerprint: Option<String>,
}

/// What changed under a grant that no longer applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    /// The server's command, arguments or URL differ from when the grant was given.
    ServerChanged,
    /// The tool's name, description or input schema differ from when the grant was given.
    ToolChanged,
}

impl Rule {
    /// "Allow this tool", bound to the server and tool as they are now.
    pub fn allow_tool(id: impl Into<String>, call: &ToolCall, scope: Scope, now_ms: i64) -> Self {
        Self::for_call(id, Effect::Allow, call, scope, now_ms)
    }

    /// "Allow every tool of this server", bound to the server as it is now.
    pub fn allow_server(id: impl Into<String>, call: &ToolCall, scope: Scope, now_ms: i64) -> Self {
        let target = Target::Server {
            server_id: call.server_id.clone(),
        };
        Self {
            bound_to: Some(Binding {
                server_fingerprint: call.server_fingerprint.clone(),
                tool_fingerprint: None,
            }),
            ..Self::new(id, Effect::Allow, target, scope, now_ms)
        }
    }

    /// "Never allow this tool". Not bound: a denial stays whatever the server becomes.
    pub fn deny_tool(id: impl Into<String>, call: &ToolCall, scope: Scope, now_ms: i64) -> Self {
        Self::for_call(id, Effect::Deny, call, scope, now_ms)
    }

    /// "Always ask for this tool", even when a broader rule would allow it; usually narrowed with
    /// [`Rule::with_conditions`] ("ask before `git push`").
    pub fn ask_tool(id: impl Into<String>, call: &ToolCall, scope: Scope, now_ms: i64) -> Self {
        Self::for_call(id, Effect::Ask, call, scope, now_ms)
    }

    /// A rule about exactly this subject: its tool, or its server's sampling or elicitation.
    /// Allow rules are bound to the subject's fingerprints; Deny and Ask rules are not.
    pub fn for_subject(
        id: impl Into<String>,
        effect: Effect,
        subject: &Subject,
        scope: Scope,
        now_ms: i64,
    ) -> Self {
        let target = match subject {
            Subject::ToolCall(call) => return Self::for_call(id, effect, call, scope, now_ms),
            Subject::Sampling { server_id, .. } => Target::Sampling {
                server_id: server_id.clone(),
            },
            Subject::Elicitation { server_id, .. } => Target::Elicitation {
                server_id: server_id.clone(),
            },
        };
        let bound_to = (effect == Effect::Allow).then(|| Binding {
            server_fingerprint: subject.server_fingerprint().to_owned(),
            tool_fingerprint: None,
        });
        Self {
            bound_to,
            ..Self::new(id, effect, target, scope, now_ms)
        }
    }

    fn for_call(
        id: impl Into<String>,
        effect: Effect,
        call: &ToolCall,
        scope: Scope,
        now_ms: i64,
    ) -> Self {
        let target = Target::Tool {
            server_id: call.server_id.clone(),
            tool: call.tool.clone(),
        };
        let bound_to = (effect == Effect::Allow).then(|| Binding {
            server_fingerprint: call.server_fingerprint.clone(),
            tool_fingerprint: Some(call.tool_fingerprint.clone()),
        });
        Self {
            bound_to,
            ..Self::new(id, effect, target, scope, now_ms)
        }
    }

    /// A rule with no conditions, binding, expiry, note or client.
    pub fn new(
        id: impl Into<String>,
        effect: Effect,
        target: Target,
        scope: Scope,
        now_ms: i64,
    ) -> Self {
        Self {
            id: id.into(),
            effect,
            scope,
            target,
            conditions: Vec::new(),
            bound_to: None,
            created_at: now_ms,
            expires_at: None,
            note: None,
            client: None,
            managed: false,
        }
    }

    /// The server the rule is about.
    pub fn server_id(&self) -> &str {
        match &self.target {
            Target::Tool { server_id, .. }
            | Target::Server { server_id }
            | Target::Sampling { server_id }
            | Target::Elicitation { server_id } => server_id,
        }
    }

    pub fn with_conditions(mut self, conditions: Vec<ArgCondition>) -> Self {
        self.conditions = conditions;
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    pub fn expiring_at(mut self, expires_at_ms: i64) -> Self {
        self.expires_at = Some(expires_at_ms);
        self
    }

    /// The rule in words: the user's note if there is one, else a description.
    pub fn label(&self) -> String {
        if let Some(note) = self.note.as_deref().filter(|n| !n.trim().is_empty()) {
            return note.to_owned();
        }
        let mut label = self.target.to_string();
        for (i, condition) in self.conditions.iter().enumerate() {
            label.push_str(if i == 0 { " when " } else { " and " });
            label.push_str(&condition.to_string());
        }
        if let Some(client) = &self.client {
            label.push_str(&format!(" for {client}"));
        }
        label
    }

    /// Whether the rule is in force for this conversation and client at this time, whatever it
    /// targets.
    pub(crate) fn in_force(
        &self,
        conversation_id: Option<&str>,
        client: Option<&str>,
        now_ms: i64,
    ) -> bool {
        let in_scope = match &self.scope {
            Scope::Once => false,
            Scope::Conversation { id } => conversation_id == Some(id.as_str()),
            Scope::Always => true,
        };
        let for_client = self.client.as_deref().is_none_or(|c| client == Some(c));
        in_scope && for_client && self.expires_at.is_none_or(|end| now_ms < end)
    }

    /// Whether the rule's target and conditions cover this subject. Fingerprints are checked
    /// separately by [`Rule::binding_change`], so that a lapsed grant can be reported.
    pub(crate) fn covers(&self, subject: &Subject) -> bool {
        let target = match (&self.target, subject) {
            (Target::Tool { server_id, tool }, Subject::ToolCall(call)) => {
                *server_id == call.server_id && *tool == call.tool
            }
            (Target::Server { server_id }, Subject::ToolCall(call)) => *server_id == call.server_id,
            (Target::Sampling { server_id }, Subject::Sampling { .. })
            | (Target::Elicitation { server_id }, Subject::Elicitation { .. }) => {
                server_id == subject.server_id()
            }
            _ => false,
        };
        if !target {
            return false;
        }
        let leaning = match self.effect {
            Effect::Allow => Leaning::Grant,
            Effect::Deny | Effect::Ask => Leaning::Restrict,
        };
        let arguments = match subject {
            Subject::ToolCall(call) => &call.arguments,
            Subject::Sampling { .. } | Subject::Elicitation { .. } => &Value::Null,
        };
        self.conditions.iter().all(|c| c.holds(arguments, leaning))
    }

    /// What differs from the grant's binding, if anything. The server is reported first: when
    /// it changed, whether its tool also did is beside the point.
    pub(crate) fn binding_change(&self, subject: &Subject) -> Option<ChangeKind> {
        let binding = self.bound_to.as_ref()?;
        if binding.server_fingerprint != subject.server_fingerprint() {
            return Some(ChangeKind::ServerChanged);
        }
        match (&binding.tool_fingerprint, subject) {
            (Some(granted), Subject::ToolCall(call)) if *granted != call.tool_fingerprint => {
                Some(ChangeKind::ToolChanged)
            }
            _ => None,
        }
    }

    /// Higher is more specific: a named tool beats a whole server, and conditions narrow further.
    pub(crate) fn specificity(&self) -> (u8, usize) {
        let target = match self.target {
            Target::Server { .. } => 0,
            Target::Tool { .. } | Target::Sampling { .. } | Target::Elicitation { .. } => 1,
        };
        (target, self.conditions.len())
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Tool { server_id, tool } => write!(f, "{tool} in {server_id}"),
            Target::Server { server_id } => write!(f, "every tool of {server_id}"),
            Target::Sampling { server_id } => write!(f, "text generation for {server_id}"),
            Target::Elicitation { server_id } => write!(f, "questions from {server_id}"),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Once => "once",
            Scope::Conversation { .. } => "in this conversation",
            Scope::Always => "always",
        })
    }
}
