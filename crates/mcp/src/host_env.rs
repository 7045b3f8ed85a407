//! The PATH servers are started with.
//!
//! An app launched from a desktop menu inherits the session's environment, not the one the user's
//! shell builds: `~/.nvm`, `~/.local/bin` (where `uvx` lives), Homebrew and the like are missing,
//! so `npx` and `uvx` are "not found" although they work in a terminal. We ask the login shell for
//! its PATH once, with a time limit (a slow or broken shell profile must not stall start-up), and
//! search that first, then the app's own PATH.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

const SHELL_TIMEOUT: Duration = Duration::from_secs(5);
const START: &str = "__TOOLGATE_PATH_START__";
const END: &str = "__TOOLGATE_PATH_END__";

/// The directories searched for server commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEnv {
    path: Vec<PathBuf>,
}

impl HostEnv {
    /// Only the app's own PATH: for tests and the CLI run from a terminal, which already has it.
    pub fn inherited() -> Self {
        Self {
            path: split(std::env::var_os("PATH").unwrap_or_default()),
        }
    }

    /// The login shell's PATH followed by the app's own, without duplicates.
    pub async fn detect() -> Self {
        let shell = std::env::var_os("SHELL").filter(|s| !s.is_empty());
        match login_shell(Platform::current(), shell) {
            Some(shell) => Self::detect_with(&shell, SHELL_TIMEOUT).await,
            None => Self::inherited(),
        }
    }

    async fn detect_with(shell: &std::ffi::OsStr, timeout: Duration) -> Self {
        let mut path = match login_shell_path(shell, timeout).await {
            Ok(p) => p,
            Err(reason) => {
                tracing::info!("using the app's own PATH for servers: {reason}");
                Vec::new()
            }
        };
        for dir in Self::inherited().path {
            if !path.contains(&dir) {
                path.push(dir);
            }
        }
        Self { path }
    }

    pub fn from_dirs(path: Vec<PathBuf>) -> Self {
        Self { path }
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.path
    }

    /// The PATH value to give a server.
    pub fn path_var(&self) -> OsString {
        std::env::join_paths(&self.path).unwrap_or_default()
    }

    /// Finds a command the way a shell would. A command with a `/` is taken as a path (relative
    /// to `cwd`); anything else is looked up in [`Self::dirs`].
    pub fn resolve(&self, command: &str, cwd: Option<&Path>) -> Result<PathBuf, String> {
        let here = cwd
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        which::which_in(command, Some(self.path_var()), &here).map_err(|_| {
            if command.contains('/') {
                format!("the command '{command}' does not exist or is not executable")
            } else {
                let searched: Vec<String> =
                    self.path.iter().map(|d| d.display().to_string()).collect();
                format!(
                    "the command '{command}' was not found in any of: {}. {}",
                    searched.join(", "),
                    install_hint(command)
                )
            }
        })
    }
}

/// The platforms whose desktop sessions hand apps a different PATH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Platform {
    Mac,
    Windows,
    OtherUnix,
}

impl Platform {
    fn current() -> Self {
        if cfg!(target_os = "macos") {
            Platform::Mac
        } else if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::OtherUnix
        }
    }
}

/// The shell to ask for the user's PATH, if there is one to ask. `$SHELL` when set; otherwise
/// macOS's default login shell (zsh since 10.15: an app started from the Dock or Finder gets
/// launchd's short PATH and often no `SHELL`), or `/bin/sh`. Windows has no login shell: a
/// program started from the Start menu already gets the user's PATH from the registry.
fn login_shell(platform: Platform, shell: Option<OsString>) -> Option<OsString> {
    match platform {
        Platform::Windows => None,
        Platform::Mac => Some(shell.unwrap_or_else(|| OsString::from("/bin/zsh"))),
        Platform::OtherUnix => Some(shell.unwrap_or_else(|| OsString::from("/bin/sh"))),
    }
}

fn install_hint(command: &str) -> &'static str {
    match command {
        "npx" | "node" | "npm" => {
            "Install Node.js (which provides node and npx), or give the full path to the command."
        }
        "uvx" | "uv" => "Install uv (which provides uvx), or give the full path to the command.",
        "python" | "python3" | "pip" => "Install Python 3, or give the full path to the command.",
        "docker" => "Install Docker, or give the full path to the command.",
        _ => "Install it, or give the full path to the command.",
    }
}

