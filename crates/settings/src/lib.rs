//! Toolgate's settings: which MCP servers to run and which model provider to use.
//!
//! Settings are plain serde data with a schema version, validated on every change. They never hold
//! a secret: API keys live in the OS keychain (see `toolgate-secrets`), and a setting only names the
//! keychain item through [`ProviderKind::secret_name`]. Server env values and HTTP headers refer to
//! secrets as `${secret:NAME}` (and to Toolgate's environment as `${env:NAME}`), filled in only
//! when the server starts (see [`reference`]).
//!
//! The settings file is this crate's too ([`file`]): `{"settings": {…}}` in one JSON file that the
//! app and the CLI share, written atomically (a crash or kill never leaves a partial file), and
//! set aside as a backup, never overwritten, when it cannot be read.
//!
//! [`import`] reads other hosts' MCP configs (Claude Desktop, Cursor, Claude Code, VS Code) into
//! servers and approval rules; [`export`] writes servers back in the `mcpServers` form.

pub mod edit;
pub mod export;
pub mod file;
pub mod import;
pub mod sandbox;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
mod client_id_url;
pub mod reference;
mod tool_context;
pub use client_id_url::client_id_url_problem;
pub use reference::{expand, hijacks_process, references, secret_item, Reference};
pub use sandbox::{NetworkAccess, SandboxSettings, ServerKind, TrustMarks};
pub use tool_context::{ToolContext, CONVERSATION_META_KEY};
pub use toolgate_catalog::{CatalogSettings, NamingMode, ServerToolSettings};
pub use toolgate_policy::PolicySettings;

/// The current schema version. Bump it together with a migration in [`Settings::from_json`].
/// Version 3 gave every local server a sandbox ([`SandboxSettings`]).
pub const SCHEMA_VERSION: u32 = 3;

/// Everything the user configures, except secrets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub version: u32,
    pub servers: Vec<ServerConfig>,
    pub provider: ProviderSettings,
    /// Which tools the model sees and under which names (see `toolgate-catalog`).
    #[serde(default)]
    pub tools: CatalogSettings,
    /// Approval rules, pause-all and the defaults (see `toolgate-policy`).
    #[serde(default)]
    pub policy: PolicySettings,
    /// What other hosts connected to Toolgate's gateway see (see `toolgate-gateway`).
    #[serde(default, skip_serializing_if = "GatewaySettings::is_empty")]
    pub gateway: GatewaySettings,
}

/// The gateway: Toolgate as the one MCP server other hosts (Claude Code, Cursor…) connect to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewaySettings {
    /// What each client sees, by profile name: `toolgate connect --profile NAME`, else the
    /// client's own name (`clientInfo.name`, e.g. `claude-code`). A client with no profile sees
    /// every enabled server's tools.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub profiles: BTreeMap<String, GatewayProfile>,
}

impl GatewaySettings {
    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty()
    }

    /// The profile for `name`: exactly, else ignoring case, spaces and `_` (so `Claude Code`
    /// finds `claude-code`).
    pub fn profile(&self, name: &str) -> Option<(&str, &GatewayProfile)> {
        let fold = |s: &str| -> String {
            s.trim()
                .chars()
                .map(|c| match c {
                    ' ' | '_' => '-',
                    c => c.to_ascii_lowercase(),
                })
                .collect()
        };
        self.profiles
            .get_key_value(name)
            .or_else(|| self.profiles.iter().find(|(k, _)| fold(k) == fold(name)))
            .map(|(k, v)| (k.as_str(), v))
    }
}

/// Which servers and tools one connected client sees.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayProfile {
    /// Server ids this client sees; absent: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<std::collections::BTreeSet<String>>,
    /// Tools hidden from this client: server id → glob patterns on the tool's own name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exclude: BTreeMap<String, Vec<String>>,
}

