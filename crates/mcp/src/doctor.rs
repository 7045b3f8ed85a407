//! What servers need in order to start, checked the way a start would check it: the commands
//! most MCP servers are launched with, found on the PATH servers get, and the keychain that
//! `${secret:…}` values come from. Each finding says how to fix what is missing.

use serde::Serialize;
use toolgate_secrets::{SecretError, SecretStore};

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
    let gaps: Vec<String> = [
        toolgate_sandbox::Network::None,
        toolgate_sandbox::Network::Loopback,
    ]
    .into_iter()
    .flat_map(|n| support.gaps(n))
    .fold(Vec::new(), |mut all, gap| {
        if !all.contains(&gap) {
            all.push(gap);
        }
        all
    });
    // Root's capabilities reach past Landlock's guard on other processes' /proc entries.
    #[cfg(target_os = "linux")]
    let root = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    };
    #[cfg(not(target_os = "linux"))]
    let root = false;
    let mut gaps = gaps;
    if root {
        gaps.push(
            "Toolgate runs as root, whose capabilities let a confined server read other \
             processes' environments (where secrets are)"
                .to_owned(),
        );
    }
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
        Err(e) => Check {
            name: "keychain".into(),
            ok: false,
            detail: e.to_string(),
            fix: Some(keychain_fix(&e, std::env::consts::OS).into()),
        },
    };
    checks.push(keychain_check);
    checks
}

/// How to fix a keychain that does not answer, on the OS named as [`std::env::consts::OS`]
/// names it: each has its own keychain and its own tool for it.
fn keychain_fix(error: &SecretError, os: &str) -> &'static str {
    match (error, os) {
        (SecretError::Locked { .. }, "macos") => {
            "Unlock the login keychain (in Keychain Access, or log in again)"
        }
        (SecretError::Unavailable { .. }, "macos") => {
            "Run Toolgate in your own logged-in session: the login keychain is not open over SSH \
             or to a launch daemon"
        }
        (_, "macos") => "Delete the damaged item in Keychain Access and set it again",
        (SecretError::Locked { .. }, "windows") => {
            "Run Toolgate as the Windows user who saved the keys"
        }
        (SecretError::Unavailable { .. }, "windows") => {
            "Run Toolgate signed in to Windows as yourself: Credential Manager is not open to a \
             service account"
        }
        (_, "windows") => "Remove the damaged item in Credential Manager and set it again",
        (SecretError::Locked { .. }, _) => {
            "Unlock your keyring (log in again, or open Passwords and Keys)"
        }
        (SecretError::Unavailable { .. }, _) => {
            "Start a Secret Service: gnome-keyring (apt install gnome-keyring) or KWallet"
        }
        _ => "Clear the damaged item in your keyring manager and set it again",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_secrets::MemoryStore;

    #[test]
    fn the_keychain_fix_names_each_operating_system_s_own_keychain() {
        let locked = SecretError::Locked { detail: "d".into() };
        let unavailable = SecretError::Unavailable { detail: "d".into() };
        let corrupt = SecretError::Corrupt {
            name: "n".into(),
            detail: "d".into(),
        };
        // Each OS's words, and words that belong to another OS's keychain.
        let rows: [(&str, &str, &[&str]); 3] = [
            ("linux", "key", &["Keychain Access", "Credential Manager"]),
            (
                "macos",
                "keychain",
                &["gnome-keyring", "Secret Service", "Credential Manager"],
            ),
            (
                "windows",
                "Windows",
                &[
                    "gnome-keyring",
                    "Secret Service",
                    "Keychain Access",
                    "login keychain",
                ],
            ),
        ];
        for (os, own, others) in rows {
            for error in [&locked, &unavailable, &corrupt] {
                let fix = keychain_fix(error, os);
                for other in others {
                    assert!(!fix.contains(other), "{os}: {fix}");
                }
                if !matches!(error, SecretError::Corrupt { .. }) || os == "linux" {
                    assert!(fix.contains(own), "{os}: {fix}");
                }
            }
        }
        assert!(keychain_fix(&corrupt, "windows").contains("Credential Manager"));
        assert!(keychain_fix(&corrupt, "macos").contains("Keychain Access"));
        assert!(keychain_fix(&unavailable, "linux").contains("gnome-keyring"));
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
