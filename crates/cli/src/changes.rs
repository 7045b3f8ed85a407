//! `toolgate tools changes` and `toolgate tools accept`: tools held since they changed, shown
//! with what was accepted beside what the server says now, and accepted by the user.

use anyhow::Result;
use serde_json::json;
use toolgate_mcp::{ToolChange, ToolText};

use crate::context::Context;

/// Prints every held tool: what was accepted and what the server says now.
pub async fn list(ctx: &Context, json: bool) -> Result<u8> {
    let (manager, _) = crate::manage::started(ctx).await?;
    let held = ctx.host.held_tools().await;
    manager.stop_all().await;
    if json {
        let items: Vec<_> = held
            .iter()
            .flat_map(|(server, changes)| {
                changes.iter().map(move |c| {
                    json!({"server": server, "tool": c.name, "before": c.before, "after": c.after})
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
        return Ok(0);
    }
    if held.is_empty() {
        println!("No tool is held: every tool is as you accepted it.");
        return Ok(0);
    }
    for (server, changes) in &held {
        for change in changes {
            print!("{}", words(server, change));
        }
    }
    println!("Accept with `toolgate tools accept SERVER [TOOL…]` once you have read them.");
    Ok(0)
}

/// Accepts held tools of `server`: all of them, or those named.
pub async fn accept(ctx: &Context, server: &str, tools: &[String]) -> Result<u8> {
    let (manager, _) = crate::manage::started(ctx).await?;
    let names = (!tools.is_empty()).then_some(tools);
    let accepted = ctx.host.accept_tool_changes(server, names).await;
    manager.stop_all().await;
    let accepted = accepted?;
    if accepted.is_empty() {
        println!("{server} has no held tool.");
    }
    for change in accepted {
        println!(
            "Accepted {} of {server}: it is offered from now on.",
            change.name
        );
    }
    Ok(0)
}

/// One held tool in words: before and now, the server's text marked as the server's.
fn words(server: &str, change: &ToolChange) -> String {
    let mut out = match &change.before {
        Some(_) => format!("{server}: {} changed since you accepted it\n", change.name),
        None => format!("{server}: {} is new\n", change.name),
    };
    let side = |label: &str, text: &ToolText| {
        let mut s = format!("  {label} description: {}\n", quoted(&text.description));
        s.push_str(&format!(
            "  {label} hints: read-only {}, destructive {}, idempotent {}, open world {}\n",
            text.read_only, text.destructive, text.idempotent, text.open_world
        ));
        s.push_str(&format!("  {label} inputs: {}\n", text.input_schema));
        s
    };
    if let Some(before) = &change.before {
        out.push_str(&side("accepted", before));
    }
    out.push_str(&side("now", &change.after));
    out
}

/// The server's words on one line, quoted: untrusted text, never taken for Toolgate's.
fn quoted(text: &str) -> String {
    format!("{:?}", text)
}
