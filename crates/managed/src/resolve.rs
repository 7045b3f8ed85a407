//! Where a server's program and address lead: the program found as the server manager finds
//! it (a path, or looked up on the PATH), links followed; an address normalised.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// What a path names once links are followed; the path itself when it does not exist.
pub(crate) fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `command` found as the manager finds it (a path, or looked up on `path`), links followed.
pub(crate) fn resolve(command: &str, cwd: Option<&Path>, path: &OsStr) -> PathBuf {
    let here = cwd
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    match which::which_in(command, Some(path), &here) {
        Ok(found) => real(&found),
        Err(_) if command.contains('/') => real(&here.join(command)),
        Err(_) => PathBuf::from(command),
    }
}

/// `HTTPS://Mcp.Example.com:443/mcp/#x` → `https://mcp.example.com/mcp`.
pub(crate) fn normalised_url(url: &str) -> String {
    match url::Url::parse(url.trim()) {
        Ok(mut parsed) => {
            parsed.set_fragment(None);
            let text = parsed.to_string();
            match text.strip_suffix('/') {
                Some(trimmed) if parsed.query().is_none() => trimmed.to_owned(),
                _ => text,
            }
        }
        Err(_) => url.trim().to_owned(),
    }
}
