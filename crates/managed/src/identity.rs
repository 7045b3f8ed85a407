//! What a server is, for the organisation's rules: what it runs, never the id the user gave it.
//!
//! A managed rule names a server (`files/write_file`); were it matched by that id alone, the
//! same command added again as `files2` would escape it. So a rule applies to every configured
//! server whose [`Identity`] equals that of the server it names, and a rule may instead name
//! servers by what they run (`runs: {"npm": "@scope/pkg"}`), whatever their ids
//! ([`expand`]).
//!
//! An identity is the code that runs, not how it is configured: the package of a known launcher
//! (`npx`, `uvx`, … — its version and the server's own arguments left out, so `files2` pointed
//! at other folders is still the filesystem server), the script of an interpreter (`node x.js`,
//! `python -m pkg`), otherwise the resolved program with its arguments (an unknown program's
//! arguments may be what picks the code: `docker run IMAGE`). A remote server is its address,
//! normalised (scheme and host lower-case, default port, fragment and trailing `/` dropped).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use toolgate_policy::{Rule, Target};
use toolgate_settings::{ServerConfig, Transport};

use crate::document::ManagedRule;
use crate::resolve::{normalised_url, real, resolve};
use crate::servers::{self, Runs, ServerMatch};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// An npm package run by a launcher (`npx`, `npm exec`, `pnpm dlx`, `bunx`).
    Npm(String),
    /// A PyPI package run by a launcher (`uvx`, `uv tool run`, `pipx run`), normalised.
    Pypi(String),
    /// A script run by an interpreter, resolved to its real path.
    Script(PathBuf),
    /// `python -m MODULE`.
    Module(String),
    /// Any other program, resolved to its real path, with its arguments.
    Program(PathBuf, Vec<String>),
    /// A remote server's address, normalised.
    Remote(String),
}

/// Interpreters whose first argument that is not a flag is the script that runs.
fn interpreter(program: &str) -> bool {
    matches!(
        program,
        "node" | "nodejs" | "bun" | "deno" | "tsx" | "ts-node" | "python" | "python3" | "pythonw"
    ) || program
        .strip_prefix("python3.")
        .is_some_and(|minor| minor.chars().all(|c| c.is_ascii_digit()))
}

impl Identity {
    /// `server`'s identity, its program looked up on `path` (the PATH servers start with).
    pub fn of(server: &ServerConfig, path: &OsStr) -> Self {
        let (command, args, cwd) = match &server.transport {
            Transport::Http { url, .. } => return Identity::Remote(normalised_url(url)),
            Transport::Stdio {
                command, args, cwd, ..
            } => (command, args, cwd.as_deref()),
        };
        let runs = Runs::of(server);
        if let Some((name, _)) = runs.npm {
            return Identity::Npm(name);
        }
        if let Some((name, _)) = runs.pypi {
            return Identity::Pypi(name);
        }
        let name = servers::program_name(command);
        if interpreter(&name) {
            let mut words = args.iter();
            while let Some(word) = words.next() {
                match word.as_str() {
                    "-m" => {
                        if let Some(module) = words.next() {
                            return Identity::Module(module.clone());
                        }
                    }
                    // Inline code: the code is the identity's arguments.
                    "-c" | "-e" | "--eval" | "-p" | "--print" => break,
                    w if w.starts_with('-') => {}
                    script => return Identity::Script(real(&file_at(script, cwd))),
                }
            }
        }
        Identity::Program(resolve(command, cwd, path), args.clone())
    }
}

/// A relative file name as the server's working folder (or Toolgate's) reads it.
fn file_at(name: &str, cwd: Option<&Path>) -> PathBuf {
    let here = cwd
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    here.join(name)
}

fn with_server(target: &Target, id: &str) -> Target {
    let server_id = id.to_owned();
    match target {
        Target::Tool { tool, .. } => Target::Tool {
            server_id,
            tool: tool.clone(),
        },
        Target::Server { .. } => Target::Server { server_id },
        Target::Sampling { .. } => Target::Sampling { server_id },
        Target::Elicitation { .. } => Target::Elicitation { server_id },
    }
}

/// The organisation's rules as the gate reads them, for the configured `servers`: each rule
/// once for every server it binds, its target's server id set to that server's.
///
/// - A rule with `runs` binds every server that matches it, and only those.
/// - A rule that names a server by id binds that id and every server whose identity equals
///   the named server's: the organisation's own server of that id when it has one (its
///   `required` list), else the configured server of that id. No server of that id at all:
///   the rule is kept as written (it binds that id, should one be added).
///
/// The first copy keeps the rule's id (`org:ID`); the others are `org:ID@SERVER`, so ids stay
/// unique and the reason shown is the rule's note either way.
pub fn expand(
    rules: &[ManagedRule],
    required: &[ServerConfig],
    servers: &[ServerConfig],
    path: &OsStr,
) -> Vec<Rule> {
    let mut out = Vec::new();
    for managed in rules {
        let rule = managed.to_rule();
        let named = rule.server_id().to_owned();
        let ids: Vec<&str> = match &managed.runs {
            Some(entry) => servers
                .iter()
                .filter(|s| runs_match(entry, s))
                .map(|s| s.id.as_str())
                .collect(),
            None => {
                let reference = required
                    .iter()
                    .find(|s| s.id == named)
                    .or_else(|| servers.iter().find(|s| s.id == named));
                let mut ids = vec![named.as_str()];
                if let Some(reference) = reference {
                    let wanted = Identity::of(reference, path);
                    ids.extend(
                        servers
                            .iter()
                            .filter(|s| s.id != named && Identity::of(s, path) == wanted)
                            .map(|s| s.id.as_str()),
                    );
                }
                ids
            }
        };
        for (i, id) in ids.into_iter().enumerate() {
            let mut copy = rule.clone();
            if i > 0 || managed.runs.is_some() {
                copy.id = format!("{}@{id}", rule.id);
            }
            copy.target = with_server(&rule.target, id);
            out.push(copy);
        }
    }
    out
}

