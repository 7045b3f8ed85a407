//! What an import would do ([`ImportReport`] and its parts), as data for the window and in
//! words for the CLI.
//!
//! The report holds no secret value (a launch line hides the parts that look like one), so it
//! may be shown, sent to the window and logged while the plan still holds literal secrets.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::error::SecretLocation;
use super::read::Format;

/// What an import would do. Holds no secret value, so it may go to the window and the logs.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub format: Format,
    /// In the order they would be added to the settings.
    pub added: Vec<AddedServer>,
    /// Added servers whose id is not their slugified name, because that id was taken.
    pub renamed: Vec<RenamedServer>,
    pub skipped: Vec<SkippedServer>,
    /// "Always allow" rules from `autoApprove` / `alwaysAllow`.
    pub rules: Vec<ImportedRule>,
    /// VS Code inputs the caller must ask the user for, and pass back in [`super::ImportChoices`].
    pub inputs: Vec<InputRequest>,
    /// Literal values that look like secrets, offered for moving to the keychain.
    pub secret_candidates: Vec<SecretCandidate>,
    pub warnings: Vec<ImportWarning>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum TransportKind {
    Stdio,
    Http,
    /// The older HTTP+SSE transport.
    Sse,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AddedServer {
    pub id: String,
    pub name: String,
    pub transport: TransportKind,
    pub enabled: bool,
    /// What will run, for the user to check before anything does: the command line (arguments
    /// with spaces or quotes in single quotes), or the address.
    pub runs: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RenamedServer {
    pub name: String,
    /// The id the name would have had.
    pub wanted_id: String,
    /// The id it got.
    pub id: String,
    pub clash: Clash,
}

/// Who already had the id a server wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum Clash {
    /// A server already in the settings.
    ExistingServer,
    /// A server earlier in the same import.
    ImportedServer,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SkippedServer {
    /// Its name in the imported text.
    pub name: String,
    pub reason: SkipReason,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SkipReason {
    /// Same transport (command, args, env, cwd; or URL and headers) as the server `id`. A value
    /// an existing server keeps in the keychain (`${secret:…}`) matches any literal value.
    #[serde(rename_all = "camelCase")]
    Identical {
        id: String,
        /// The server is in the settings (true) or earlier in this import (false).
        existing: bool,
    },
    /// Disabled, and the server `id` runs the same command line or URL.
    #[serde(rename_all = "camelCase")]
    DisabledDuplicate { id: String, existing: bool },
    /// Its env sets `variable` (`LD_PRELOAD`, `NODE_OPTIONS`…), which can make the program load
    /// other code, and the entry does not list it in Toolgate's `allowEnv`; Toolgate would refuse
    /// to start it (see [`toolgate_settings::ServerConfig::unsafe_env`]).
    #[serde(rename_all = "camelCase")]
    UnsafeEnv { variable: String },
    /// A transport Toolgate does not speak, as written in `type` (e.g. `sse`).
    #[serde(rename_all = "camelCase")]
    UnsupportedTransport { transport: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportedRule {
    pub server_id: String,
    pub tool: String,
}

/// A VS Code input to ask the user for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct InputRequest {
    pub id: String,
    pub description: String,
    /// Ask without echoing; the answer goes to the keychain under `secret_name`.
    pub password: bool,
    /// For a password input: the keychain name its `${input:…}` references now use.
    pub secret_name: Option<String>,
    /// The file's default answer (never kept for a password input).
    pub default: Option<String>,
    /// A `pickString` input's choices.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(optional = nullable)]
    pub options: Vec<String>,
    /// The ids of the imported servers that use it.
    pub used_by: Vec<String>,
}

/// A literal value that looks like a secret and can move to the keychain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SecretCandidate {
    pub server_id: String,
    pub location: SecretLocation,
    /// The variable's or header's name.
    pub name: String,
    /// A valid secret name no other server or candidate uses.
    pub suggested_secret: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportWarning {
    /// The server's name in the imported text, when the warning is about one.
    pub server: Option<String>,
    pub message: String,
}

/// Warnings, kept in the order of the entries they are about.
#[derive(Default)]
pub(super) struct Warnings(Vec<(usize, ImportWarning)>);

impl Warnings {
    pub(super) fn add(&mut self, index: usize, server: Option<&str>, message: impl Into<String>) {
        self.0.push((
            index,
            ImportWarning {
                server: server.map(str::to_owned),
                message: message.into(),
            },
        ));
    }

    pub(super) fn into_sorted(mut self) -> Vec<ImportWarning> {
        self.0.sort_by_key(|(index, _)| *index);
        self.0.into_iter().map(|(_, w)| w).collect()
    }
}

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
