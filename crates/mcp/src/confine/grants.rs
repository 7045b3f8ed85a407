//! What a server may change: only the folders the user saw it given, and never the places
//! that would let it run code as the user later.
//!
//! The folders it is given are its roots, the folders on its command line, the user's extra
//! folders in its sandbox settings, and its own data folder. A value in its environment
//! (`LOG_FILE=…`, `PLUGIN_DIR=…`) is no grant of its own: such values arrive with install
//! links, imported configs and registry entries, where nobody reads them as "may change this".
//! One inside a given folder works, since that folder is open; one outside is at most readable
//! (where it is no place with secrets), and the card says how to open it.
//!
//! Some places are [`Locked`]: a server that could change them would run its code in the user's
//! next shell or session (start-up files, per-user folders on the PATH, autostart folders) or
//! take over their keys and tools (`~/.ssh`, the git and npm configs, Toolgate's own folder).
//! No grant may contain one, whatever a setting says. Landlock only adds: it cannot open the
//! home folder "except `~/.bashrc`", so a folder that holds a locked place is refused as a
//! whole, with a warning that names why.

use std::path::{Path, PathBuf};

use super::runtime::{self, resolved, Protected};

/// Under the home folder: never writable by any server.
const LOCKED_IN_HOME: &[&str] = &[
    // Shell and session start-up files (read, and run, by every new shell or login).
    ".bashrc",
    ".bashrc.d",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".oh-my-zsh",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".xsessionrc",
    ".pam_environment",
    ".config/fish",
    ".config/nushell",
    ".config/powershell",
    ".config/environment.d",
    ".config/plasma-workspace/env",
    // Per-user programs: a `git` planted there runs instead of the real one.
    ".local/bin",
    "bin",
    ".cargo/bin",
    ".local/share/applications",
    // Started at login.
    ".config/autostart",
    ".config/autostart-scripts",
    ".config/systemd",
    "Library/LaunchAgents",
    // Keys, and the tools' configs that run commands or pick where code comes from.
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".docker",
    ".password-store",
    ".netrc",
    ".gitconfig",
    ".git-credentials",
    ".config/git",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".config/pip",
    ".cargo/config",
    ".cargo/config.toml",
    ".cargo/credentials",
    ".cargo/credentials.toml",
];

/// The places no server may change.
#[derive(Debug, Clone)]
pub(crate) struct Locked {
    places: Vec<PathBuf>,
}

impl Locked {
    /// [`LOCKED_IN_HOME`] under `protected`'s home folder, Toolgate's own folders, and the
    /// folders on the PATH (`path`) that are the user's: under the home folder, or owned by
    /// them (Homebrew's `/opt/homebrew/bin`).
    pub fn new(protected: &Protected, path: &[PathBuf]) -> Self {
        let home = protected.home();
        let mut places: Vec<PathBuf> = Vec::new();
        let mut add = |place: PathBuf| {
            // Both spellings: a `~/.bashrc` that is a link into a dotfiles folder is locked
            // there too.
            for p in [resolved(&place), place] {
                if !places.contains(&p) {
                    places.push(p);
                }
            }
        };
        if let Some(home) = home {
            LOCKED_IN_HOME.iter().for_each(|p| add(home.join(p)));
        }
        protected.own().iter().cloned().for_each(&mut add);
        for dir in path.iter().filter(|d| d.is_absolute()) {
            let at = resolved(dir);
            if home.is_some_and(|h| at.starts_with(h) && at != h) || owned_by_user(&at) {
                add(dir.clone());
            }
        }
        Self { places }
    }

    /// The locked places a write grant of `path` would open: those it is, lies in, or holds
    /// (symlinks resolved; `/` and the home folder hold them all).
    pub fn opened_by(&self, path: &Path) -> Vec<PathBuf> {
        let at = resolved(path);
        let mut opened: Vec<PathBuf> = Vec::new();
        for place in &self.places {
            if (place.starts_with(&at) || at.starts_with(place)) && !opened.contains(place) {
                opened.push(place.clone());
            }
        }
        opened
    }
}

#[cfg(unix)]
fn owned_by_user(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).is_ok_and(|m| m.uid() == nix::unistd::getuid().as_raw())
}

#[cfg(not(unix))]
fn owned_by_user(_dir: &Path) -> bool {
    false
}

