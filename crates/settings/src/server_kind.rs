//! What a server is, read from its command line ([`ServerKind`]), and the sandbox and trust a
//! server gets by default for what it is: [`SandboxSettings::defaults_for`] a server whose
//! `sandbox` is absent, [`SandboxSettings::migrated`] for settings from before the sandbox
//! existed (see `migrate.rs`).

use crate::sandbox::{NetworkAccess, SandboxSettings};
use crate::server::ServerConfig;
use crate::transport::Transport;

/// What a server is, as far as its defaults go: read from its command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// `@modelcontextprotocol/server-filesystem`: its folders are on its command line.
    Filesystem,
    /// A server that fetches web pages or searches the web: the network, and untrusted text.
    Web,
    /// `@modelcontextprotocol/server-memory`: a file of its own, nothing else.
    Memory,
    /// A server known to work through an online service's API.
    OnlineService,
    /// Needs nothing beyond its own files (server-everything, mcp-server-time, git…).
    Local,
    /// Not known to Toolgate.
    Unknown,
}

/// Package and program names, as they appear on a command line, and what they are.
const KNOWN: &[(&str, ServerKind)] = &[
    ("server-filesystem", ServerKind::Filesystem),
    ("mcp-server-filesystem", ServerKind::Filesystem),
    ("server-memory", ServerKind::Memory),
    ("mcp-server-fetch", ServerKind::Web),
    ("server-fetch", ServerKind::Web),
    ("fetch-mcp", ServerKind::Web),
    ("server-brave-search", ServerKind::Web),
    ("server-puppeteer", ServerKind::Web),
    ("playwright", ServerKind::Web),
    ("tavily-mcp", ServerKind::Web),
    ("exa-mcp-server", ServerKind::Web),
    ("server-github", ServerKind::OnlineService),
    ("github-mcp-server", ServerKind::OnlineService),
    ("server-gitlab", ServerKind::OnlineService),
    ("server-slack", ServerKind::OnlineService),
    ("server-google-maps", ServerKind::OnlineService),
    ("server-gdrive", ServerKind::OnlineService),
    ("server-sentry", ServerKind::OnlineService),
    ("mcp-server-sentry", ServerKind::OnlineService),
    ("server-everything", ServerKind::Local),
    ("mcp-server-time", ServerKind::Local),
    ("mcp-server-git", ServerKind::Local),
    ("server-sequential-thinking", ServerKind::Local),
];

impl ServerKind {
    /// What `server` is, by the package or program its command line names.
    pub fn of(server: &ServerConfig) -> Self {
        let Transport::Stdio { command, args, .. } = &server.transport else {
            return ServerKind::OnlineService;
        };
        let words = std::iter::once(command.as_str()).chain(args.iter().map(String::as_str));
        for word in words {
            // `@scope/name@1.2.3`, `/path/node_modules/@scope/name/dist/index.js`, `name==1.0`.
            for part in word.split(['/', '\\']) {
                let name = part
                    .split(['@', '='])
                    .find(|s| !s.is_empty())
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                if let Some((_, kind)) = KNOWN.iter().find(|(known, _)| *known == name) {
                    return *kind;
                }
            }
        }
        ServerKind::Unknown
    }

    /// Whether a server of this kind reads text from outside by default.
    pub fn reads_untrusted(self) -> bool {
        self == ServerKind::Web
    }
}

/// Whether a server is a page fetcher (`mcp-server-fetch` and its like), whose reach is any
/// page the model names: it gets network "hosts" by default, so each new host is the user's
/// choice.
fn fetches_pages(server: &ServerConfig) -> bool {
    let Transport::Stdio { command, args, .. } = &server.transport else {
        return false;
    };
    std::iter::once(command)
        .chain(args.iter())
        .any(|a| a.contains("fetch"))
}

