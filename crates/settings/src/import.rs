//! Importing MCP server configs written for other hosts.
//!
//! Users paste the `mcpServers` snippet an MCP server's README shows, or point at another host's
//! config file. [`plan_import`] reads that text into a complete [`ImportPlan`] (or an
//! [`ImportError`] naming what is wrong and where), merged against the user's current
//! [`Settings`] but not yet applied. Its [`ImportReport`] (serializable for the window, with a
//! `Display` for the CLI) says what would be added, renamed and skipped, the approval rules that
//! would be created, the VS Code inputs the user must be asked for, the values that could move to
//! the keychain, and warnings. [`ImportPlan::apply`] takes the user's answers
//! ([`ImportChoices`]) and returns the new, validated settings and the secrets the caller must put
//! in the keychain. Nothing is half-applied: planning and applying either succeed whole or fail.
//!
//! The module is pure: no files, no keychain, no environment (except
//! [`claude_desktop_config_path`], which reads `HOME`, `APPDATA` or `XDG_CONFIG_HOME`). The caller
//! reads the file and stores the secrets.
//!
//! # Formats
//!
//! Detected from the JSON's shape unless the caller names one ([`ImportOptions::format`]):
//!
//! - [`Format::McpServers`]: `{"mcpServers": {...}}`, from Claude Desktop, Cursor, Claude Code's
//!   `.mcp.json`, Cline, Windsurf, Gemini CLI.
//! - [`Format::VsCode`]: VS Code's `mcp.json`, `{"servers": {...}, "inputs": [...]}`, or the
//!   same under `"mcp"` in its `settings.json`.
//! - [`Format::ServerMap`]: the inside of `mcpServers` pasted alone, `{"name": {"command": ...}}`:
//!   chosen when every top-level value is an object and one of them looks like a server.
//! - [`Format::SingleServer`]: one entry pasted alone, `{"command": ...}` or `{"url": ...}`,
//!   named after the package it runs or the host it reaches (or [`ImportOptions::name`]).
//!
//! Comments and trailing commas are accepted (VS Code's files are JSONC); a text with both
//! `mcpServers` and `servers` is refused as ambiguous.
//!
//! # Rules where the formats are ambiguous
//!
//! - **Transport.** `type` (or Cline's `transportType`) decides: `stdio`; `http`,
//!   `streamable-http`, `streamableHttp` → Streamable HTTP. Without a `type`, a `command` means
//!   stdio and a URL means Streamable HTTP (Cursor's rule), with a warning when the URL ends in
//!   `/sse`. `type: "sse"` (the older HTTP+SSE transport, which Toolgate does not speak) and any
//!   other type are skipped and reported, not guessed. The URL is `url`, or Gemini CLI's `httpUrl`
//!   (preferred when both are present) or Windsurf's `serverUrl`. Both a command and a URL
//!   without a `type` is an error.
//! - **Timeouts.** `timeout` becomes the call timeout: values above 3600 are milliseconds (Gemini
//!   CLI), values up to 3600 are seconds (Cline and Roo Code, which cap at 3600); rounded up,
//!   limited to 1..=86400 s, and the maximum call time raised to match. The report says how each
//!   value was read.
//! - **Disabled.** `"disabled": true` (or `"enabled": false`) imports the server switched off.
//!   A disabled entry whose command line or URL another server already runs (in the settings or
//!   enabled in the same import) is skipped as a disabled duplicate.
//! - **Auto-approval.** `autoApprove` and `alwaysAllow` become "always allow this tool on this
//!   server" rules bound to the server's command line or URL (not to the tool's description,
//!   which the import cannot know), so the grant lapses if the server's launch changes. Names
//!   with `*` are not imported (Toolgate grants name one tool). A skipped server's list is not
//!   imported.
//! - **References.** Toolgate fills in `${env:NAME}` and `${secret:NAME}` only in env values
//!   and HTTP headers (see [`crate::reference`]); there they are kept, and a malformed one is an
//!   error. Claude Code's `${NAME}` (upper case) becomes `${env:NAME}` there. VS Code's
//!   `${input:id}` becomes the user's answer, or `${secret:NAME}` for a password input (NAME
//!   from the id). Any other reference (`${workspaceFolder}`, `${NAME:-default}`), and every
//!   reference in the command, arguments, working folder or URL, is kept as written with a
//!   warning that the server receives the text as it is; a password input there still becomes a
//!   `${secret:…}` reference (a secret is never written into the settings), with a warning.
//!   `envFile` is not read (warning).
//! - **Risky env.** An entry whose env sets a variable that can make its program load other code
//!   (`LD_PRELOAD`, `NODE_OPTIONS`…, [`crate::hijacks_process`]) is skipped, unless the entry
//!   lists it in Toolgate's own `allowEnv`, which is imported.
//! - **Ids.** A server's id is its name slugified (lower-case `a-z`, `0-9` and `-`); an id already
//!   used gets `-2`, `-3`, … and is reported as renamed. Entries are taken in key order.
//!   An entry whose transport equals an existing server's is skipped as identical; a value the
//!   existing server keeps in the keychain matches any literal value, so importing a file again
//!   after moving its secrets adds nothing.
//! - **Secrets.** Literal env values whose name contains KEY, TOKEN, SECRET or PASSWORD, and such
//!   headers plus `Authorization`, are offered for the keychain. The suggested name is the
//!   variable's name, or `<SERVER>_<NAME>` upper-cased when that is taken (always, for headers),
//!   with `_2`, … until unique among the settings' `${secret:…}` references and this import's.
//!   For `Authorization: <scheme> <credentials>` only the credentials move.