/// One MCP server: how to reach it, and how to supervise it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerConfig {
    /// Stable identifier, unique among servers; used to route tool calls and name log files.
    pub id: String,
    /// Name shown to the user.
    pub name: String,
    #[serde(flatten)]
    pub transport: Transport,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// How long the server may take from start to a listed set of tools. Generous by default
    /// because `npx` and `uvx` may first fetch the package.
    #[serde(default = "default_startup_timeout")]
    pub startup_timeout_secs: u64,
    /// The default limit for one tool call, reset by each progress notification.
    #[serde(default = "default_call_timeout")]
    pub call_timeout_secs: u64,
    /// The limit for one call however much progress it reports.
    #[serde(default = "default_max_call_timeout")]
    pub max_call_timeout_secs: u64,
    /// Restart the server, with backoff, when it exits on its own.
    #[serde(default = "yes")]
    pub auto_restart: bool,
    /// Folders offered to the server when it asks for `roots/list`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<PathBuf>,
    /// Environment variables that can make the program load other code (`LD_PRELOAD`,
    /// `NODE_OPTIONS`…) which the user explicitly allows in this server's `env`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_env: Vec<String>,
    /// Pins the protocol era: `2026-07-28` (`server/discover` only) or an `initialize` version
    /// ([`PROTOCOL_VERSIONS`]). Absent: `server/discover` first, then `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// What a local server may reach. Absent: the defaults for what it is
    /// ([`SandboxSettings::defaults_for`]), which confine it. Ignored for a remote server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSettings>,
    /// What the gate should know of this server: untrusted output, a way out, results to
    /// review ([`TrustMarks`]).
    #[serde(default, skip_serializing_if = "TrustMarks::is_default")]
    pub trust: TrustMarks,
    /// What Toolgate tells this server about each call in the call's `_meta` (off unless set).
    #[serde(default, skip_serializing_if = "ToolContext::is_off")]
    pub tool_context: ToolContext,
    /// How Toolgate signs in to a remote server that asks for OAuth, when the defaults (dynamic
    /// registration, the scopes the server names) are not enough. Never holds a token: those
    /// live in the keychain only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthSettings>,
}

/// A remote server's sign-in choices. Tokens and registrations are never here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthSettings {
    /// A client id registered by hand with the authorization server, for servers that do not
    /// allow dynamic registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// That client's secret, as a `${secret:NAME}` reference (never the value itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Scopes to ask for; absent: the ones the server names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// An HTTPS URL of a Client ID Metadata Document describing Toolgate, used as the client id
    /// where the authorization server accepts such documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// The loopback port the sign-in's redirect comes back to; absent: any free port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
}

/// The MCP protocol versions a server can be pinned to, oldest first; the last is the
/// `server/discover` era, the others use `initialize`.
pub const PROTOCOL_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// How Toolgate talks to a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A remote server speaking MCP's Streamable HTTP transport, or the older HTTP+SSE
    /// transport (protocol 2024-11-05) when `sse` is set (`"transport": "sse"` in the file) or
    /// when the server turns down Streamable HTTP.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// Only the older HTTP+SSE transport: written as `"transport": "sse"`.
        sse: bool,
    },
}

/// How [`Transport`] is written: `"transport": "sse"` is an HTTP server held to the older
/// transport.
#[derive(Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "camelCase")]
enum TransportRepr {
    #[serde(rename_all = "camelCase")]
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        #[serde(default)]
        cwd: Option<PathBuf>,
    },
    #[serde(rename_all = "camelCase")]
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
    #[serde(rename_all = "camelCase")]
    Sse {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

impl Serialize for Transport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let repr = match self.clone() {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => TransportRepr::Stdio {
                command,
                args,
                env,
                cwd,
            },
            Transport::Http {
                url,
                headers,
                sse: false,
            } => TransportRepr::Http { url, headers },
            Transport::Http {
                url,
                headers,
                sse: true,
            } => TransportRepr::Sse { url, headers },
        };
        repr.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Transport {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match TransportRepr::deserialize(deserializer)? {
            TransportRepr::Stdio {
                command,
                args,
                env,
                cwd,
            } => Transport::Stdio {
                command,
                args,
                env,
                cwd,
            },
            TransportRepr::Http { url, headers } => Transport::Http {
                url,
                headers,
                sse: false,
            },
            TransportRepr::Sse { url, headers } => Transport::Http {
                url,
                headers,
                sse: true,
            },
        })
    }
}

pub(crate) fn yes() -> bool {
    true
}
fn default_startup_timeout() -> u64 {
    60
}
fn default_call_timeout() -> u64 {
    60
}
fn default_max_call_timeout() -> u64 {
    600
}

