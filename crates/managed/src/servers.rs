//! Which servers may run: what a server runs, read from its settings (the npm or PyPI package
//! and version its launcher names, its program, its address), and the organisation's allow and
//! deny entries matched against it. Checked at every start, so a server re-enabled after the
//! policy changed is refused then.

use std::str::FromStr;

use globset::{Glob, GlobMatcher};
use toolgate_settings::{ServerConfig, Transport};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerPolicy {
    /// Whether the user may run servers of their own (beside `required`); `false`: only the
    /// organisation's servers run.
    #[serde(default = "yes")]
    pub allow_user_servers: bool,
    /// When not empty, a server must match one of these to run.
    #[serde(default)]
    pub allow: Vec<ServerMatch>,
    /// A server that matches one of these never runs, whatever `allow` says.
    #[serde(default)]
    pub deny: Vec<ServerMatch>,
    /// Servers always present; the user cannot remove them or loosen their sandbox.
    #[serde(default)]
    pub required: Vec<ServerConfig>,
}

impl Default for ServerPolicy {
    fn default() -> Self {
        Self {
            allow_user_servers: true,
            allow: Vec::new(),
            deny: Vec::new(),
            required: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

/// What a server runs, as an allow or deny entry names it: exactly one of `npm`, `pypi`,
/// `command`, `url`, `registry`; `version` only with `npm` or `pypi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerMatch {
    /// An npm package run by `npx`, `npm exec`, `pnpm dlx` or `bunx` (a `*` glob allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub npm: Option<String>,
    /// A PyPI package run by `uvx`, `uv tool run` or `pipx run` (a `*` glob allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pypi: Option<String>,
    /// The versions allowed or denied: an npm range (`^1.2.0`) or PEP 440 specifiers
    /// (`>=0.6,<1`). A server whose command pins no version matches no `version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The program, as the server's command names it (a glob: `/opt/mcp/*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// A remote server's address (a glob: `https://mcp.example.com/*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A server's name in the MCP registry it was added from (a glob).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
}

/// What a server runs, as far as an allow or deny entry can name it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs {
    /// The npm package and the version pinned on the command line, if any.
    pub npm: Option<(String, Option<String>)>,
    /// The PyPI package and the version pinned on the command line, if any.
    pub pypi: Option<(String, Option<String>)>,
    /// The program (stdio servers).
    pub command: Option<String>,
    /// The address (remote servers).
    pub url: Option<String>,
}

impl Runs {
    pub fn of(server: &ServerConfig) -> Self {
        match &server.transport {
            Transport::Http { url, .. } => Runs {
                url: Some(url.clone()),
                ..Runs::default()
            },
            Transport::Stdio { command, args, .. } => {
                let program = program_name(command);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let (npm, pypi) = match (program.as_str(), args.as_slice()) {
                    ("npx" | "bunx", rest) => {
                        (package_after(rest, NPM_VALUE_FLAGS, npm_spec), None)
                    }
                    ("npm", ["exec", rest @ ..])
                    | ("pnpm", ["dlx" | "exec", rest @ ..])
                    | ("yarn", ["dlx", rest @ ..]) => {
                        (package_after(rest, NPM_VALUE_FLAGS, npm_spec), None)
                    }
                    ("uvx", rest) | ("uv", ["tool", "run", rest @ ..]) => {
                        (None, package_after(rest, UV_VALUE_FLAGS, pypi_spec))
                    }
                    ("pipx", ["run", rest @ ..]) => {
                        (None, package_after(rest, PIPX_VALUE_FLAGS, pypi_spec))
                    }
                    _ => (None, None),
                };
                Runs {
                    npm,
                    pypi,
                    command: Some(command.clone()),
                    url: None,
                }
            }
        }
    }