mod read;
mod report;
pub(crate) mod vars;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toolgate_policy::{server_fingerprint, Binding, Effect, Rule, Scope, ServerEndpoint, Target};

use crate::{ServerConfig, Settings, SettingsError, Transport};
use read::{ReadEntry, ReadKind};
use vars::Reference;

/// The shape of the JSON being imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Format {
    /// `{"mcpServers": {...}}`: Claude Desktop, Cursor, Claude Code, Cline, Windsurf, Gemini CLI.
    McpServers,
    /// VS Code's `mcp.json`: `{"servers": {...}, "inputs": [...]}`.
    VsCode,
    /// The inside of `mcpServers` alone: `{"name": {"command": ...}}`.
    ServerMap,
    /// One server's entry alone: `{"command": ...}` or `{"url": ...}`.
    SingleServer,
}

/// What the caller knows about the text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ImportOptions {
    /// Read the text as this format instead of detecting it.
    pub format: Option<Format>,
    /// The name for a server pasted alone ([`Format::SingleServer`]); ignored otherwise.
    pub name: Option<String>,
}

/// Why a text could not be imported, or a plan applied. Messages name fields, never values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("nothing to import: the text is empty")]
    Empty,
    /// serde_json's message, with its line and column.
    #[error("the text is not valid JSON: {0}")]
    Json(String),
    #[error("the JSON must be an object like {{\"mcpServers\": {{…}}}}, but it is {found}")]
    NotAnObject { found: &'static str },
    #[error(
        "no `mcpServers` or `servers` object found: paste the whole JSON from the server's README"
    )]
    NotRecognized,
    #[error("the JSON has both `mcpServers` and `servers`: choose which format to import")]
    Ambiguous,
    /// The caller named a format the text does not have.
    #[error("no `{key}` object found at the top of the JSON")]
    Missing { key: &'static str },
    #[error("`{at}` is empty: there is no server to import")]
    NoServers { at: String },
    /// A field has the wrong type or value; `at` is its path, like `mcpServers.github.args[1]`.
    #[error("{at}: {problem}")]
    Invalid { at: String, problem: String },
    #[error("{at}: needs a `command` (a program to start) or a `url` (a server to reach)")]
    MissingCommandOrUrl { at: String },
    #[error("the input `{id}` needs a value: ask the user for it")]
    MissingInput { id: String },
    #[error("{server_id}: {location} `{name}` is not one of the values offered for the keychain")]
    UnknownSecretCandidate {
        server_id: String,
        location: SecretLocation,
        name: String,
    },
    #[error("{server_id}: {location} `{name}` is chosen twice")]
    SecretChosenTwice {
        server_id: String,
        location: SecretLocation,
        name: String,
    },
    #[error("`{name}` cannot name a secret: {problem}")]
    InvalidSecretName { name: String, problem: String },
    #[error("the server id `{id}` was taken after this import was planned: import again")]
    Stale { id: String },
    #[error("the imported approval rules are not valid: {0}")]
    Policy(String),
    #[error("the imported settings are not valid: {0}")]
    Settings(#[from] SettingsError),
}

/// Where a value that could move to the keychain is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SecretLocation {
    /// An environment variable of a stdio server.
    Env,
    /// An HTTP header of an HTTP server.
    Header,
}

impl fmt::Display for SecretLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SecretLocation::Env => "env",
            SecretLocation::Header => "header",
        })
    }
}

/// What an import would do. Holds no secret value, so it may go to the window and the logs.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// VS Code inputs the caller must ask the user for, and pass back in [`ImportChoices`].
    pub inputs: Vec<InputRequest>,
    /// Literal values that look like secrets, offered for moving to the keychain.
    pub secret_candidates: Vec<SecretCandidate>,
    pub warnings: Vec<ImportWarning>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TransportKind {
    Stdio,
    Http,
    /// The older HTTP+SSE transport.
    Sse,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// What a secret-looking part of a launch line is shown as.
const HIDDEN_PART: &str = "(hidden)";

/// A server's command line or address as the user should read it before it runs. Parts that
/// look like secrets are hidden: the value of a `--token=…` flag or of the argument after a
/// `--api-key` flag, and in a URL a password and secret-looking query values.
pub fn launch_line(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, args, .. } => {
            let mut after_secret_flag = false;
            std::iter::once(command.clone())
                .chain(args.iter().map(|arg| {
                    let shown = if after_secret_flag && !arg.starts_with('-') {
                        HIDDEN_PART.to_owned()
                    } else {
                        match arg.split_once('=') {
                            Some((flag, value))
                                if flag.starts_with('-')
                                    && vars::looks_secret(flag)
                                    && !value.is_empty() =>
                            {
                                format!("{flag}={HIDDEN_PART}")
                            }
                            _ => arg.clone(),
                        }
                    };
                    after_secret_flag =
                        arg.starts_with('-') && !arg.contains('=') && vars::looks_secret(arg);
                    shown
                }))
                .map(|part| shell_quoted(&part))
                .collect::<Vec<_>>()
                .join(" ")
        }
        Transport::Http { url, .. } => url_without_secrets(url),
    }
}

fn shell_quoted(part: &str) -> String {
    let plain =
        !part.is_empty() && !part.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c));
    if plain || part == HIDDEN_PART {
        part.to_owned()
    } else {
        format!("'{}'", part.replace('\'', "'\\''"))
    }
}

