//! `npx` and `uvx` inside a sandbox.
//!
//! Both launchers write to their package cache on every start, even when the package is cached
//! (npm writes `_cacache/tmp`, uv takes locks), so a cache shared read-only fails, and a cache
//! shared read-write would let one server plant code that another runs. So each confined server
//! gets a cache of its own in its data folder. A server without the network cannot fill it, so
//! a **fetch step** runs first: the launcher with the network, asked to install the package and
//! run `true` instead of the package's program (and npm's install scripts off), so no code of
//! the package runs with a network the server was not given. It runs again only when the
//! command line changes.

use std::collections::BTreeMap;
use std::path::Path;

/// A launcher that fetches packages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Launcher {
    Npx,
    Uvx,
}

impl Launcher {
    /// The launcher `program` is, by its file name.
    pub fn of(program: &Path) -> Option<Self> {
        match program.file_name()?.to_str()? {
            "npx" => Some(Launcher::Npx),
            "uvx" => Some(Launcher::Uvx),
            _ => None,
        }
    }

    /// Where its private cache goes, relative to the data folder, by environment variable.
    /// A variable the user set in the server's env wins. `home` is the user's home folder,
    /// whose `~/.npmrc` names the registry npm uses (the sandbox keeps the file itself closed:
    /// it may hold tokens).
    pub fn cache_env(
        self,
        data: &Path,
        offline: bool,
        home: Option<&Path>,
    ) -> BTreeMap<String, String> {
        let at = |sub: &str| data.join(sub).to_string_lossy().into_owned();
        let mut env = BTreeMap::new();
        match self {
            Launcher::Npx => {
                env.insert("npm_config_cache".into(), at("npm-cache"));
                env.insert("npm_config_update_notifier".into(), "false".into());
                if let Some(registry) = home.and_then(npm_registry) {
                    // The fetch step and the server must ask the same registry, or the server
                    // finds nothing in the cache the fetch step filled.
                    env.insert("npm_config_registry".into(), registry);
                }
                if offline {
                    env.insert("npm_config_offline".into(), "true".into());
                }
            }
            Launcher::Uvx => {
                env.insert("UV_CACHE_DIR".into(), at("uv-cache"));
                env.insert("UV_TOOL_DIR".into(), at("uv-tools"));
                if offline {
                    env.insert("UV_OFFLINE".into(), "1".into());
                }
            }
        }
        env
    }

    /// The arguments of the fetch step for a server started with `args`: install what the
    /// command line names, run `true`. `None` when the command line names no package.
    pub fn fetch_args(self, args: &[String]) -> Option<Vec<String>> {
        match self {
            Launcher::Npx => npx_fetch(args),
            Launcher::Uvx => uvx_fetch(args),
        }
    }
}

/// The `registry=` line of `~/.npmrc`, if any (never its tokens).
fn npm_registry(home: &Path) -> Option<String> {
    let text = std::fs::read_to_string(home.join(".npmrc")).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "registry").then(|| value.trim().to_owned())
    })
}

/// `npx [-y] [-p PKG]… CMD-OR-PKG [ARGS]` → `--yes --package=PKG… -c true`.
fn npx_fetch(args: &[String]) -> Option<Vec<String>> {
    let mut packages = Vec::new();
    let mut first = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-p" | "--package" => packages.push(rest.next()?.clone()),
            "--" => {
                first = rest.next().cloned();
                break;
            }
            // Runs a command of its own: nothing is named to fetch beyond -p.
            "-c" | "--call" => break,
            a if a.starts_with("--package=") => packages.push(a["--package=".len()..].to_owned()),
            a if a.starts_with('-') => {}
            a => {
                first = Some(a.to_owned());
                break;
            }
        }
    }
    if packages.is_empty() {
        packages.push(first?);
    }
    let mut out = vec!["--yes".to_owned()];
    out.extend(packages.into_iter().map(|p| format!("--package={p}")));
    out.extend(["-c".to_owned(), "true".to_owned()]);
    Some(out)
}

/// `uvx [--from SPEC] [--with PKG]… [--python V] CMD [ARGS]` → the same options, `true`.
fn uvx_fetch(args: &[String]) -> Option<Vec<String>> {
    const KEPT: [&str; 4] = ["--from", "--with", "--python", "--index-url"];
    let mut kept = Vec::new();
    let mut from = None;
    let mut command = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if let Some((flag, value)) = arg.split_once('=').filter(|(f, _)| KEPT.contains(f)) {
            if flag == "--from" {
                from = Some(value.to_owned());
            } else {
                kept.extend([flag.to_owned(), value.to_owned()]);
            }
        } else if KEPT.contains(&arg.as_str()) {
            let value = rest.next()?.clone();
            if arg == "--from" {
                from = Some(value);
            } else {
                kept.extend([arg.clone(), value]);
            }
        } else if !arg.starts_with('-') {
            command = Some(arg.clone());
            break;
        }
    }
    let mut out = vec!["--from".to_owned(), from.or(command)?];
    out.extend(kept);
    out.push("true".to_owned());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_fetch_step_installs_what_the_command_line_names_and_runs_nothing_of_it() {
        assert_eq!(
            Launcher::Npx.fetch_args(&strings(&[
                "-y",
                "@modelcontextprotocol/server-memory@2026.8.31"
            ])),
            Some(strings(&[
                "--yes",
                "--package=@modelcontextprotocol/server-memory@2026.8.31",
                "-c",
                "true"
            ]))
        );
        assert_eq!(
            Launcher::Npx.fetch_args(&strings(&["-p", "a", "--package=b", "cmd", "--x"])),
            Some(strings(&[
                "--yes",
                "--package=a",
                "--package=b",
                "-c",
                "true"
            ]))
        );
        assert_eq!(Launcher::Npx.fetch_args(&strings(&["-y"])), None);
        assert_eq!(
            Launcher::Uvx.fetch_args(&strings(&["mcp-server-time==2026.10.19", "--tz", "UTC"])),
            Some(strings(&["--from", "mcp-server-time==2026.10.19", "true"]))
        );
        assert_eq!(
            Launcher::Uvx.fetch_args(&strings(&[
                "--from",
                "git+https://x/y",
                "--with=httpx",
                "--python",
                "3.12",
                "serve"
            ])),
            Some(strings(&[
                "--from",
                "git+https://x/y",
                "--with",
                "httpx",
                "--python",
                "3.12",
                "true"
            ]))
        );
        assert_eq!(Launcher::of(Path::new("/usr/bin/npx")), Some(Launcher::Npx));
        assert_eq!(Launcher::of(Path::new("/usr/bin/node")), None);
        let env = Launcher::Uvx.cache_env(Path::new("/d"), true, None);
        assert_eq!(Path::new(&env["UV_CACHE_DIR"]), Path::new("/d/uv-cache"));
        assert_eq!(env["UV_OFFLINE"], "1");
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".npmrc"),
            "//npm.corp.example/:_authToken=secret\nregistry = https://npm.corp.example/\n",
        )
        .unwrap();
        let env = Launcher::Npx.cache_env(Path::new("/d"), false, Some(home.path()));
        assert_eq!(env["npm_config_registry"], "https://npm.corp.example/");
        assert!(!env.values().any(|v| v.contains("secret")));
    }
}
