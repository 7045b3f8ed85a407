//! The gateway's settings: what each host connected to Toolgate's gateway sees, by profile.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The gateway: Toolgate as the one MCP server other hosts (Claude Code, Cursor…) connect to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewaySettings {
    /// What each client sees, by profile name: `toolgate connect --profile NAME`, else the
    /// client's own name (`clientInfo.name`, e.g. `claude-code`). A client with no profile sees
    /// every enabled server's tools.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub profiles: BTreeMap<String, GatewayProfile>,
    /// Seconds a client's first list (tools, resources, prompts) waits for the servers its
    /// profile shows that are still starting, so a host that lists once does not keep a short
    /// list; absent: [`DEFAULT_FIRST_LIST_WAIT_SECS`]; 0: answer at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_list_wait_secs: Option<u64>,
    /// The Streamable HTTP door on loopback, for hosts and containers that speak only HTTP;
    /// absent: off. See [`HttpDoorSettings`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpDoorSettings>,
}

/// The gateway's HTTP door: MCP over Streamable HTTP at `http://ADDRESS/mcp`, for clients that
/// hold a token Toolgate issued (`toolgate door token add NAME`). Only a loopback address is
/// accepted: the door is for this computer (and containers given its loopback), never the
/// network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpDoorSettings {
    /// Open it when the app starts (`toolgate serve --http` opens it whatever this says).
    pub enabled: bool,
    /// Where it listens: a loopback address and port, `127.0.0.1:8787` by default.
    #[serde(default = "default_door_address")]
    pub address: std::net::SocketAddr,
}

/// Where the HTTP door listens unless the settings say otherwise.
pub const DEFAULT_DOOR_ADDRESS: std::net::SocketAddr = std::net::SocketAddr::V4(
    std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, 8787),
);

fn default_door_address() -> std::net::SocketAddr {
    DEFAULT_DOOR_ADDRESS
}

impl Default for HttpDoorSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            address: DEFAULT_DOOR_ADDRESS,
        }
    }
}

/// Why an address cannot be the door's: it is not on this computer's loopback. `None`: it can.
pub fn door_address_problem(address: &std::net::SocketAddr) -> Option<String> {
    (!address.ip().is_loopback()).then(|| {
        format!(
            "{address} is not a loopback address: the HTTP door only listens on this computer \
             (use 127.0.0.1:PORT or [::1]:PORT)"
        )
    })
}

/// How long a client's first list waits for starting servers unless the settings say otherwise:
/// long enough for an `npx` server's first start, short enough that a host does not give up.
pub const DEFAULT_FIRST_LIST_WAIT_SECS: u64 = 15;

impl GatewaySettings {
    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty() && self.first_list_wait_secs.is_none() && self.http.is_none()
    }

    /// The door's settings: as saved, else off at the default address.
    pub fn door(&self) -> HttpDoorSettings {
        self.http.clone().unwrap_or_default()
    }

    /// Checks what a user can set here; the error names the field.
    pub fn validate(&self) -> Result<(), crate::SettingsError> {
        if let Some(problem) = self
            .http
            .as_ref()
            .and_then(|d| door_address_problem(&d.address))
        {
            return Err(crate::error::invalid("gateway.http.address", problem));
        }
        Ok(())
    }

    /// How long a client's first list waits for servers still starting.
    pub fn first_list_wait(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.first_list_wait_secs
                .unwrap_or(DEFAULT_FIRST_LIST_WAIT_SECS),
        )
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
    pub servers: Option<BTreeSet<String>>,
    /// Tools hidden from this client: server id → glob patterns on the tool's own name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exclude: BTreeMap<String, Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProviderKind, ProviderSettings, Settings, SCHEMA_VERSION};

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
        assert!(s.gateway.http.is_none(), "the door is off unless asked for");
        assert!(!s.gateway.door().enabled);
        let typo = serde_json::json!({"profiles": {"x": {"server": ["files"]}}});
        assert!(
            serde_json::from_value::<GatewaySettings>(typo).is_err(),
            "unknown fields are refused"
        );
    }

    #[test]
    fn the_door_listens_only_on_loopback() {
        let door: GatewaySettings = serde_json::from_value(
            serde_json::json!({"http": {"enabled": true, "address": "[::1]:9000"}}),
        )
        .expect("reads");
        door.validate().expect("loopback is fine");
        assert_eq!(door.door().address.port(), 9000);
        let open: GatewaySettings = serde_json::from_value(
            serde_json::json!({"http": {"enabled": true, "address": "0.0.0.0:9000"}}),
        )
        .expect("reads");
        let refused = open.validate().unwrap_err().to_string();
        assert!(
            refused.starts_with("gateway.http.address: 0.0.0.0:9000 is not a loopback address"),
            "{refused}"
        );
        let default: GatewaySettings =
            serde_json::from_value(serde_json::json!({"http": {"enabled": false}})).expect("reads");
        assert_eq!(default.door().address, DEFAULT_DOOR_ADDRESS);
    }
}