fn url_without_secrets(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("{HIDDEN_PART}@{host}"),
        None => authority.to_owned(),
    };
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let mut shown = if scheme.is_empty() {
        format!("{authority}{path}")
    } else {
        format!("{scheme}://{authority}{path}")
    };
    if !query.is_empty() || tail.contains('?') {
        let (query, fragment) = query
            .split_once('#')
            .map_or((query, None), |(q, f)| (q, Some(f)));
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) if vars::looks_secret(key) && !value.is_empty() => {
                    format!("{key}={HIDDEN_PART}")
                }
                _ => pair.to_owned(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
        if let Some(fragment) = fragment {
            shown.push('#');
            shown.push_str(fragment);
        }
    }
    shown
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Clash {
    /// A server already in the settings.
    ExistingServer,
    /// A server earlier in the same import.
    ImportedServer,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedServer {
    /// Its name in the imported text.
    pub name: String,
    pub reason: SkipReason,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// to start it (see [`ServerConfig::unsafe_env`]).
    #[serde(rename_all = "camelCase")]
    UnsafeEnv { variable: String },
    /// A transport Toolgate does not speak, as written in `type` (e.g. `sse`).
    #[serde(rename_all = "camelCase")]
    UnsupportedTransport { transport: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedRule {
    pub server_id: String,
    pub tool: String,
}

/// A VS Code input to ask the user for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    pub options: Vec<String>,
    /// The ids of the imported servers that use it.
    pub used_by: Vec<String>,
}

/// A literal value that looks like a secret and can move to the keychain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretCandidate {
    pub server_id: String,
    pub location: SecretLocation,
    /// The variable's or header's name.
    pub name: String,
    /// A valid secret name no other server or candidate uses.
    pub suggested_secret: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportWarning {
    /// The server's name in the imported text, when the warning is about one.
    pub server: Option<String>,
    pub message: String,
}

/// The user's answers to an [`ImportReport`].
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ImportChoices {
    /// An answer for every entry of [`ImportReport::inputs`], by id. Password answers come back
    /// in [`Applied::secrets`]; the others are written into the settings.
    pub inputs: BTreeMap<String, String>,
    /// Which [`SecretCandidate`]s to move to the keychain.
    pub move_secrets: Vec<SecretMove>,
}

impl fmt::Debug for ImportChoices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inputs: BTreeMap<&str, Hidden<'_>> = self
            .inputs
            .iter()
            .map(|(id, value)| (id.as_str(), Hidden(value)))
            .collect();
        f.debug_struct("ImportChoices")
            .field("inputs", &inputs)
            .field("move_secrets", &self.move_secrets)
            .finish()
    }
}

/// "Move this candidate to the keychain", optionally under another name than the suggested one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretMove {
    pub server_id: String,
    pub location: SecretLocation,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_name: Option<String>,
}

/// A value the caller must store in the keychain before saving the settings: `name` is what the
/// settings' `${secret:NAME}` says; the keychain item is [`crate::secret_item`]`(name)`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretToStore {
    pub name: String,
    pub value: String,
}

impl fmt::Debug for SecretToStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretToStore")
            .field("name", &self.name)
            .field("value", &Hidden(&self.value))
            .finish()
    }
}

/// The result of applying a plan: settings to save, and secrets to store first.
#[derive(Clone, PartialEq)]
pub struct Applied {
    /// Validated; holds `${secret:NAME}` references to the secrets below.
    pub settings: Settings,
    pub secrets: Vec<SecretToStore>,
}

impl fmt::Debug for Applied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Applied")
            .field(
                "servers",
                &self
                    .settings
                    .servers
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("rules", &self.settings.policy.rules.len())
            .field("secrets", &self.secrets)
            .finish()
    }
}

/// A value shown by its last four characters at most: `…wxyz`, or `…` for one shorter than 8.
struct Hidden<'a>(&'a str);

impl fmt::Debug for Hidden<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chars: Vec<char> = self.0.chars().collect();
        if chars.len() >= 8 {
            let tail: String = chars[chars.len() - 4..].iter().collect();
            write!(f, "\"…{tail}\"")
        } else {
            f.write_str("\"…\"")
        }
    }
}

/// A complete import, ready to apply. Its servers may hold literal secrets until the user moves
/// them, so it is neither serialized nor shown whole: send [`ImportPlan::report`] to the window.
#[derive(Clone)]
pub struct ImportPlan {
    report: ImportReport,
    servers: Vec<Planned>,
}

#[derive(Clone)]
struct Planned {
    config: ServerConfig,
    /// The tools `autoApprove` named, for the rules.
    auto_approve: Vec<String>,
}

impl fmt::Debug for ImportPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Server<'a>(&'a ServerConfig);
        impl fmt::Debug for Server<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut s = f.debug_struct("Server");
                s.field("id", &self.0.id).field("name", &self.0.name);
                match &self.0.transport {
                    Transport::Stdio { env, .. } => s
                        .field("transport", &"stdio")
                        .field("env", &env.keys().collect::<Vec<_>>()),
                    Transport::Http { headers, .. } => s
                        .field("transport", &"http")
                        .field("headers", &headers.keys().collect::<Vec<_>>()),
                };
                s.field("enabled", &self.0.enabled).finish()
            }
        }
        f.debug_struct("ImportPlan")
            .field(
                "servers",
                &self
                    .servers
                    .iter()
                    .map(|p| Server(&p.config))
                    .collect::<Vec<_>>(),
            )
            .field("report", &self.report)
            .finish()
    }
}

