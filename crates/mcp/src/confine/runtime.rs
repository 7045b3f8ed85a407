//! The folders a server needs to read to run at all: the system, its program and interpreter,
//! the runtimes people install in their home folder, and its own files on its command line.
//!
//! Everything here is derived, so nothing here may open a protected folder (the home folder as
//! a whole, `~/.ssh`, `~/.config`, Toolgate's own data…): a derived folder that contains one is
//! left out ([`Protected::allows`]), and only the user's own choices can grant one for reading
//! (with a warning on the card); for writing, see [`super::grants`].

use std::path::{Path, PathBuf};

use crate::host_env::HostEnv;

/// The system's folders, read-only for every server. `/proc` and `/sys` because runtimes read
/// their own process's details and the CPU and memory limits there; other processes' details
/// stay closed (Landlock confines `ptrace`-style access to the sandbox).
pub(crate) const SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/run/current-system",
    "/snap",
    "/proc",
    "/sys",
    "/dev/random",
    "/dev/urandom",
];

/// Devices a server may write to: the bit buckets. Never a terminal (`/dev/tty`, `/dev/pts/*`):
/// a server that could write on the user's screen could draw a fake approval question over the
/// real one (servers also run in a session of their own, with no controlling terminal).
pub(crate) const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Where people install runtimes under their home folder (version managers, uv's Pythons, user
/// site-packages, per-user bin folders). Read-only; those that do not exist are skipped.
const HOME_RUNTIMES: &[&str] = &[
    ".nvm",
    ".volta",
    ".fnm",
    ".local/share/fnm",
    ".asdf",
    ".pyenv",
    ".rye",
    ".local/share/uv/python",
    ".local/share/pnpm",
    ".bun/bin",
    ".deno/bin",
    ".cargo/bin",
    ".local/bin",
    ".local/lib",
];

/// Folders under home that hold credentials, keys or other programs' data: never part of a
/// grant Toolgate derives, and a warning when the user's own choice includes one.
const PROTECTED_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config",
    ".local/share",
    ".mozilla",
    ".kube",
    ".docker",
    ".password-store",
    ".npmrc",
    ".netrc",
    ".pypirc",
    ".git-credentials",
    ".cargo/credentials.toml",
];

/// The folders no derived grant may contain.
#[derive(Debug, Clone, Default)]
pub(crate) struct Protected {
    home: Option<PathBuf>,
    folders: Vec<PathBuf>,
    /// Toolgate's own folders (its settings, its rules, other servers' code and data): part of
    /// `folders`, and also never writable (see [`super::grants::Locked`]).
    own: Vec<PathBuf>,
    /// Folders of Toolgate's own where it installs servers' code (bundles, packages): inside a
    /// protected folder, yet safe to open to a server for reading.
    installed: Vec<PathBuf>,
}

impl Protected {
    /// The home folder's sensitive places, plus `extra` (Toolgate's own data folder). Each is
    /// taken as the kernel will see it, symlinks resolved, where it exists.
    pub fn new(home: Option<PathBuf>, extra: &[PathBuf]) -> Self {
        let home = home.map(|h| resolved(&h));
        let own: Vec<PathBuf> = extra.iter().map(|p| resolved(p)).collect();
        let mut folders = own.clone();
        if let Some(home) = &home {
            folders.extend(PROTECTED_IN_HOME.iter().map(|p| resolved(&home.join(p))));
        }
        Self {
            home,
            folders,
            own,
            installed: Vec::new(),
        }
    }

    /// The same, with `installed` (Toolgate's folders of servers' code) readable without a
    /// warning.
    pub fn with_installed(mut self, installed: Vec<PathBuf>) -> Self {
        self.installed = installed.iter().map(|p| resolved(p)).collect();
        self
    }

    /// What opening `path` to a server for reading opens of the protected places: nothing for
    /// a folder of installed code, else as [`Self::opened_by`].
    pub fn opened_for_reading(&self, path: &Path) -> Vec<PathBuf> {
        let at = resolved(path);
        if self.installed.iter().any(|i| at.starts_with(i) && at != *i) {
            return Vec::new();
        }
        self.opened_by(path)
    }

    /// From the environment: `$HOME`, and `extra`.
    pub fn of_this_user(extra: &[PathBuf]) -> Self {
        Self::new(std::env::var_os("HOME").map(PathBuf::from), extra)
    }

    /// The protected places a grant of `path` would open (the home folder itself counts).
    pub fn opened_by(&self, path: &Path) -> Vec<PathBuf> {
        let path = &resolved(path);
        let mut opened: Vec<PathBuf> = self
            .folders
            .iter()
            .filter(|p| p.starts_with(path) || path.starts_with(p))
            .cloned()
            .collect();
        if let Some(home) = &self.home {
            if home.starts_with(path) {
                opened.insert(0, home.clone());
            }
        }
        opened
    }

