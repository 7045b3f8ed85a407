//! One MCP server's settings: [`ServerConfig`] (how to reach it, how to supervise it, what it
//! may reach), its sign-in choices ([`OAuthSettings`]), the checks on them, and the first-run
//! example server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::client_id_url::client_id_url_problem;
use crate::error::{invalid, SettingsError};
use crate::reference::{self, Reference};
use crate::sandbox::{SandboxSettings, TrustMarks};
use crate::tool_context::ToolContext;
use crate::transport::Transport;

/// One MCP server: how to reach it, and how to supervise it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
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
    /// Where the server was added from, when from an MCP registry: the version it is pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub registry: Option<RegistryOrigin>,
}

/// The MCP registry entry a server was added from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegistryOrigin {
    /// The registry's address (its API base).
    pub url: String,
    /// The server's name there (`io.github.owner/server`).
    pub name: String,
    /// The version it was added at, and is pinned to.
    pub version: String,
}

/// A remote server's sign-in choices. Tokens and registrations are never here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
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
    /// How tokens are got: a person signing in in the browser (the default), or, for a server
    /// that knows Toolgate as a machine client (`toolgate serve` on a server), the client
    /// credentials grant with `clientId` and `clientSecret` or `privateKey`, no browser at all.
    #[serde(default, skip_serializing_if = "OAuthGrant::is_default")]
    pub grant: OAuthGrant,
    /// A machine client's private key (PEM) for `private_key_jwt`, as a `${secret:NAME}`
    /// reference (never the key itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key: Option<String>,
    /// The private key's signing algorithm: `RS256` (the default), `RS384`, `RS512`, `ES256`
    /// or `ES384`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<String>,
    /// DPoP (RFC 9449): tokens bound to a key of Toolgate's, kept in the keychain. Absent: when
    /// the authorization server takes it and the server asks for it (its challenge names the
    /// DPoP scheme); `true`: whenever the authorization server takes it; `false`: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop: Option<bool>,
    /// Workload identity (`jwtBearer`): the workload's JWT as a `${secret:NAME}` reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertion: Option<String>,
    /// Workload identity (`jwtBearer`): the file the platform keeps the workload's JWT in (a
    /// Kubernetes projected service-account token, a cloud's identity token), read at each
    /// connection because the platform renews it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertion_file: Option<std::path::PathBuf>,
}

/// How a remote server's tokens are got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum OAuthGrant {
    /// A person signs in in the browser (authorization code with PKCE).
    #[default]
    AuthorizationCode,
    /// Toolgate is a machine client: it exchanges its own credentials for tokens (RFC 6749
    /// §4.4), with a client secret or a signed assertion (`private_key_jwt`, RFC 7523).
    ClientCredentials,
    /// Workload identity: the JWT the platform Toolgate runs on issued to it (`assertion` or
    /// `assertionFile`) exchanged for tokens by the JWT bearer grant (RFC 7523 §2.1), for
    /// `toolgate serve` where nobody signs in and no secret of Toolgate's is kept.
    JwtBearer,
    /// Enterprise-managed authorization: the organisation's identity provider (the settings'
    /// `identityProvider`, or the managed policy's) exchanges the user's ID token for an
    /// identity assertion (ID-JAG, RFC 8693 token exchange), which this server's authorization
    /// server takes in the JWT bearer grant; no consent screen per server. `clientId` (and
    /// `clientSecret`) are Toolgate's registration there.
    EnterpriseManaged,
}

impl OAuthGrant {
    pub fn is_default(&self) -> bool {
        *self == OAuthGrant::AuthorizationCode
    }
}

/// The signing algorithms a machine client's private key may use.
pub const SIGNING_ALGORITHMS: [&str; 5] = ["RS256", "RS384", "RS512", "ES256", "ES384"];

/// The MCP protocol versions a server can be pinned to, oldest first; the last is the
/// `server/discover` era, the others use `initialize`.
pub const PROTOCOL_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

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
            registry: None,
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
    pub(crate) fn validate(&self, at: &dyn Fn(&str) -> String) -> Result<(), SettingsError> {
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
        self.validate_transport(at)?;
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
            for (i, host) in sandbox.hosts.iter().enumerate() {
                if let Err(e) = toolgate_egress::HostPattern::parse(host) {
                    return Err(invalid(at(&format!("sandbox.hosts[{i}]")), e.0));
                }
            }
        }
        Ok(())
    }

    /// The transport's own fields: a program to start or an http(s) address, and well-formed
    /// references in the env or headers.
    fn validate_transport(&self, at: &dyn Fn(&str) -> String) -> Result<(), SettingsError> {
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
                .map_err(|reason| invalid(at(&format!("{kind}.{name}")), reason.to_string()))?;
        }
        Ok(())
    }
}