fn runs_match(entry: &ServerMatch, server: &ServerConfig) -> bool {
    let registry = server.registry.as_ref().map(|r| r.name.as_str());
    servers::matches(entry, &Runs::of(server), registry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(id: &str, command: &str, args: &[&str]) -> ServerConfig {
        ServerConfig::stdio(id, command, args.iter().copied())
    }

    fn rules(value: serde_json::Value) -> Vec<ManagedRule> {
        crate::Document::parse(json!({ "rules": value }))
            .expect("valid")
            .rules
    }

    fn path() -> std::ffi::OsString {
        std::env::var_os("PATH").unwrap_or_default()
    }

    fn bound(rules: &[Rule]) -> Vec<(String, String)> {
        rules
            .iter()
            .map(|r| (r.id.clone(), r.server_id().to_owned()))
            .collect()
    }

    #[test]
    fn the_same_command_under_another_id_is_bound_by_the_rule() {
        let files = |id: &str, root: &str| {
            server(
                id,
                "npx",
                &["-y", "@modelcontextprotocol/server-filesystem", root],
            )
        };
        let deny = rules(json!([{"id": "no-write", "effect": "deny",
            "target": {"kind": "tool", "serverId": "files", "tool": "write_file"}}]));
        let servers = [
            files("files", "/tmp"),
            // The same package, another id, other folders, another spelling of the launcher.
            files("files2", "/home"),
            server(
                "files3",
                "/usr/bin/npx",
                &["--yes", "@modelcontextprotocol/server-filesystem@2025.1.1"],
            ),
            server("time", "uvx", &["mcp-server-time"]),
        ];
        let got = expand(&deny, &[], &servers, &path());
        assert_eq!(
            bound(&got),
            [
                ("org:no-write".into(), "files".into()),
                ("org:no-write@files2".into(), "files2".into()),
                ("org:no-write@files3".into(), "files3".into()),
            ]
        );
        // The named server gone (renamed): the id form alone cannot know what it ran, so the
        // organisation names it by what it runs.
        let by_package = rules(json!([{"id": "no-write", "effect": "deny",
            "runs": {"npm": "@modelcontextprotocol/server-filesystem"},
            "target": {"kind": "tool", "serverId": "*", "tool": "write_file"}}]));
        let renamed = &servers[1..];
        let got = expand(&by_package, &[], renamed, &path());
        assert_eq!(
            bound(&got),
            [
                ("org:no-write@files2".into(), "files2".into()),
                ("org:no-write@files3".into(), "files3".into()),
            ]
        );
        // The organisation's own server of that id is the reference, not a user's.
        let org = server("files", "npx", &["-y", "@org/files"]);
        let got = expand(&deny, std::slice::from_ref(&org), &servers, &path());
        assert_eq!(
            bound(&got),
            [("org:no-write".into(), "files".into())],
            "the user's filesystem servers are not the organisation's `files`"
        );
    }

    #[test]
    fn identities_are_what_runs() {
        let p = path();
        let id = |c: &str, a: &[&str]| Identity::of(&server("x", c, a), &p);
        assert_eq!(
            id("npx", &["-y", "pkg@1.0.0", "a"]),
            id("bunx", &["pkg", "b"])
        );
        assert_eq!(
            id("uvx", &["Mcp_Server.Fetch"]),
            id("uv", &["tool", "run", "mcp-server-fetch==1"])
        );
        assert_eq!(
            id("python3", &["-u", "-m", "srv", "--x"]),
            Identity::Module("srv".into())
        );
        let dir = std::env::temp_dir().join(format!("toolgate-identity-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let script = dir.join("server.js");
        std::fs::write(&script, "").expect("script");
        let link = dir.join("other-name.js");
        let _ = std::fs::remove_file(&link);
        #[cfg(unix)]
        std::os::unix::fs::symlink(&script, &link).expect("link");
        let mut a = server("a", "node", &["server.js"]);
        if let Transport::Stdio { cwd, .. } = &mut a.transport {
            *cwd = Some(dir.clone());
        }
        // The same script under a link's name (Unix: the link is made above).
        #[cfg(unix)]
        {
            let b = server("b", "node", &[&link.to_string_lossy(), "--port", "1"]);
            assert_eq!(Identity::of(&a, &p), Identity::of(&b, &p));
        }
        assert_ne!(id("/usr/bin/env", &["a"]), id("/usr/bin/env", &["b"]));
        let _ = std::fs::remove_dir_all(&dir);
        let remote = |url: &str| {
            Identity::of(
                &ServerConfig::with_transport(
                    "r".into(),
                    "r".into(),
                    Transport::Http {
                        url: url.into(),
                        headers: Default::default(),
                        sse: false,
                    },
                ),
                &p,
            )
        };
        assert_eq!(
            remote("HTTPS://MCP.Example.com:443/mcp/#x"),
            remote("https://mcp.example.com/mcp")
        );
        assert_ne!(
            remote("https://mcp.example.com/mcp"),
            remote("https://mcp.example.com/other")
        );
    }
}
