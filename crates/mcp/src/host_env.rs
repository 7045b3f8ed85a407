//! The PATH servers are started with.
//!
//! An app launched from a desktop menu inherits the session's environment, not the one the user's
//! shell builds: `~/.nvm`, `~/.local/bin` (where `uvx` lives), Homebrew and the like are missing,
//! so `npx` and `uvx` are "not found" although they work in a terminal. We ask the login shell for
//! its PATH, with a time limit (a slow or broken shell profile must not stall start-up), and
//! search that first, then the app's own PATH.
//!
//! Asking the shell takes a while (160–250 ms with pyenv's or nvm's hooks), so the answer is kept
//! in a file ([`LoginPath`]) with the size and time of every start-up file the shells read. The
//! next start uses it without asking while those files are unchanged; when one changed (or the
//! answer is a day old: a profile may source files we do not watch), the old answer is used at
//! once and the shell is asked in the background, and a server whose command the old answer
//! cannot find waits for the new one. So no server waits for the shell, except on the very first
//! start and for a command only the new PATH has.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::sync::OnceCell;

mod registry;

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

    /// With no login shell to ask: on Windows the registry's PATH followed by the app's own;
    /// elsewhere the app's own.
    pub fn without_shell() -> Self {
        #[cfg(windows)]
        return Self::with_inherited(registry::path());
        #[cfg(not(windows))]
        Self::inherited()
    }

    /// The login shell's PATH followed by the app's own, without duplicates.
    pub async fn detect() -> Self {
        match current_shell() {
            Some(shell) => Self::detect_with(&shell, SHELL_TIMEOUT).await,
            None => Self::without_shell(),
        }
    }

    async fn detect_with(shell: &std::ffi::OsStr, timeout: Duration) -> Self {
        Self::with_inherited(ask_login_shell(shell, timeout).await)
    }

    /// `login` (the login shell's directories) followed by the app's own PATH.
    fn with_inherited(mut path: Vec<PathBuf>) -> Self {
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
    pub fn resolve(&self, command: &str, cwd: Option<&Path>) -> Result<PathBuf, CommandNotFound> {
        let here = cwd
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        which::which_in(command, Some(self.path_var()), &here).map_err(|_| {
            let command = command.to_owned();
            if command.contains('/') {
                CommandNotFound::NotExecutable { command }
            } else {
                CommandNotFound::NotOnPath {
                    command,
                    searched: self.path.clone(),
                }
            }
        })
    }
}

/// A server's command that cannot be run: the path given is not a program, or the name is on
/// none of the directories searched (which the message lists, with how to install it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandNotFound {
    #[error("the command '{command}' does not exist or is not executable")]
    NotExecutable { command: String },
    #[error(
        "the command '{command}' was not found in any of: {}. {}",
        shown(searched),
        install_hint(command)
    )]
    NotOnPath {
        command: String,
        searched: Vec<PathBuf>,
    },
}

