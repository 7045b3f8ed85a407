//! `servers`, `tools`, `call`, `import` and `secrets`: the settings and servers the app uses,
//! changed and used from a terminal.

use std::io::{IsTerminal, Read};

use anyhow::{anyhow, bail, Context as _, Result};
use serde_json::{json, Value};
use toolgate_host::Servers;
use toolgate_hosts::import::{plan_import, ImportChoices, ImportOptions};
use toolgate_mcp::ServerStatus;
use toolgate_settings::{ServerConfig, Transport};

use crate::context::Context;

fn find<'a>(ctx: &'a Context, id: &str) -> Result<&'a ServerConfig> {
    ctx.settings
        .servers
        .iter()
        .find(|s| s.id == id)
        .ok_or_else(|| {
            anyhow!("no server '{id}'; `toolgate servers list` shows the configured ones")
        })
}

fn status_line(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Ready => "ready".into(),
        ServerStatus::Stopped => "stopped".into(),
        ServerStatus::Starting => "starting".into(),
        ServerStatus::Restarting { reason, .. } => format!("restarting: {reason}"),
        ServerStatus::Failed { reason } => format!("failed: {reason}"),
        ServerStatus::SignIn { reason, again } => format!(
            "{}: {reason}",
            if *again {
                "sign in again"
            } else {
                "sign in required"
            }
        ),
    }
}

/// Where a server runs, for a listing: its command line or URL (env and headers are not shown:
/// they may hold secrets).
fn launch(server: &ServerConfig) -> String {
    match &server.transport {
        Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        Transport::Http { url, .. } => url.clone(),
    }
}

pub fn servers_list(ctx: &Context, json: bool) -> Result<u8> {
    if json {
        let list: Vec<Value> = ctx
            .settings
            .servers
            .iter()
            .map(|s| json!({"id": s.id, "name": s.name, "enabled": s.enabled, "launch": launch(s)}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(0);
    }
    if ctx.settings.servers.is_empty() {
        println!("No servers. Add one with `toolgate servers add` or `toolgate import`.");
    }
    for s in &ctx.settings.servers {
        let on = if s.enabled { "on " } else { "off" };
        println!("{on}  {:<20} {:<24} {}", s.id, s.name, launch(s));
    }
    Ok(0)
}

pub fn servers_add(
    ctx: &mut Context,
    id: &str,
    name: Option<String>,
    url: Option<String>,
    command: Vec<String>,
    env: Vec<String>,
) -> Result<u8> {
    if ctx.settings.servers.iter().any(|s| s.id == id) {
        bail!("a server '{id}' exists already; remove it first or pick another id");
    }
    let mut server = match (url, command.split_first()) {
        (Some(url), None) => ServerConfig::http(id, url),
        (None, Some((program, args))) => ServerConfig::stdio(id, program.clone(), args.to_vec()),
        _ => bail!("give either --url URL or the command after `--`, for example: toolgate servers add files -- npx -y @modelcontextprotocol/server-filesystem /tmp"),
    };
    if let Some(name) = name {
        server.name = name;
    }
    for pair in env {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            anyhow!("--env {pair}: write it as NAME=value (or NAME=${{secret:NAME}})")
        })?;
        match &mut server.transport {
            Transport::Stdio { env, .. } => {
                env.insert(key.to_owned(), value.to_owned());
            }
            Transport::Http { .. } => bail!("--env is for servers started by a command"),
        }
    }
    if let Some(refused) = server.unsafe_env() {
        bail!("{refused}");
    }
    ctx.update(|s| s.servers.push(server))?;
    println!("Added {id}. The app starts it the next time its settings are read (restart the app), and the CLI uses it from now on.");
    Ok(0)
}

pub fn servers_remove(ctx: &mut Context, id: &str) -> Result<u8> {
    find(ctx, id)?;
    ctx.update(|s| s.servers.retain(|server| server.id != id))?;
    // Added again under this id, its first tool list is accepted as a new server's.
    ctx.servers().forget_tools(id);
    ctx.host.forget_bundle(id);
    println!("Removed {id}.");
    Ok(0)
}

pub fn servers_enable(ctx: &mut Context, id: &str, enabled: bool) -> Result<u8> {
    find(ctx, id)?;
    ctx.update(|s| {
        if let Some(server) = s.servers.iter_mut().find(|server| server.id == id) {
            server.enabled = enabled;
        }
    })?;
    println!("{id} is {}.", if enabled { "enabled" } else { "disabled" });
    Ok(0)
}