impl ImportPlan {
    /// What the import would do; safe to show and send to the window.
    pub fn report(&self) -> &ImportReport {
        &self.report
    }

    /// The servers to add, as planned: VS Code inputs other than passwords are still
    /// `${input:…}`, and secret candidates still hold their literal values.
    pub fn servers(&self) -> impl Iterator<Item = &ServerConfig> + '_ {
        self.servers.iter().map(|p| &p.config)
    }

    /// Every secret candidate, under its suggested name: "move them all".
    pub fn move_all_secrets(&self) -> Vec<SecretMove> {
        self.report
            .secret_candidates
            .iter()
            .map(|c| SecretMove {
                server_id: c.server_id.clone(),
                location: c.location,
                name: c.name.clone(),
                secret_name: None,
            })
            .collect()
    }

    /// Adds the planned servers and rules to `settings` with the user's answers, and validates
    /// the result. `now_ms` (milliseconds since the Unix epoch) dates the rules. The secrets
    /// returned must be stored in the keychain before the settings are saved.
    pub fn apply(
        &self,
        settings: &Settings,
        choices: &ImportChoices,
        now_ms: i64,
    ) -> Result<Applied, ImportError> {
        let mut secrets = Vec::new();
        let mut plain: BTreeMap<&str, &str> = BTreeMap::new();
        let mut names_in_use: BTreeSet<String> = BTreeSet::new();
        for input in &self.report.inputs {
            let value = choices
                .inputs
                .get(&input.id)
                .ok_or_else(|| ImportError::MissingInput {
                    id: input.id.clone(),
                })?;
            match &input.secret_name {
                Some(name) => {
                    names_in_use.insert(name.clone());
                    secrets.push(SecretToStore {
                        name: name.clone(),
                        value: value.clone(),
                    });
                }
                None => {
                    plain.insert(&input.id, value);
                }
            }
        }

        let referenced = crate::secrets_used(settings);
        let mut moves: BTreeMap<(&str, SecretLocation, &str), String> = BTreeMap::new();
        for choice in &choices.move_secrets {
            let candidate = self
                .report
                .secret_candidates
                .iter()
                .find(|c| {
                    c.server_id == choice.server_id
                        && c.location == choice.location
                        && c.name == choice.name
                })
                .ok_or_else(|| ImportError::UnknownSecretCandidate {
                    server_id: choice.server_id.clone(),
                    location: choice.location,
                    name: choice.name.clone(),
                })?;
            let secret_name = choice
                .secret_name
                .clone()
                .unwrap_or_else(|| candidate.suggested_secret.clone());
            if !vars::valid_name(&secret_name) {
                return Err(ImportError::InvalidSecretName {
                    name: secret_name,
                    problem: "use letters, digits, `_`, `.` and `-`, starting with a letter or `_`"
                        .into(),
                });
            }
            if referenced.contains_key(&secret_name) || !names_in_use.insert(secret_name.clone()) {
                return Err(ImportError::InvalidSecretName {
                    name: secret_name,
                    problem: "another server or value already uses it".into(),
                });
            }
            let key = (
                candidate.server_id.as_str(),
                candidate.location,
                candidate.name.as_str(),
            );
            if moves.insert(key, secret_name).is_some() {
                return Err(ImportError::SecretChosenTwice {
                    server_id: choice.server_id.clone(),
                    location: choice.location,
                    name: choice.name.clone(),
                });
            }
        }

        let mut out = settings.clone();
        for planned in &self.servers {
            let mut config = planned.config.clone();
            if out.servers.iter().any(|s| s.id == config.id) {
                return Err(ImportError::Stale { id: config.id });
            }
            map_strings(&mut config, |s| {
                vars::rewrite(s, |inner| match vars::classify(inner) {
                    Reference::Input(id) => plain.get(id).map(|v| (*v).to_owned()),
                    _ => None,
                })
            });
            let id = config.id.clone();
            let (location, values) = match &mut config.transport {
                Transport::Stdio { env, .. } => (SecretLocation::Env, env),
                Transport::Http { headers, .. } => (SecretLocation::Header, headers),
            };
            for (name, value) in values.iter_mut() {
                let Some(secret_name) = moves.get(&(id.as_str(), location, name.as_str())) else {
                    continue;
                };
                let reference = format!("${{secret:{secret_name}}}");
                let authorization = location == SecretLocation::Header
                    && name.to_ascii_uppercase().contains("AUTHORIZATION");
                let (stored, replacement) = match vars::split_scheme(value) {
                    Some((scheme, credentials)) if authorization => {
                        (credentials.to_owned(), format!("{scheme} {reference}"))
                    }
                    _ => (value.clone(), reference),
                };
                *value = replacement;
                secrets.push(SecretToStore {
                    name: secret_name.clone(),
                    value: stored,
                });
            }
            out.servers.push(config);
        }

        let mut rule_ids: BTreeSet<String> =
            out.policy.rules.iter().map(|r| r.id.clone()).collect();
        for imported in &self.report.rules {
            let Some(server) = out.servers.iter().find(|s| s.id == imported.server_id) else {
                continue;
            };
            let base = format!("import-{}-{}", imported.server_id, imported.tool);
            let id = (1..)
                .map(|n| {
                    if n == 1 {
                        base.clone()
                    } else {
                        format!("{base}-{n}")
                    }
                })
                .find(|id| !rule_ids.contains(id))
                .unwrap_or(base);
            rule_ids.insert(id.clone());
            let rule = Rule {
                id,
                effect: Effect::Allow,
                scope: Scope::Always,
                target: Target::Tool {
                    server_id: imported.server_id.clone(),
                    tool: imported.tool.clone(),
                },
                conditions: Vec::new(),
                bound_to: Some(Binding {
                    server_fingerprint: server_fingerprint(&endpoint(&server.transport)),
                    tool_fingerprint: None,
                }),
                created_at: now_ms,
                expires_at: None,
                note: Some(format!(
                    "{} in {} (auto-approved in the imported config)",
                    imported.tool, imported.server_id
                )),
                client: None,
            };
            out.policy
                .add_rule(rule)
                .map_err(|e| ImportError::Policy(e.to_string()))?;
        }
        out.validate()?;
        Ok(Applied {
            settings: out,
            secrets,
        })
    }
}