impl ServerConfig {
    /// A stdio server with every supervision setting at its default.
    pub fn stdio(
        id: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let id = id.into();
        Self::with_transport(
            id.clone(),
            id,
            Transport::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A Streamable HTTP server with every supervision setting at its default.
    pub fn http(id: impl Into<String>, url: impl Into<String>) -> Self {
        let id = id.into();
        Self::with_transport(
            id.clone(),
            id,
            Transport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
                sse: false,
            },
        )
    }

    pub fn with_transport(id: String, name: String, transport: Transport) -> Self {
        Self {
            id,
            name,
            transport,
            enabled: true,
            startup_timeout_secs: default_startup_timeout(),
            call_timeout_secs: default_call_timeout(),
            max_call_timeout_secs: default_max_call_timeout(),
            auto_restart: true,
            roots: Vec::new(),
            allow_env: Vec::new(),
            protocol_version: None,
            sandbox: None,
            trust: TrustMarks::default(),
            tool_context: ToolContext::default(),
            oauth: None,
        }
    }

    /// The first variable of `env` that can make the server's program load other code
    /// (`LD_PRELOAD`, `NODE_OPTIONS`…) and that the user has not allowed in `allow_env`, as an
    /// error saying how to allow it. Checked before every start and on import, not when the
    /// settings are read, so a hand-edited file is never thrown away for it.
    pub fn unsafe_env(&self) -> Option<SettingsError> {
        let Transport::Stdio { env, .. } = &self.transport else {
            return None;
        };
        let name = env.keys().find(|name| {
            reference::hijacks_process(name)
                && !self.allow_env.iter().any(|a| a.eq_ignore_ascii_case(name))
        })?;
        Some(invalid(
            format!("servers.{}.env.{name}", self.id),
            format!(
                "{name} can make the server's program load other code, so Toolgate refuses it. If you trust this setting, add \"{name}\" to the server's allowEnv"
            ),
        ))
    }

    /// Checks this entry alone; `at` names a field for the error, e.g. `servers[2].command`.
    fn validate(&self, at: &dyn Fn(&str) -> String) -> Result<(), SettingsError> {
        self.tool_context.check(at)?;
        if let Some(version) = &self.protocol_version {
            if !PROTOCOL_VERSIONS.contains(&version.as_str()) {
                return Err(invalid(
                    at("protocolVersion"),
                    format!(
                        "'{version}' is not a protocol version Toolgate speaks; use one of {}, or leave it out to let Toolgate choose",
                        PROTOCOL_VERSIONS.join(", ")
                    ),
                ));
            }
        }
        if self.id.trim().is_empty() {
            return Err(invalid(at("id"), "must not be empty"));
        }
        if !self
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid(
                at("id"),
                format!("'{}' may use only letters, digits, '-' and '_'", self.id),
            ));
        }
        match &self.transport {
            Transport::Stdio { command, .. } if command.trim().is_empty() => {
                return Err(invalid(
                    at("command"),
                    "must name the program that starts the server, for example npx",
                ));
            }
            Transport::Http { url, .. }
                if !(url.starts_with("http://") || url.starts_with("https://")) =>
            {
                return Err(invalid(
                    at("url"),
                    format!("'{url}' must start with http:// or https://"),
                ));
            }
            _ => {}
        }
        let (values, kind): (Vec<(&String, &String)>, &str) = match &self.transport {
            Transport::Stdio { env, .. } => (env.iter().collect(), "env"),
            Transport::Http { headers, .. } => (headers.iter().collect(), "headers"),
        };
        for (name, value) in values {
            // The value may be a pasted secret: errors name the field, never repeat the value.
            reference::references(value)
                .map_err(|reason| invalid(at(&format!("{kind}.{name}")), reason))?;
        }
        for (field, secs) in [
            ("startupTimeoutSecs", self.startup_timeout_secs),
            ("callTimeoutSecs", self.call_timeout_secs),
            ("maxCallTimeoutSecs", self.max_call_timeout_secs),
        ] {
            if !(1..=86_400).contains(&secs) {
                return Err(invalid(
                    at(field),
                    format!("{secs} is out of range; give a number of seconds from 1 to 86400"),
                ));
            }
        }
        if self.max_call_timeout_secs < self.call_timeout_secs {
            return Err(invalid(
                at("maxCallTimeoutSecs"),
                "must be at least callTimeoutSecs",
            ));
        }
        if let Some(oauth) = &self.oauth {
            oauth.validate(at)?;
        }
        if let Some((i, root)) = self
            .roots
            .iter()
            .enumerate()
            .find(|(_, r)| !r.is_absolute())
        {
            return Err(invalid(
                at(&format!("roots[{i}]")),
                format!("'{}' must be an absolute folder path", root.display()),
            ));
        }
        if let Some(sandbox) = &self.sandbox {
            for (field, paths) in [("read", &sandbox.read), ("write", &sandbox.write)] {
                if let Some((i, path)) = paths.iter().enumerate().find(|(_, p)| !p.is_absolute()) {
                    return Err(invalid(
                        at(&format!("sandbox.{field}[{i}]")),
                        format!("'{}' must be an absolute folder path", path.display()),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl OAuthSettings {
    fn validate(&self, at: &dyn Fn(&str) -> String) -> Result<(), SettingsError> {
        if let Some(secret) = &self.client_secret {
            let refs = reference::references(secret)
                .map_err(|reason| invalid(at("oauth.clientSecret"), reason))?;
            let only_a_secret = refs.len() == 1
                && matches!(refs[0], Reference::Secret(name) if secret.trim() == format!("${{secret:{name}}}"));
            if !only_a_secret {
                // Never repeat the value: it may be the secret itself.
                return Err(invalid(
                    at("oauth.clientSecret"),
                    "must be a keychain reference such as ${secret:LINEAR_CLIENT_SECRET}; store the value with `toolgate secrets set LINEAR_CLIENT_SECRET` (or under Servers & tools → Secrets)",
                ));
            }
            if self.client_id.is_none() {
                return Err(invalid(
                    at("oauth.clientSecret"),
                    "goes with a clientId: add the client id the secret belongs to",
                ));
            }
        }
        if let Some(url) = &self.client_metadata_url {
            if let Some(problem) = client_id_url_problem(url) {
                return Err(invalid(
                    at("oauth.clientMetadataUrl"),
                    format!("{problem}: it is the address of a Client ID Metadata Document (see `toolgate client-metadata`)"),
                ));
            }
        }
        if let Some(id) = &self.client_id {
            if id.trim().is_empty() {
                return Err(invalid(
                    at("oauth.clientId"),
                    "must not be empty; leave it out to let Toolgate register itself",
                ));
            }
        }
        Ok(())
    }
}

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions, and every endpoint compatible with it.
    Openai,
}

impl ProviderKind {
    /// Name of the keychain item that holds this provider's API key.
    pub fn secret_name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "provider.anthropic.api_key",
            ProviderKind::Openai => "provider.openai.api_key",
        }
    }

    /// The environment variable that holds this provider's key when the keychain has none.
    pub fn env_var(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Openai => "OPENAI_API_KEY",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Openai => "https://api.openai.com/v1",
        }
    }

    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::Openai => "gpt-4.1",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
}

impl ProviderSettings {
    /// The rules the tool list must meet for this provider (tool limit, schema details).
    pub fn tool_target(&self) -> toolgate_catalog::Provider {
        match self.kind {
            ProviderKind::Anthropic => toolgate_catalog::Provider::Anthropic,
            ProviderKind::Openai if self.base_url.contains("://api.openai.com") => {
                toolgate_catalog::Provider::OpenAi
            }
            ProviderKind::Openai => toolgate_catalog::Provider::OpenAiCompatible,
        }
    }

    pub fn defaults_for(kind: ProviderKind) -> Self {
        Self {
            kind,
            base_url: kind.default_base_url().to_owned(),
            model: kind.default_model().to_owned(),
        }
    }
}

/// The secrets the servers' env and headers refer to, each with the ids of the servers using it.
pub fn secrets_used(settings: &Settings) -> BTreeMap<String, Vec<String>> {
    let mut used: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for server in &settings.servers {
        let values = match &server.transport {
            Transport::Stdio { env, .. } => env.values(),
            Transport::Http { headers, .. } => headers.values(),
        };
        let client_secret = server.oauth.as_ref().and_then(|o| o.client_secret.as_ref());
        for value in values.chain(client_secret) {
            for reference in references(value).unwrap_or_default() {
                if let Reference::Secret(name) = reference {
                    let users = used.entry(name.to_owned()).or_default();
                    if !users.contains(&server.id) {
                        users.push(server.id.clone());
                    }
                }
            }
        }
    }
    used
}

/// A setting that was rejected, naming the field and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
    #[error("the settings are not valid JSON for Toolgate: {0}")]
    Malformed(String),
    #[error(
        "the settings were written by a newer Toolgate (schema version {found}, this one knows up to {SCHEMA_VERSION}); update Toolgate"
    )]
    TooNew { found: u32 },
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> SettingsError {
    SettingsError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

impl Settings {
    /// The settings of a first run: the example server enabled, Anthropic chosen, no key yet.
    pub fn first_run(example_server: ServerConfig) -> Self {
        Self {
            version: SCHEMA_VERSION,
            servers: vec![example_server],
            provider: ProviderSettings::defaults_for(ProviderKind::Anthropic),
            tools: CatalogSettings::default(),
            policy: PolicySettings::default(),
            gateway: GatewaySettings::default(),
        }
    }

    /// Reads stored settings, migrating older schema versions, and validates them.
    pub fn from_json(value: serde_json::Value) -> Result<Self, SettingsError> {
        // No `version` at all is the oldest file (version 1 had none to begin with); one that
        // is there must be a whole number we know how to read, not something to guess about.
        let found = match value.get("version") {
            None => 0,
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => n,
                _ => {
                    return Err(invalid(
                        "version",
                        format!(
                            "must be a whole number from 1 to {SCHEMA_VERSION}, not {}",
                            shown_version(v)
                        ),
                    ))
                }
            },
        };
        if found > u64::from(SCHEMA_VERSION) {
            return Err(SettingsError::TooNew {
                found: u32::try_from(found).unwrap_or(u32::MAX),
            });
        }
        let mut value = value;
        if found < 2 {
            migrate_v1(&mut value);
        }
        // Read the servers one by one, so an error can name the entry it is about.
        let servers = match value
            .get_mut("servers")
            .map(serde_json::Value::take)
            .unwrap_or_default()
        {
            serde_json::Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    serde_json::from_value::<ServerConfig>(item)
                        .map_err(|e| invalid(format!("servers[{i}]"), without_values(&e)))
                })
                .collect::<Result<Vec<_>, _>>()?,
            serde_json::Value::Null => Vec::new(),
            _ => return Err(invalid("servers", "must be a list")),
        };
        let provider = serde_json::from_value::<ProviderSettings>(
            value.get("provider").cloned().unwrap_or_default(),
        )
        .map_err(|e| invalid("provider", without_values(&e)))?;
        let tools = section::<CatalogSettings>(&mut value, "tools")?;
        let policy = section::<PolicySettings>(&mut value, "policy")?;
        let gateway = section::<GatewaySettings>(&mut value, "gateway")?;
        let mut servers = servers;
        if found < 3 {
            migrate_v2(&mut servers);
        }
        let settings = Settings {
            version: SCHEMA_VERSION,
            servers,
            provider,
            tools,
            policy,
            gateway,
        };
        settings.validate()?;
        Ok(settings)
    }

    /// Checks every field a user can set; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let mut seen = std::collections::BTreeSet::new();
        for (i, server) in self.servers.iter().enumerate() {
            let at = |f: &str| format!("servers[{i}].{f}");
            server.validate(&at)?;
            if !seen.insert(server.id.as_str()) {
                return Err(invalid(
                    at("id"),
                    format!("'{}' is used by another server", server.id),
                ));
            }
        }
        self.tools
            .validate()
            .map_err(|e| invalid("tools", e.to_string()))?;
        self.policy
            .validate()
            .map_err(|e| invalid("policy", e.to_string()))?;
        self.provider.validate()
    }
}

