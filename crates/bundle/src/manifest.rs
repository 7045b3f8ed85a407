//! `manifest.json` as the MCPB manifest specification describes it (versions 0.1 to 0.4 of
//! `@anthropic-ai/mcpb`'s schemas; `dxt_version` is the older name of `manifest_version`).
//!
//! Read leniently: fields Toolgate does not use (icons, tools, prompts, localization…) are
//! ignored rather than refused, so a bundle made for a newer manifest version still opens.
//! What Toolgate runs (`server`) and asks (`user_config`) is read strictly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The manifest of a bundle.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    #[serde(default)]
    pub manifest_version: Option<String>,
    /// The manifest version's name before MCPB was called MCPB.
    #[serde(default)]
    pub dxt_version: Option<String>,
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub author: Author,
    pub server: Server,
    #[serde(default)]
    pub user_config: BTreeMap<String, UserConfigOption>,
    #[serde(default)]
    pub compatibility: Option<Compatibility>,
}

impl Manifest {
    /// `manifest_version`, else `dxt_version`.
    pub fn version_of_format(&self) -> Option<&str> {
        self.manifest_version
            .as_deref()
            .or(self.dxt_version.as_deref())
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Author {
    pub name: String,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
}

/// What the bundle runs.
#[derive(Debug, Clone, Deserialize)]
pub struct Server {
    #[serde(rename = "type")]
    pub kind: ServerType,
    /// The file the server starts from, relative to the bundle's root.
    pub entry_point: String,
    pub mcp_config: McpConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ServerType {
    Node,
    Python,
    Binary,
    Uv,
}

/// The command line, with `${__dirname}`, `${user_config.KEY}` and the like still in it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// By Node's `process.platform`: `darwin`, `win32`, `linux`.
    #[serde(default)]
    pub platform_overrides: BTreeMap<String, PlatformOverride>,
}

/// Each field given replaces the base one whole.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformOverride {
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Option<Vec<String>>,
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
}

/// One value the user gives at install.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct UserConfigOption {
    #[serde(rename = "type")]
    pub kind: UserConfigType,
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
    /// Stored in the keychain, never in the settings.
    #[serde(default)]
    pub sensitive: bool,
    /// A string, number, boolean or list of strings, as the manifest has it.
    #[serde(default)]
    #[ts(optional, type = "string | number | boolean | string[]")]
    pub default: Option<serde_json::Value>,
    /// Several values (several folders, say), each its own argument.
    #[serde(default)]
    pub multiple: bool,
    #[serde(default)]
    #[ts(optional)]
    pub min: Option<f64>,
    #[serde(default)]
    #[ts(optional)]
    pub max: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum UserConfigType {
    String,
    Number,
    Boolean,
    Directory,
    File,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Compatibility {
    /// `darwin`, `win32`, `linux`; absent: any.
    #[serde(default)]
    pub platforms: Option<Vec<String>>,
}

/// This OS as Node's `process.platform` names it, the name `platform_overrides` and
/// `compatibility.platforms` use.
pub fn this_platform() -> &'static str {
    if cfg!(target_os = "macos") {
        "darwin"
    } else if cfg!(windows) {
        "win32"
    } else {
        "linux"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_of_the_spec_reads_with_its_overrides_and_user_config() {
        let manifest: Manifest = serde_json::from_str(
            r#"{
              "dxt_version": "0.1", "name": "files", "version": "1.2.0",
              "description": "d", "author": {"name": "Ann", "email": "a@example.com"},
              "icon": "icon.png", "tools": [{"name": "read"}],
              "server": {"type": "node", "entry_point": "server/index.js",
                "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js", "${user_config.dirs}"],
                  "env": {"TOKEN": "${user_config.token}"},
                  "platform_overrides": {"win32": {"command": "node.exe"}}}},
              "user_config": {
                "dirs": {"type": "directory", "title": "Folders", "description": "", "multiple": true, "required": true},
                "token": {"type": "string", "title": "Token", "description": "", "sensitive": true},
                "depth": {"type": "number", "title": "Depth", "description": "", "default": 3, "min": 1, "max": 9}
              },
              "compatibility": {"platforms": ["linux", "darwin"], "runtimes": {"node": ">=18"}}
            }"#,
        )
        .unwrap();
        assert_eq!(manifest.version_of_format(), Some("0.1"));
        assert_eq!(manifest.server.kind, ServerType::Node);
        assert_eq!(
            manifest.server.mcp_config.platform_overrides["win32"]
                .command
                .as_deref(),
            Some("node.exe")
        );
        assert!(manifest.user_config["token"].sensitive);
        assert!(manifest.user_config["dirs"].multiple);
        assert_eq!(
            manifest.user_config["depth"].default,
            Some(serde_json::json!(3))
        );
        assert_eq!(this_platform(), "linux");
    }

    #[test]
    fn an_unknown_server_type_or_config_field_is_refused() {
        let with = |server: &str| {
            serde_json::from_str::<Manifest>(&format!(
                r#"{{"manifest_version": "0.3", "name": "x", "version": "1", "author": {{"name": "a"}}, "server": {server}}}"#
            ))
        };
        assert!(with(
            r#"{"type": "node", "entry_point": "i.js", "mcp_config": {"command": "node"}}"#
        )
        .is_ok());
        assert!(with(
            r#"{"type": "java", "entry_point": "i.jar", "mcp_config": {"command": "java"}}"#
        )
        .is_err());
        assert!(with(r#"{"type": "node", "entry_point": "i.js", "mcp_config": {"command": "node", "cwd": "/"}}"#).is_err());
    }
}
