//! A server the allow-list admits by its package (`{"npm": "@scope/*"}`) must really run that
//! package: an entry that names a package vouches for the package, not for whatever program
//! calls itself `npx`.
//!
//! So such a server is admitted only when
//!
//! - its command line is one Toolgate pins (`npx [-y|--yes|-q|--quiet] [--] PACKAGE[@VERSION] …`
//!   or `uvx [--from PACKAGE] [-q|--quiet] COMMAND …`; `toolgate_install::Source`), naming the
//!   same package the allow-list matched: any other flag (`--registry`, `--node-options`,
//!   `--with`, `--index-url`, `-p`, `-c`, …) is refused, never skipped, and the pinned install
//!   cannot fall back to running the raw command line;
//! - the version asked for is a version, range or tag, never a path, URL or alias
//!   (`@x/y@npm:other`, `@x/y@user/repo`);
//! - the launcher and the tools that install and run the package (`npm` and `node`, or
//!   `python3`) are found, on the PATH servers start with, in a place only the system's owner
//!   (root) can change: the file, every folder above it and what its links lead to owned by
//!   root and writable by no one else (a world-writable folder only with the sticky bit, as
//!   `/tmp` and `/nix/store` are, which keeps others from replacing root's entries in it).
//!   Ownership and modes are read, never `access(2)`: run as root, everything is writable,
//!   which would say nothing;
//! - the server's environment sets neither `PATH` nor anything that makes a program load other
//!   code (`NODE_OPTIONS`, `LD_PRELOAD`, …), even with the user's `allowEnv`.

use std::ffi::OsStr;
use std::path::Path;

use toolgate_install::{Ecosystem, Source};
use toolgate_settings::{ServerConfig, Transport};

/// What the allow-list matched: the npm or PyPI package (name, version) a server runs.
pub(crate) trait Matched {
    fn npm(&self) -> Option<&str>;
    fn pypi(&self) -> Option<&str>;
}

/// Checks that `server`, admitted by the package `runs` names, runs it through the real
/// launcher; `path` is the PATH servers start with, `owner` the uid system places belong to
/// (root).
pub(crate) fn check(
    server: &ServerConfig,
    runs: &dyn Matched,
    path: &OsStr,
    owner: u32,
) -> Result<(), String> {
    let Transport::Stdio {
        command,
        args,
        env,
        cwd,
    } = &server.transport
    else {
        return Err("a remote server is not run by a package launcher".to_owned());
    };
    let line = || format!("{command} {}", args.join(" "));
    let source = Source::of(command, args).ok_or_else(|| {
        format!(
            "its command line `{}` is not one Toolgate pins: a package on the organisation's list runs only as `npx [-y] PACKAGE[@VERSION] …` or `uvx [--from PACKAGE] COMMAND …`, with no other flag",
            line()
        )
    })?;
    let (matched, ecosystem) = match (runs.npm(), runs.pypi()) {
        (Some(name), _) => (name.to_owned(), Ecosystem::Npm),
        (_, Some(name)) => (name.to_owned(), Ecosystem::Pypi),
        _ => return Err(format!("`{}` names no package", line())),
    };
    let package = match source.ecosystem {
        Ecosystem::Npm => source.package.clone(),
        Ecosystem::Pypi => source.package.to_ascii_lowercase().replace(['_', '.'], "-"),
    };
    if source.ecosystem != ecosystem || package != matched {
        return Err(format!(
            "`{}` would install {} but was matched as {matched}",
            line(),
            source.package
        ));
    }
    check_names(&source)?;
    if let Some(name) = env
        .keys()
        .find(|name| name.eq_ignore_ascii_case("PATH") || toolgate_settings::hijacks_process(name))
    {
        return Err(format!(
            "its environment sets {name}, which could make the launcher run other code"
        ));
    }
    let tools: &[&str] = match source.ecosystem {
        Ecosystem::Npm => &["npm", "node"],
        Ecosystem::Pypi => &["python3"],
    };
    let here = cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let launcher = which::which_in(command, Some(path), &here)
        .map_err(|_| format!("its launcher {command} was not found"))?;
    system_file(&launcher, owner).map_err(|why| format!("its launcher {command}: {why}"))?;
    for tool in tools {
        // A tool not on the PATH cannot be shadowed there; the launcher finds its own or fails.
        if let Ok(found) = which::which_in(tool, Some(path), &here) {
            system_file(&found, owner)
                .map_err(|why| format!("{tool}, which installs or runs it: {why}"))?;
        }
    }
    Ok(())
}