/// An optional section of the settings, its defaults when absent; an error names the section.
fn section<T: serde::de::DeserializeOwned + Default>(
    value: &mut serde_json::Value,
    name: &str,
) -> Result<T, SettingsError> {
    match value.get_mut(name).map(serde_json::Value::take) {
        Some(section) => {
            serde_json::from_value(section).map_err(|e| invalid(name, without_values(&e)))
        }
        None => Ok(T::default()),
    }
}

/// serde's message with the quoted values taken out: a misplaced `env` or `headers` value may be
/// a secret, and these messages are shown and logged. Names in backticks (fields, variants) stay.
fn without_values(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let mut out = String::with_capacity(message.len());
    let mut in_quotes = false;
    for c in message.chars() {
        match (c, in_quotes) {
            ('"', false) => {
                in_quotes = true;
                out.push_str("\"…");
            }
            ('"', true) => {
                in_quotes = false;
                out.push('"');
            }
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out
}

/// Version 1 had only stdio servers, with `command` and `args` at the top of each entry.
fn migrate_v1(value: &mut serde_json::Value) {
    if let Some(servers) = value.get_mut("servers").and_then(|s| s.as_array_mut()) {
        for server in servers.iter_mut().filter_map(|s| s.as_object_mut()) {
            server
                .entry("transport")
                .or_insert_with(|| serde_json::Value::from("stdio"));
        }
    }
}

/// Version 3 confines local servers. Servers from before get a sandbox written out, so the file
/// says what applies: the defaults for what each server is, except that a server Toolgate does
/// not know keeps its network ([`SandboxSettings::migrated`]).
fn migrate_v2(servers: &mut [ServerConfig]) {
    for server in servers {
        if server.sandbox.is_none() && matches!(server.transport, Transport::Stdio { .. }) {
            server.sandbox = Some(SandboxSettings::migrated(server));
        }
    }
}

impl ProviderSettings {
    pub fn validate(&self) -> Result<(), SettingsError> {
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(
                "provider.baseUrl",
                format!("'{url}' must start with http:// or https://"),
            ));
        }
        if self.model.trim().is_empty() {
            return Err(invalid("provider.model", "must name a model"));
        }
        Ok(())
    }
}