/// Whether `value` is exactly one `${secret:NAME}` reference.
fn only_a_secret(value: &str) -> Result<bool, reference::MalformedReference> {
    let refs = reference::references(value)?;
    Ok(refs.len() == 1
        && matches!(refs[0], Reference::Secret(name) if value.trim() == format!("${{secret:{name}}}")))
}

impl OAuthSettings {
    fn validate(&self, at: &dyn Fn(&str) -> String) -> Result<(), SettingsError> {
        for (field, value, example) in [
            (
                "oauth.clientSecret",
                &self.client_secret,
                "LINEAR_CLIENT_SECRET",
            ),
            ("oauth.privateKey", &self.private_key, "SERVER_CLIENT_KEY"),
        ] {
            let Some(value) = value else { continue };
            let ok =
                only_a_secret(value).map_err(|reason| invalid(at(field), reason.to_string()))?;
            if !ok {
                // Never repeat the value: it may be the secret itself.
                return Err(invalid(
                    at(field),
                    format!("must be a keychain reference such as ${{secret:{example}}}; store the value with `toolgate secrets set {example}` (or under Servers & tools → Secrets)"),
                ));
            }
            if self.client_id.is_none() {
                return Err(invalid(
                    at(field),
                    "goes with a clientId: add the client id it belongs to",
                ));
            }
        }
        if let Some(alg) = &self.signing_algorithm {
            if !SIGNING_ALGORITHMS.contains(&alg.as_str()) {
                return Err(invalid(
                    at("oauth.signingAlgorithm"),
                    format!(
                        "'{alg}' is not one Toolgate signs with; use one of {}",
                        SIGNING_ALGORITHMS.join(", ")
                    ),
                ));
            }
        }
        if self.grant == OAuthGrant::ClientCredentials {
            if self.client_id.is_none() {
                return Err(invalid(
                    at("oauth.grant"),
                    "clientCredentials needs the clientId the authorization server knows Toolgate by",
                ));
            }
            if self.client_secret.is_some() == self.private_key.is_some() {
                return Err(invalid(
                    at("oauth.grant"),
                    "clientCredentials needs exactly one of clientSecret and privateKey (as ${secret:NAME})",
                ));
            }
        } else if self.private_key.is_some() {
            return Err(invalid(
                at("oauth.privateKey"),
                "is for a machine client: set \"grant\": \"clientCredentials\" too",
            ));
        }
        self.validate_assertion(at)?;
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

impl OAuthSettings {
    /// The workload identity and enterprise grants' own fields.
    fn validate_assertion(&self, at: &dyn Fn(&str) -> String) -> Result<(), SettingsError> {
        let given = self.assertion.is_some() as u8 + self.assertion_file.is_some() as u8;
        match self.grant {
            OAuthGrant::JwtBearer if given != 1 => {
                return Err(invalid(
                    at("oauth.grant"),
                    "jwtBearer needs exactly one of assertion (as ${secret:NAME}) and assertionFile (the file your platform writes the workload's token to)",
                ))
            }
            OAuthGrant::JwtBearer => {}
            OAuthGrant::EnterpriseManaged if self.client_id.is_none() => {
                return Err(invalid(
                    at("oauth.grant"),
                    "enterpriseManaged needs the clientId this server's authorization server knows Toolgate by",
                ))
            }
            _ if given > 0 => {
                return Err(invalid(
                    at(if self.assertion.is_some() {
                        "oauth.assertion"
                    } else {
                        "oauth.assertionFile"
                    }),
                    "is for workload identity: set \"grant\": \"jwtBearer\" too",
                ))
            }
            _ => {}
        }
        if let Some(value) = &self.assertion {
            let ok = only_a_secret(value)
                .map_err(|reason| invalid(at("oauth.assertion"), reason.to_string()))?;
            if !ok {
                return Err(invalid(
                    at("oauth.assertion"),
                    "must be a keychain reference such as ${secret:WORKLOAD_JWT}; store the token with `toolgate secrets set WORKLOAD_JWT`",
                ));
            }
        }
        if let Some(path) = &self.assertion_file {
            if !path.is_absolute() {
                return Err(invalid(
                    at("oauth.assertionFile"),
                    format!("'{}' must be an absolute file path", path.display()),
                ));
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{secrets_used, Settings};

    #[test]
    fn a_machine_client_needs_its_id_and_exactly_one_credential_from_the_keychain() {
        let at = |field: &str| format!("servers[0].{field}");
        let machine = |secret: Option<&str>, key: Option<&str>| OAuthSettings {
            grant: OAuthGrant::ClientCredentials,
            client_id: Some("toolgate-ci".into()),
            client_secret: secret.map(str::to_owned),
            private_key: key.map(str::to_owned),
            ..OAuthSettings::default()
        };
        assert!(machine(Some("${secret:CI_SECRET}"), None)
            .validate(&at)
            .is_ok());
        assert!(machine(None, Some("${secret:CI_KEY}"))
            .validate(&at)
            .is_ok());
        let both = machine(Some("${secret:A}"), Some("${secret:B}")).validate(&at);
        assert!(both.unwrap_err().to_string().contains("exactly one"));
        assert!(machine(None, None).validate(&at).is_err());
        let pasted = machine(None, Some("-----BEGIN PRIVATE KEY-----")).validate(&at);
        let message = pasted.unwrap_err().to_string();
        assert!(
            message.contains("oauth.privateKey") && !message.contains("BEGIN"),
            "{message}"
        );
        let no_id = OAuthSettings {
            client_id: None,
            ..machine(Some("${secret:A}"), None)
        };
        assert!(no_id.validate(&at).is_err());
        let alg = OAuthSettings {
            signing_algorithm: Some("HS256".into()),
            ..machine(None, Some("${secret:K}"))
        };
        assert!(alg.validate(&at).unwrap_err().to_string().contains("RS256"));
        let stray_key = OAuthSettings {
            grant: OAuthGrant::AuthorizationCode,
            ..machine(None, Some("${secret:K}"))
        };
        assert!(stray_key
            .validate(&at)
            .unwrap_err()
            .to_string()
            .contains("clientCredentials"));
    }

    #[test]
    fn workload_identity_needs_one_token_source_and_enterprise_sign_in_a_client_id() {
        let at = |field: &str| format!("servers[0].{field}");
        let wif = |assertion: Option<&str>, file: Option<&str>| OAuthSettings {
            grant: OAuthGrant::JwtBearer,
            assertion: assertion.map(str::to_owned),
            assertion_file: file.map(std::path::PathBuf::from),
            ..OAuthSettings::default()
        };
        assert!(wif(Some("${secret:WORKLOAD_JWT}"), None)
            .validate(&at)
            .is_ok());
        let absolute = if cfg!(windows) {
            r"C:\secrets\tokens\mcp"
        } else {
            "/var/run/secrets/tokens/mcp"
        };
        assert!(wif(None, Some(absolute)).validate(&at).is_ok());
        let neither = wif(None, None).validate(&at).unwrap_err().to_string();
        assert!(neither.contains("exactly one"), "{neither}");
        let relative = wif(None, Some("token"))
            .validate(&at)
            .unwrap_err()
            .to_string();
        assert!(relative.contains("absolute"), "{relative}");
        // A token pasted into the settings is refused without being repeated.
        let pasted = wif(Some("eyJhbGciOi.pasted.jwt"), None)
            .validate(&at)
            .unwrap_err()
            .to_string();
        assert!(
            pasted.contains("oauth.assertion") && !pasted.contains("eyJ"),
            "{pasted}"
        );
        let stray = OAuthSettings {
            grant: OAuthGrant::AuthorizationCode,
            ..wif(None, Some("/t"))
        };
        assert!(stray
            .validate(&at)
            .unwrap_err()
            .to_string()
            .contains("jwtBearer"));
        let enterprise = OAuthSettings {
            grant: OAuthGrant::EnterpriseManaged,
            ..OAuthSettings::default()
        };
        assert!(enterprise
            .validate(&at)
            .unwrap_err()
            .to_string()
            .contains("clientId"));
        let enterprise = OAuthSettings {
            client_id: Some("mcp-client".into()),
            ..enterprise
        };
        assert!(enterprise.validate(&at).is_ok());
    }

    fn server(id: &str, command: &str) -> ServerConfig {
        ServerConfig::stdio(id, command, Vec::<String>::new())
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
