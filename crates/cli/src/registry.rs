//! `toolgate servers search` and `servers add --registry`: servers from an MCP registry.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal};

use anyhow::{anyhow, Result};

use crate::context::Context;

pub async fn search(
    ctx: &Context,
    query: &str,
    cursor: Option<String>,
    limit: Option<u32>,
    json: bool,
) -> Result<u8> {
    let page = ctx
        .host
        .registry_search(query, cursor.as_deref(), limit)
        .await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&page)?);
        return Ok(0);
    }
    if page.servers.is_empty() {
        println!(
            "No server in {} matches {query:?}.",
            ctx.host.registry_url()
        );
    }
    for server in &page.servers {
        let title = server
            .title
            .as_deref()
            .map(|t| format!(" ({t})"))
            .unwrap_or_default();
        println!(
            "{}@{}{title} [{}]",
            server.name,
            server.version,
            server.kinds.join(", ")
        );
        println!("    {}", server.description);
        if let Some(why) = &server.deprecated {
            println!("    deprecated: {why}");
        }
    }
    if let Some(cursor) = &page.next_cursor {
        println!("More: toolgate servers search {query:?} --cursor {cursor:?}");
    }
    Ok(0)
}

pub async fn add(ctx: &mut Context, id: &str, entry: &str, values: &[String]) -> Result<u8> {
    let (name, version) = entry.split_once('@').unwrap_or((entry, "latest"));
    let plan = ctx.host.registry_plan(name, version).await?;
    if let Some(warning) = &plan.warning {
        eprintln!("toolgate: {name} is {warning}");
    }
    let mut answers = BTreeMap::new();
    for pair in values {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            anyhow!("--set {pair}: write it as KEY=VALUE, for example env:TZ=UTC")
        })?;
        answers.insert(key.to_owned(), value.to_owned());
    }
    let terminal = std::io::stdin().is_terminal();
    let mut lines = std::io::stdin().lock().lines();
    for ask in &plan.asks {
        if answers.contains_key(&ask.key) {
            continue;
        }
        let about = ask.description.as_deref().unwrap_or("");
        if ask.secret {
            let value = if terminal {
                rpassword::prompt_password(format!(
                    "{} ({about}; not shown{}): ",
                    ask.label,
                    if ask.required { "" } else { "; empty to skip" }
                ))?
            } else {
                lines.next().transpose()?.unwrap_or_default()
            };
            answers.insert(ask.key.clone(), value.trim().to_owned());
        } else if terminal && ask.default.is_none() {
            eprint!("{} ({about}): ", ask.label);
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            answers.insert(ask.key.clone(), line.trim().to_owned());
        }
    }
    let added = ctx
        .host
        .add_from_registry(&plan.name, &plan.version, id, &answers)
        .await?;
    ctx.settings = ctx.host.settings().clone();
    let secrets = plan
        .asks
        .iter()
        .filter(|a| a.secret && answers.get(&a.key).is_some_and(|v| !v.is_empty()))
        .count();
    println!(
        "Added {id}: {} {} ({}), pinned to that version.",
        plan.name, plan.version, plan.runs
    );
    if secrets > 0 {
        println!("{secrets} secret value(s) are stored in the OS keychain.");
    }
    let _ = added;
    println!("The app starts it the next time its settings are read (restart the app), and the CLI uses it from now on.");
    Ok(0)
}