/// Reads `text` (a config from another host, or a snippet of one) and plans adding its servers
/// to `existing`. The plan is complete and valid, or this returns the first problem found.
pub fn plan_import(
    existing: &Settings,
    text: &str,
    options: &ImportOptions,
) -> Result<ImportPlan, ImportError> {
    let value = read::parse_text(text)?;
    let source = read::find_servers(&value, options.format)?;
    let mut reads = source
        .entries
        .iter()
        .map(|entry| read::read_entry(entry, source.format, &source.inputs))
        .collect::<Result<Vec<_>, _>>()?;
    if source.format == Format::SingleServer {
        let name = options.name.as_deref().map(str::trim);
        if let (Some(name), Some(read)) = (name.filter(|n| !n.is_empty()), reads.first_mut()) {
            name.clone_into(&mut read.name);
        }
    }
    plan(existing, source.format, reads, &source.inputs)
}

/// An entry that will be added, with what planning it further needs.
struct Accepted {
    /// Its position among the entries, to keep the file's order.
    index: usize,
    planned: Planned,
    inputs_used: BTreeSet<String>,
}

/// Warnings, kept in the order of the entries they are about.
#[derive(Default)]
struct Warnings(Vec<(usize, ImportWarning)>);

impl Warnings {
    fn add(&mut self, index: usize, server: Option<&str>, message: impl Into<String>) {
        self.0.push((
            index,
            ImportWarning {
                server: server.map(str::to_owned),
                message: message.into(),
            },
        ));
    }

    fn into_sorted(mut self) -> Vec<ImportWarning> {
        self.0.sort_by_key(|(index, _)| *index);
        self.0.into_iter().map(|(_, w)| w).collect()
    }
}

fn plan(
    existing: &Settings,
    format: Format,
    reads: Vec<ReadEntry>,
    inputs: &BTreeMap<String, read::InputDef>,
) -> Result<ImportPlan, ImportError> {
    let mut warnings = Warnings::default();
    for (index, read) in reads.iter().enumerate() {
        for message in &read.warnings {
            warnings.add(index, Some(&read.name), message.clone());
        }
    }
    let (accepted, skipped, renamed) = merge(existing, &reads, &mut warnings);

    let mut taken_secrets: BTreeSet<String> = crate::secrets_used(existing).into_keys().collect();
    let input_requests = plan_inputs(inputs, &accepted, &mut taken_secrets, &mut warnings);
    let password_names: BTreeMap<&str, &str> = input_requests
        .iter()
        .filter_map(|i| Some((i.id.as_str(), i.secret_name.as_deref()?)))
        .collect();
    let plain_inputs: BTreeSet<&str> = input_requests
        .iter()
        .filter(|i| !i.password)
        .map(|i| i.id.as_str())
        .collect();

    let mut added = Vec::new();
    let mut rules = Vec::new();
    let mut secret_candidates = Vec::new();
    let mut servers = Vec::with_capacity(accepted.len());
    for Accepted {
        index, mut planned, ..
    } in accepted
    {
        map_strings(&mut planned.config, |s| {
            vars::rewrite(s, |inner| match vars::classify(inner) {
                Reference::Input(id) => password_names
                    .get(id)
                    .map(|name| format!("${{secret:{name}}}")),
                _ => None,
            })
        });
        let config = &planned.config;
        secret_candidates.extend(candidates(config, &plain_inputs, &mut taken_secrets));
        rules.extend(auto_approvals(&planned, index, &mut warnings));
        added.push(AddedServer {
            id: config.id.clone(),
            name: config.name.clone(),
            transport: match config.transport {
                Transport::Stdio { .. } => TransportKind::Stdio,
                Transport::Http { sse: false, .. } => TransportKind::Http,
                Transport::Http { sse: true, .. } => TransportKind::Sse,
            },
            enabled: config.enabled,
            runs: launch_line(config),
        });
        servers.push(planned);
    }

    // The plan must apply: check the servers as the settings will hold them.
    let mut trial = existing.clone();
    trial
        .servers
        .extend(servers.iter().map(|p| p.config.clone()));
    trial.validate()?;
    let report = ImportReport {
        format,
        added,
        renamed,
        skipped,
        rules,
        inputs: input_requests,
        secret_candidates,
        warnings: warnings.into_sorted(),
    };
    Ok(ImportPlan { report, servers })
}