/// Who gave a server a folder to change, as the card names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Given {
    Root,
    CommandLine,
    Setting,
}

impl Given {
    fn describe(self, path: &Path) -> String {
        match self {
            Given::Root => format!("its root {}", path.display()),
            Given::CommandLine => format!("the folder {} on its command line", path.display()),
            Given::Setting => format!("the folder {} in its sandbox settings", path.display()),
        }
    }
}

/// What a server may change, and what its environment adds to read.
#[derive(Debug, Default)]
pub(crate) struct Writes {
    /// The given folders that hold no locked place.
    pub writable: Vec<PathBuf>,
    /// Places its environment names outside those folders, where reading is safe.
    pub readable: Vec<PathBuf>,
    pub warnings: Vec<String>,
}

/// Variables whose value is a path but not a place for the server's data.
const NOT_DATA: &[&str] = &[
    "HOME", "PATH", "PWD", "OLDPWD", "SHELL", "TMPDIR", "TMP", "TEMP",
];

/// Decides the writable folders from those `given` and the server's own `data` folder (which
/// lies in Toolgate's, on purpose, and is not checked), and what each place its `env` names
/// gets: nothing more inside a given folder (it is open already); outside, reading where
/// `protected` and the locked places allow it, and a warning either way.
pub(crate) fn writes<'a>(
    given: &[(Given, PathBuf)],
    data: Option<&Path>,
    env: impl IntoIterator<Item = (&'a String, &'a String)>,
    locked: &Locked,
    protected: &Protected,
) -> Writes {
    let mut out = Writes::default();
    for (by, path) in given {
        let opened = locked.opened_by(path);
        if opened.is_empty() {
            if !out.writable.contains(path) {
                out.writable.push(path.clone());
            }
        } else {
            out.warnings.push(format!(
                "{} is not open to it: it would let it change {}, which no server may \
                 change (start-up files, programs on your PATH, login items, keys, Toolgate's \
                 own folder); give it the folders it needs that hold none of them",
                by.describe(path),
                shown(&opened),
            ));
        }
    }
    let open: Vec<PathBuf> = out
        .writable
        .iter()
        .map(PathBuf::as_path)
        .chain(data)
        .map(resolved)
        .collect();
    for (name, value) in env {
        if NOT_DATA.iter().any(|n| n.eq_ignore_ascii_case(name)) || value.contains("${") {
            continue;
        }
        let path = Path::new(value.trim());
        if !path.is_absolute() || path == Path::new("/") {
            continue;
        }
        // A value that names no place (a word with a slash, a list of paths) opens nothing.
        let exists = path.exists();
        if !exists && !path.parent().is_some_and(Path::is_dir) {
            continue;
        }
        let at = resolved(path);
        if open.iter().any(|o| at.starts_with(o)) {
            continue;
        }
        // The system's folders are readable already, and the environment opens nothing to
        // change: a program's path (`PYTHON=/usr/bin/python3`) needs no word on the card.
        if runtime::SYSTEM.iter().any(|s| at.starts_with(s)) {
            continue;
        }
        let head = format!(
            "{name} names {}, outside the folders this server was given",
            path.display()
        );
        let opened = locked.opened_by(path);
        if !opened.is_empty() {
            out.warnings.push(format!(
                "{head}: not opened to it (no server may change {})",
                shown(&opened)
            ));
        } else if exists && protected.allows(path) {
            out.readable.push(path.to_path_buf());
            out.warnings.push(format!(
                "{head}: it may read it, not change it; add the folder under the server's \
                 sandbox settings if it needs to change it"
            ));
        } else {
            out.warnings.push(format!(
                "{head}: not opened to it; add the folder under the server's sandbox settings \
                 if it needs it"
            ));
        }
    }
    out
}

/// The first few of `places`, those that exist first (the home folder holds every locked
/// place, most of them never made).
fn shown(places: &[PathBuf]) -> String {
    let (existing, missing): (Vec<&PathBuf>, Vec<&PathBuf>) =
        places.iter().partition(|p| p.exists());
    let mut words: Vec<String> = existing
        .into_iter()
        .chain(missing)
        .take(3)
        .map(|p| p.display().to_string())
        .collect();
    if places.len() > 3 {
        words.push(format!("{} more", places.len() - 3));
    }
    words.join(", ")
}
