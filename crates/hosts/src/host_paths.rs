//! Where each host keeps its user-level MCP config, per OS, as one table.
//!
//! It lives here rather than in `toolgate-hosts` because the import needs a row of it (Claude
//! Desktop's file, [`crate::import::claude_desktop_config_path`]) and `toolgate-hosts` builds on
//! this crate, not the other way round. Paths are data so that every OS's are tested on any OS.

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A host whose config Toolgate knows: where it is, and (in `toolgate-hosts`) how it holds
/// servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HostKind {
    #[serde(rename = "claude-desktop")]
    ClaudeDesktop,
    #[serde(rename = "claude-code")]
    ClaudeCode,
    #[serde(rename = "cursor")]
    Cursor,
    #[serde(rename = "vscode")]
    VsCode,
    #[serde(rename = "goose")]
    Goose,
    #[serde(rename = "zed")]
    Zed,
    #[serde(rename = "codex")]
    Codex,
    #[serde(rename = "gemini")]
    Gemini,
}

impl HostKind {
    pub const ALL: [HostKind; 8] = [
        HostKind::ClaudeDesktop,
        HostKind::ClaudeCode,
        HostKind::Cursor,
        HostKind::VsCode,
        HostKind::Goose,
        HostKind::Zed,
        HostKind::Codex,
        HostKind::Gemini,
    ];

    /// The id used on the command line and as the profile name: `claude-code`.
    pub fn id(self) -> &'static str {
        match self {
            HostKind::ClaudeDesktop => "claude-desktop",
            HostKind::ClaudeCode => "claude-code",
            HostKind::Cursor => "cursor",
            HostKind::VsCode => "vscode",
            HostKind::Goose => "goose",
            HostKind::Zed => "zed",
            HostKind::Codex => "codex",
            HostKind::Gemini => "gemini",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            HostKind::ClaudeDesktop => "Claude Desktop",
            HostKind::ClaudeCode => "Claude Code",
            HostKind::Cursor => "Cursor",
            HostKind::VsCode => "VS Code",
            HostKind::Goose => "Goose",
            HostKind::Zed => "Zed",
            HostKind::Codex => "Codex CLI",
            HostKind::Gemini => "Gemini CLI",
        }
    }

    pub fn parse(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|h| h.id() == id)
    }
}

/// An operating system whose paths are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    pub fn current() -> Self {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// The folder a path starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    /// `HOME` (`USERPROFILE` on Windows).
    Home,
    /// `$XDG_CONFIG_HOME`, else `~/.config` (Linux).
    XdgConfig,
    /// `%APPDATA%` (Windows).
    AppData,
    /// `$CODEX_HOME`, else `~/.codex` (Codex CLI, every OS).
    CodexHome,
}

/// One row: a host, an OS, the base folder and the path below it.
const PATHS: &[(HostKind, Os, Base, &str)] = &[
    (
        HostKind::ClaudeDesktop,
        Os::Linux,
        Base::XdgConfig,
        "Claude/claude_desktop_config.json",
    ),
    (
        HostKind::ClaudeDesktop,
        Os::MacOs,
        Base::Home,
        "Library/Application Support/Claude/claude_desktop_config.json",
    ),
    (
        HostKind::ClaudeDesktop,
        Os::Windows,
        Base::AppData,
        "Claude/claude_desktop_config.json",
    ),
    // Claude Code's user scope: `mcpServers` at the top of `~/.claude.json`, on every OS.
    (HostKind::ClaudeCode, Os::Linux, Base::Home, ".claude.json"),
    (HostKind::ClaudeCode, Os::MacOs, Base::Home, ".claude.json"),
    (
        HostKind::ClaudeCode,
        Os::Windows,
        Base::Home,
        ".claude.json",
    ),
    (HostKind::Cursor, Os::Linux, Base::Home, ".cursor/mcp.json"),
    (HostKind::Cursor, Os::MacOs, Base::Home, ".cursor/mcp.json"),
    (
        HostKind::Cursor,
        Os::Windows,
        Base::Home,
        ".cursor/mcp.json",
    ),
    (
        HostKind::VsCode,
        Os::Linux,
        Base::XdgConfig,
        "Code/User/mcp.json",
    ),
    (
        HostKind::VsCode,
        Os::MacOs,
        Base::Home,
        "Library/Application Support/Code/User/mcp.json",
    ),
    (
        HostKind::VsCode,
        Os::Windows,
        Base::AppData,
        "Code/User/mcp.json",
    ),
    (
        HostKind::Goose,
        Os::Linux,
        Base::XdgConfig,
        "goose/config.yaml",
    ),
    (
        HostKind::Goose,
        Os::MacOs,
        Base::Home,
        ".config/goose/config.yaml",
    ),
    (
        HostKind::Goose,
        Os::Windows,
        Base::AppData,
        "Block/goose/config/config.yaml",
    ),
    (
        HostKind::Zed,
        Os::Linux,
        Base::XdgConfig,
        "zed/settings.json",
    ),
    (
        HostKind::Zed,
        Os::MacOs,
        Base::Home,
        ".config/zed/settings.json",
    ),
    (
        HostKind::Zed,
        Os::Windows,
        Base::AppData,
        "Zed/settings.json",
    ),
    // Codex CLI: `[mcp_servers.NAME]` tables in `config.toml`, on every OS.
    (HostKind::Codex, Os::Linux, Base::CodexHome, "config.toml"),
    (HostKind::Codex, Os::MacOs, Base::CodexHome, "config.toml"),
    (HostKind::Codex, Os::Windows, Base::CodexHome, "config.toml"),
    // Gemini CLI's user settings: `mcpServers` in `~/.gemini/settings.json`, on every OS.
    (
        HostKind::Gemini,
        Os::Linux,
        Base::Home,
        ".gemini/settings.json",
    ),
    (
        HostKind::Gemini,
        Os::MacOs,
        Base::Home,
        ".gemini/settings.json",
    ),
    (
        HostKind::Gemini,
        Os::Windows,
        Base::Home,
        ".gemini/settings.json",
    ),
];

