//! `toolgate hosts`: connect Claude Desktop, Claude Code, Cursor, VS Code, Goose or Zed to
//! Toolgate's gateway (their servers move into Toolgate), and undo it.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use toolgate_hosts::{ConnectCommand, HostKind, Undone};

use crate::context::Context;

fn host_of(id: &str) -> Result<HostKind> {
    HostKind::parse(id).ok_or_else(|| {
        let known: Vec<&str> = HostKind::ALL.iter().map(|h| h.id()).collect();
        anyhow!("unknown host '{id}'; Toolgate knows {}", known.join(", "))
    })
}

fn path_of(host: HostKind) -> Result<std::path::PathBuf> {
    toolgate_hosts::config_path_here(host).ok_or_else(|| {
        anyhow!(
            "cannot tell where {} keeps its config: HOME (or APPDATA) is not set",
            host.label()
        )
    })
}

fn state(ctx: &Context) -> std::path::PathBuf {
    ctx.host.data_dir().join("hosts.json")
}

/// What the host will run: this very program, on this data folder, with the host's profile.
fn command_for(host: HostKind, data_dir: &Path) -> Result<ConnectCommand> {
    let exe = std::env::current_exe()?;
    Ok(ConnectCommand {
        command: exe.to_string_lossy().into_owned(),
        args: vec![
            "--data-dir".into(),
            data_dir.to_string_lossy().into_owned(),
            "connect".into(),
            "--profile".into(),
            host.id().into(),
        ],
    })
}

pub fn list(ctx: &Context) -> Result<u8> {
    let connected = toolgate_hosts::connected(&state(ctx));
    for host in HostKind::ALL {
        let path = toolgate_hosts::config_path_here(host);
        let status = match (&path, connected.get(host.id())) {
            (_, Some(c)) => format!(
                "connected (its original config is kept as {})",
                c.backup.display()
            ),
            (Some(path), None) if path.exists() => {
                let command = command_for(host, ctx.host.data_dir())?;
                match toolgate_hosts::plan(host, path, &ctx.settings, &command) {
                    Ok(plan) => {
                        let servers = plan
                            .import
                            .as_ref()
                            .map_or(0, |i| i.report().added.len() + i.report().skipped.len());
                        format!("not connected; {servers} server(s) in its config")
                    }
                    Err(e) => format!("not connected: {e}"),
                }
            }
            (Some(_), None) => "no config".to_owned(),
            (None, None) => "its config folder is unknown here".to_owned(),
        };
        println!("{:<16} {status}", host.id());
        if let Some(path) = path {
            println!("{:<16} {}", "", path.display());
        }
    }
    Ok(0)
}

fn confirm(question: &str) -> Result<bool> {
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

pub async fn connect(ctx: &mut Context, id: &str, yes: bool, keep_secrets: bool) -> Result<u8> {
    let host = host_of(id)?;
    let path = path_of(host)?;
    let command = command_for(host, ctx.host.data_dir())?;
    let plan = toolgate_hosts::plan(host, &path, &ctx.settings, &command)?;
    println!("Connect {} ({}) to Toolgate:", host.label(), path.display());
    match &plan.import {
        Some(import) => println!("\nIts servers move to Toolgate:\n{}", import.report()),
        None => println!("\nIt runs no server of its own."),
    }
    for (name, why) in &plan.kept {
        println!("  stays in {}: {name} ({why})", host.label());
    }
    println!(
        "\n{} will then run one server, \"{}\": {} {}",
        host.label(),
        toolgate_hosts::ENTRY,
        command.command,
        command.args.join(" ")
    );
    for note in &plan.notes {
        println!("  {note}");
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            bail!("nothing was changed: add --yes to connect without a question");
        }
        if !confirm(&format!("Connect {}?", host.label()))? {
            println!("Nothing was changed.");
            return Ok(0);
        }
    }
    if let Some(import) = &plan.import {
        crate::manage::apply_import(ctx, import, keep_secrets).await?;
    }
    toolgate_hosts::apply(&plan, &state(ctx))?;
    println!(
        "Connected. Restart {} to use Toolgate; its calls wait for your approval in Toolgate.\nUndo with `toolgate hosts undo {}`.",
        host.label(),
        host.id()
    );
    Ok(0)
}

pub fn undo(ctx: &Context, id: &str, yes: bool, force: bool) -> Result<u8> {
    let host = host_of(id)?;
    let plan = toolgate_hosts::undo_plan(host, &state(ctx), force)?;
    println!("Undo {} ({}):", host.label(), plan.path.display());
    match &plan.undone {
        Undone::Restored => println!("  its original config comes back, byte for byte."),
        Undone::Reversed {
            put_back,
            kept_current,
        } => {
            println!(
                "  {} wrote to it since: Toolgate's entry comes out and what it moved goes back ({}); the rest stays as {} keeps it now.",
                host.label(),
                if put_back.is_empty() { "nothing".to_owned() } else { put_back.join(", ") },
                host.label()
            );
            for name in kept_current {
                println!(
                    "  {name}: {} has a server by that name again; its current one is kept.",
                    host.label()
                );
            }
        }
    }
    // Undo gives the host back what was its own, so without a terminal it goes ahead.
    if !yes && std::io::stdin().is_terminal() && !confirm(&format!("Undo {}?", host.label()))? {
        println!("Nothing was changed.");
        return Ok(0);
    }
    let path = toolgate_hosts::undo_apply(&plan, &state(ctx))?;
    println!(
        "{} has its own config back ({}). The servers imported into Toolgate stay there; remove them with `toolgate servers remove ID` if you like.",
        host.label(),
        path.display()
    );
    Ok(0)
}
