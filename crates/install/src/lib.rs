//! Servers pinned to an exact version and installed by Toolgate, instead of whatever the
//! registry serves at each start.
//!
//! A server whose command line is `npx [-y] PACKAGE[@SPEC] …` or `uvx [--from SPEC] PACKAGE[==V] …`
//! ([`Source::of`]) is, at its first start:
//!
//! 1. **resolved** to one exact version: `npm view PACKAGE@SPEC version`, or pip's resolution
//!    report (`pip install --dry-run --report`), which also gives every file's sha256;
//! 2. **installed** into a folder of its own for that version
//!    (`<packages>/<server>/<version>/`): npm with `--ignore-scripts` (no code of the package
//!    or its dependencies runs while installing) and its `package-lock.json` (every file's
//!    integrity hash), or a venv with `pip install --require-hashes --only-binary=:all:` from
//!    a `requirements.txt` of exact versions and hashes (wheels only: no build step runs);
//! 3. **recorded** ([`Record`], `record.json` beside the version folders) and run from there at
//!    every start after, with no registry asked: a restart works offline.
//!
//! A newer version is only offered ([`latest`]); [`install`] of it writes a new folder and
//! switches the record, keeping the old one. npm and pip keep their caches, so installing again
//! works offline where the files are cached, and says clearly when they are not.
//!
//! What this does not catch: a version that was malicious when first installed, and a package
//! that downloads code itself when it runs (the sandbox's network setting is what limits that).

mod npm;
mod pypi;
mod record;
mod source;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use record::Record;
pub use source::{Ecosystem, Source};

/// Why a server could not be pinned and installed, in words for its card.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{0}")]
    Failed(String),
    #[error("{what} took longer than {} s", .after.as_secs())]
    TimedOut { what: String, after: Duration },
}

/// How long one registry query or install may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(300);

/// Where a server's versions and record live.
pub fn folder_of(packages: &Path, server: &str) -> PathBuf {
    packages.join(server)
}

/// The version `source` resolves to now (its spec, or the newest when it has none).
pub async fn latest(source: &Source, path: &str) -> Result<String, InstallError> {
    match source.ecosystem {
        Ecosystem::Npm => npm::resolve(source, path).await,
        Ecosystem::Pypi => pypi::resolve_version(source, path).await,
    }
}

/// Resolves `source` (to `version` when given), installs it under `folder` (a server's
/// [`folder_of`]) and records it for the command line `line`. `path` is the PATH npm, node
/// and python3 are found on. Progress lines go to `said`.
pub async fn install(
    source: &Source,
    version: Option<&str>,
    folder: &Path,
    line: &str,
    path: &str,
    said: &(dyn Fn(&str) + Send + Sync),
) -> Result<Record, InstallError> {
    let made = |e: std::io::Error| {
        InstallError::Failed(format!("could not make {}: {e}", folder.display()))
    };
    // Absolute: the tools run in the folder itself, and the record must hold wherever it is read.
    // Never in Windows' verbatim form (`\\?\C:\…`, what canonicalizing gives): npm cannot walk
    // up from one (it recurses until its stack is exhausted).
    let folder = dunce::simplified(&std::path::absolute(folder).map_err(made)?).to_path_buf();
    let (version, program) = match source.ecosystem {
        Ecosystem::Npm => {
            let version = match version {
                Some(v) => v.to_owned(),
                // An exact version needs no registry: installing again works from the cache.
                None => match source.spec.as_deref().filter(|s| npm::exact(s)) {
                    Some(exact) => exact.to_owned(),
                    None => npm::resolve(source, path).await?,
                },
            };
            let at = version_folder(&folder, &version, source, said)?;
            let program = npm::install(source, &version, &at, path, said).await?;
            (version, program)
        }
        // pip's own resolution report names the version: one venv, one resolution.
        Ecosystem::Pypi => {
            let staging = folder.join(".resolving");
            let _ = std::fs::remove_dir_all(&staging);
            std::fs::create_dir_all(&staging).map_err(made)?;
            let (version, program) =
                pypi::install(source, version, &staging, &folder, path, said).await?;
            (version, program)
        }
    };
    let record = Record {
        ecosystem: source.ecosystem,
        package: source.package.clone(),
        requested: source.spec.clone(),
        folder: program_folder(&folder, &version),
        version,
        program,
        line: line.to_owned(),
    };
    record.save(&folder)?;
    Ok(record)
}

/// A version's folder in a server's folder.
fn program_folder(folder: &Path, version: &str) -> PathBuf {
    folder.join(record::safe_name(version))
}

/// Makes a version's folder, saying what goes there.
pub(crate) fn version_folder(
    folder: &Path,
    version: &str,
    source: &Source,
    said: &(dyn Fn(&str) + Send + Sync),
) -> Result<PathBuf, InstallError> {
    let at = program_folder(folder, version);
    std::fs::create_dir_all(&at)
        .map_err(|e| InstallError::Failed(format!("could not make {}: {e}", at.display())))?;
    said(&format!(
        "installing {} {version} into {}",
        source.package,
        at.display()
    ));
    Ok(at)
}

/// Runs `program args` with PATH `path`; its output, or why it failed in words.
pub(crate) async fn run(
    program: &str,
    args: &[String],
    path: &str,
    cwd: Option<&Path>,
) -> Result<String, InstallError> {
    // Found as a shell would, on `path`: on Windows through PATHEXT too (`npm` is `npm.cmd`),
    // which `Command` alone does not do.
    let here = cwd
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let found = which::which_in(program, Some(path), here).map_err(|_| {
        InstallError::Failed(format!("{program} was not found on the PATH ({path})"))
    })?;
    let mut command = tokio::process::Command::new(found);
    command
        .args(args)
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    // Dropped with the install (a cancelled start), and killed with Toolgate too: an npm or pip
    // left running would go on writing into Toolgate's folders after it ended.
    toolgate_sandbox::die_with_toolgate(command.as_std_mut());
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let shown = format!("{program} {}", args.join(" "));
    let output = match tokio::time::timeout(STEP_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(InstallError::Failed(format!("{shown} could not run: {e}"))),
        Err(_) => {
            return Err(InstallError::TimedOut {
                what: shown,
                after: STEP_TIMEOUT,
            })
        }
    };
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last: Vec<&str> = stderr.lines().rev().take(6).collect();
    let offline = stderr.contains("ENOTCACHED")
        || stderr.contains("ENOTFOUND")
        || stderr.contains("EAI_AGAIN")
        || stderr.contains("ENETUNREACH")
        || stderr.contains("ECONNREFUSED")
        || stderr.contains("Network is unreachable")
        || stderr.contains("Failed to establish a new connection")
        || stderr.contains("No matching distribution");
    let hint = if offline {
        " (the registry could not be reached and the files are not in the cache: connect to \
         the network and start it again)"
    } else {
        ""
    };
    Err(InstallError::Failed(format!(
        "{shown} failed{hint}: {}",
        last.into_iter().rev().collect::<Vec<_>>().join(" | ")
    )))
}
