//! Which package a command line runs, read from `npx` and `uvx` command lines.

use serde::{Deserialize, Serialize};

/// The registry a package comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Ecosystem {
    Npm,
    Pypi,
}

/// A package a server's command line names, and the program of it that runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub ecosystem: Ecosystem,
    /// Its name (`@modelcontextprotocol/server-memory`, `mcp-server-time`).
    pub package: String,
    /// The version or range the command line asked for, if any (`2026.8.31`, `^1`, `>=1.2`).
    pub spec: Option<String>,
    /// The program of the package that runs: for uvx the command named, for npx the package's
    /// own (found in its `bin` when installed).
    pub command: Option<String>,
    /// The arguments after the package, given to its program.
    pub args: Vec<String>,
}

fn file_name(program: &str) -> &str {
    program.rsplit(['/', '\\']).next().unwrap_or(program)
}

/// Whether `name` is a registry package name (not a path, a URL, a git or tarball spec).
fn registry_name(name: &str) -> bool {
    !name.is_empty()
        && !name.contains(':')
        && !name.starts_with('.')
        && !name.starts_with('/')
        && !name.ends_with(".tgz")
        && !name.ends_with(".whl")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@/-_.[]".contains(c))
}

impl Source {
    /// The package `command args` runs, when it is an `npx` or `uvx` line Toolgate can pin.
    /// `None` for anything else (a local program, a `-p`/`--with` combination, a git URL):
    /// those run as they are.
    pub fn of(command: &str, args: &[String]) -> Option<Source> {
        match file_name(command) {
            "npx" => npx(args),
            "uvx" => uvx(args),
            _ => None,
        }
    }
}

fn npx(args: &[String]) -> Option<Source> {
    let mut rest = args.iter();
    let first = loop {
        let arg = rest.next()?;
        match arg.as_str() {
            "-y" | "--yes" | "-q" | "--quiet" => {}
            "--" => break rest.next()?,
            a if a.starts_with('-') => return None,
            _ => break arg,
        }
    };
    let (package, spec) = match first.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('@') {
            Some((name, spec)) => (format!("@{name}"), Some(spec.to_owned())),
            None => (first.clone(), None),
        },
        None => match first.split_once('@') {
            Some((name, spec)) => (name.to_owned(), Some(spec.to_owned())),
            None => (first.clone(), None),
        },
    };
    if !registry_name(&package)
        || spec
            .as_deref()
            .is_some_and(|s| s.is_empty() || s.contains(':'))
    {
        return None;
    }
    Some(Source {
        ecosystem: Ecosystem::Npm,
        package,
        spec,
        command: None,
        args: rest.cloned().collect(),
    })
}

/// `name==1.2`, `name@1.2` or `name`; extras (`name[cli]`) kept in the name.
fn python_spec(text: &str) -> (String, Option<String>) {
    for separator in ["==", "@", ">=", "~="] {
        if let Some((name, version)) = text.split_once(separator) {
            let spec = if separator == "@" || separator == "==" {
                format!("=={version}")
            } else {
                format!("{separator}{version}")
            };
            return (name.to_owned(), Some(spec));
        }
    }
    (text.to_owned(), None)
}

fn uvx(args: &[String]) -> Option<Source> {
    let mut rest = args.iter();
    let mut from = None;
    let command = loop {
        let arg = rest.next()?;
        match arg.as_str() {
            "--from" => from = Some(rest.next()?.clone()),
            a if a.starts_with("--from=") => from = Some(a["--from=".len()..].to_owned()),
            "-q" | "--quiet" => {}
            a if a.starts_with('-') => return None,
            _ => break arg.clone(),
        }
    };
    let (package, spec) = python_spec(from.as_deref().unwrap_or(&command));
    if !registry_name(&package) {
        return None;
    }
    // The program is the command named, without a version (`uvx mcp-server-time==1`).
    let (program, _) = python_spec(&command);
    let program = program.split('[').next().unwrap_or(&program).to_owned();
    Some(Source {
        ecosystem: Ecosystem::Pypi,
        package,
        spec,
        command: Some(program),
        args: rest.cloned().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn npx_lines_name_their_package_and_version() {
        let s = Source::of(
            "npx",
            &strings(&[
                "-y",
                "@modelcontextprotocol/server-filesystem@2026.8.31",
                "/tmp",
            ]),
        )
        .unwrap();
        assert_eq!(s.ecosystem, Ecosystem::Npm);
        assert_eq!(s.package, "@modelcontextprotocol/server-filesystem");
        assert_eq!(s.spec.as_deref(), Some("2026.8.31"));
        assert_eq!(s.args, ["/tmp"]);
        let s = Source::of("/usr/bin/npx", &strings(&["@scope/pkg"])).unwrap();
        assert_eq!((s.package.as_str(), s.spec), ("@scope/pkg", None));
        let s = Source::of("npx", &strings(&["mcp-remote@^1", "https://x"])).unwrap();
        assert_eq!(
            (s.package.as_str(), s.spec.as_deref()),
            ("mcp-remote", Some("^1"))
        );
        for unpinnable in [
            &["-p", "a", "cmd"][..],
            &["github:user/repo"],
            &["./local"],
            &["pkg@git+https://x"],
            &["-y"],
        ] {
            assert_eq!(
                Source::of("npx", &strings(unpinnable)),
                None,
                "{unpinnable:?}"
            );
        }
    }

    #[test]
    fn uvx_lines_name_their_package_version_and_program() {
        let s = Source::of(
            "uvx",
            &strings(&["mcp-server-time==2026.10.19", "--tz", "UTC"]),
        )
        .unwrap();
        assert_eq!(s.ecosystem, Ecosystem::Pypi);
        assert_eq!(s.package, "mcp-server-time");
        assert_eq!(s.spec.as_deref(), Some("==2026.10.19"));
        assert_eq!(s.command.as_deref(), Some("mcp-server-time"));
        assert_eq!(s.args, ["--tz", "UTC"]);
        let s = Source::of("uvx", &strings(&["mcp-server-fetch@2026.10.24"])).unwrap();
        assert_eq!(s.spec.as_deref(), Some("==2026.10.24"));
        let s = Source::of(
            "uvx",
            &strings(&["--from", "some-tools[cli]>=1.2", "serve"]),
        )
        .unwrap();
        assert_eq!(s.package, "some-tools[cli]");
        assert_eq!(s.spec.as_deref(), Some(">=1.2"));
        assert_eq!(s.command.as_deref(), Some("serve"));
        assert_eq!(Source::of("uvx", &strings(&["--with", "x", "cmd"])), None);
        assert_eq!(
            Source::of("uvx", &strings(&["--from", "git+https://x", "cmd"])),
            None
        );
        assert_eq!(Source::of("python3", &strings(&["server.py"])), None);
    }
}