/// The directories of a PATH value, in order, each once.
fn split(path: OsString) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()) {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

async fn login_shell_path(
    shell: &std::ffi::OsStr,
    timeout: Duration,
) -> Result<Vec<PathBuf>, String> {
    // `-l -i` reads the same profile files a terminal does (nvm and friends live in ~/.bashrc).
    // Markers separate the value from whatever the profile prints.
    let script = format!("printf '%s%s%s' '{START}' \"$PATH\" '{END}'");
    let mut command = tokio::process::Command::new(shell);
    command
        .args(["-l", "-i", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(timeout, command.output())
        .await
        .map_err(|_| {
            format!(
                "the login shell {} did not answer within {} s",
                shell.to_string_lossy(),
                timeout.as_secs()
            )
        })?
        .map_err(|e| format!("could not run {}: {e}", shell.to_string_lossy()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let value = text
        .split_once(START)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(value, _)| value)
        .ok_or_else(|| "the login shell did not print its PATH".to_owned())?;
    Ok(split(OsString::from(value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_command_names_the_directories_searched() {
        let env = HostEnv::from_dirs(vec!["/nonexistent/a".into(), "/nonexistent/b".into()]);
        let err = env.resolve("npx", None).unwrap_err();
        assert!(
            err.contains("'npx' was not found in any of: /nonexistent/a, /nonexistent/b"),
            "{err}"
        );
        assert!(err.contains("Install Node.js"), "{err}");
    }

    #[test]
    fn finds_commands_on_its_path_only() {
        let env = HostEnv::from_dirs(vec!["/bin".into(), "/usr/bin".into()]);
        assert!(env.resolve("sh", None).is_ok());
        let empty = HostEnv::from_dirs(vec![]);
        assert!(empty.resolve("sh", None).is_err());
        assert!(
            empty.resolve("/bin/sh", None).is_ok(),
            "a path needs no search"
        );
    }

    #[test]
    fn each_platform_asks_its_own_login_shell_or_none() {
        let bash = Some(OsString::from("/usr/local/bin/bash"));
        assert_eq!(
            login_shell(Platform::OtherUnix, bash.clone()),
            bash,
            "$SHELL wins"
        );
        assert_eq!(login_shell(Platform::Mac, bash.clone()), bash);
        assert_eq!(
            login_shell(Platform::OtherUnix, None),
            Some(OsString::from("/bin/sh"))
        );
        assert_eq!(
            login_shell(Platform::Mac, None),
            Some(OsString::from("/bin/zsh")),
            "an app started from the Dock often has no SHELL"
        );
        assert_eq!(login_shell(Platform::Windows, bash), None);
        assert_eq!(login_shell(Platform::Windows, None), None);
    }

    /// A shell script in a folder removed when the returned guard is dropped.
    fn fake_shell(body: &str) -> (tempfile::TempDir, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let shell = dir.path().join("fake-sh");
        std::fs::write(&shell, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
        (dir, shell)
    }

    #[tokio::test]
    async fn the_login_shell_path_comes_first_and_the_inherited_path_is_kept() {
        // Like a profile that adds ~/.nvm/...: it prints noise, then runs the command it is given.
        let (_dir, shell) =
            fake_shell(r#"echo "welcome banner"; PATH="/opt/from-profile/bin:$PATH"; eval "$4""#);
        let detected = HostEnv::detect_with(shell.as_os_str(), SHELL_TIMEOUT).await;
        assert_eq!(detected.dirs()[0], PathBuf::from("/opt/from-profile/bin"));
        for dir in HostEnv::inherited().dirs() {
            assert!(detected.dirs().contains(dir), "{dir:?} kept");
        }
        let unique: std::collections::BTreeSet<_> = detected.dirs().iter().collect();
        assert_eq!(unique.len(), detected.dirs().len(), "no duplicates");
    }

    #[tokio::test]
    async fn a_hanging_shell_profile_does_not_stall_start_up() {
        let (_dir, shell) = fake_shell("exec sleep 30");
        let detected = HostEnv::detect_with(shell.as_os_str(), Duration::from_millis(300)).await;
        assert_eq!(detected, HostEnv::inherited());
    }
}
