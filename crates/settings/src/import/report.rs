//! The report in words, for the CLI. Names only: the report holds no value.

use std::fmt;

use super::{Clash, Format, ImportReport, SkipReason, TransportKind};

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::McpServers => "an `mcpServers` config (Claude Desktop, Cursor, Claude Code, …)",
            Format::VsCode => "a VS Code `mcp.json`",
            Format::ServerMap => "a set of servers by name",
            Format::SingleServer => "a single server",
        })
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
            TransportKind::Sse => "sse",
        })
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = |existing: bool| {
            if existing {
                "in your settings"
            } else {
                "earlier in this import"
            }
        };
        match self {
            SkipReason::Identical { id, existing } => {
                write!(f, "identical to the server {id} {}", place(*existing))
            }
            SkipReason::DisabledDuplicate { id, existing } => write!(
                f,
                "disabled, and the server {id} {} runs the same command or URL",
                place(*existing)
            ),
            SkipReason::UnsafeEnv { variable } => write!(
                f,
                "its env sets {variable}, which can make its program load other code, so \
                 Toolgate would refuse to start it; if you trust it, add \"allowEnv\": \
                 [\"{variable}\"] to the entry and import it again"
            ),
            SkipReason::UnsupportedTransport { transport } => write!(
                f,
                "uses the transport `{transport}`; Toolgate speaks stdio, Streamable HTTP and the older HTTP+SSE"
            ),
        }
    }
}

impl fmt::Display for ImportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |n: usize, one: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {one}s")
            }
        };
        writeln!(
            f,
            "From {}: {} to add, {} skipped.",
            self.format,
            count(self.added.len(), "server"),
            self.skipped.len()
        )?;
        for added in &self.added {
            write!(
                f,
                "  add {} \"{}\" ({}",
                added.id, added.name, added.transport
            )?;
            if !added.enabled {
                f.write_str(", disabled")?;
            }
            f.write_str(")")?;
            if let Some(renamed) = self.renamed.iter().find(|r| r.id == added.id) {
                let who = match renamed.clash {
                    Clash::ExistingServer => "a server in your settings",
                    Clash::ImportedServer => "another imported server",
                };
                write!(f, ", not {}: {who} has that id", renamed.wanted_id)?;
            }
            writeln!(f)?;
        }
        for skipped in &self.skipped {
            writeln!(f, "  skip \"{}\": {}", skipped.name, skipped.reason)?;
        }
        if !self.rules.is_empty() {
            writeln!(f, "Approval rules to create:")?;
            for rule in &self.rules {
                writeln!(f, "  always allow {} in {}", rule.tool, rule.server_id)?;
            }
        }
        if !self.inputs.is_empty() {
            writeln!(f, "Inputs to ask for:")?;
            for input in &self.inputs {
                write!(f, "  {}", input.id)?;
                if !input.description.is_empty() {
                    write!(f, ": {}", input.description)?;
                }
                match &input.secret_name {
                    Some(name) => writeln!(f, " (password, kept in the keychain as {name})")?,
                    None => writeln!(f)?,
                }
            }
        }
        if !self.secret_candidates.is_empty() {
            writeln!(f, "Values that can move to the keychain:")?;
            for c in &self.secret_candidates {
                writeln!(
                    f,
                    "  {}: {} {} as ${{secret:{}}}",
                    c.server_id, c.location, c.name, c.suggested_secret
                )?;
            }
        }
        if !self.warnings.is_empty() {
            writeln!(f, "Warnings:")?;
            for warning in &self.warnings {
                match &warning.server {
                    Some(server) => writeln!(f, "  \"{server}\": {}", warning.message)?,
                    None => writeln!(f, "  {}", warning.message)?,
                }
            }
        }
        Ok(())
    }
}