/// Decides, entry by entry, what is added (under which id) and what is skipped.
fn merge(
    existing: &Settings,
    reads: &[ReadEntry],
    warnings: &mut Warnings,
) -> (Vec<Accepted>, Vec<SkippedServer>, Vec<RenamedServer>) {
    // Enabled entries first, so that a disabled duplicate is recognized whatever the order, and
    // the enabled one gets the plain id.
    let disabled = |r: &ReadEntry| matches!(r.kind, ReadKind::Server { enabled: false, .. });
    let order: Vec<usize> = (0..reads.len())
        .filter(|&i| !disabled(&reads[i]))
        .chain((0..reads.len()).filter(|&i| disabled(&reads[i])))
        .collect();
    let existing_ids: BTreeSet<&str> = existing.servers.iter().map(|s| s.id.as_str()).collect();
    let mut taken_ids: BTreeSet<String> = existing_ids.iter().map(|s| (*s).to_owned()).collect();
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut skipped: Vec<(usize, SkippedServer)> = Vec::new();
    let mut renamed = Vec::new();
    for index in order {
        let read = &reads[index];
        let (transport, enabled, call_timeout_secs, allow_env, inputs_used, oauth) =
            match &read.kind {
                ReadKind::Server {
                    transport,
                    enabled,
                    call_timeout_secs,
                    allow_env,
                    inputs_used,
                    oauth,
                } => (
                    transport,
                    *enabled,
                    *call_timeout_secs,
                    allow_env,
                    inputs_used,
                    oauth,
                ),
                ReadKind::Unsupported { transport } => {
                    let reason = SkipReason::UnsupportedTransport {
                        transport: transport.clone(),
                    };
                    skip(index, read, reason, &mut skipped, warnings);
                    continue;
                }
            };
        let same_endpoint = |t: &Transport| endpoint(t) == endpoint(transport);
        let reason = if let Some(s) = existing
            .servers
            .iter()
            .find(|s| same_server(&s.transport, transport))
        {
            Some(SkipReason::Identical {
                id: s.id.clone(),
                existing: true,
            })
        } else if let Some(a) = accepted
            .iter()
            .find(|a| a.planned.config.transport == *transport)
        {
            Some(SkipReason::Identical {
                id: a.planned.config.id.clone(),
                existing: false,
            })
        } else if let Some(variable) = unsafe_env(transport, allow_env) {
            Some(SkipReason::UnsafeEnv { variable })
        } else if enabled {
            None
        } else if let Some(s) = existing
            .servers
            .iter()
            .find(|s| same_endpoint(&s.transport))
        {
            Some(SkipReason::DisabledDuplicate {
                id: s.id.clone(),
                existing: true,
            })
        } else {
            accepted
                .iter()
                .find(|a| same_endpoint(&a.planned.config.transport))
                .map(|a| SkipReason::DisabledDuplicate {
                    id: a.planned.config.id.clone(),
                    existing: false,
                })
        };
        if let Some(reason) = reason {
            skip(index, read, reason, &mut skipped, warnings);
            continue;
        }

        let wanted = slug(&read.name);
        let id = (1..)
            .map(|n| match n {
                1 => wanted.clone(),
                n => format!("{wanted}-{n}"),
            })
            .find(|id| !taken_ids.contains(id))
            .unwrap_or_else(|| wanted.clone());
        taken_ids.insert(id.clone());
        if id != wanted {
            renamed.push((
                index,
                RenamedServer {
                    name: read.name.clone(),
                    clash: if existing_ids.contains(wanted.as_str()) {
                        Clash::ExistingServer
                    } else {
                        Clash::ImportedServer
                    },
                    wanted_id: wanted,
                    id: id.clone(),
                },
            ));
        }
        let mut config = ServerConfig::with_transport(id, read.name.clone(), transport.clone());
        config.enabled = enabled;
        config.allow_env.clone_from(allow_env);
        config.oauth = oauth.as_deref().cloned();
        if let Some(secs) = call_timeout_secs {
            config.call_timeout_secs = secs;
            config.max_call_timeout_secs = config.max_call_timeout_secs.max(secs);
        }
        accepted.push(Accepted {
            index,
            planned: Planned {
                config,
                auto_approve: read.auto_approve.clone(),
            },
            inputs_used: inputs_used.clone(),
        });
    }
    accepted.sort_by_key(|a| a.index);
    skipped.sort_by_key(|(index, _)| *index);
    renamed.sort_by_key(|(index, _)| *index);
    let skipped = skipped.into_iter().map(|(_, s)| s).collect();
    let renamed = renamed.into_iter().map(|(_, r)| r).collect();
    (accepted, skipped, renamed)
}

fn skip(
    index: usize,
    read: &ReadEntry,
    reason: SkipReason,
    skipped: &mut Vec<(usize, SkippedServer)>,
    warnings: &mut Warnings,
) {
    if !read.auto_approve.is_empty() {
        warnings.add(
            index,
            Some(&read.name),
            "its auto-approved tools were not imported, because the server was skipped",
        );
    }
    skipped.push((
        index,
        SkippedServer {
            name: read.name.clone(),
            reason,
        },
    ));
}

/// The VS Code inputs the added servers use, with a keychain name for each password input.
fn plan_inputs(
    inputs: &BTreeMap<String, read::InputDef>,
    accepted: &[Accepted],
    taken_secrets: &mut BTreeSet<String>,
    warnings: &mut Warnings,
) -> Vec<InputRequest> {
    let used: BTreeSet<&String> = accepted.iter().flat_map(|a| &a.inputs_used).collect();
    let mut requests = Vec::new();
    for id in used {
        let Some(def) = inputs.get(id) else { continue };
        let secret_name = def.password.then(|| {
            let base = vars::secret_name_from(id);
            let name = vars::unique(&base, &|n| taken_secrets.contains(n));
            taken_secrets.insert(name.clone());
            name
        });
        if !matches!(def.kind.as_str(), "promptString" | "pickString") {
            warnings.add(
                usize::MAX,
                None,
                format!(
                    "the input `{id}` is of type `{}`, which Toolgate cannot run; the user is \
                     asked for its value instead",
                    def.kind
                ),
            );
        }
        requests.push(InputRequest {
            id: id.clone(),
            description: def.description.clone(),
            password: def.password,
            secret_name,
            default: def.default.clone(),
            options: def.options.clone(),
            used_by: accepted
                .iter()
                .filter(|a| a.inputs_used.contains(id))
                .map(|a| a.planned.config.id.clone())
                .collect(),
        });
    }
    requests
}

