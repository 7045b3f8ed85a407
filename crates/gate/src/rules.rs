//! Rules the user writes or edits by hand (in the window's rule editor), bound like the rules
//! their answers make.
//!
//! A grant made by answering a call is bound to the server's launch and the tool as the user saw
//! them (`toolgate_policy::fingerprint`). A grant written by hand is bound the same way, to the
//! server and tool as they run at the moment it is saved: editing a rule never makes a grant
//! that outlives a change of the server. Deny and Ask rules are never bound.

use toolgate_mcp::ServerSnapshot;
use toolgate_policy::{tool_fingerprint, Binding, Effect, Rule, Target};

use crate::approval::launch_fingerprint;

/// Why a grant written by hand cannot be bound to what it allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    #[error("no server has the id “{0}”; pick one of your servers")]
    UnknownServer(String),
    #[error(
        "{server} lists no tool named “{tool}” right now; start the server or pick one of its \
         tools, so the grant is bound to the tool as it is"
    )]
    UnknownTool { server: String, tool: String },
}

/// The rule as it will be saved: a Deny or Ask unbound; an Allow kept bound as it was when
/// only its conditions, scope, client or note changed, else bound to the server (and tool) as
/// they run now.
pub fn bind_edited(
    mut rule: Rule,
    previous: Option<&Rule>,
    servers: &[ServerSnapshot],
) -> Result<Rule, BindError> {
    if rule.effect != Effect::Allow {
        rule.bound_to = None;
        return Ok(rule);
    }
    if let Some(kept) = previous
        .filter(|p| p.effect == Effect::Allow && p.target == rule.target)
        .and_then(|p| p.bound_to.clone())
    {
        rule.bound_to = Some(kept);
        return Ok(rule);
    }
    let server_id = rule.server_id().to_owned();
    let server = servers
        .iter()
        .find(|s| s.id == server_id)
        .ok_or_else(|| BindError::UnknownServer(server_id.clone()))?;
    let tool_fingerprint = match &rule.target {
        Target::Tool { tool, .. } => {
            let listed = server
                .tools
                .iter()
                .find(|t| t.name == *tool)
                .ok_or_else(|| BindError::UnknownTool {
                    server: server.name.clone(),
                    tool: tool.clone(),
                })?;
            Some(tool_fingerprint(
                &listed.name,
                &listed.description,
                &listed.input_schema,
            ))
        }
        Target::Server { .. } | Target::Sampling { .. } | Target::Elicitation { .. } => None,
    };
    rule.bound_to = Some(Binding {
        server_fingerprint: launch_fingerprint(&server.launch),
        tool_fingerprint,
    });
    Ok(rule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate_mcp::{Launch, ServerStatus, ToolInfo};
    use toolgate_policy::Scope;

    fn server(command: &str) -> ServerSnapshot {
        ServerSnapshot {
            id: "fs".into(),
            name: "Files".into(),
            enabled: true,
            status: ServerStatus::Ready,
            implementation: None,
            protocol_version: None,
            tools: vec![ToolInfo::new(
                "write_file",
                "Writes",
                json!({"type": "object"}),
            )],
            resources: Vec::new(),
            resource_templates: Vec::new(),
            prompts: Vec::new(),
            roots: Vec::new(),
            signed_in: None,
            needs_scope: None,
            refused_tools: Vec::new(),
            launch: Launch::Stdio {
                command: command.into(),
                args: Vec::new(),
            },
            sandbox: None,
            reads_untrusted: false,
            trusted_source: false,
            sends_out: false,
            review_results: Vec::new(),
            held_tools: Vec::new(),
            wanted_hosts: Vec::new(),
            installed: None,
            scan_secrets: true,
        }
    }

    fn rule(effect: Effect, tool: &str) -> Rule {
        let target = Target::Tool {
            server_id: "fs".into(),
            tool: tool.into(),
        };
        Rule::new("r", effect, target, Scope::Always, 0)
    }

    #[test]
    fn a_grant_is_bound_to_what_runs_now_and_keeps_its_binding_when_only_narrowed() {
        let bound = bind_edited(rule(Effect::Allow, "write_file"), None, &[server("a")]).unwrap();
        let binding = bound.bound_to.clone().unwrap();
        assert!(binding.tool_fingerprint.is_some());

        // Narrowed later, while the server runs another command: the old binding stays.
        let narrowed = rule(Effect::Allow, "write_file").with_note("only notes");
        let kept = bind_edited(narrowed, Some(&bound), &[server("b")]).unwrap();
        assert_eq!(kept.bound_to, Some(binding.clone()));

        // Retargeted: bound afresh.
        let mut server_wide = rule(Effect::Allow, "write_file");
        server_wide.target = Target::Server {
            server_id: "fs".into(),
        };
        let rebound = bind_edited(server_wide, Some(&bound), &[server("b")]).unwrap();
        let rebound = rebound.bound_to.unwrap();
        assert_ne!(rebound.server_fingerprint, binding.server_fingerprint);
        assert_eq!(rebound.tool_fingerprint, None);
    }

    #[test]
    fn restrictions_are_never_bound_and_unknown_targets_are_refused() {
        let denied = bind_edited(rule(Effect::Deny, "anything"), None, &[]).unwrap();
        assert_eq!(denied.bound_to, None);
        assert_eq!(
            bind_edited(rule(Effect::Allow, "write_file"), None, &[]).unwrap_err(),
            BindError::UnknownServer("fs".into())
        );
        let err = bind_edited(rule(Effect::Allow, "rm"), None, &[server("a")]).unwrap_err();
        assert!(err.to_string().contains("no tool named “rm”"), "{err}");
    }
}
