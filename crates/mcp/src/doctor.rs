//! What servers need in order to start, checked the way a start would check it: the commands
//! most MCP servers are launched with, found on the PATH servers get, and the keychain that
//! `${secret:…}` values come from. Each finding says how to fix what is missing.

use serde::Serialize;
use toolgate_secrets::SecretStore;

use crate::HostEnv;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "DoctorCheck")]
pub struct Check {
    pub name: String,
    pub ok: bool,
    /// What was found: a path, a version, or what went wrong.
    pub detail: String,
    /// How to fix it, when it is not fine.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fix: Option<String>,
}

/// The first line a command prints for `--version`, if it runs.
fn version(path: &std::path::Path, path_var: &std::ffi::OsStr) -> Option<String> {
    let out = std::process::Command::new(path)
        .arg("--version")
        .env("PATH", path_var)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next().unwrap_or_default().trim().to_owned();
    (!line.is_empty()).then_some(line)
}

/// Checks the launchers (node/npx for npm servers, python3/uvx for PyPI servers), the PATH
/// servers get, and the keychain. Slow parts (running `--version`) block: call it off the async
/// workers.
pub fn doctor(host: &HostEnv, keychain: &dyn SecretStore) -> Vec<Check> {
    let path_var = host.path_var();
    let mut checks: Vec<Check> = [
        ("node", "servers from npm run on Node.js", "Install Node.js 18 or newer from your distribution (apt install nodejs npm) or nodejs.org"),
        ("npx", "most npm servers are started with npx", "npx comes with npm: apt install npm"),
        ("python3", "servers from PyPI run on Python", "Install Python 3: apt install python3"),
        ("uvx", "most PyPI servers are started with uvx", "Install uv (which provides uvx): see docs.astral.sh/uv, or pip install --user uv"),
    ]
    .into_iter()
    .map(|(command, why, fix)| match host.resolve(command, None) {
        Ok(path) => Check {
            name: command.to_owned(),
            ok: true,
            detail: match version(&path, &path_var) {
                Some(v) => format!("{} ({v})", path.display()),
                None => path.display().to_string(),
            },
            fix: None,
        },
        Err(_) => Check {
            name: command.to_owned(),
            ok: false,
            detail: format!("not found on the PATH servers get; {why}"),
            fix: Some(fix.to_owned()),
        },
    })
    .collect();
    let support = crate::confine::support();
    // The same gaps each server's card shows (the kernel's, and running as root).
    let gaps: Vec<String> = [
        toolgate_sandbox::Network::None,
        toolgate_sandbox::Network::Loopback,
    ]
    .into_iter()
    .flat_map(crate::confine::gaps)
    .fold(Vec::new(), |mut all, gap| {
        if !all.contains(&gap) {
            all.push(gap);
        }
        all
    });
    checks.push(Check {
        name: "sandbox".into(),
        ok: gaps.is_empty(),
        detail: if gaps.is_empty() {
            format!(
                "{}: each local server reads only the system, its runtime and its own files, \
                 changes only its roots and its data folder, and reaches the network only as its \
                 card says",
                support.summary()
            )
        } else {
            format!("{}; not enforced: {}", support.summary(), gaps.join("; "))
        },
        fix: (!gaps.is_empty()).then(|| {
            "Run Toolgate as your own user, not root. Run Linux 5.13 or later with Landlock enabled (it is in the kernel's lsm= list on \
             Debian 12, Ubuntu 22.04, Fedora 35 and later) and seccomp; Linux 5.9 or later for \
             \"loopback only\". Until then each server's card says what is not confined."
                .into()
        }),
    });
    checks.push(Check {
        name: "PATH for servers".into(),
        ok: !host.dirs().is_empty(),
        detail: host
            .dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(":"),
        fix: host.dirs().is_empty().then(|| {
            "Set PATH in your login shell's profile (~/.profile); Toolgate reads it from there"
                .into()
        }),
    });
    // Reading an item that need not exist tells whether the keychain answers at all.
    let keychain_check = match keychain.get("toolgate.doctor.probe") {
        Ok(_) => Check {
            name: "keychain".into(),
            ok: true,
            detail: "the OS keychain answers".into(),
            fix: None,
        },
        Err(e) => {
            // The fix is the advice the error's message ends with; the detail is the rest.
            let fix = e.advice(std::env::consts::OS);
            let message = e.to_string();
            let detail = message
                .strip_suffix(fix)
                .map_or(message.as_str(), str::trim_end)
                .to_owned();
            Check {
                name: "keychain".into(),
                ok: false,
                detail,
                fix: Some(fix.into()),
            }
        }
    };
    checks.push(keychain_check);
    checks
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_secrets::{MemoryStore, SecretError};

    /// A keychain that fails every read, as a locked one does.
    struct Locked;

    impl SecretStore for Locked {
        fn get(&self, _: &str) -> Result<Option<String>, SecretError> {
            Err(SecretError::Locked {
                detail: "refused".into(),
            })
        }
        fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
            unreachable!("the doctor only reads")
        }
        fn delete(&self, _: &str) -> Result<(), SecretError> {
            unreachable!("the doctor only reads")
        }
    }

    #[test]
    fn a_locked_keychain_is_reported_with_this_os_s_fix_said_once() {
        let checks = doctor(&HostEnv::from_dirs(Vec::new()), &Locked);
        let keychain = checks
            .iter()
            .find(|c| c.name == "keychain")
            .expect("keychain checked");
        let fix = toolgate_secrets::locked_advice(std::env::consts::OS);
        assert!(!keychain.ok);
        assert_eq!(keychain.fix.as_deref(), Some(fix));
        assert!(keychain.detail.contains("refused"), "{}", keychain.detail);
        assert!(!keychain.detail.contains(fix), "{}", keychain.detail);
    }

    #[test]
    fn missing_launchers_are_reported_with_a_fix_and_present_ones_with_where() {
        let empty = HostEnv::from_dirs(Vec::new());
        let checks = doctor(&empty, &MemoryStore::default());
        let npx = checks
            .iter()
            .find(|c| c.name == "npx")
            .expect("npx checked");
        assert!(!npx.ok && npx.fix.as_deref().is_some_and(|f| f.contains("npm")));
        let path = checks
            .iter()
            .find(|c| c.name == "PATH for servers")
            .expect("PATH");
        assert!(!path.ok);
        assert!(checks.iter().any(|c| c.name == "keychain" && c.ok));

        let here = HostEnv::inherited();
        let found = doctor(&here, &MemoryStore::default());
        let shell = if cfg!(windows) { "cmd" } else { "sh" };
        let sh_dir = here.resolve(shell, None).expect("the shell exists");
        assert!(sh_dir.is_absolute());
        assert!(found
            .iter()
            .find(|c| c.name == "PATH for servers")
            .is_some_and(|c| c.ok));
    }
}