/// The literal, secret-looking env values or headers of one server, each with a free name.
/// A value made only of plain-input references counts as literal: it will be once answered.
fn candidates(
    config: &ServerConfig,
    plain_inputs: &BTreeSet<&str>,
    taken_secrets: &mut BTreeSet<String>,
) -> Vec<SecretCandidate> {
    let (location, values) = match &config.transport {
        Transport::Stdio { env, .. } => (SecretLocation::Env, env),
        Transport::Http { headers, .. } => (SecretLocation::Header, headers),
    };
    let mut found = Vec::new();
    for (name, value) in values {
        let secret_like = match location {
            SecretLocation::Env => vars::looks_secret(name),
            SecretLocation::Header => vars::header_looks_secret(name),
        };
        let literal = vars::references(value).into_iter().all(|inner| {
            matches!(vars::classify(inner), Reference::Input(id) if plain_inputs.contains(id))
        });
        if !secret_like || !literal || value.trim().is_empty() {
            continue;
        }
        let prefixed = vars::secret_name_from(
            &format!("{}_{name}", config.id)
                .to_ascii_uppercase()
                .replace('-', "_"),
        );
        let base = match location {
            SecretLocation::Env if vars::valid_name(name) && !taken_secrets.contains(name) => {
                name.clone()
            }
            _ => prefixed,
        };
        let suggested = vars::unique(&base, &|n| taken_secrets.contains(n));
        taken_secrets.insert(suggested.clone());
        found.push(SecretCandidate {
            server_id: config.id.clone(),
            location,
            name: name.clone(),
            suggested_secret: suggested,
        });
    }
    found
}

/// The rules one server's `autoApprove` list asks for: one per named tool.
fn auto_approvals(planned: &Planned, index: usize, warnings: &mut Warnings) -> Vec<ImportedRule> {
    let config = &planned.config;
    let mut seen = BTreeSet::new();
    let mut rules = Vec::new();
    for tool in &planned.auto_approve {
        let tool = tool.trim();
        if tool.is_empty() {
            warnings.add(
                index,
                Some(&config.name),
                "ignored an empty tool name among the auto-approved tools",
            );
        } else if tool.contains('*') {
            warnings.add(
                index,
                Some(&config.name),
                format!(
                    "did not import the auto-approval `{tool}`: Toolgate's grants name one tool; \
                     allow the whole server when it first asks, if that is what you mean"
                ),
            );
        } else if seen.insert(tool) {
            rules.push(ImportedRule {
                server_id: config.id.clone(),
                tool: tool.to_owned(),
            });
        }
    }
    rules
}

/// Whether an imported transport is one the settings already have: equal, except that a value
/// the settings keep in the keychain (`${secret:…}`) may be literal in the import, as it is when
/// the same file is imported again after its secrets were moved.
fn same_server(existing: &Transport, imported: &Transport) -> bool {
    let same_values = |kept: &BTreeMap<String, String>, new: &BTreeMap<String, String>| {
        kept.len() == new.len()
            && kept
                .iter()
                .zip(new)
                .all(|((k1, v1), (k2, v2))| k1 == k2 && (v1 == v2 || v1.contains("${secret:")))
    };
    match (existing, imported) {
        (
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            },
            Transport::Stdio {
                command: c2,
                args: a2,
                env: e2,
                cwd: d2,
            },
        ) => command == c2 && args == a2 && cwd == d2 && same_values(env, e2),
        (
            Transport::Http { url, headers, sse },
            Transport::Http {
                url: u2,
                headers: h2,
                sse: s2,
            },
        ) => url == u2 && sse == s2 && same_values(headers, h2),
        _ => false,
    }
}

/// What identifies a server for grants and duplicates: its command line, or its URL.
fn endpoint(transport: &Transport) -> ServerEndpoint<'_> {
    match transport {
        Transport::Stdio { command, args, .. } => ServerEndpoint::Stdio { command, args },
        Transport::Http { url, .. } => ServerEndpoint::Http { url },
    }
}

/// Applies `f` to every string of a server's transport that may hold a reference.
fn map_strings(config: &mut ServerConfig, mut f: impl FnMut(&str) -> String) {
    match &mut config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            *command = f(command);
            for arg in args.iter_mut() {
                *arg = f(arg);
            }
            for value in env.values_mut() {
                *value = f(value);
            }
            if let Some(dir) = cwd.as_mut() {
                *dir = PathBuf::from(f(&dir.to_string_lossy()));
            }
        }
        Transport::Http { url, headers, .. } => {
            *url = f(url);
            for value in headers.values_mut() {
                *value = f(value);
            }
        }
    }
}

