//! Undoing a connection: the original back byte for byte when nothing else changed the file,
//! else Toolgate's own change reversed in the file as the host keeps it now.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::format::{self, servers_key};
use crate::state::{self, Connected};
use crate::{digest, edit, parse, servers_in, HostError, HostKind, ENTRY};

/// What undo does (or did).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undone {
    /// The file was still what Toolgate wrote (or gone): the original is back, byte for byte.
    Restored,
    /// The host wrote to the file since: Toolgate's entry is out, the entries connecting took
    /// out are back, and everything else is as the host keeps it now.
    Reversed {
        /// The entries put back from the original.
        put_back: Vec<String>,
        /// Entries the original had that the host has again now under the same name: its
        /// current ones are kept.
        kept_current: Vec<String>,
    },
}

/// What undoing a host would do, for the front end to show before [`undo_apply`].
#[derive(Debug, Clone)]
pub struct UndoPlan {
    pub host: HostKind,
    pub path: PathBuf,
    pub backup: PathBuf,
    pub undone: Undone,
    /// The file after, when it is edited rather than restored.
    replacement: Option<Vec<u8>>,
    /// The file as read, to refuse writing over a change made meanwhile.
    current: Option<Vec<u8>>,
}

/// What undoing `host` would do. With `force`, the original comes back byte for byte whatever
/// the host wrote since.
pub fn undo_plan(host: HostKind, state: &Path, force: bool) -> Result<UndoPlan, HostError> {
    let record = state::connected(state)
        .get(host.id())
        .cloned()
        .ok_or(HostError::NotConnected { host: host.label() })?;
    let current = std::fs::read(&record.path).ok();
    let restore = |current| UndoPlan {
        host,
        path: record.path.clone(),
        backup: record.backup.clone(),
        undone: Undone::Restored,
        replacement: None,
        current,
    };
    let Some(now) = current else {
        return Ok(restore(None));
    };
    if force || digest(&now) == record.written {
        return Ok(restore(Some(now)));
    }
    let (replacement, undone) = reversed(host, &record, &now)?;
    Ok(UndoPlan {
        undone,
        replacement: Some(replacement),
        ..restore(Some(now))
    })
}

/// The file `now` with Toolgate's change reversed.
fn reversed(
    host: HostKind,
    record: &Connected,
    now: &[u8],
) -> Result<(Vec<u8>, Undone), HostError> {
    let unreadable = |reason: String| HostError::UnreadableSinceConnect {
        path: record.path.clone(),
        backup: record.backup.clone(),
        reason,
    };
    let original = std::fs::read(&record.backup).map_err(|source| HostError::Io {
        action: "read the original kept as",
        path: record.backup.clone(),
        source,
    })?;
    let (_, before) = parse(host, &record.backup, &original)?;
    let before = servers_in(host, &record.backup, &before)?;
    let (text, after) = parse(host, &record.path, now).map_err(|e| unreadable(e.to_string()))?;
    let after = servers_in(host, &record.path, &after).map_err(|e| unreadable(e.to_string()))?;

    let ours = after.get(ENTRY).is_some_and(is_toolgate);
    let moved: Vec<String> = match &record.moved {
        Some(moved) => moved.clone(),
        // An older record: what the original had and the file lacks now.
        None => before
            .keys()
            .filter(|name| !after.contains_key(*name) || (*name == ENTRY && ours))
            .cloned()
            .collect(),
    };
    let mut put_back: Vec<(&str, &Value)> = Vec::new();
    let mut kept_current = Vec::new();
    for name in &moved {
        let Some(value) = before.get(name) else {
            continue;
        };
        if after.contains_key(name) && !(name == ENTRY && ours) {
            kept_current.push(name.clone());
        } else {
            put_back.push((name, value));
        }
    }
    let remove: &[&str] = if ours { &[ENTRY] } else { &[] };
    let replacement = edit::servers(
        format::syntax(host),
        &text,
        servers_key(host),
        remove,
        &put_back,
    )
    .map_err(unreadable)?;
    let undone = Undone::Reversed {
        put_back: put_back.iter().map(|(n, _)| (*n).to_owned()).collect(),
        kept_current,
    };
    Ok((replacement.into_bytes(), undone))
}

/// Whether a server entry is Toolgate's own (`toolgate connect …`).
fn is_toolgate(entry: &Value) -> bool {
    entry
        .get("args")
        .and_then(Value::as_array)
        .is_some_and(|args| args.iter().any(|a| a == "connect"))
}

/// Carries out an [`UndoPlan`], if the host's file is still what it read; returns the path.
pub fn undo_apply(plan: &UndoPlan, state: &Path) -> Result<PathBuf, HostError> {
    if std::fs::read(&plan.path).ok() != plan.current {
        return Err(HostError::ChangedSinceUndoPreview {
            path: plan.path.clone(),
        });
    }
    match &plan.replacement {
        None => std::fs::rename(&plan.backup, &plan.path).map_err(|source| HostError::Io {
            action: "put back",
            path: plan.backup.clone(),
            source,
        })?,
        Some(bytes) => {
            toolgate_settings::file::write_atomically(&plan.path, bytes)?;
            std::fs::remove_file(&plan.backup).map_err(|source| HostError::Io {
                action: "remove the original kept as",
                path: plan.backup.clone(),
                source,
            })?;
        }
    }
    let mut all = state::connected(state);
    all.remove(plan.host.id());
    state::save(state, &all)?;
    Ok(plan.path.clone())
}

/// [`undo_plan`] and [`undo_apply`] at once.
pub fn undo(host: HostKind, state: &Path, force: bool) -> Result<(PathBuf, Undone), HostError> {
    let plan = undo_plan(host, state, force)?;
    let path = undo_apply(&plan, state)?;
    Ok((path, plan.undone))
}
