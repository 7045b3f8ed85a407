//! Toolgate's settings: which MCP servers to run and which model provider to use.
//!
//! Settings are plain serde data with a schema version, validated on every change. They never hold
//! a secret: API keys live in the OS keychain (see `toolgate-secrets`), and a setting only names the
//! keychain item through [`ProviderKind::secret_name`]. Server env values and HTTP headers refer to
//! secrets as `${secret:NAME}` (and to Toolgate's environment as `${env:NAME}`), filled in only
//! when the server starts (see [`reference`](mod@reference)).
//!
//! The settings file is this crate's too ([`file`](mod@file)): `{"settings": {…}}` in one JSON
//! file that the app and the CLI share, written atomically (a crash or kill never leaves a
//! partial file), and set aside as a backup, never overwritten, when it cannot be read.
//!
//! [`import`] reads other hosts' MCP configs (Claude Desktop, Cursor, Claude Code, VS Code) into
//! servers and approval rules; [`export`] writes servers back in the `mcpServers` form;
//! [`host_paths`] says where each host keeps its config.
//!
//! This file holds [`Settings`] as a whole (reading, migrating, validating); its parts live in
//! their own modules (servers, their transport, the provider, the gateway, the migrations),
//! re-exported here so callers name them from the crate root.

pub mod edit;
pub mod file;
pub mod reference;
pub mod sandbox;
mod server_kind;
pub mod vars;

mod client_id_url;
mod error;
mod gateway;
mod identity;
mod migrate;
mod provider;
mod server;
mod telemetry;
mod tool_context;
mod transport;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use client_id_url::client_id_url_problem;
pub use error::{without_values, SettingsError};
pub use gateway::{
    door_address_problem, GatewayProfile, GatewaySettings, HttpDoorSettings, DEFAULT_DOOR_ADDRESS,
};
pub use identity::IdentityProvider;
pub use provider::{ProviderKind, ProviderSettings};
pub use reference::{
    expand, hijacks_process, references, secret_item, secret_name_for, ExpandError,
    MalformedReference, Reference,
};
pub use sandbox::{NetworkAccess, SandboxSettings, TrustMarks};
pub use server::{
    example_server, OAuthGrant, OAuthSettings, RegistryOrigin, ServerConfig,
    EXAMPLE_SERVER_VERSION, PROTOCOL_VERSIONS, SIGNING_ALGORITHMS,
};
pub use server_kind::ServerKind;
pub use telemetry::{endpoint_problem, OtlpProtocol, OtlpSettings, TelemetrySettings};
pub use tool_context::{ToolContext, CONVERSATION_META_KEY};
pub use toolgate_catalog::{CatalogSettings, NamingMode, ServerToolSettings};
pub use toolgate_policy::PolicySettings;
pub use transport::Transport;

use error::invalid;

/// The current schema version. Bump it together with a migration in `migrate.rs`.
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
    /// The MCP registry servers are added from (absent: the official one).
    #[serde(default, skip_serializing_if = "RegistrySettings::is_default")]
    pub registry: RegistrySettings,
    /// Where the audit log is streamed (OpenTelemetry); see `telemetry.rs`.
    #[serde(default, skip_serializing_if = "TelemetrySettings::is_empty")]
    pub telemetry: TelemetrySettings,
    /// The organisation's identity provider, for servers signed in to by enterprise-managed
    /// authorization (see `identity.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_provider: Option<IdentityProvider>,
}

/// Where the Add server dialog and `toolgate servers search` look for servers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegistrySettings {
    /// The registry API's address; absent: the official registry. The organisation's managed
    /// policy, when it names one, wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl RegistrySettings {
    pub fn is_default(&self) -> bool {
        self == &Self::default()
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
            registry: RegistrySettings::default(),
            telemetry: TelemetrySettings::default(),
            identity_provider: None,
        }
    }

    /// Reads stored settings, migrating older schema versions, and validates them.
    pub fn from_json(value: serde_json::Value) -> Result<Self, SettingsError> {
        let found = migrate::stored_version(&value)?;
        let mut value = value;
        migrate::before_reading(&mut value, found);
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
        let registry = section::<RegistrySettings>(&mut value, "registry")?;
        let telemetry = section::<TelemetrySettings>(&mut value, "telemetry")?;
        let identity_provider =
            section::<Option<IdentityProvider>>(&mut value, "identityProvider")?;
        let mut servers = servers;
        migrate::after_reading(&mut servers, found);
        let settings = Settings {
            version: SCHEMA_VERSION,
            servers,
            provider,
            tools,
            policy,
            gateway,
            registry,
            telemetry,
            identity_provider,
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
        self.gateway.validate()?;
        if let Some(otlp) = &self.telemetry.otlp {
            otlp.validate("telemetry.otlp")?;
        }
        if let Some(idp) = &self.identity_provider {
            idp.validate()?;
        }
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

/// The secrets the servers' env and headers refer to, each with the ids of the servers using it.
pub fn secrets_used(settings: &Settings) -> BTreeMap<String, Vec<String>> {
    let mut used: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for server in &settings.servers {
        let values = match &server.transport {
            Transport::Stdio { env, .. } => env.values(),
            Transport::Http { headers, .. } => headers.values(),
        };
        let oauth = server.oauth.iter().flat_map(|o| {
            [&o.client_secret, &o.private_key, &o.assertion]
                .into_iter()
                .flatten()
        });
        for value in values.chain(oauth) {
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
}