/// Whether a server's environment names a credential for some service (a token, a key), which
/// means it talks to that service over the network.
fn has_credentials(server: &ServerConfig) -> bool {
    let Transport::Stdio { env, .. } = &server.transport else {
        return false;
    };
    env.keys().any(|name| {
        let name = name.to_ascii_uppercase();
        ["TOKEN", "KEY", "SECRET", "PASSWORD"]
            .iter()
            .any(|w| name.contains(w))
    })
}

impl SandboxSettings {
    /// The sandbox of a new server: on, with the network only for servers that need it (a
    /// web or online-service server, or one given a credential).
    pub fn defaults_for(server: &ServerConfig) -> Self {
        let kind = ServerKind::of(server);
        let network = match kind {
            // A page fetcher reaches the hosts the user lets it, asked at its first refusal.
            ServerKind::Web if fetches_pages(server) => NetworkAccess::Hosts,
            ServerKind::Web | ServerKind::OnlineService => NetworkAccess::Any,
            _ if has_credentials(server) => NetworkAccess::Any,
            _ => NetworkAccess::None,
        };
        Self {
            network,
            ..Self::default()
        }
    }

    /// The sandbox given to a server that ran before sandboxes existed: on, with the defaults
    /// for what it is; a server Toolgate does not know keeps the network it had, because it may
    /// need it and nobody chose to take it away. Its card shows the sandbox and how to narrow it.
    pub fn migrated(server: &ServerConfig) -> Self {
        let mut sandbox = Self::defaults_for(server);
        if ServerKind::of(server) == ServerKind::Unknown {
            sandbox.network = NetworkAccess::Any;
        }
        sandbox
    }
}

impl ServerConfig {
    /// Whether `next` differs from this server only in its list of hosts or its
    /// private-address switch: a change its running proxy takes without a restart.
    pub fn differs_only_in_reach(&self, next: &ServerConfig) -> bool {
        let (Some(a), Some(b)) = (self.sandbox_settings(), next.sandbox_settings()) else {
            return false;
        };
        let mut same = self.clone();
        same.sandbox = next.sandbox.clone();
        same == *next && a.network == b.network && a.enabled == b.enabled
    }

    /// The sandbox this server runs in: the user's, else the defaults for what it is. `None`
    /// for a remote server, which runs elsewhere.
    pub fn sandbox_settings(&self) -> Option<SandboxSettings> {
        match &self.transport {
            Transport::Http { .. } => None,
            Transport::Stdio { .. } => Some(
                self.sandbox
                    .clone()
                    .unwrap_or_else(|| SandboxSettings::defaults_for(self)),
            ),
        }
    }

    /// Whether this server's results bring untrusted text into a chat: the user's mark, else
    /// its kind's default.
    pub fn reads_untrusted(&self) -> bool {
        self.trust
            .reads_untrusted
            .unwrap_or_else(|| ServerKind::of(self).reads_untrusted())
    }

