//! The approval gate's decision: given a request, the user's rules and defaults, allow it, deny
//! it, or ask the user.
//!
//! [`decide`] is a pure function (no I/O, no clock, no async): the caller passes the request, the
//! [`PolicySettings`] from the user's settings, the conversation it happens in and the time.
//! Holding the call, showing the prompt and running the tool happen elsewhere (the agent's gate),
//! and only after the decision; so the whole policy can be tested by a table of cases, and the
//! audit trail can record exactly why each call went through.
//!
//! # Design choices
//!
//! The model is Zed's `tool_permissions.rs`: one function, a documented precedence, tested by
//! a table. The precedence is on [`decide`]. What this crate adds:
//!
//! - **Restrictions beat grants, whatever their reach.** Any applicable Deny wins over every
//!   Allow, and any Ask too: "ask before `git push`" holds even under "allow the whole shell".
//!   Specificity only picks which Allow is named in the reason.
//! - **Grants are bound to what the user saw** ([`fingerprint`]). A grant remembers the
//!   server's command line or URL and the tool's name, description and input schema; when
//!   either changes the grant stops applying, the user is asked again, and the verdict says which
//!   grant lapsed and why ([`Changed`]). Deny and Ask rules are never bound: a restriction does
//!   not lapse because the server changed.
//! - **What cannot be checked counts against the model** ([`condition`]): a missing, retyped or
//!   `..`-laden argument never earns an Allow, and never escapes a Deny or Ask. Prefix rules
//!   know that shells chain commands.
//! - **Annotations are hints.** A server's `destructive` mark makes the gate ask even where
//!   read-only tools are auto-allowed and where a server-wide grant exists; its `readOnly` mark
//!   allows nothing unless the user opted in. Neither overrides a rule naming the tool.
//! - **Nothing is allowed by default**: the global default is Ask or Deny, and "allow once"
//!   ([`Scope::Once`]) is never stored.
//! - **Server requests pass the same gate**: sampling and elicitation are [`Subject`]s with
//!   their own rule targets, so "let this server use my model" is a rule like any other.
//! - **A chat that has read untrusted text loses its shortcuts to the outside** ([`decide_in`]):
//!   once a result from a tool that reads the outside world is in the conversation, a call
//!   that could send data out is asked even where a rule allows it. The caller says what the
//!   conversation has read and how the call could send data out ([`Context`]); the policy only
//!   decides, so the step is tested by a table like the rest.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use toolgate_policy::*;
//!
//! let call = |command: &str| ToolCall {
//!     server_id: "shell".into(),
//!     tool: "run".into(),
//!     arguments: json!({ "command": command }),
//!     annotations: Annotations::default(),
//!     server_fingerprint: server_fingerprint(&ServerEndpoint::Stdio { command: "shell-mcp", args: &[] }),
//!     tool_fingerprint: tool_fingerprint("run", "Runs a command", &json!({"type": "object"})),
//! };
//! let mut settings = PolicySettings::default();
//! let asked = call("git status");
//! settings.add_rule(
//!     Rule::allow_server("r1", &asked, Scope::Always, 0).with_note("the shell"),
//! )?;
//! settings.add_rule(
//!     Rule::ask_tool("r2", &asked, Scope::Always, 0)
//!         .with_conditions(vec![ArgCondition::prefix("/command", "git push")]),
//! )?;
//!
//! let status = decide(&Subject::ToolCall(call("git status")), &settings, None, 0);
//! assert_eq!(status.decision, Decision::Allow);
//! assert_eq!(status.reason, "allowed by your rule “the shell” (always)");
//! let push = decide(&Subject::ToolCall(call("git push")), &settings, None, 0);
//! assert_eq!(push.decision, Decision::Ask);
//! assert_eq!(push.rule_id.as_deref(), Some("r2"));
//! # Ok::<(), PolicyError>(())
//! ```
//!
//! Rules live in the user's settings as camelCase JSON with tagged enums, and
//! [`PolicySettings::validate`] names the rule and field of any mistake, so the settings UI
//! can point at it.

mod arguments;
mod canonical;
pub mod condition;
mod decide;
pub mod fingerprint;
mod preview;
mod rule;
mod settings;
mod subject;

pub use arguments::{compile as compile_schema, validate_arguments, validate_value, SchemaError};
pub use condition::{ArgCondition, Matcher};
pub use decide::{
    decide, decide_for_client, decide_in, Basis, Changed, Context, Decision, Verdict,
};
pub use fingerprint::{server_fingerprint, tool_fingerprint, ServerEndpoint};
pub use preview::{PastRequest, ELICITATION_METHOD, SAMPLING_METHOD};
pub use rule::{Binding, ChangeKind, Effect, Rule, Scope, Target};
pub use settings::{DefaultDecision, PolicyError, PolicySettings, RuleProblem};
pub use subject::{Annotations, Subject, ToolCall};