/// Where `host` keeps its config on `os`, with the environment read through `var`; `None` when
/// a variable it needs is unset. The file may not exist.
pub fn config_path(
    host: HostKind,
    os: Os,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = || match os {
        Os::Windows => var("USERPROFILE").or_else(|| var("HOME")),
        _ => var("HOME"),
    };
    let (_, _, base, rest) = PATHS.iter().find(|(h, o, _, _)| *h == host && *o == os)?;
    let base = match base {
        Base::Home => home()?,
        Base::XdgConfig => var("XDG_CONFIG_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| home().map(|h| h.join(".config")))?,
        Base::AppData => var("APPDATA")?,
        Base::CodexHome => var("CODEX_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| home().map(|h| h.join(".codex")))?,
    };
    Some(rest.split('/').fold(base, |path, part| path.join(part)))
}

/// [`config_path`] on this machine.
pub fn config_path_here(host: HostKind) -> Option<PathBuf> {
    config_path(host, Os::current(), &|name| std::env::var_os(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn every_host_has_a_path_on_every_os() {
        let unix = env(&[("HOME", "/home/ada")]);
        let windows = env(&[
            ("USERPROFILE", r"C:\Users\ada"),
            ("APPDATA", r"C:\Users\ada\AppData\Roaming"),
        ]);
        for host in HostKind::ALL {
            for os in [Os::Linux, Os::MacOs] {
                assert!(config_path(host, os, &unix).is_some(), "{host:?} {os:?}");
            }
            assert!(
                config_path(host, Os::Windows, &windows).is_some(),
                "{host:?}"
            );
        }
    }

    // Linux's paths are only made on Linux (an absolute XDG folder is a Unix path).
    #[cfg(unix)]
    #[test]
    fn linux_paths_follow_xdg_and_the_home_folder() {
        let home = env(&[("HOME", "/home/ada")]);
        let at =
            |host| config_path(host, Os::Linux, &home).map(|p| p.to_string_lossy().into_owned());
        assert_eq!(
            at(HostKind::ClaudeDesktop).as_deref(),
            Some("/home/ada/.config/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            at(HostKind::ClaudeCode).as_deref(),
            Some("/home/ada/.claude.json")
        );
        assert_eq!(
            at(HostKind::Cursor).as_deref(),
            Some("/home/ada/.cursor/mcp.json")
        );
        assert_eq!(
            at(HostKind::VsCode).as_deref(),
            Some("/home/ada/.config/Code/User/mcp.json")
        );
        assert_eq!(
            at(HostKind::Goose).as_deref(),
            Some("/home/ada/.config/goose/config.yaml")
        );
        assert_eq!(
            at(HostKind::Zed).as_deref(),
            Some("/home/ada/.config/zed/settings.json")
        );
        let xdg = env(&[("HOME", "/home/ada"), ("XDG_CONFIG_HOME", "/cfg")]);
        assert_eq!(
            config_path(HostKind::Zed, Os::Linux, &xdg),
            Some(PathBuf::from("/cfg/zed/settings.json"))
        );
        let relative = env(&[("HOME", "/home/ada"), ("XDG_CONFIG_HOME", "cfg")]);
        assert_eq!(
            config_path(HostKind::Zed, Os::Linux, &relative),
            Some(PathBuf::from("/home/ada/.config/zed/settings.json")),
            "a relative XDG_CONFIG_HOME is ignored, as the spec says"
        );
        assert_eq!(config_path(HostKind::Zed, Os::Linux, &env(&[])), None);
        assert_eq!(
            at(HostKind::Codex).as_deref(),
            Some("/home/ada/.codex/config.toml")
        );
        assert_eq!(
            config_path(
                HostKind::Codex,
                Os::Linux,
                &env(&[("HOME", "/home/ada"), ("CODEX_HOME", "/srv/codex")])
            ),
            Some(PathBuf::from("/srv/codex/config.toml"))
        );
        assert_eq!(
            at(HostKind::Gemini).as_deref(),
            Some("/home/ada/.gemini/settings.json")
        );
    }

    #[test]
    fn macos_and_windows_paths_are_the_hosts_own() {
        let home = env(&[("HOME", "/Users/ada")]);
        assert_eq!(
            config_path(HostKind::VsCode, Os::MacOs, &home),
            Some(PathBuf::from(
                "/Users/ada/Library/Application Support/Code/User/mcp.json"
            ))
        );
        assert_eq!(
            config_path(HostKind::Goose, Os::MacOs, &home),
            Some(PathBuf::from("/Users/ada/.config/goose/config.yaml"))
        );
        let windows = env(&[("APPDATA", "/appdata"), ("USERPROFILE", "/profile")]);
        assert_eq!(
            config_path(HostKind::ClaudeDesktop, Os::Windows, &windows),
            Some(PathBuf::from("/appdata/Claude/claude_desktop_config.json"))
        );
        assert_eq!(
            config_path(HostKind::Goose, Os::Windows, &windows),
            Some(PathBuf::from("/appdata/Block/goose/config/config.yaml"))
        );
        assert_eq!(
            config_path(HostKind::Cursor, Os::Windows, &windows),
            Some(PathBuf::from("/profile/.cursor/mcp.json"))
        );
        assert_eq!(
            config_path(HostKind::VsCode, Os::Windows, &env(&[])),
            None,
            "no APPDATA, no path"
        );
    }

    #[test]
    fn host_ids_round_trip_and_match_their_serde_names() {
        for host in HostKind::ALL {
            assert_eq!(HostKind::parse(host.id()), Some(host));
            assert_eq!(
                serde_json::to_value(host).ok(),
                Some(serde_json::json!(host.id()))
            );
        }
        assert_eq!(HostKind::parse("vs-code"), None);
    }

    #[test]
    fn claude_desktop_paths_per_os() {
        let desktop =
            |os, pairs: &[(&str, &str)]| config_path(HostKind::ClaudeDesktop, os, &env(pairs));
        assert_eq!(
            desktop(Os::MacOs, &[("HOME", "/Users/a")]),
            Some(PathBuf::from(
                "/Users/a/Library/Application Support/Claude/claude_desktop_config.json"
            ))
        );
        let windows = desktop(Os::Windows, &[("APPDATA", r"C:\Users\a\AppData\Roaming")]).unwrap();
        assert!(windows.starts_with(r"C:\Users\a\AppData\Roaming"));
        assert!(windows.ends_with(PathBuf::from("Claude").join("claude_desktop_config.json")));
        assert_eq!(
            desktop(Os::Linux, &[("HOME", "/home/a")]),
            Some(PathBuf::from(
                "/home/a/.config/Claude/claude_desktop_config.json"
            ))
        );
        if cfg!(unix) {
            assert_eq!(
                desktop(
                    Os::Linux,
                    &[("HOME", "/home/a"), ("XDG_CONFIG_HOME", "/cfg")]
                ),
                Some(PathBuf::from("/cfg/Claude/claude_desktop_config.json"))
            );
        }
        assert_eq!(desktop(Os::Windows, &[("HOME", "/home/a")]), None);
        assert_eq!(desktop(Os::MacOs, &[]), None);
    }
}
