//! `toolgate policy`: what the organisation's managed policy sets, as the window shows it.

use anyhow::Result;
use toolgate_host::ManagedView;

use crate::context::Context;

pub async fn show(ctx: &Context, json: bool, refresh: bool) -> Result<u8> {
    if refresh {
        if let Err(e) = ctx.host.fetch_remote_policy().await {
            eprintln!("toolgate: {e}");
        }
    }
    let view = ctx.host.managed_view();
    let rules = ctx.host.managed().rules();
    if json {
        let value = serde_json::json!({ "policy": view, "rules": rules });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(0);
    }
    print!("{}", words(&view, &rules));
    Ok(0)
}

fn words(view: &ManagedView, rules: &[toolgate_policy::Rule]) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    if !view.active {
        line("No managed policy: your own settings decide.".into());
    } else {
        line("Your organisation's managed policy is in force, read from:".into());
        for origin in &view.origins {
            line(format!("  {}", origin.place));
        }
        let locks = &view.locks;
        let mut locked = Vec::new();
        if let Some(v) = locks.auto_allow_read_only {
            locked.push(format!(
                "allow read-only tools without asking: {}",
                on_off(v)
            ));
        }
        if let Some(v) = locks.default_decision {
            locked.push(format!(
                "when no rule decides: {}",
                format!("{v:?}").to_lowercase()
            ));
        }
        if let Some(v) = locks.approval_timeout_secs {
            locked.push(format!("a call waits for an answer: {v} s"));
        }
        if let Some(v) = locks.sandbox {
            locked.push(format!("local servers run in their sandbox: {}", on_off(v)));
        }
        if let Some(v) = locks.network_at_most {
            locked.push(format!("a local server reaches at most: {}", v.as_str()));
        }
        for (server, tools) in &locks.review_results {
            locked.push(format!(
                "results reviewed on {server}: {}",
                tools.join(", ")
            ));
        }
        if !locked.is_empty() {
            line("Set by your organisation (cannot be changed here):".into());
            for l in locked {
                line(format!("  {l}"));
            }
        }
        if !view.required_servers.is_empty() {
            line(format!(
                "Your organisation's servers (always present): {}",
                view.required_servers.join(", ")
            ));
        }
        if !view.allow_user_servers {
            line("You cannot add servers of your own.".into());
        }
        if view.registry_only {
            line("Servers are added from your organisation's registry only.".into());
        }
        if let Some(endpoint) = &view.telemetry_endpoint {
            line(format!(
                "Every decision is sent to your organisation's collector at {endpoint}."
            ));
        }
        if !rules.is_empty() {
            line("Your organisation's rules (above your own):".into());
            for rule in rules {
                let effect = format!("{:?}", rule.effect).to_lowercase();
                line(format!("  {effect}: {}", rule.label()));
            }
        }
    }
    for warning in &view.warnings {
        line(format!("warning: {warning}"));
    }
    out
}

fn on_off(v: bool) -> &'static str {
    if v {
        "on"
    } else {
        "off"
    }
}