    /// In words, for a refusal: "the npm package @x/y 1.2.3".
    pub fn describe(&self) -> String {
        let version = |v: &Option<String>| match v {
            Some(v) => format!(" {v}"),
            None => " (no version pinned)".to_owned(),
        };
        if let Some((name, v)) = &self.npm {
            return format!("the npm package {name}{}", version(v));
        }
        if let Some((name, v)) = &self.pypi {
            return format!("the PyPI package {name}{}", version(v));
        }
        if let Some(url) = &self.url {
            return format!("the remote server {url}");
        }
        format!("the program {}", self.command.as_deref().unwrap_or("?"))
    }
}

impl crate::launcher::Matched for Runs {
    fn npm(&self) -> Option<&str> {
        self.npm.as_ref().map(|(name, _)| name.as_str())
    }
    fn pypi(&self) -> Option<&str> {
        self.pypi.as_ref().map(|(name, _)| name.as_str())
    }
}

/// `npx`, `npx.cmd`, `/usr/bin/npx` → `npx`.
pub(crate) fn program_name(command: &str) -> String {
    let base = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let lower = base.to_ascii_lowercase();
    for ext in [".cmd", ".exe", ".bat", ".ps1"] {
        if let Some(stem) = lower.strip_suffix(ext) {
            return stem.to_owned();
        }
    }
    lower
}

/// Flags whose value follows them, which is not the package. (`--package`/`-p` for npm and
/// `--from` for uv, `--spec` for pipx name the package itself: see [`package_after`].)
const NPM_VALUE_FLAGS: &[&str] = &["--registry", "--cache", "--userconfig", "-c", "--call"];
const UV_VALUE_FLAGS: &[&str] = &["--with", "--python", "-p", "--index", "--index-url"];
const PIPX_VALUE_FLAGS: &[&str] = &["--python", "--index-url", "--pip-args"];
const PACKAGE_FLAGS: &[&str] = &["--package", "-p", "--from", "--spec"];

/// The package a launcher runs: the one a package flag names, else the first word that is not
/// a flag.
fn package_after(
    args: &[&str],
    value_flags: &[&str],
    spec: fn(&str) -> (String, Option<String>),
) -> Option<(String, Option<String>)> {
    let mut words = args.iter();
    let mut first = None;
    while let Some(word) = words.next() {
        if let Some((flag, value)) = word.split_once('=').filter(|_| word.starts_with('-')) {
            if PACKAGE_FLAGS.contains(&flag) && flag != "-p" {
                return Some(spec(value));
            }
            continue;
        }
        let names_package = PACKAGE_FLAGS.contains(word)
            // `-p` is npm's --package but uv's --python.
            && !(*word == "-p" && value_flags.contains(&"-p"));
        if names_package {
            return words.next().map(|v| spec(v));
        }
        if value_flags.contains(word) {
            words.next();
            continue;
        }
        if *word == "--" || word.starts_with('-') {
            continue;
        }
        if first.is_none() {
            first = Some(spec(word));
        }
        break;
    }
    first
}

/// `@scope/name@1.2.3` → (`@scope/name`, `1.2.3`); a tag such as `latest` pins nothing.
fn npm_spec(spec: &str) -> (String, Option<String>) {
    let split = match spec.strip_prefix('@') {
        Some(rest) => rest.find('@').map(|i| i + 1),
        None => spec.find('@'),
    };
    match split {
        Some(i) => {
            let version = &spec[i + 1..];
            let pinned = node_semver::Version::parse(version).is_ok();
            (spec[..i].to_owned(), pinned.then(|| version.to_owned()))
        }
        None => (spec.to_owned(), None),
    }
}

/// `name==1.2.3` or `name@1.2.3` → (`name`, `1.2.3`); PyPI names compare normalised.
fn pypi_spec(spec: &str) -> (String, Option<String>) {
    let (name, version) = match spec.split_once("==").or_else(|| spec.split_once('@')) {
        Some((name, version)) => (name, Some(version.trim())),
        None => (spec, None),
    };
    let name = name.trim().to_ascii_lowercase().replace(['_', '.'], "-");
    let pinned = version.filter(|v| pep440_rs::Version::from_str(v).is_ok());
    (name, pinned.map(str::to_owned))
}

fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("{pattern:?} is not a valid pattern: {}", e.kind()))
}