/// The version of `@modelcontextprotocol/server-everything` the set-up installs.
pub const EXAMPLE_SERVER_VERSION: &str = "2026.8.31";

/// The first-run example server. When the set-up installed it under `local_install`
/// (a folder holding `node_modules`), it runs from there with `node`, needing no network;
/// otherwise it is fetched and run by `npx`, as MCP server READMEs show.
pub fn example_server(local_install: Option<&Path>) -> ServerConfig {
    let entry = local_install
        .map(|dir| dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"));
    let (command, args) = match entry.filter(|p| p.is_file()) {
        Some(path) => (
            "node".to_owned(),
            vec![path.to_string_lossy().into_owned(), "stdio".to_owned()],
        ),
        None => (
            "npx".to_owned(),
            vec![
                "-y".to_owned(),
                format!("@modelcontextprotocol/server-everything@{EXAMPLE_SERVER_VERSION}"),
                "stdio".to_owned(),
            ],
        ),
    };
    let mut config = ServerConfig::stdio("everything", command, args);
    config.name = "Everything (example)".to_owned();
    config
}

/// A `version` value for an error message: numbers and short strings as written, anything
/// else by its kind (the settings may hold secrets by mistake; a version never should).
fn shown_version(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) if s.chars().count() <= 16 => format!("the text {s:?}"),
        serde_json::Value::String(_) => "a text".to_owned(),
        serde_json::Value::Bool(b) => b.to_string(),
        serde_json::Value::Null => "null".to_owned(),
        serde_json::Value::Array(_) => "a list".to_owned(),
        serde_json::Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(id: &str, command: &str) -> ServerConfig {
        ServerConfig::stdio(id, command, Vec::<String>::new())
    }

    fn command_of(s: &ServerConfig) -> &str {
        match &s.transport {
            Transport::Stdio { command, .. } => command,
            Transport::Http { url, .. } => url,
        }
    }

    #[test]
    fn gateway_profiles_are_found_by_the_clients_own_name() {
        let json = serde_json::json!({
            "version": SCHEMA_VERSION,
            "servers": [],
            "provider": serde_json::to_value(ProviderSettings::defaults_for(ProviderKind::Anthropic)).expect("provider"),
            "gateway": {"profiles": {"claude-code": {"servers": ["files"]}}}
        });
        let s = Settings::from_json(json).expect("reads");
        let (name, profile) = s.gateway.profile("Claude Code").expect("found");
        assert_eq!(name, "claude-code");
        assert_eq!(profile.servers, Some(["files".to_owned()].into()));
        assert!(s.gateway.profile("cursor").is_none());
        let typo = serde_json::json!({"profiles": {"x": {"server": ["files"]}}});
        assert!(
            serde_json::from_value::<GatewaySettings>(typo).is_err(),
            "unknown fields are refused"
        );
    }

    #[test]
    fn a_pinned_protocol_version_must_be_one_toolgate_speaks() {
        let mut s = Settings::first_run(server("a", "node"));
        s.servers[0].protocol_version = Some("2025-11-25".into());
        s.validate().expect("a known version");
        s.servers[0].protocol_version = Some("2025-13-01".into());
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.starts_with("servers[0].protocolVersion: '2025-13-01'") && e.contains("2026-07-28"),
            "{e}"
        );
    }

    #[test]
    fn first_run_is_valid_and_round_trips() {
        let s = Settings::first_run(example_server(None));
        s.validate().expect("first-run settings are valid");
        let json = serde_json::to_value(&s).expect("serializes");
        assert_eq!(Settings::from_json(json).expect("reads back"), s);
        assert_eq!(command_of(&s.servers[0]), "npx");
        assert!(s.servers[0].enabled);
    }

    #[test]
    fn rejects_bad_entries_naming_the_field() {
        let mut s = Settings::first_run(server("a", "node"));
        s.servers.push(server("a", "node"));
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "servers[1].id: 'a' is used by another server"
        );
        s.servers[1] = server("b", " ");
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("servers[1].command:"));
        s.servers[1] = server("b c", "node");
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("servers[1].id:"));
        s.servers.pop();
        s.provider.base_url = "localhost:8080".into();
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("provider.baseUrl:"));
    }

    #[test]
    fn rejects_bad_transports_and_timeouts_naming_the_field() {
        let read = |server: serde_json::Value| {
            Settings::from_json(serde_json::json!({
                "version": 2,
                "servers": [{"id": "ok", "name": "ok", "transport": "stdio", "command": "node"}, server],
                "provider": ProviderSettings::defaults_for(ProviderKind::Openai),
            }))
            .unwrap_err()
            .to_string()
        };
        let err = read(
            serde_json::json!({"id": "w", "name": "w", "transport": "websocket", "url": "ws://x"}),
        );
        assert!(
            err.starts_with("servers[1]: unknown variant `websocket`"),
            "{err}"
        );
        let err = read(
            serde_json::json!({"id": "h", "name": "h", "transport": "http", "url": "ftp://x"}),
        );
        assert!(err.starts_with("servers[1].url:"), "{err}");
        let err = read(
            serde_json::json!({"id": "s", "name": "s", "transport": "stdio", "command": "x", "callTimeoutSecs": 0}),
        );
        assert!(err.starts_with("servers[1].callTimeoutSecs:"), "{err}");
        let err = read(
            serde_json::json!({"id": "s", "name": "s", "transport": "stdio", "command": "x", "roots": ["rel/dir"]}),
        );
        assert!(err.starts_with("servers[1].roots[0]:"), "{err}");
        let err = read(
            serde_json::json!({"id": "ok", "name": "again", "transport": "http", "url": "http://x"}),
        );
        assert_eq!(err, "servers[1].id: 'ok' is used by another server");
    }

    #[test]
    fn errors_never_repeat_a_value_that_may_be_a_secret() {
        let err = Settings::from_json(serde_json::json!({
            "version": 2,
            "servers": [{"id": "h", "name": "h", "transport": "http", "url": "https://x",
                         "headers": "Bearer sk-secret-123"}],
            "provider": ProviderSettings::defaults_for(ProviderKind::Anthropic),
        }))
        .unwrap_err()
        .to_string();
        assert!(!err.contains("sk-secret"), "{err}");
        assert!(
            err.starts_with("servers[0]: invalid type: string \"…\""),
            "{err}"
        );
    }

    #[test]
    fn migrates_version_1_stdio_entries() {
        let s = Settings::from_json(serde_json::json!({
            "version": 1,
            "servers": [{"id": "fs", "name": "Files", "command": "npx", "args": ["-y", "x"], "enabled": false}],
            "provider": ProviderSettings::defaults_for(ProviderKind::Anthropic),
        }))
        .expect("a version 1 file still reads");
        assert_eq!(s.version, SCHEMA_VERSION);
        assert_eq!(command_of(&s.servers[0]), "npx");
        assert!(!s.servers[0].enabled);
        assert!(s.servers[0].auto_restart);
        assert_eq!(s.servers[0].call_timeout_secs, 60);
    }

    #[test]
    fn a_version_that_is_not_a_known_whole_number_is_refused_with_the_field_named() {
        for (version, shown) in [
            (
                serde_json::json!(18_446_744_073_709_551_616_f64),
                "1.8446744073709552e+19",
            ),
            (serde_json::json!(-1), "-1"),
            (serde_json::json!(1.5), "1.5"),
            (serde_json::json!("2"), "the text \"2\""),
            (serde_json::json!(0), "0"),
            (serde_json::json!(null), "null"),
        ] {
            let err = Settings::from_json(serde_json::json!({"version": version})).unwrap_err();
            let SettingsError::Invalid { field, reason } = &err else {
                panic!("{version}: expected an invalid version, got {err:?}");
            };
            assert_eq!(field, "version");
            assert!(reason.contains("whole number from 1 to"), "{reason}");
            assert!(reason.ends_with(shown), "{version}: {reason}");
        }
        // 2^64 as JSON text is beyond u64 too, read as a float: refused, not taken as old.
        let huge: serde_json::Value =
            serde_json::from_str(r#"{"version": 18446744073709551616}"#).unwrap();
        assert!(matches!(
            Settings::from_json(huge),
            Err(SettingsError::Invalid { .. })
        ));
        // A file that never had a version is the oldest format, read as before.
        let unversioned = Settings::from_json(serde_json::json!({
            "servers": [{"id": "fs", "name": "Files", "command": "npx", "args": ["-y", "x"]}],
            "provider": {"kind": "openai", "baseUrl": "https://api.openai.com/v1", "model": "m"}
        }));
        assert!(unversioned.is_ok(), "{unversioned:?}");
    }

    #[test]
    fn refuses_settings_from_a_newer_version() {
        let err = Settings::from_json(serde_json::json!({"version": 99})).unwrap_err();
        assert_eq!(err, SettingsError::TooNew { found: 99 });
    }

    #[test]
    fn example_server_prefers_the_local_install() {
        let dir = std::env::temp_dir().join(format!("tg-settings-{}", std::process::id()));
        let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist");
        std::fs::create_dir_all(&entry).expect("mkdir");
        std::fs::write(entry.join("index.js"), "").expect("write");
        let s = example_server(Some(&dir));
        let Transport::Stdio { command, args, .. } = &s.transport else {
            panic!("stdio expected")
        };
        assert_eq!(command, "node");
        assert!(args[0].ends_with("dist/index.js"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn env_that_hijacks_the_program_is_refused_unless_allowed_and_references_are_checked() {
        let mut server = ServerConfig::stdio("s", "node", ["server.js"]);
        if let Transport::Stdio { env, .. } = &mut server.transport {
            env.insert("GITHUB_TOKEN".into(), "${secret:GITHUB_TOKEN}".into());
            env.insert("LD_PRELOAD".into(), "/tmp/evil.so".into());
        }
        let refused = server.unsafe_env().expect("refused").to_string();
        assert!(
            refused.starts_with("servers.s.env.LD_PRELOAD:"),
            "{refused}"
        );
        assert!(
            refused.contains("allowEnv") && !refused.contains("evil"),
            "{refused}"
        );
        server.allow_env.push("ld_preload".into());
        assert!(server.unsafe_env().is_none());

        let mut settings = Settings::first_run(server.clone());
        settings.validate().expect("references are well formed");
        assert_eq!(
            secrets_used(&settings).into_iter().collect::<Vec<_>>(),
            vec![("GITHUB_TOKEN".to_owned(), vec!["s".to_owned()])]
        );
        if let Transport::Stdio { env, .. } = &mut settings.servers[0].transport {
            env.insert("BROKEN".into(), "${secret:}".into());
        }
        let err = settings.validate().unwrap_err().to_string();
        assert!(
            err.contains("env.BROKEN") && err.contains("does not name"),
            "{err}"
        );
    }
}