/// The first variable of a stdio server's env that could make its program load other code and
/// that `allow_env` does not allow: the rule of [`ServerConfig::unsafe_env`].
fn unsafe_env(transport: &Transport, allow_env: &[String]) -> Option<String> {
    let mut config = ServerConfig::with_transport(String::new(), String::new(), transport.clone());
    config.allow_env = allow_env.to_vec();
    config.unsafe_env()?;
    let Transport::Stdio { env, .. } = transport else {
        return None;
    };
    env.keys()
        .find(|name| {
            crate::hijacks_process(name) && !allow_env.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
        .cloned()
}

/// A server id from a name: lower-case ASCII letters and digits, runs of anything else as one
/// `-`, at most 48 characters; `server` when nothing is left.
fn slug(name: &str) -> String {
    let mut id = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    id.truncate(48);
    let id = id.trim_end_matches('-');
    if id.is_empty() {
        "server".to_owned()
    } else {
        id.to_owned()
    }
}

/// The JSON of a host's config file, with comments and trailing commas allowed (VS Code's and
/// Zed's files are JSONC); the error says where the text is not JSON.
pub fn parse_jsonc(text: &str) -> Result<serde_json::Value, ImportError> {
    read::parse_text(text)
}

/// Where Claude Desktop keeps its config on this OS: macOS
/// `~/Library/Application Support/Claude/claude_desktop_config.json`, Windows
/// `%APPDATA%\Claude\claude_desktop_config.json`, elsewhere `$XDG_CONFIG_HOME/Claude/…` or
/// `~/.config/Claude/claude_desktop_config.json`. `None` when the variable it needs is unset.
/// The file may not exist: check before offering it.
pub fn claude_desktop_config_path() -> Option<PathBuf> {
    let os = if cfg!(target_os = "macos") {
        Platform::Mac
    } else if cfg!(windows) {
        Platform::Windows
    } else {
        Platform::Other
    };
    config_path_for(os, &|name| {
        std::env::var_os(name).filter(|value| !value.is_empty())
    })
}

#[derive(Clone, Copy)]
enum Platform {
    Mac,
    Windows,
    Other,
}

fn config_path_for(
    os: Platform,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let dir = match os {
        Platform::Mac => PathBuf::from(var("HOME")?).join("Library/Application Support"),
        Platform::Windows => PathBuf::from(var("APPDATA")?),
        Platform::Other => match var("XDG_CONFIG_HOME").map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir,
            _ => PathBuf::from(var("HOME")?).join(".config"),
        },
    };
    Some(dir.join("Claude").join("claude_desktop_config.json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn the_launch_line_is_what_runs_quoted_as_a_shell_reads_it_without_secrets() {
        let mut existing = Settings::first_run(crate::example_server(None));
        existing.servers.clear();
        let text = r#"{"mcpServers": {
            "notes": {"command": "npx", "args": ["-y", "@scope/server", "/home/me/my notes", "it's"]},
            "remote": {"type": "http", "url": "https://example.com/mcp"},
            "hidden": {"command": "srv", "args": ["--api-key", "k-1234567", "--token=t-99999", "--verbose"]},
            "query": {"type": "http", "url": "https://me:pw@example.com/mcp?api_key=abc&x=1#top"}
        }}"#;
        let plan = plan_import(&existing, text, &ImportOptions::default()).unwrap();
        let runs: Vec<&str> = plan
            .report()
            .added
            .iter()
            .map(|a| a.runs.as_str())
            .collect();
        assert_eq!(
            runs,
            [
                "srv --api-key (hidden) --token=(hidden) --verbose",
                r"npx -y @scope/server '/home/me/my notes' 'it'\''s'",
                "https://(hidden)@example.com/mcp?api_key=(hidden)&x=1#top",
                "https://example.com/mcp",
            ]
        );
    }

    #[test]
    fn slugs_are_valid_ids() {
        assert_eq!(slug("GitHub Tools"), "github-tools");
        assert_eq!(slug("  --my_server--  "), "my-server");
        assert_eq!(slug("日本"), "server");
        assert_eq!(slug(&"a".repeat(80)).len(), 48);
    }

    #[test]
    fn claude_desktop_paths_per_os() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(*v))
            }
        };
        assert_eq!(
            config_path_for(Platform::Mac, &env(&[("HOME", "/Users/a")])),
            Some(PathBuf::from(
                "/Users/a/Library/Application Support/Claude/claude_desktop_config.json"
            ))
        );
        let windows = config_path_for(
            Platform::Windows,
            &env(&[("APPDATA", r"C:\Users\a\AppData\Roaming")]),
        )
        .unwrap();
        assert!(windows.starts_with(r"C:\Users\a\AppData\Roaming"));
        assert!(windows.ends_with(PathBuf::from("Claude").join("claude_desktop_config.json")));
        assert_eq!(
            config_path_for(Platform::Other, &env(&[("HOME", "/home/a")])),
            Some(PathBuf::from(
                "/home/a/.config/Claude/claude_desktop_config.json"
            ))
        );
        assert_eq!(
            config_path_for(
                Platform::Other,
                &env(&[("HOME", "/home/a"), ("XDG_CONFIG_HOME", "/cfg")])
            ),
            Some(PathBuf::from("/cfg/Claude/claude_desktop_config.json"))
        );
        assert_eq!(
            config_path_for(Platform::Windows, &env(&[("HOME", "/home/a")])),
            None
        );
        assert_eq!(config_path_for(Platform::Mac, &env(&[])), None);
    }

    #[test]
    fn hidden_values_show_at_most_four_characters() {
        assert_eq!(format!("{:?}", Hidden("ghp_abcdefgh1234")), "\"…1234\"");
        assert_eq!(format!("{:?}", Hidden("short")), "\"…\"");
    }
}