/// Checks an entry as it is read, so a bad one refuses the whole document.
pub(crate) fn check_match(entry: &ServerMatch) -> Result<(), String> {
    let named = [
        entry.npm.is_some(),
        entry.pypi.is_some(),
        entry.command.is_some(),
        entry.url.is_some(),
        entry.registry.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if named != 1 {
        return Err(
            "name exactly one of npm, pypi, command, url or registry in each entry".to_owned(),
        );
    }
    for pattern in [
        &entry.npm,
        &entry.pypi,
        &entry.command,
        &entry.url,
        &entry.registry,
    ]
    .into_iter()
    .flatten()
    {
        glob(pattern)?;
    }
    match (&entry.version, &entry.npm, &entry.pypi) {
        (None, ..) => Ok(()),
        (Some(range), Some(_), _) => node_semver::Range::parse(range)
            .map(|_| ())
            .map_err(|e| format!("version {range:?} is not an npm range: {e}")),
        (Some(range), _, Some(_)) => pep440_rs::VersionSpecifiers::from_str(range)
            .map(|_| ())
            .map_err(|e| format!("version {range:?} is not a PEP 440 specifier: {e}")),
        (Some(_), None, None) => Err("a version goes with npm or pypi only".to_owned()),
    }
}

/// Whether `entry` names what `runs` runs (a server added from a registry by `registry`).
pub(crate) fn matches(entry: &ServerMatch, runs: &Runs, registry: Option<&str>) -> bool {
    let is = |pattern: &Option<String>, value: Option<&str>| match (pattern, value) {
        (Some(p), Some(v)) => glob(p).is_ok_and(|g| g.is_match(v)),
        _ => false,
    };
    let in_range = |npm: bool, version: &Option<String>| {
        let Some(range) = &entry.version else {
            return true;
        };
        let Some(version) = version else {
            // Unpinned: whatever the registry serves today, which no range can vouch for.
            return false;
        };
        if npm {
            match (
                node_semver::Range::parse(range),
                node_semver::Version::parse(version),
            ) {
                (Ok(r), Ok(v)) => r.satisfies(&v),
                _ => false,
            }
        } else {
            match (
                pep440_rs::VersionSpecifiers::from_str(range),
                pep440_rs::Version::from_str(version),
            ) {
                (Ok(r), Ok(v)) => r.contains(&v),
                _ => false,
            }
        }
    };
    if let (Some(_), Some((name, version))) = (&entry.npm, &runs.npm) {
        return is(&entry.npm, Some(name)) && in_range(true, version);
    }
    if let (Some(pattern), Some((name, version))) = (&entry.pypi, &runs.pypi) {
        let pattern = Some(pattern.to_ascii_lowercase().replace(['_', '.'], "-"));
        return is(&pattern, Some(name)) && in_range(false, version);
    }
    is(&entry.command, runs.command.as_deref())
        || is(&entry.url, runs.url.as_deref())
        || is(&entry.registry, registry)
}

/// Where a server is about to start, for what the policy checks then: the PATH its program is
/// looked up on, and the owner (uid) of system places.
#[derive(Debug, Clone, Copy)]
pub struct Start<'a> {
    pub path: &'a std::ffi::OsStr,
    pub owner: u32,
}

/// The programs `server` may be said to run, for `command` entries: as written, as found on
/// the PATH, and what that leads to once links are followed. An allow entry must match one of
/// the last two (what runs), a deny entry any of the three.
fn programs(server: &ServerConfig, start: Option<Start<'_>>) -> (Vec<String>, Vec<String>) {
    let Transport::Stdio { command, cwd, .. } = &server.transport else {
        return (Vec::new(), Vec::new());
    };
    let Some(start) = start else {
        return (vec![command.clone()], vec![command.clone()]);
    };
    let here = cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let mut what_runs = Vec::new();
    if let Ok(found) = which::which_in(command, Some(start.path), &here) {
        // `/opt/mcp/../../home/me/x` would match `/opt/mcp/*` as written.
        let plain = !found
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
        if plain {
            what_runs.push(found.display().to_string());
        }
    }
    what_runs.push(
        crate::resolve::resolve(command, cwd.as_deref(), start.path)
            .display()
            .to_string(),
    );
    let mut any = what_runs.clone();
    any.push(command.clone());
    (what_runs, any)
}

/// Whether `entry` matches `server` with its program taken as any of `programs`, and its
/// address as written or normalised.
fn matches_any(
    entry: &ServerMatch,
    runs: &Runs,
    registry: Option<&str>,
    programs: &[String],
    urls: &[String],
) -> bool {
    if entry.command.is_some() {
        return programs.iter().any(|p| {
            let runs = Runs {
                command: Some(p.clone()),
                ..Runs::default()
            };
            matches(entry, &runs, None)
        });
    }
    if entry.url.is_some() {
        return urls.iter().any(|u| {
            let runs = Runs {
                url: Some(u.clone()),
                ..Runs::default()
            };
            matches(entry, &runs, None)
        });
    }
    matches(entry, runs, registry)
}