    /// Whether a derived grant of `path` is safe to make: an absolute path (a relative one
    /// would be taken from Toolgate's own working folder), neither `/` nor anything that
    /// contains or lies in a protected place, symlinks resolved.
    pub fn allows(&self, path: &Path) -> bool {
        path.is_absolute() && resolved(path) != Path::new("/") && self.opened_by(path).is_empty()
    }

    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Toolgate's own folders.
    pub fn own(&self) -> &[PathBuf] {
        &self.own
    }
}

/// `path` as the kernel resolves it (symlinks followed). A place not made yet is taken where
/// it would be made: its nearest existing folder resolved, the rest of its name appended (so
/// `~/.config/autostart`, missing, behind a symlinked `~/.config`, is found where a server
/// could create it). A name the kernel would take apart differently (`..` past a missing
/// folder) stays as given.
pub(crate) fn resolved(path: &Path) -> PathBuf {
    if let Ok(at) = std::fs::canonicalize(path) {
        return at;
    }
    let mut rest = Vec::new();
    let mut at = path;
    while let (Some(name), Some(parent)) = (at.file_name(), at.parent()) {
        rest.push(name);
        if let Ok(base) = std::fs::canonicalize(parent) {
            return rest.iter().rev().fold(base, |p, n| p.join(n));
        }
        at = parent;
    }
    path.to_path_buf()
}

/// The folder a program was installed into: `…/bin/node` → `…`; a version manager's shim
/// (`~/.pyenv/shims/python3`, asdf's, rbenv's) → the manager's folder, which holds what the shim
/// runs; else the program's own folder.
fn install_prefix(program: &Path) -> Option<PathBuf> {
    let dir = program.parent()?;
    match dir.file_name() {
        Some(name) if name == "bin" || name == "shims" => dir.parent().map(Path::to_path_buf),
        _ => Some(dir.to_path_buf()),
    }
}

/// A Python virtual environment's own folder and the Python it was made from.
fn venv(prefix: &Path) -> Vec<PathBuf> {
    let Ok(cfg) = std::fs::read_to_string(prefix.join("pyvenv.cfg")) else {
        return Vec::new();
    };
    let mut out = vec![prefix.to_path_buf()];
    for line in cfg.lines() {
        if let Some(home) = line
            .split_once('=')
            .filter(|(k, _)| k.trim() == "home")
            .map(|(_, v)| PathBuf::from(v.trim()))
        {
            let base = std::fs::canonicalize(&home).unwrap_or(home);
            out.extend(install_prefix(&base.join("python")));
        }
    }
    out
}

/// The interpreter named by a script's `#!` line: `#!/usr/bin/env node` → `node` on the PATH.
fn interpreter(script: &Path, host: &HostEnv) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..n]).ok()?.lines().next()?;
    let mut words = line.strip_prefix("#!")?.split_whitespace();
    let first = words.next()?;
    if first.ends_with("/env") {
        let name = words.find(|w| !w.starts_with('-'))?;
        host.resolve(name, None).ok()
    } else {
        Some(PathBuf::from(first))
    }
}

/// The folders that hold `program` and whatever runs it: its install prefix (as found on the
/// PATH and as the symlinks resolve), its interpreter's, a virtual environment's base Python.
pub(crate) fn program_folders(program: &Path, host: &HostEnv) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut add = |path: &Path| {
        for candidate in [Some(path.to_path_buf()), std::fs::canonicalize(path).ok()]
            .into_iter()
            .flatten()
        {
            if let Some(prefix) = install_prefix(&candidate) {
                found.extend(venv(&prefix));
                found.push(prefix);
            }
        }
    };
    add(program);
    if let Some(interpreter) = interpreter(program, host) {
        add(&interpreter);
    }
    found
}

/// The runtimes under the home folder, and the PATH's own folders (a launcher's `#!/usr/bin/env
/// node` looks there).
pub(crate) fn runtime_folders(host: &HostEnv, protected: &Protected) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in host.dirs() {
        found.push(dir.clone());
        // Its install prefix too, where that is safe (`~/.local` is not: it holds
        // `~/.local/share`); the caller drops what is not.
        if let Some(prefix) = install_prefix(&dir.join("x")).filter(|p| p != dir) {
            if protected.allows(&prefix) {
                found.push(prefix);
            }
        }
    }
    if let Some(home) = protected.home() {
        found.extend(HOME_RUNTIMES.iter().map(|p| home.join(p)));
    }
    found
}

