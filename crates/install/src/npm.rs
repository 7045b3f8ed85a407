//! npm: `npm view` to resolve, `npm install --ignore-scripts` into the version's folder.

use std::path::{Path, PathBuf};

use crate::{run, InstallError, Source};

fn wanted(source: &Source) -> String {
    match &source.spec {
        Some(spec) => format!("{}@{spec}", source.package),
        None => source.package.clone(),
    }
}

/// Whether a spec names one version (`2026.8.31`, `1.2.3-beta.1`), not a range or a tag.
pub(crate) fn exact(spec: &str) -> bool {
    let core = spec.split(['-', '+']).next().unwrap_or(spec);
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// npm's waits before it asks the registry again: 2 s, then 10 s. npm's own (10 s, then 60 s) kept
/// a user with no network waiting over a minute for the failure to be said; the number of tries
/// and each request's own time limit stay npm's (or the user's `.npmrc`).
const RETRY_WAITS: [&str; 2] = [
    "--fetch-retry-mintimeout=2000",
    "--fetch-retry-maxtimeout=10000",
];

/// The exact version `source` names now: its spec's newest match, or the newest.
pub(crate) async fn resolve(source: &Source, path: &str) -> Result<String, InstallError> {
    let out = run(
        "npm",
        &[
            "view".into(),
            wanted(source),
            "version".into(),
            "--json".into(),
            RETRY_WAITS[0].into(),
            RETRY_WAITS[1].into(),
        ],
        path,
        None,
    )
    .await?;
    let versions: serde_json::Value = serde_json::from_str(out.trim())
        .map_err(|_| InstallError::Failed(format!("npm found no version of {}", wanted(source))))?;
    let version = match versions {
        serde_json::Value::String(v) => Some(v),
        serde_json::Value::Array(all) => all
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .next_back(),
        _ => None,
    };
    version
        .ok_or_else(|| InstallError::Failed(format!("npm found no version of {}", wanted(source))))
}

/// The program a package's `package.json` names in `bin`: its only one, or the one named as
/// the package (without its scope).
pub(crate) fn bin_of(manifest: &serde_json::Value, package: &str) -> Result<String, String> {
    let unscoped = package.rsplit('/').next().unwrap_or(package);
    match manifest.get("bin") {
        Some(serde_json::Value::String(_)) => Ok(unscoped.to_owned()),
        Some(serde_json::Value::Object(bins)) if bins.len() == 1 => {
            Ok(bins.keys().next().cloned().unwrap_or_default())
        }
        Some(serde_json::Value::Object(bins)) if bins.contains_key(unscoped) => {
            Ok(unscoped.to_owned())
        }
        Some(serde_json::Value::Object(bins)) => Err(format!(
            "{package} has several programs ({}); run one with `npx -p {package} NAME`",
            bins.keys().cloned().collect::<Vec<_>>().join(", ")
        )),
        _ => Err(format!(
            "{package} has no program to run (no \"bin\" in its package.json)"
        )),
    }
}

/// Installs `source` at `version` into `at`; returns the program to run.
pub(crate) async fn install(
    source: &Source,
    version: &str,
    at: &Path,
    path: &str,
    said: &(dyn Fn(&str) + Send + Sync),
) -> Result<PathBuf, InstallError> {
    let out = run(
        "npm",
        &[
            "install".into(),
            "--prefix".into(),
            at.to_string_lossy().into_owned(),
            // No code of the package or its dependencies runs while installing.
            "--ignore-scripts".into(),
            "--save-exact".into(),
            "--package-lock=true".into(),
            "--prefer-offline".into(),
            "--no-audit".into(),
            "--no-fund".into(),
            "--loglevel=error".into(),
            RETRY_WAITS[0].into(),
            RETRY_WAITS[1].into(),
            format!("{}@{version}", source.package),
        ],
        path,
        Some(at),
    )
    .await?;
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        said(line);
    }
    let manifest_path = at
        .join("node_modules")
        .join(&source.package)
        .join("package.json");
    let manifest: serde_json::Value = std::fs::read_to_string(&manifest_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| {
            InstallError::Failed(format!("{} was not installed", manifest_path.display()))
        })?;
    let name = bin_of(&manifest, &source.package).map_err(InstallError::Failed)?;
    // Unix: npm's link to the script (its shebang names node). Windows: the script itself, run
    // by node (`Record::interpreter`): npm's `.cmd` shim would need cmd.exe and its quoting.
    let program = if cfg!(windows) {
        let script = bin_script(&manifest, &name).ok_or_else(|| {
            InstallError::Failed(format!("{} names no script for {name}", source.package))
        })?;
        at.join("node_modules").join(&source.package).join(script)
    } else {
        at.join("node_modules").join(".bin").join(&name)
    };
    if !program.exists() {
        return Err(InstallError::Failed(format!(
            "{} is missing after installing {}",
            program.display(),
            source.package
        )));
    }
    if !at.join("package-lock.json").is_file() {
        return Err(InstallError::Failed(
            "npm wrote no package-lock.json: the install is not locked".into(),
        ));
    }
    Ok(program)
}

/// The script a package's `bin` names for `name` (`dist/index.js`), relative to the package.
fn bin_script(manifest: &serde_json::Value, name: &str) -> Option<String> {
    match manifest.get("bin")? {
        serde_json::Value::String(script) => Some(script.clone()),
        serde_json::Value::Object(bins) => bins.get(name)?.as_str().map(str::to_owned),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_whole_version_is_exact() {
        for (spec, is) in [
            ("2026.8.31", true),
            ("1.2.3-beta.1", true),
            ("^1.2.3", false),
            ("1.2", false),
            ("latest", false),
            ("1.x.3", false),
        ] {
            assert_eq!(exact(spec), is, "{spec}");
        }
    }

    #[test]
    fn the_program_is_the_only_one_or_the_one_named_as_the_package() {
        let p = "@modelcontextprotocol/server-memory";
        assert_eq!(
            bin_of(&json!({"bin": {"mcp-server-memory": "dist/index.js"}}), p).unwrap(),
            "mcp-server-memory"
        );
        assert_eq!(
            bin_of(&json!({"bin": "cli.js"}), p).unwrap(),
            "server-memory"
        );
        assert_eq!(
            bin_of(&json!({"bin": {"a": "a.js", "server-memory": "s.js"}}), p).unwrap(),
            "server-memory"
        );
        assert!(bin_of(&json!({"bin": {"a": "a.js", "b": "b.js"}}), p)
            .unwrap_err()
            .contains("a, b"));
        assert!(bin_of(&json!({}), p).unwrap_err().contains("no program"));
    }
}