/// Why the organisation does not let a server run, naming what it runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmitError {
    #[error(
        "your organisation does not allow {}: it is on the organisation's deny list",
        runs.describe()
    )]
    Denied { runs: Box<Runs> },
    #[error(
        "your organisation runs only the servers it sets up, and {} is not one of them",
        runs.describe()
    )]
    OnlyItsOwn { runs: Box<Runs> },
    /// Allowed by its package, but not run through the real package launcher (`why`).
    #[error(
        "your organisation allows {} only through the real package launcher, and {why}",
        runs.describe()
    )]
    NotThroughLauncher { runs: Box<Runs>, why: String },
    #[error(
        "your organisation allows only the servers on its list, and {} is not on it",
        runs.describe()
    )]
    NotAllowed { runs: Box<Runs> },
    /// With `registryOnly`: a server not added from the organisation's registry at `url`.
    #[error(
        "your organisation runs only servers added from its registry ({url}), and {} was not",
        runs.describe()
    )]
    NotFromRegistry { url: String, runs: Box<Runs> },
    /// The policy names a remote document and no verified copy of it could be had: no server
    /// runs ([`crate::Managed::remote_unavailable`] says why).
    #[error("{0}")]
    RemoteUnavailable(String),
}

/// Whether the organisation lets `server` run; the refusal in words when not.
///
/// With `start` (a server about to start) the checks that need the machine are made too: a
/// `command` entry is matched against the program that runs (found on the PATH, links
/// followed), and a server the allow-list admits by its package must run it through the real
/// launcher (`crate::launcher`). Without it (a server being added to the settings), only what
/// the settings say is checked; the rest is checked at its every start.
pub fn admit(
    policy: &ServerPolicy,
    server: &ServerConfig,
    start: Option<Start<'_>>,
) -> Result<(), AdmitError> {
    let required = policy
        .required
        .iter()
        .any(|r| r.id == server.id && r.transport == server.transport);
    if required {
        return Ok(());
    }
    let runs = Runs::of(server);
    let registry = server.registry.as_ref().map(|r| r.name.as_str());
    let (what_runs, any_program) = programs(server, start);
    let urls: Vec<String> = match &runs.url {
        Some(url) => {
            let normal = crate::resolve::normalised_url(url);
            if start.is_some() {
                vec![normal]
            } else {
                vec![url.clone(), normal]
            }
        }
        None => Vec::new(),
    };
    let all_urls: Vec<String> = runs
        .url
        .iter()
        .cloned()
        .chain(urls.iter().cloned())
        .collect();
    if policy
        .deny
        .iter()
        .any(|e| matches_any(e, &runs, registry, &any_program, &all_urls))
    {
        return Err(AdmitError::Denied {
            runs: Box::new(runs),
        });
    }
    if !policy.allow_user_servers {
        return Err(AdmitError::OnlyItsOwn {
            runs: Box::new(runs),
        });
    }
    if policy.allow.is_empty() {
        return Ok(());
    }
    let mut launcher_refused = None;
    for entry in &policy.allow {
        if !matches_any(entry, &runs, registry, &what_runs, &urls) {
            continue;
        }
        let by_package = entry.npm.is_some() || entry.pypi.is_some();
        match start.filter(|_| by_package) {
            None => return Ok(()),
            Some(start) => match crate::launcher::check(server, &runs, start.path, start.owner) {
                Ok(()) => return Ok(()),
                Err(why) => launcher_refused = Some(why),
            },
        }
    }
    Err(match launcher_refused {
        Some(why) => AdmitError::NotThroughLauncher {
            runs: Box::new(runs),
            why,
        },
        None => AdmitError::NotAllowed {
            runs: Box::new(runs),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stdio(command: &str, args: &[&str]) -> ServerConfig {
        serde_json::from_value(json!({"id": "s", "name": "s", "transport": "stdio",
            "command": command, "args": args}))
        .expect("config")
    }

    fn admit_(p: &ServerPolicy, server: &ServerConfig) -> Result<(), String> {
        admit(p, server, None).map_err(|e| e.to_string())
    }

    fn policy(value: serde_json::Value) -> ServerPolicy {
        let policy: ServerPolicy = serde_json::from_value(value).expect("reads");
        for entry in policy.allow.iter().chain(&policy.deny) {
            check_match(entry).expect("valid");
        }
        policy
    }

    #[test]
    fn launchers_name_their_package_and_version() {
        let npm = |c: &str, a: &[&str]| Runs::of(&stdio(c, a)).npm;
        let pypi = |c: &str, a: &[&str]| Runs::of(&stdio(c, a)).pypi;
        let pin = |n: &str, v: Option<&str>| Some((n.to_owned(), v.map(str::to_owned)));
        assert_eq!(
            npm("npx", &["-y", "@scope/srv@1.2.3", "--flag"]),
            pin("@scope/srv", Some("1.2.3"))
        );
        assert_eq!(npm("npx", &["-y", "@scope/srv"]), pin("@scope/srv", None));
        assert_eq!(npm("npx", &["srv@latest"]), pin("srv", None));
        assert_eq!(
            npm("/usr/bin/npx.cmd", &["--yes", "srv@2.0.0"]),
            pin("srv", Some("2.0.0"))
        );
        assert_eq!(
            npm("npx", &["--package=@a/b@1.0.0", "bin"]),
            pin("@a/b", Some("1.0.0"))
        );
        assert_eq!(
            npm("npm", &["exec", "--yes", "srv@1.0.0"]),
            pin("srv", Some("1.0.0"))
        );
        assert_eq!(npm("pnpm", &["dlx", "srv"]), pin("srv", None));
        assert_eq!(
            pypi("uvx", &["mcp-server-time==2025.9.25"]),
            pin("mcp-server-time", Some("2025.9.25"))
        );
        assert_eq!(
            pypi("uvx", &["--python", "3.12", "Mcp_Server.Fetch@0.6.3"]),
            pin("mcp-server-fetch", Some("0.6.3"))
        );
        assert_eq!(
            pypi("uvx", &["--from", "pkg==1.0", "bin"]),
            pin("pkg", Some("1.0"))
        );
        assert_eq!(pypi("uv", &["tool", "run", "pkg"]), pin("pkg", None));
        assert_eq!(
            pypi("pipx", &["run", "--spec", "pkg==2", "x"]),
            pin("pkg", Some("2"))
        );
        assert_eq!(Runs::of(&stdio("node", &["server.js"])).npm, None);
    }

    #[test]
    fn deny_beats_allow_and_versions_must_be_pinned_to_match_a_range() {
        let p = policy(json!({
            "allow": [{"npm": "@modelcontextprotocol/*", "version": ">=2025.1.0"}, {"pypi": "mcp-server-time"}],
            "deny": [{"npm": "@modelcontextprotocol/server-filesystem"}],
        }));
        let everything = |v: &str| {
            stdio(
                "npx",
                &["-y", &format!("@modelcontextprotocol/server-everything{v}")],
            )
        };
        assert_eq!(admit_(&p, &everything("@2025.9.25")), Ok(()));
        let old = admit_(&p, &everything("@2024.1.0")).unwrap_err();
        assert!(
            old.contains("not on it") && old.contains("2024.1.0"),
            "{old}"
        );
        let unpinned = admit_(&p, &everything("")).unwrap_err();
        assert!(unpinned.contains("no version pinned"), "{unpinned}");
        let fs = admit_(
            &p,
            &stdio(
                "npx",
                &["-y", "@modelcontextprotocol/server-filesystem@2025.9.25"],
            ),
        )
        .unwrap_err();
        assert!(fs.contains("deny list"), "{fs}");
        assert_eq!(admit_(&p, &stdio("uvx", &["mcp-server-time"])), Ok(()));
        assert!(admit_(&p, &stdio("/opt/bin/thing", &[])).is_err());
    }

    #[test]
    fn commands_and_addresses_match_by_pattern() {
        let p = policy(
            json!({"deny": [{"command": "/opt/untrusted/*"}, {"url": "https://*.evil.example/*"}]}),
        );
        assert!(admit_(&p, &stdio("/opt/untrusted/srv", &[])).is_err());
        assert_eq!(admit_(&p, &stdio("/opt/ok/srv", &[])), Ok(()));
        let remote: ServerConfig = serde_json::from_value(json!({"id": "r", "name": "r",
            "transport": "http", "url": "https://mcp.evil.example/mcp"}))
        .expect("config");
        assert!(admit_(&p, &remote)
            .unwrap_err()
            .contains("https://mcp.evil.example/mcp"));
    }

    #[test]
    fn without_user_servers_only_the_required_ones_run() {
        let p = policy(json!({"allowUserServers": false, "required": [
            {"id": "org", "name": "Org", "transport": "stdio", "command": "/opt/org/mcp"}]}));
        assert_eq!(admit_(&p, &p.required[0].clone()), Ok(()));
        let mut impostor = p.required[0].clone();
        impostor.transport = stdio("/tmp/other", &[]).transport;
        assert!(admit_(&p, &impostor).is_err(), "same id, other program");
        assert!(admit_(&p, &stdio("npx", &["x@1.0.0"]))
            .unwrap_err()
            .contains("only the servers it sets up"));
    }

    #[test]
    fn bad_entries_are_refused_when_read() {
        for bad in [
            json!({"deny": [{"npm": "a", "pypi": "b"}]}),
            json!({"deny": [{}]}),
            json!({"allow": [{"npm": "a", "version": "not a range !!"}]}),
            json!({"allow": [{"command": "/x", "version": "1"}]}),
            json!({"allow": [{"npm": "a["}]}),
        ] {
            assert!(
                crate::Document::parse(json!({ "servers": bad })).is_err(),
                "{bad}"
            );
        }
    }

    /// The review's case: an allow-list of `@modelcontextprotocol/*` admitted the user's own
    /// script named `npx`, given a flag the parser skipped.
    #[cfg(unix)]
    #[test]
    fn the_users_own_npx_is_not_admitted_by_the_package_allow_list() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let p = policy(json!({"allow": [{"npm": "@modelcontextprotocol/*"}]}));
        let home = std::env::temp_dir().join(format!("own-npx-{}", std::process::id()));
        let bin = home.join("bin");
        std::fs::create_dir_all(&bin).expect("dir");
        let npx = bin.join("npx");
        std::fs::write(&npx, "#!/bin/sh\nexec /bin/sh -c \"$3\"\n").expect("script");
        std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).expect("mode");
        // The user's folder, as a user's is: theirs, not the system's.
        let system = std::fs::metadata(&bin).expect("dir").uid().wrapping_add(1);
        let path = bin.clone().into_os_string();
        let start = Some(Start {
            path: &path,
            owner: system,
        });
        let server = stdio(
            "npx",
            &[
                "--node-options=--require=/tmp/evil.js",
                "@modelcontextprotocol/server-memory",
            ],
        );
        assert_eq!(
            admit(&p, &server, None),
            Ok(()),
            "the settings alone name the package"
        );
        let refused = admit(&p, &server, start).unwrap_err().to_string();
        assert!(refused.contains("real package launcher"), "{refused}");
        // Known flags only, but still the user's own npx.
        let plain = stdio("npx", &["-y", "@modelcontextprotocol/server-memory"]);
        let refused = admit(&p, &plain, start).unwrap_err().to_string();
        assert!(refused.contains("not a system program"), "{refused}");
        let _ = std::fs::remove_dir_all(&home);
    }

    #[cfg(unix)]
    #[test]
    fn command_entries_match_the_program_that_runs() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("commands-{}", std::process::id()));
        let untrusted = dir.join("untrusted");
        let mine = dir.join("mine");
        std::fs::create_dir_all(&untrusted).expect("dir");
        std::fs::create_dir_all(&mine).expect("dir");
        let srv = untrusted.join("srv");
        std::fs::write(&srv, "").expect("file");
        std::fs::set_permissions(&srv, std::fs::Permissions::from_mode(0o755)).expect("mode");
        let link = mine.join("innocent");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&srv, &link).expect("link");
        let p = policy(json!({"deny": [{"command": format!("{}/*", untrusted.display())}]}));
        let path = mine.clone().into_os_string();
        let start = Some(Start {
            path: &path,
            owner: 0,
        });
        // By a link, or by name on the PATH: what runs is the denied program.
        assert!(admit(&p, &stdio(&link.to_string_lossy(), &[]), start).is_err());
        assert!(admit(&p, &stdio("innocent", &[]), start).is_err());
        let allow = policy(json!({"allow": [{"command": format!("{}/*", untrusted.display())}]}));
        let dodge = format!("{}/../mine/innocent", untrusted.display());
        let other = mine.join("other");
        std::fs::write(&other, "").expect("file");
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).expect("mode");
        let dodge_other = format!("{}/../mine/other", untrusted.display());
        assert!(admit(&allow, &stdio(&dodge_other, &[]), start).is_err());
        assert_eq!(
            admit(&allow, &stdio(&dodge, &[]), start),
            Ok(()),
            "it runs srv"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