/// Directories as the message lists them.
fn shown(dirs: &[PathBuf]) -> String {
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    dirs.join(", ")
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
/// launchd's short PATH and often no `SHELL`), or `/bin/sh`. Windows has no login shell: the
/// registry's PATH is read instead ([`HostEnv::without_shell`]).
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

/// The login shell's own directories, or none (and why, in the log) when it cannot say.
async fn ask_login_shell(shell: &std::ffi::OsStr, timeout: Duration) -> Vec<PathBuf> {
    match login_shell_path(shell, timeout).await {
        Ok(p) => p,
        Err(reason) => {
            tracing::info!("using the app's own PATH for servers: {reason}");
            Vec::new()
        }
    }
}

fn current_shell() -> Option<OsString> {
    let shell = std::env::var_os("SHELL").filter(|s| !s.is_empty());
    login_shell(Platform::current(), shell)
}

/// The file the login shell's answer is kept in, in the state folder.
pub const LOGIN_PATH_FILE: &str = "login-shell-path.json";
/// An answer older than this is asked again (in the background): a profile may source files
/// that are not watched (nvm's scripts, a version manager's shims).
const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The start-up files the common login shells read, and the folders whose files they read too.
/// Their size and modification time key the kept answer; a file that does not exist counts too
/// (creating one is a change).
fn startup_files(home: Option<&Path>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut files: Vec<PathBuf> = [
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/bashrc",
        "/etc/environment",
        "/etc/zshenv",
        "/etc/zprofile",
        "/etc/zshrc",
        "/etc/zlogin",
        "/etc/zsh/zshenv",
        "/etc/zsh/zprofile",
        "/etc/zsh/zshrc",
        "/etc/zsh/zlogin",
        "/etc/paths",
        "/etc/fish/config.fish",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let mut folders: Vec<PathBuf> = ["/etc/profile.d", "/etc/paths.d", "/etc/fish/conf.d"]
        .iter()
        .map(PathBuf::from)
        .collect();
    if let Some(home) = home {
        for name in [
            ".profile",
            ".bash_profile",
            ".bash_login",
            ".bashrc",
            ".zshenv",
            ".zprofile",
            ".zshrc",
            ".zlogin",
            ".config/fish/config.fish",
        ] {
            files.push(home.join(name));
        }
        folders.push(home.join(".config/fish/conf.d"));
    }
    if let Some(zdotdir) = std::env::var_os("ZDOTDIR").filter(|d| !d.is_empty()) {
        let zdotdir = PathBuf::from(zdotdir);
        for name in [".zshenv", ".zprofile", ".zshrc", ".zlogin"] {
            files.push(zdotdir.join(name));
        }
    }
    (files, folders)
}

/// One watched file as it was: `None` when it did not exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    path: PathBuf,
    seen: Option<(u64, u128)>,
}

fn stamp(path: &Path) -> Stamp {
    let seen = std::fs::metadata(path).ok().map(|m| {
        let modified = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        (m.len(), modified)
    });
    Stamp {
        path: path.to_owned(),
        seen,
    }
}

/// Every watched file now, the folders' files included, in a stable order.
fn stamps(home: Option<&Path>) -> Vec<Stamp> {
    let (files, folders) = startup_files(home);
    let mut stamps: Vec<Stamp> = files.iter().map(|f| stamp(f)).collect();
    for folder in folders {
        stamps.push(stamp(&folder));
        let mut inside: Vec<PathBuf> = std::fs::read_dir(&folder)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        inside.sort();
        stamps.extend(inside.iter().map(|f| stamp(f)));
    }
    stamps
}

/// The kept answer of the login shell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Kept {
    shell: PathBuf,
    /// Unix seconds.
    asked_at: u64,
    stamps: Vec<Stamp>,
    /// The login shell's own directories (the app's PATH is added at each start).
    path: Vec<PathBuf>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The login shell's PATH for a manager: given, kept from an earlier start, or asked.
///
/// [`LoginPath::now`] is what servers start with; [`LoginPath::fresh`] is the shell's answer of
/// this run, asked at most once.
pub(crate) struct LoginPath {
    given: Option<HostEnv>,
    /// The shell to ask; `None` where there is none (Windows).
    shell: Option<OsString>,
    file: Option<PathBuf>,
    home: Option<PathBuf>,
    now: OnceCell<(HostEnv, bool)>,
    fresh: OnceCell<HostEnv>,
}

impl LoginPath {
    /// `given`: a PATH set by the front end (a terminal's own), used as it is. Otherwise the
    /// login shell's, kept in `state_dir` when there is one.
    pub(crate) fn new(given: Option<HostEnv>, state_dir: Option<&Path>) -> Self {
        Self {
            given,
            shell: current_shell(),
            file: state_dir.map(|d| d.join(LOGIN_PATH_FILE)),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            now: OnceCell::new(),
            fresh: OnceCell::new(),
        }
    }

    /// The PATH servers start with, when it is known already (given, or asked for once),
    /// without waiting for the login shell.
    pub(crate) fn known(&self) -> Option<&HostEnv> {
        self.given
            .as_ref()
            .or_else(|| self.now.get().map(|(env, _)| env))
    }

    /// The PATH to start servers with now, and whether it is this run's own answer (or given).
    pub(crate) async fn now(&self) -> (&HostEnv, bool) {
        let (env, fresh) = self
            .now
            .get_or_init(|| async {
                if let Some(given) = &self.given {
                    return (given.clone(), true);
                }
                let Some(shell) = &self.shell else {
                    return (HostEnv::without_shell(), true);
                };
                match self.kept(shell) {
                    Some((kept, valid)) => (HostEnv::with_inherited(kept), valid),
                    None => (self.fresh().await.clone(), true),
                }
            })
            .await;
        (env, *fresh)
    }

    /// The login shell asked in this run (once), and its answer kept for the next start.
    pub(crate) async fn fresh(&self) -> &HostEnv {
        self.fresh
            .get_or_init(|| async {
                if let Some(given) = &self.given {
                    return given.clone();
                }
                let Some(shell) = &self.shell else {
                    return HostEnv::without_shell();
                };
                // Stamped before asking: a file changed while the shell runs is seen next time.
                let stamps = stamps(self.home.as_deref());
                let login = ask_login_shell(shell, SHELL_TIMEOUT).await;
                self.keep(Kept {
                    shell: PathBuf::from(shell),
                    asked_at: now_secs(),
                    stamps,
                    path: login.clone(),
                });
                HostEnv::with_inherited(login)
            })
            .await
    }

    /// The kept answer for `shell`, and whether it still holds (no watched file changed, not
    /// too old).
    fn kept(&self, shell: &std::ffi::OsStr) -> Option<(Vec<PathBuf>, bool)> {
        let text = std::fs::read(self.file.as_ref()?).ok()?;
        let kept: Kept = serde_json::from_slice(&text).ok()?;
        if kept.shell != Path::new(shell) {
            return None;
        }
        let young = now_secs().saturating_sub(kept.asked_at) < MAX_AGE.as_secs();
        let valid = young && kept.stamps == stamps(self.home.as_deref());
        Some((kept.path, valid))
    }

    fn keep(&self, kept: Kept) {
        let Some(file) = &self.file else { return };
        // Written whole then renamed: a reader never sees half an answer. Losing it costs one
        // more question to the shell, so no fsync.
        let temp = file.with_extension(format!("tmp-{}", std::process::id()));
        let written = serde_json::to_vec(&kept)
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::write(&temp, bytes))
            .and_then(|()| std::fs::rename(&temp, file));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            tracing::info!("could not keep the login shell's PATH for next time: {e}");
        }
    }
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
        let err = env.resolve("npx", None).unwrap_err().to_string();
        assert!(
            err.contains("'npx' was not found in any of: /nonexistent/a, /nonexistent/b"),
            "{err}"
        );
        assert!(err.contains("Install Node.js"), "{err}");
    }

    #[test]
    fn finds_commands_on_its_path_only() {
        // Windows: `cmd` is `cmd.exe`, found through PATHEXT.
        let (dirs, shell, full): (Vec<PathBuf>, _, _) = if cfg!(windows) {
            (
                vec![r"C:\windows\system32".into()],
                "cmd",
                r"C:\windows\system32\cmd.exe",
            )
        } else {
            (vec!["/bin".into(), "/usr/bin".into()], "sh", "/bin/sh")
        };
        let env = HostEnv::from_dirs(dirs);
        assert!(env.resolve(shell, None).is_ok());
        let empty = HostEnv::from_dirs(vec![]);
        assert!(empty.resolve(shell, None).is_err());
        assert!(empty.resolve(full, None).is_ok(), "a path needs no search");
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
    #[cfg(unix)]
    fn fake_shell(body: &str) -> (tempfile::TempDir, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let shell = dir.path().join("fake-sh");
        std::fs::write(&shell, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
        (dir, shell)
    }

    #[cfg(unix)]
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

    /// A login path asking `shell`, kept in `state`, with `home` as the user's home folder.
    #[cfg(unix)]
    fn login_path(shell: &Path, state: &Path, home: &Path) -> LoginPath {
        LoginPath {
            given: None,
            shell: Some(shell.as_os_str().to_owned()),
            file: Some(state.join(LOGIN_PATH_FILE)),
            home: Some(home.to_owned()),
            now: OnceCell::new(),
            fresh: OnceCell::new(),
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_shell_is_asked_once_then_its_answer_is_kept_until_a_startup_file_changes() {
        // The fake shell counts how often it is asked, in a file beside it.
        let (dir, shell) = fake_shell(
            r#"echo x >> "$(dirname "$0")/asked"; PATH="/opt/kept/bin:$PATH"; eval "$4""#,
        );
        let asked =
            || std::fs::read_to_string(dir.path().join("asked")).map_or(0, |s| s.lines().count());
        let state = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".bashrc"),
            "export A=1
",
        )
        .unwrap();

        let first = login_path(&shell, state.path(), home.path());
        let (env, fresh) = first.now().await;
        assert!(fresh, "nothing kept yet: the shell is asked");
        assert_eq!(env.dirs()[0], PathBuf::from("/opt/kept/bin"));
        assert_eq!(asked(), 1);

        // The next start: the kept answer, without asking.
        let second = login_path(&shell, state.path(), home.path());
        let (env, fresh) = second.now().await;
        assert!(fresh);
        assert_eq!(env.dirs()[0], PathBuf::from("/opt/kept/bin"));
        assert_eq!(asked(), 1, "a valid kept answer needs no shell");

        // A start-up file changes: the old answer is used at once, the shell asked again.
        std::fs::write(
            home.path().join(".bashrc"),
            "export A=2 # edited
",
        )
        .unwrap();
        let third = login_path(&shell, state.path(), home.path());
        let (env, fresh) = third.now().await;
        assert!(!fresh, "the kept answer is stale");
        assert_eq!(env.dirs()[0], PathBuf::from("/opt/kept/bin"));
        assert_eq!(asked(), 1, "the stale answer is used without waiting");
        third.fresh().await;
        assert_eq!(asked(), 2);
        // ... and that answer is kept for the start after.
        let fourth = login_path(&shell, state.path(), home.path());
        assert!(fourth.now().await.1);
        assert_eq!(asked(), 2);

        // A new file in a watched folder counts as a change too.
        std::fs::write(
            home.path().join(".zshrc"),
            "path+=/x
",
        )
        .unwrap();
        let fifth = login_path(&shell, state.path(), home.path());
        assert!(!fifth.now().await.1);
    }

    #[tokio::test]
    async fn a_given_path_is_used_as_it_is() {
        let given = HostEnv::from_dirs(vec!["/given".into()]);
        let paths = LoginPath::new(Some(given.clone()), None);
        assert_eq!(paths.now().await, (&given, true));
        assert_eq!(paths.fresh().await, &given);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_hanging_shell_profile_does_not_stall_start_up() {
        let (_dir, shell) = fake_shell("exec sleep 30");
        let detected = HostEnv::detect_with(shell.as_os_str(), Duration::from_millis(300)).await;
        assert_eq!(detected, HostEnv::inherited());
    }
}