    /// Whether any call to this server can send data out of this computer: the user's mark,
    /// else whether it is remote, unconfined, or confined with any network, loopback included
    /// ([`NetworkAccess::carries_out`]).
    pub fn sends_out(&self) -> bool {
        if let Some(marked) = self.trust.sends_out {
            return marked;
        }
        match self.sandbox_settings() {
            None => true,
            Some(s) => !s.enabled || s.network.carries_out(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProviderKind, ProviderSettings, Settings};

    fn stdio(command: &str, args: &[&str]) -> ServerConfig {
        ServerConfig::stdio("s", command, args.iter().copied())
    }

    #[test]
    fn servers_are_known_by_the_package_their_command_line_names() {
        for (command, args, kind) in [
            (
                "npx",
                vec!["-y", "@modelcontextprotocol/server-filesystem", "/home/u"],
                ServerKind::Filesystem,
            ),
            (
                "node",
                vec!["/x/node_modules/@modelcontextprotocol/server-memory/dist/index.js"],
                ServerKind::Memory,
            ),
            ("uvx", vec!["mcp-server-fetch"], ServerKind::Web),
            ("uvx", vec!["mcp-server-fetch==2025.1.1"], ServerKind::Web),
            (
                "npx",
                vec!["-y", "@modelcontextprotocol/server-github@1.0.0"],
                ServerKind::OnlineService,
            ),
            ("/opt/venv/bin/mcp-server-time", vec![], ServerKind::Local),
            ("python3", vec!["my_server.py"], ServerKind::Unknown),
        ] {
            assert_eq!(ServerKind::of(&stdio(command, &args)), kind, "{args:?}");
        }
        assert_eq!(
            ServerKind::of(&ServerConfig::http("h", "https://x")),
            ServerKind::OnlineService
        );
    }

    #[test]
    fn only_a_change_of_hosts_is_applied_without_a_restart() {
        let mut old = stdio("uvx", &["mcp-server-fetch"]);
        let mut sandbox = old.sandbox_settings().unwrap();
        sandbox.network = NetworkAccess::Hosts;
        old.sandbox = Some(sandbox.clone());
        let mut next = old.clone();
        sandbox.hosts.push("example.com".into());
        next.sandbox = Some(sandbox.clone());
        assert!(old.differs_only_in_reach(&next));
        sandbox.private_addresses = true;
        next.sandbox = Some(sandbox.clone());
        assert!(old.differs_only_in_reach(&next));
        sandbox.network = NetworkAccess::Any;
        next.sandbox = Some(sandbox);
        assert!(
            !old.differs_only_in_reach(&next),
            "a new network mode needs a new sandbox"
        );
        let mut renamed = old.clone();
        renamed.name = "other".into();
        assert!(!old.differs_only_in_reach(&renamed));
    }

    #[test]
    fn defaults_give_the_network_only_to_servers_that_need_it() {
        let files = stdio("npx", &["@modelcontextprotocol/server-filesystem", "/tmp"]);
        assert_eq!(
            SandboxSettings::defaults_for(&files),
            SandboxSettings::default()
        );
        assert!(!files.sends_out() && !files.reads_untrusted());
        let fetch = stdio("uvx", &["mcp-server-fetch"]);
        assert_eq!(
            SandboxSettings::defaults_for(&fetch).network,
            NetworkAccess::Hosts,
            "a page fetcher reaches the hosts it is given"
        );
        let search = stdio("npx", &["-y", "@modelcontextprotocol/server-brave-search"]);
        assert_eq!(
            SandboxSettings::defaults_for(&search).network,
            NetworkAccess::Any
        );
        assert!(fetch.sends_out() && fetch.reads_untrusted());
        let mut unknown = stdio("python3", &["server.py"]);
        assert_eq!(
            SandboxSettings::defaults_for(&unknown).network,
            NetworkAccess::None
        );
        assert_eq!(
            SandboxSettings::migrated(&unknown).network,
            NetworkAccess::Any,
            "an existing unknown server keeps its network"
        );
        if let Transport::Stdio { env, .. } = &mut unknown.transport {
            env.insert("JIRA_API_TOKEN".into(), "${secret:JIRA}".into());
        }
        assert_eq!(
            SandboxSettings::defaults_for(&unknown).network,
            NetworkAccess::Any
        );
        let remote = ServerConfig::http("r", "https://mcp.example.com");
        assert!(remote.sandbox_settings().is_none() && remote.sends_out());
    }

    /// Which servers are a way out (`sends_out`), by where they run and how far their sandbox
    /// reaches, with and without the user's mark.
    #[test]
    fn the_way_out_table() {
        let confined = |network: NetworkAccess, enabled: bool| {
            let mut config = stdio("python3", &["s.py"]);
            config.sandbox = Some(SandboxSettings {
                enabled,
                network,
                ..SandboxSettings::default()
            });
            config
        };
        let rows = [
            ("network none", confined(NetworkAccess::None, true), false),
            (
                "network loopback",
                confined(NetworkAccess::Loopback, true),
                true,
            ),
            ("network hosts", confined(NetworkAccess::Hosts, true), true),
            ("network any", confined(NetworkAccess::Any, true), true),
            ("no sandbox", confined(NetworkAccess::None, false), true),
            (
                "remote",
                ServerConfig::http("r", "https://x.example/mcp"),
                true,
            ),
        ];
        for (what, config, way_out) in rows {
            assert_eq!(config.sends_out(), way_out, "{what}");
            for mark in [true, false] {
                let mut marked = config.clone();
                marked.trust.sends_out = Some(mark);
                assert_eq!(marked.sends_out(), mark, "{what}, marked {mark}");
            }
        }
    }

    #[test]
    fn the_users_marks_beat_the_defaults() {
        let mut fetch = stdio("uvx", &["mcp-server-fetch"]);
        fetch.trust.reads_untrusted = Some(false);
        fetch.trust.sends_out = Some(false);
        assert!(!fetch.reads_untrusted() && !fetch.sends_out());
        let mut local = stdio("python3", &["s.py"]);
        local.sandbox = Some(SandboxSettings {
            enabled: false,
            ..SandboxSettings::default()
        });
        assert!(local.sends_out(), "an unconfined server can send anything");
        // Loopback is a way out: what listens there may pass data on. The user may say not.
        local.sandbox = Some(SandboxSettings {
            network: NetworkAccess::Loopback,
            ..SandboxSettings::default()
        });
        assert!(
            local.sends_out(),
            "a loopback server can reach a local proxy"
        );
        local.trust.sends_out = Some(false);
        assert!(
            !local.sends_out(),
            "the user's mark: nothing there leads further"
        );
        local.trust.sends_out = None;
        local.trust.review_results = vec!["read_mail".into()];
        assert!(local.trust.reviews("read_mail") && !local.trust.reviews("send"));
        local.trust.review_results = vec!["*".into()];
        assert!(local.trust.reviews("send"));
    }

    #[test]
    fn version_2_servers_get_a_sandbox_written_out_and_new_ones_get_the_defaults() {
        let s = Settings::from_json(serde_json::json!({
            "version": 2,
            "servers": [
                {"id": "fs", "name": "Files", "transport": "stdio", "command": "npx",
                 "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/u/notes"]},
                {"id": "mine", "name": "Mine", "transport": "stdio", "command": "python3", "args": ["s.py"]},
                {"id": "web", "name": "Remote", "transport": "http", "url": "https://x.example"}
            ],
            "provider": ProviderSettings::defaults_for(ProviderKind::Anthropic),
        }))
        .expect("a version 2 file still reads");
        assert_eq!(s.version, 3);
        let fs = s.servers[0].sandbox.clone().expect("written out");
        assert!(fs.enabled);
        assert_eq!(fs.network, NetworkAccess::None);
        let mine = s.servers[1].sandbox.clone().expect("written out");
        assert_eq!(
            mine.network,
            NetworkAccess::Any,
            "an unknown server keeps its network"
        );
        assert!(s.servers[2].sandbox.is_none(), "a remote server has none");

        // Version 3 without a sandbox: the defaults, which confine an unknown server fully.
        let mut fresh = s.clone();
        fresh.servers[1].sandbox = None;
        let back = Settings::from_json(serde_json::to_value(&fresh).unwrap()).unwrap();
        assert!(back.servers[1].sandbox.is_none());
        let applied = back.servers[1].sandbox_settings().expect("stdio");
        assert!(applied.enabled && applied.network == NetworkAccess::None);

        let mut bad = back.clone();
        bad.servers[0].sandbox = Some(SandboxSettings {
            write: vec!["relative/dir".into()],
            ..SandboxSettings::default()
        });
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("servers[0].sandbox.write[0]:"));
        let typo = serde_json::json!({"enabled": true, "netwrok": "any"});
        assert!(serde_json::from_value::<SandboxSettings>(typo).is_err());
    }
}