/// The package's name and the version asked for are registry names, not paths, URLs or
/// aliases; `uvx --from` runs one of the package's own commands, not an interpreter.
fn check_names(source: &Source) -> Result<(), String> {
    let name_ok = |name: &str| {
        let bare = match source.ecosystem {
            Ecosystem::Npm => name
                .strip_prefix('@')
                .and_then(|s| s.split_once('/'))
                .map_or(Some(name), |(scope, rest)| {
                    (!scope.is_empty()).then_some(rest)
                }),
            Ecosystem::Pypi => Some(name.split('[').next().unwrap_or(name)),
        };
        bare.is_some_and(|b| {
            !b.is_empty()
                && !b.starts_with('.')
                && b.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.~".contains(c))
        })
    };
    if !name_ok(&source.package) {
        return Err(format!(
            "{:?} is not a package name of its registry",
            source.package
        ));
    }
    if let Some(spec) = &source.spec {
        let allowed = |c: char| c.is_ascii_alphanumeric() || ".-_^~<>=!*+ |,".contains(c);
        if spec.is_empty() || !spec.chars().all(allowed) {
            return Err(format!(
                "the version {spec:?} is not a version, range or tag (a path, URL or alias installs something else)"
            ));
        }
    }
    if let Some(command) = &source.command {
        let lower = command.to_ascii_lowercase();
        let interpreter = ["python", "pip", "uv", "pypy"]
            .iter()
            .any(|p| lower.starts_with(p));
        if interpreter || !name_ok(command) {
            return Err(format!(
                "`{command}` is not one of the package's own commands"
            ));
        }
    }
    Ok(())
}

/// Whether `file` could only have been written by `owner`: it as found, and what its links
/// lead to.
#[cfg(unix)]
pub(crate) fn system_file(file: &Path, owner: u32) -> Result<(), String> {
    let real = std::fs::canonicalize(file).map_err(|e| format!("{}: {e}", file.display()))?;
    unchangeable(file, owner)?;
    unchangeable(&real, owner)
}

#[cfg(not(unix))]
pub(crate) fn system_file(_file: &Path, _owner: u32) -> Result<(), String> {
    // Not verified on Windows: Program Files is writable by administrators only, but a user's
    // own folder on PATH is not told apart here.
    Ok(())
}

/// Every entry from `/` down to `path`, each read without following it: owned by `owner`,
/// writable by no one else; a folder others may write only with the sticky bit, where no one
/// else can replace the entries that belong to `owner`.
#[cfg(unix)]
pub(crate) fn unchangeable(path: &Path, owner: u32) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    use std::path::{Component, PathBuf};
    if !path.is_absolute() {
        return Err(format!("{} is not an absolute path", path.display()));
    }
    let mut at = PathBuf::from("/");
    let mut entries = vec![at.clone()];
    for component in path.components() {
        match component {
            Component::Normal(name) => {
                at.push(name);
                entries.push(at.clone());
            }
            Component::ParentDir => {
                return Err(format!("{} is not a plain path", path.display()));
            }
            _ => {}
        }
    }
    let last = entries.len() - 1;
    for (i, entry) in entries.iter().enumerate() {
        let meta =
            std::fs::symlink_metadata(entry).map_err(|e| format!("{}: {e}", entry.display()))?;
        if meta.uid() != owner {
            return Err(format!(
                "{} belongs to user {}, not {owner}, so it is not a system program",
                entry.display(),
                meta.uid()
            ));
        }
        let others_write = meta.mode() & 0o022 != 0;
        let sticky = meta.mode() & 0o1000 != 0;
        let fine = meta.file_type().is_symlink() || !others_write || (i < last && sticky);
        if !fine {
            return Err(format!(
                "{} can be changed by other users (mode {:o}), so it is not a system program",
                entry.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
}
