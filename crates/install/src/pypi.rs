//! PyPI: pip's resolution report (exact versions and each file's sha256), then a venv
//! installed from a `requirements.txt` with `--require-hashes`, wheels only.

use std::path::{Path, PathBuf};

use crate::{run, InstallError, Source};

const PIP: [&str; 2] = ["--disable-pip-version-check", "--quiet"];

/// A Python package name as pip compares them (PEP 503), without its extras.
fn normalised(name: &str) -> String {
    name.split('[')
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase()
        .replace(['_', '.'], "-")
}

/// One line of `requirements.txt` per package pip would install: exact version and hash.
pub(crate) fn requirements(
    report: &serde_json::Value,
) -> Result<(String, Vec<(String, String)>), String> {
    let items = report
        .get("install")
        .and_then(|i| i.as_array())
        .ok_or("pip's report lists nothing to install")?;
    let mut lines = String::new();
    let mut versions = Vec::new();
    for item in items {
        let name = item.pointer("/metadata/name").and_then(|v| v.as_str());
        let version = item.pointer("/metadata/version").and_then(|v| v.as_str());
        let hash = item
            .pointer("/download_info/archive_info/hashes/sha256")
            .and_then(|v| v.as_str());
        let (Some(name), Some(version), Some(hash)) = (name, version, hash) else {
            return Err("pip's report has a package without a name, version or sha256".into());
        };
        lines.push_str(&format!("{name}=={version} --hash=sha256:{hash}\n"));
        versions.push((normalised(name), version.to_owned()));
    }
    Ok((lines, versions))
}

async fn report(
    pip: &str,
    requirement: &str,
    at: &Path,
    path: &str,
) -> Result<serde_json::Value, InstallError> {
    let file = at.join("report.json");
    let mut args: Vec<String> = vec!["install".into()];
    args.extend(PIP.map(String::from));
    args.extend([
        "--dry-run".into(),
        "--ignore-installed".into(),
        "--only-binary=:all:".into(),
        "--report".into(),
        file.to_string_lossy().into_owned(),
        requirement.into(),
    ]);
    run(pip, &args, path, Some(at)).await?;
    std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| InstallError::Failed("pip wrote no resolution report".into()))
}

/// Makes a venv in `at` (with pip, or without when another pip installs into it); returns its
/// pip or its python.
async fn venv(at: &Path, path: &str, with_pip: bool) -> Result<String, InstallError> {
    let venv = at.join("venv");
    let mut args = vec!["-m".into(), "venv".into()];
    if !with_pip {
        args.push("--without-pip".into());
    }
    args.push(venv.to_string_lossy().into_owned());
    run(PYTHON, &args, path, Some(at)).await?;
    let program = venv_program(&venv, if with_pip { "pip" } else { "python" });
    Ok(program.to_string_lossy().into_owned())
}

/// The Python that makes venvs: `python3` on Unix; on Windows the installer's `python.exe`
/// (there is no `python3` there).
const PYTHON: &str = if cfg!(windows) { "python" } else { "python3" };

/// A program of a venv: `bin/NAME` on Unix, `Scripts\NAME.exe` on Windows.
fn venv_program(venv: &Path, name: &str) -> std::path::PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join(format!("{name}.exe"))
    } else {
        venv.join("bin").join(name)
    }
}

fn requirement(source: &Source, version: Option<&str>) -> String {
    match (version, &source.spec) {
        (Some(v), _) => format!("{}=={v}", source.package),
        (None, Some(spec)) => format!("{}{spec}", source.package),
        (None, None) => source.package.clone(),
    }
}

/// The version pip resolves `source` to now.
pub(crate) async fn resolve_version(source: &Source, path: &str) -> Result<String, InstallError> {
    let scratch = std::env::temp_dir().join(format!("toolgate-resolve-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| InstallError::Failed(e.to_string()))?;
    let result = async {
        let pip = venv(&scratch, path, true).await?;
        let report = report(&pip, &requirement(source, None), &scratch, path).await?;
        let (_, versions) = requirements(&report).map_err(InstallError::Failed)?;
        let wanted = normalised(&source.package);
        versions
            .into_iter()
            .find(|(name, _)| *name == wanted)
            .map(|(_, v)| v)
            .ok_or_else(|| InstallError::Failed(format!("pip did not resolve {}", source.package)))
    }
    .await;
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// Resolves `source` (at `version` when given) in a venv made in `staging`, then moves the
/// venv to its version's folder in `folder` and installs exactly what was resolved, with
/// hashes. Returns the version and the program to run.
pub(crate) async fn install(
    source: &Source,
    version: Option<&str>,
    staging: &Path,
    folder: &Path,
    path: &str,
    said: &(dyn Fn(&str) + Send + Sync),
) -> Result<(String, PathBuf), InstallError> {
    let pip = venv(staging, path, true).await?;
    let report = report(&pip, &requirement(source, version), staging, path).await?;
    let (lines, versions) = requirements(&report).map_err(InstallError::Failed)?;
    let wanted = normalised(&source.package);
    let version = versions
        .into_iter()
        .find(|(name, _)| *name == wanted)
        .map(|(_, v)| v)
        .ok_or_else(|| InstallError::Failed(format!("pip did not resolve {}", source.package)))?;
    let at = crate::version_folder(folder, &version, source, said)?;
    // A venv does not move (its scripts name its path): the version's own is made there,
    // without a pip of its own, and the resolving venv's pip installs into it.
    let python = venv(&at, path, false).await?;
    let file = at.join("requirements.txt");
    std::fs::write(&file, &lines).map_err(|e| InstallError::Failed(e.to_string()))?;
    said(&format!(
        "{} packages, each with its sha256",
        lines.lines().count()
    ));
    let mut args: Vec<String> = vec!["--python".into(), python, "install".into()];
    args.extend(PIP.map(String::from));
    args.extend([
        "--require-hashes".into(),
        "--no-deps".into(),
        "--only-binary=:all:".into(),
        "-r".into(),
        file.to_string_lossy().into_owned(),
    ]);
    run(&pip, &args, path, Some(&at)).await?;
    let _ = std::fs::remove_dir_all(staging);
    let command = source.command.as_deref().unwrap_or(&source.package);
    let program = venv_program(&at.join("venv"), command);
    if !program.exists() {
        return Err(InstallError::Failed(format!(
            "{} has no program {command} (looked for {})",
            source.package,
            program.display()
        )));
    }
    Ok((version, program))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requirements_pin_each_package_with_its_hash() {
        let report = json!({"install": [
            {"metadata": {"name": "mcp-server-time", "version": "2026.10.19"},
             "download_info": {"archive_info": {"hashes": {"sha256": "abc"}}}},
            {"metadata": {"name": "Tzdata", "version": "2026.6"},
             "download_info": {"archive_info": {"hashes": {"sha256": "def"}}}}
        ]});
        let (lines, versions) = requirements(&report).unwrap();
        assert_eq!(
            lines,
            "mcp-server-time==2026.10.19 --hash=sha256:abc\nTzdata==2026.6 --hash=sha256:def\n"
        );
        assert_eq!(versions[1], ("tzdata".into(), "2026.6".into()));
        let unhashed =
            json!({"install": [{"metadata": {"name": "x", "version": "1"}, "download_info": {}}]});
        assert!(requirements(&unhashed).is_err());
        assert_eq!(normalised("Some_Tools[cli]"), "some-tools");
    }
}
