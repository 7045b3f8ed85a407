//! Connecting another host (Claude Desktop, Claude Code, Cursor, VS Code, Goose, Zed, Codex CLI,
//! Gemini CLI) to Toolgate, and undoing it.
//!
//! Connecting a host takes the MCP servers it runs itself into Toolgate (through the import,
//! so secrets move to the keychain) and leaves the host one server: `toolgate connect --profile
//! HOST`, so every call it makes passes the gate. Three steps, so nothing is touched unseen:
//!
//! 1. [`plan`] reads the host's file and says what would happen: the servers that move (the
//!    import's report), those that stay (a transport Toolgate cannot run, a Zed extension, a
//!    Goose built-in), and the file as it would be after. Only the server map's entries change
//!    (`edit.rs`): the rest of the file keeps its bytes, comments and key order (Goose's YAML
//!    loses its comments; the backup keeps them).
//! 2. The front end shows that and asks. The caller imports the servers ([`Plan::import`]).
//! 3. [`apply`] changes the host's file, but only if it is byte for byte what [`plan`] read; the
//!    original goes beside it as `<file>.toolgate-backup`, and the data folder's `hosts.json`
//!    records what was written and which entries moved ([`Connected`]).
//!
//! [`undo`] puts the backup back byte for byte when the host's file is still what Toolgate
//! wrote. When the host wrote to it since (Claude Code does at every start), it reverses
//! Toolgate's change in the file as it is now: Toolgate's entry out, the moved entries back
//! (taken from the backup), everything the host wrote since kept ([`undo_plan`] says which).
//!
//! Where each host keeps its file on Linux, macOS and Windows is data ([`paths`], the table in
//! `crate::host_paths`, which the import uses too); how each host's file holds its
//! servers is `format.rs`.

mod connect;
mod edit;
mod format;
mod state;
mod undo;

/// Where each host keeps its config: the one table, kept in `toolgate-settings`.
pub mod export;
pub mod host_paths;
pub mod import;
pub use host_paths as paths;

use std::path::{Path, PathBuf};

use crate::import::ImportError;
use serde_json::Value;

pub use connect::{apply, plan, Plan};
pub use format::{ConnectCommand, ENTRY};
pub use paths::{config_path, config_path_here, HostKind, Os};
pub use state::{connected, Connected};
pub use undo::{undo, undo_apply, undo_plan, UndoPlan, Undone};

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("{host} has no config at {}: there is nothing to connect (add a server in {host} first, or connect its servers to Toolgate another way)", path.display())]
    NoConfig { host: &'static str, path: PathBuf },
    #[error("{} cannot be read as {host}'s config: {reason}. Nothing was changed.", path.display())]
    Unreadable {
        host: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("{host} is already connected to Toolgate (its original config is kept as {}); undo it first with `toolgate hosts undo {id}`", backup.display())]
    AlreadyConnected {
        host: &'static str,
        id: &'static str,
        backup: PathBuf,
    },
    #[error("{} changed after it was shown to you; nothing was written. Look at it again and connect again.", path.display())]
    ChangedSincePreview { path: PathBuf },
    #[error("{host} is not connected to Toolgate: there is nothing to undo")]
    NotConnected { host: &'static str },
    #[error("{} can no longer be read ({reason}), so Toolgate cannot take its entry out of it. The original is kept as {}: restore it by hand, or undo with --force to put the original back as it was (losing what changed since).", path.display(), backup.display())]
    UnreadableSinceConnect {
        path: PathBuf,
        backup: PathBuf,
        reason: String,
    },
    #[error("{} changed while undo was being shown to you; nothing was written. Undo again.", path.display())]
    ChangedSinceUndoPreview { path: PathBuf },
    #[error("the servers in {} could not be imported: {source}", path.display())]
    Import {
        path: PathBuf,
        #[source]
        source: ImportError,
    },
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    File(#[from] toolgate_settings::file::FileError),
}

/// FNV-1a over the bytes: whether a file is the one Toolgate wrote (not a security check).
fn digest(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// `<file>.toolgate-backup`, beside the host's file.
pub fn backup_of(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".toolgate-backup");
    path.with_file_name(name)
}

fn read(host: HostKind, path: &Path) -> Result<Vec<u8>, HostError> {
    std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => HostError::NoConfig {
            host: host.label(),
            path: path.to_owned(),
        },
        _ => HostError::Io {
            action: "read",
            path: path.to_owned(),
            source,
        },
    })
}

/// The file's text and its document as JSON, whatever the file's syntax.
fn parse(host: HostKind, path: &Path, bytes: &[u8]) -> Result<(String, Value), HostError> {
    let unreadable = |reason: String| HostError::Unreadable {
        host: host.label(),
        path: path.to_owned(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| unreadable(format!("not UTF-8 ({e})")))?;
    let doc = edit::read(format::syntax(host), text).map_err(unreadable)?;
    Ok((text.to_owned(), doc))
}

/// The host's server map in `doc`: empty when there is none, an error when it is not a map.
fn servers_in(
    host: HostKind,
    path: &Path,
    doc: &Value,
) -> Result<serde_json::Map<String, Value>, HostError> {
    let key = format::servers_key(host);
    match doc.get(key) {
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(Value::Null) | None => Ok(serde_json::Map::new()),
        Some(_) => Err(HostError::Unreadable {
            host: host.label(),
            path: path.to_owned(),
            reason: format!("`{key}` is not an object"),
        }),
    }
}