/// Starts one server the way a session would and reports how it went: the CLI keeps no
/// servers running between commands.
pub async fn servers_restart(ctx: &Context, id: &str) -> Result<u8> {
    let mut config = find(ctx, id)?.clone();
    config.enabled = true;
    let manager = ctx.servers();
    manager.start_all(std::slice::from_ref(&config)).await;
    let snapshot = manager.snapshot().await;
    manager.stop_all().await;
    let server = snapshot.first().context("the server was not started")?;
    println!(
        "{id}: {}",
        crate::screen::line(&status_line(&server.status), 2000)
    );
    if server.status == ServerStatus::Ready {
        println!(
            "{} tools, {} resources, {} prompts ({})",
            server.tools.len(),
            server.resources.len(),
            server.prompts.len(),
            crate::screen::line(
                server
                    .implementation
                    .as_deref()
                    .unwrap_or("unknown implementation"),
                200
            )
        );
        Ok(0)
    } else {
        Ok(1)
    }
}

pub fn servers_logs(ctx: &Context, id: &str, lines: usize) -> Result<u8> {
    find(ctx, id)?;
    let path = ctx.log_dir().join(format!("{id}.log"));
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "no log for {id} yet at {} (it is written while the server runs)",
            path.display()
        )
    })?;
    let all: Vec<&str> = text.lines().collect();
    // The server wrote these lines: shown, never obeyed.
    for line in &all[all.len().saturating_sub(lines)..] {
        println!("{}", crate::screen::stream(line));
    }
    Ok(0)
}

/// Starts the enabled servers and returns them with the catalog the model would see.
pub(crate) async fn started(ctx: &Context) -> Result<(Servers, toolgate_catalog::Catalog)> {
    let manager = ctx.servers().clone();
    manager.start_all(&ctx.settings.servers).await;
    // A server that refused the connection for want of scopes: the step-up the user's command
    // needs (asked at a terminal, else through the browser as a first sign-in), then it starts.
    for server in manager.snapshot().await {
        if let (ServerStatus::SignIn { .. }, Some(scope)) = (&server.status, &server.needs_scope) {
            if crate::sign_in::step_up(ctx, &server.id, scope).await? {
                manager.start(&server.id).await;
            }
        }
    }
    for server in manager.snapshot().await {
        match &server.status {
            ServerStatus::Failed { reason } => {
                eprintln!(
                    "toolgate: server {} is not available: {}",
                    server.id,
                    crate::screen::line(reason, 2000)
                );
            }
            ServerStatus::SignIn { reason, .. } => eprintln!(
                "toolgate: server {} is not available: {} (`toolgate servers login {}`)",
                server.id,
                crate::screen::line(reason, 2000),
                server.id
            ),
            _ => {}
        }
    }
    let catalog = toolgate_agent::catalog_of(&manager.snapshot().await, &ctx.settings.tools);
    match catalog {
        Ok(catalog) => Ok((manager, catalog)),
        Err(e) => {
            manager.stop_all().await;
            Err(e.into())
        }
    }
}