/// The absolute paths on a command line (`/x`, `--flag=/x`, and the words of a shell script
/// given as one argument, `sh -c "cd /x && exec node /y/server.js"`), split into the folders
/// the server was told to work in and the files it was told to run or read.
pub(crate) fn command_line_paths(args: &[String]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut folders = Vec::new();
    let mut files = Vec::new();
    let words = args.iter().flat_map(|arg| {
        arg.split_whitespace()
            .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'' | ';' | '(' | ')')))
    });
    for word in words {
        let value = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => value,
            _ => word,
        };
        let path = Path::new(value);
        if !path.is_absolute() {
            continue;
        }
        if path.is_dir() {
            folders.push(path.to_path_buf());
        } else if path.is_file() {
            files.push(path.to_path_buf());
        }
    }
    (folders, files)
}

/// What a file on the command line needs around it: the package it belongs to (the folder
/// holding its `node_modules`), else its own folder.
pub(crate) fn file_folder(file: &Path) -> Option<PathBuf> {
    let canonical = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    canonical
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .or_else(|| canonical.parent().map(Path::to_path_buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolgate_s_installed_code_opens_nothing_protected_for_reading() {
        let data = "/home/u/.local/share/app";
        let p = Protected::new(Some("/home/u".into()), &[data.into()])
            .with_installed(vec![format!("{data}/bundles").into()]);
        let bundle = PathBuf::from(format!("{data}/bundles/weather"));
        assert!(p.opened_for_reading(&bundle).is_empty());
        assert!(
            !p.opened_by(&bundle).is_empty(),
            "a derived grant still may not"
        );
        for elsewhere in [
            format!("{data}/bundles"),
            format!("{data}/servers/x"),
            data.to_owned(),
        ] {
            assert!(
                !p.opened_for_reading(Path::new(&elsewhere)).is_empty(),
                "{elsewhere}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn derived_grants_never_open_home_or_its_secrets() {
        let p = Protected::new(Some("/home/u".into()), &["/home/u/.local/share/app".into()]);
        assert!(p.allows(Path::new("/home/u/.nvm")));
        assert!(p.allows(Path::new("/usr")));
        assert!(
            !p.allows(Path::new("/home/u")),
            "the home folder as a whole"
        );
        assert!(!p.allows(Path::new("/home")));
        assert!(!p.allows(Path::new("/")));
        assert!(!p.allows(Path::new("/home/u/.local")), "holds .local/share");
        assert!(
            !p.allows(Path::new("/home/u/.ssh/keys")),
            "inside a protected folder"
        );
        assert!(
            !p.allows(Path::new(".")),
            "relative: Toolgate's own working folder"
        );
        assert!(!p.allows(Path::new("bin")));
        // A symlink to the home folder is the home folder.
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::os::unix::fs::symlink(&home, dir.path().join("innocent")).unwrap();
        let q = Protected::new(Some(home.clone()), &[]);
        assert!(!q.allows(&dir.path().join("innocent")));
        assert!(!q.opened_by(&dir.path().join("innocent")).is_empty());
        assert_eq!(
            p.opened_by(Path::new("/home/u")).first(),
            Some(&PathBuf::from("/home/u"))
        );
        assert!(p
            .opened_by(Path::new("/home/u"))
            .contains(&PathBuf::from("/home/u/.ssh")));
    }

    #[test]
    fn programs_bring_their_install_prefix_and_command_lines_their_paths() {
        assert_eq!(
            install_prefix(Path::new("/home/u/.nvm/versions/node/v20/bin/node")),
            Some(PathBuf::from("/home/u/.nvm/versions/node/v20"))
        );
        assert_eq!(
            install_prefix(Path::new("/opt/tool/run.sh")),
            Some(PathBuf::from("/opt/tool"))
        );
        assert_eq!(
            install_prefix(Path::new("/home/u/.pyenv/shims/python3")),
            Some(PathBuf::from("/home/u/.pyenv"))
        );
        // A home folder that is absolute on this platform (a grant is only ever absolute).
        let u = PathBuf::from(if cfg!(windows) {
            r"C:\home\u"
        } else {
            "/home/u"
        });
        let p = Protected::new(Some(u.clone()), &[]);
        let host = HostEnv::from_dirs(vec![u.join(".local/bin"), u.join(".pyenv/shims")]);
        let found = runtime_folders(&host, &p);
        assert!(found.contains(&u.join(".pyenv")), "{found:?}");
        assert!(found.contains(&u.join(".local/bin")));
        assert!(!found.contains(&u.join(".local")), "it holds .local/share");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("node_modules/pkg/dist/index.js");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "").unwrap();
        let args = vec![
            file.to_string_lossy().into_owned(),
            format!("--root={}", dir.path().display()),
            "relative/path".into(),
            "/no/such/place".into(),
            format!("sleep 1 & exec python3 '{}'", file.display()),
        ];
        let (folders, files) = command_line_paths(&args);
        assert_eq!(folders, vec![dir.path().to_path_buf()]);
        assert_eq!(files, vec![file.clone(), file.clone()]);
        assert_eq!(
            file_folder(&file),
            Some(std::fs::canonicalize(dir.path()).unwrap())
        );
    }
}
