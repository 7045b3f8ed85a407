//! The approval policy's argument conditions (JSON pointer + glob, shell-aware prefix, equals),
//! against any arguments a model could send. No panic, and the asymmetry the gate relies on:
//! whatever an Allow rule with some conditions lets through, a Deny rule with the same conditions
//! stops (a value that cannot be checked counts for a restriction and against a grant).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolgate_policy::{
    decide, Annotations, ArgCondition, Decision, Effect, PolicySettings, Rule, Scope, Subject,
    Target, ToolCall,
};

#[derive(serde::Deserialize)]
struct Input {
    conditions: Vec<ArgCondition>,
    arguments: Value,
}

fn verdict(effect: Effect, conditions: &[ArgCondition], subject: &Subject) -> Option<Decision> {
    let mut settings = PolicySettings::default();
    settings
        .add_rule(Rule {
            id: "r".into(),
            effect,
            scope: Scope::Always,
            target: Target::Tool {
                server_id: "s".into(),
                tool: "t".into(),
            },
            conditions: conditions.to_vec(),
            bound_to: None,
            created_at: 0,
            expires_at: None,
            note: None,
            client: None,
            managed: false,
        })
        .ok()?;
    Some(decide(subject, &settings, None, 0).decision)
}

fuzz_target!(|data: &[u8]| {
    let Some(text) = toolgate_fuzz::text(data) else {
        return;
    };
    let Ok(input) = serde_json::from_str::<Input>(text) else {
        return;
    };
    let subject = Subject::ToolCall(ToolCall {
        server_id: "s".into(),
        tool: "t".into(),
        arguments: input.arguments,
        annotations: Annotations::default(),
        server_fingerprint: String::new(),
        tool_fingerprint: String::new(),
    });
    let allowed = verdict(Effect::Allow, &input.conditions, &subject);
    let denied = verdict(Effect::Deny, &input.conditions, &subject);
    if allowed == Some(Decision::Allow) {
        assert_eq!(
            denied,
            Some(Decision::Deny),
            "a call the conditions allow must be one they deny when they restrict"
        );
    }
});