/// The catalog, as `--json` or a line a tool; exits 1 (after listing what is there) when a
/// server the settings enable did not come up, so a script notices.
pub async fn tools_list(ctx: &Context, json: bool) -> Result<u8> {
    let (manager, catalog) = started(ctx).await?;
    let snapshot = manager.snapshot().await;
    manager.stop_all().await;
    let era = |server: &str| {
        snapshot
            .iter()
            .find(|s| s.id == server)
            .and_then(|s| s.protocol_version.clone())
    };
    let down = snapshot
        .iter()
        .filter(|s| s.enabled && s.status != ServerStatus::Ready)
        .count();
    if json {
        let list: Vec<Value> = catalog
            .entries()
            .iter()
            .map(|e| {
                let a = e.annotations();
                let mut item = json!({
                    "name": e.model_name,
                    "server": e.server_id,
                    "tool": e.tool.name,
                    "description": e.tool.description,
                    "readOnly": a.read_only_hint == Some(true),
                    "destructive": a.destructive_hint == Some(true),
                    // As the server sent it, so scripts can build valid arguments.
                    "inputSchema": e.tool.input_schema,
                    "annotations": a,
                    // The protocol version the server speaks (its era).
                    "protocolVersion": era(&e.server_id),
                });
                if let Some(other) = &e.imitates {
                    item["imitates"] = json!(other);
                }
                item
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for e in catalog.entries() {
            let warning = e.imitates.as_ref().map_or_else(String::new, |other| {
                format!("  (warning: named like a tool of server {other})")
            });
            println!(
                "{:<40} → {} on {}{warning}",
                crate::screen::line(&e.model_name, 80),
                crate::screen::line(&e.tool.name, 80),
                e.server_id
            );
        }
    }
    // Tools a server offered that Toolgate will not call (an invalid x-mcp-header), and why; on
    // stderr with --json, whose output is the list of callable tools.
    for server in &snapshot {
        for refused in &server.refused_tools {
            let line = format!(
                "{:<40} ✗ refused on {}: {}",
                crate::screen::line(&refused.name, 80),
                server.id,
                crate::screen::line(&refused.reason, 500)
            );
            if json {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
    }
    Ok(if down == 0 { 0 } else { 1 })
}

/// A call by the user: no approval, as for a call made by hand in the window.
pub async fn call(ctx: &Context, tool: &str, arguments: &str, json: bool) -> Result<u8> {
    let arguments: Value = serde_json::from_str(arguments).map_err(|e| {
        anyhow!("the arguments are not JSON ({e}); write them like '{{\"message\": \"hi\"}}'")
    })?;
    let (manager, catalog) = started(ctx).await?;
    let Some(entry) = catalog
        .resolve(tool)
        .or_else(|| catalog.resolve_loose(tool))
    else {
        manager.stop_all().await;
        bail!(
            "no tool '{tool}' among the running servers' tools; `toolgate tools list` shows them"
        );
    };
    let mut result = manager
        .call_tool(&entry.server_id, &entry.tool.name, arguments.clone())
        .await;
    if let Err(toolgate_mcp::McpError::MoreAccess { server, scope, .. }) = &result {
        // Step-up: only when the user says so, then the same call once more.
        if crate::sign_in::step_up(ctx, server, scope).await? {
            result = manager
                .call_tool(&entry.server_id, &entry.tool.name, arguments)
                .await;
        }
    }
    manager.stop_all().await;
    let output = result?;
    if json {
        println!("{}", serde_json::to_string(&output.result)?);
    } else {
        println!("{}", crate::screen::stream(&output.text));
    }
    Ok(if output.is_error { 1 } else { 0 })
}

/// Reads a secret's value without echoing it on a terminal, or as the whole piped input (a
/// PEM private key is several lines; `toolgate secrets set KEY < key.pem`).
pub(crate) fn read_secret(prompt: &str) -> Result<String> {
    let value = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(prompt)?
    } else {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    };
    let value = value.trim().to_owned();
    if value.is_empty() {
        bail!("the value is empty; nothing was stored");
    }
    Ok(value)
}

pub async fn secrets_set(ctx: &Context, name: &str) -> Result<u8> {
    if !toolgate_settings::reference::valid_name(name) {
        bail!("'{name}' is not a valid secret name: start with a letter or '_', then letters, digits, '_', '.' or '-'");
    }
    let value = read_secret(&format!("Value for {name} (not shown): "))?;
    ctx.host.set_secret(name, &value).await?;
    println!("{name} is stored in the OS keychain. Refer to it as ${{secret:{name}}}.");
    Ok(0)
}

pub async fn secrets_clear(ctx: &Context, name: &str) -> Result<u8> {
    ctx.host.clear_secret(name).await?;
    println!("{name} is removed from the OS keychain.");
    Ok(0)
}

pub async fn import(
    ctx: &mut Context,
    file: &std::path::Path,
    keep_secrets: bool,
    dry_run: bool,
) -> Result<u8> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("could not read {}", file.display()))?;
    let plan = plan_import(&ctx.settings, &text, &ImportOptions::default())?;
    println!("{}", plan.report());
    if dry_run {
        return Ok(0);
    }
    apply_import(ctx, &plan, keep_secrets).await?;
    Ok(0)
}

/// Applies an import: asks for the inputs it needs, moves its secrets to the keychain (unless
/// `keep_secrets`) and saves the settings.
pub async fn apply_import(
    ctx: &mut Context,
    plan: &toolgate_hosts::import::ImportPlan,
    keep_secrets: bool,
) -> Result<()> {
    let mut choices = ImportChoices::default();
    for input in &plan.report().inputs {
        let value = if input.password {
            read_secret(&format!("{} (not shown): ", input.description))?
        } else {
            eprint!("{}: ", input.description);
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            line.trim().to_owned()
        };
        choices.inputs.insert(input.id.clone(), value);
    }
    if !keep_secrets {
        choices.move_secrets = plan.move_all_secrets();
    }
    let imported = ctx.host.apply_import(plan, &choices).await?;
    for name in &imported.secrets {
        println!("Moved a value to the keychain as ${{secret:{name}}}.");
    }
    ctx.settings = ctx.host.settings().clone();
    println!("Saved to {}.", ctx.settings_path().display());
    Ok(())
}
