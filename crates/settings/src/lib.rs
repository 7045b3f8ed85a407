//! Toolgate's settings: which MCP servers to run and which model provider to use.
//!
//! Settings are plain serde data with a schema version, validated on every change. They never hold
//! a secret: API keys live in the OS keychain (see `toolgate-secrets`), and a setting only names the
//! keychain item through [`ProviderKind::secret_name`].
//!
//! Storage is the caller's business: the desktop app keeps these values in `tauri-plugin-store`,
//! so this crate stays free of any UI or file-format choice.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The current schema version. Bump it together with a migration in [`Settings::from_json`].
pub const SCHEMA_VERSION: u32 = 1;

/// Everything the user configures, except secrets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub version: u32,
    pub servers: Vec<ServerConfig>,
    pub provider: ProviderSettings,
}

/// One MCP server started as a child process speaking MCP over stdio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerConfig {
    /// Stable identifier, unique among servers; used to route tool calls.
    pub id: String,
    /// Name shown to the user.
    pub name: String,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
}

fn enabled_by_default() -> bool {
    true
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
    pub fn defaults_for(kind: ProviderKind) -> Self {
        Self {
            kind,
            base_url: kind.default_base_url().to_owned(),
            model: kind.default_model().to_owned(),
        }
    }
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
        }
    }

    /// Reads stored settings, migrating older schema versions, and validates them.
    pub fn from_json(value: serde_json::Value) -> Result<Self, SettingsError> {
        let found = value
            .get("version")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        if found > u64::from(SCHEMA_VERSION) {
            return Err(SettingsError::TooNew {
                found: u32::try_from(found).unwrap_or(u32::MAX),
            });
        }
        let settings: Settings =
            serde_json::from_value(value).map_err(|e| SettingsError::Malformed(e.to_string()))?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks every field a user can set; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let mut seen = std::collections::BTreeSet::new();
        for (i, server) in self.servers.iter().enumerate() {
            let at = |f: &str| format!("servers[{i}].{f}");
            if server.id.trim().is_empty() {
                return Err(invalid(at("id"), "must not be empty"));
            }
            if !server
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(invalid(
                    at("id"),
                    format!("'{}' may use only letters, digits, '-' and '_'", server.id),
                ));
            }
            if !seen.insert(server.id.as_str()) {
                return Err(invalid(
                    at("id"),
                    format!("'{}' is used by another server", server.id),
                ));
            }
            if server.command.trim().is_empty() {
                return Err(invalid(
                    at("command"),
                    "must name the program that starts the server, for example npx",
                ));
            }
        }
        self.provider.validate()
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
    ServerConfig {
        id: "everything".to_owned(),
        name: "Everything (example)".to_owned(),
        command,
        args,
        env: BTreeMap::new(),
        cwd: None,
        enabled: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(id: &str, command: &str) -> ServerConfig {
        ServerConfig {
            id: id.into(),
            name: id.into(),
            command: command.into(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
            enabled: true,
        }
    }

    #[test]
    fn first_run_is_valid_and_round_trips() {
        let s = Settings::first_run(example_server(None));
        s.validate().expect("first-run settings are valid");
        let json = serde_json::to_value(&s).expect("serializes");
        assert_eq!(Settings::from_json(json).expect("reads back"), s);
        assert_eq!(s.servers[0].command, "npx");
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
        assert_eq!(s.command, "node");
        assert!(s.args[0].ends_with("dist/index.js"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
