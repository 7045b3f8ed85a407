//! Connecting another host (Claude Desktop, Claude Code, Cursor, VS Code, Goose, Zed) to
//! Toolgate, and undoing it.
//!
//! Connecting a host takes the MCP servers it runs itself into Toolgate (through the import,
//! so secrets move to the keychain) and leaves the host one server: `toolgate connect --profile
//! HOST`, so every call it makes passes the gate. Three steps, so nothing is touched unseen:
//!
//! 1. [`plan`] reads the host's file and says what would happen: the servers that move (the
//!    import's report), those that stay (a transport Toolgate cannot run, a Zed extension, a
//!    Goose built-in), the file as it would be after, and what is lost in the rewrite (comments,
//!    key order; the backup keeps them).
//! 2. The front end shows that and asks. The caller imports the servers ([`Plan::import`]).
//! 3. [`apply`] rewrites the host's file, but only if it is byte for byte what [`plan`] read; the
//!    original goes beside it as `<file>.toolgate-backup`, and the data folder's `hosts.json`
//!    records what was written.
//!
//! [`undo`] puts the backup back, byte for byte, unless the host's file changed since Toolgate
//! wrote it (then the user's later edits would be lost, and it says so instead).
//!
//! Where each host keeps its file on Linux, macOS and Windows is data ([`paths`], the table in
//! `toolgate_settings::host_paths`, which the import uses too); how each host's file holds its
//! servers is `format.rs`.

mod format;

/// Where each host keeps its config: the one table, kept in `toolgate-settings`.
pub use toolgate_settings::host_paths as paths;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use toolgate_settings::import::{
    parse_jsonc, plan_import, ImportError, ImportOptions, ImportPlan, SkipReason,
};
use toolgate_settings::Settings;

use format::{as_import_entry, entry, is_connected, servers_key, shape, Shape};
pub use format::{ConnectCommand, ENTRY};
pub use paths::{config_path, config_path_here, HostKind, Os};

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
    #[error("{} changed after Toolgate connected it, and putting back the original would lose those changes. The original is kept as {}: restore it by hand, or undo with --force.", path.display(), backup.display())]
    ChangedSinceConnect { path: PathBuf, backup: PathBuf },
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

/// What connecting a host would do; see the crate docs.
pub struct Plan {
    pub host: HostKind,
    pub path: PathBuf,
    pub backup: PathBuf,
    /// The servers the host runs now, imported into Toolgate; `None` when it runs none.
    pub import: Option<ImportPlan>,
    /// Entries left in the host's file, by name, and why.
    pub kept: Vec<(String, String)>,
    /// What the rewrite does not keep (the backup keeps it all).
    pub notes: Vec<String>,
    /// The host's file after connecting.
    pub replacement: Vec<u8>,
    original: Vec<u8>,
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

/// The document, as JSON whatever the file's format.
fn parse(host: HostKind, path: &Path, bytes: &[u8]) -> Result<Value, HostError> {
    let unreadable = |reason: String| HostError::Unreadable {
        host: host.label(),
        path: path.to_owned(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| unreadable(format!("not UTF-8 ({e})")))?;
    let doc = match shape(host) {
        Shape::Goose => {
            let yaml: yaml_serde::Value =
                yaml_serde::from_str(text).map_err(|e| unreadable(e.to_string()))?;
            serde_json::to_value(yaml).map_err(|e| unreadable(e.to_string()))?
        }
        _ => parse_jsonc(text).map_err(|e| unreadable(e.to_string()))?,
    };
    match doc {
        Value::Object(_) => Ok(doc),
        // An empty YAML file is null.
        Value::Null => Ok(json!({})),
        other => Err(unreadable(format!(
            "the top level is {}, not an object",
            match other {
                Value::Array(_) => "a list",
                _ => "a single value",
            }
        ))),
    }
}

/// What connecting `host`, whose config is at `path`, would do, given the user's settings.
pub fn plan(
    host: HostKind,
    path: &Path,
    settings: &Settings,
    connect: &ConnectCommand,
) -> Result<Plan, HostError> {
    let original = read(host, path)?;
    let backup = backup_of(path);
    let already = || HostError::AlreadyConnected {
        host: host.label(),
        id: host.id(),
        backup: backup.clone(),
    };
    if backup.exists() {
        return Err(already());
    }
    let mut doc = parse(host, path, &original)?;
    let servers = match doc.get(servers_key(host)) {
        Some(Value::Object(map)) => map.clone(),
        Some(Value::Null) | None => Map::new(),
        Some(_) => {
            return Err(HostError::Unreadable {
                host: host.label(),
                path: path.to_owned(),
                reason: format!("`{}` is not an object", servers_key(host)),
            })
        }
    };
    if is_connected(&servers) {
        return Err(already());
    }
    let (import, mut kept) = import_servers(host, path, settings, &doc, &servers)?;
    let mut next = Map::new();
    for (name, _) in &kept {
        if let Some(value) = servers.get(name) {
            next.insert(name.clone(), value.clone());
        }
    }
    next.insert(ENTRY.into(), entry(host, connect));
    if let Value::Object(top) = &mut doc {
        top.insert(servers_key(host).into(), Value::Object(next));
    }
    let notes = notes(host, &original, &backup);
    let replacement = serialized(host, path, &doc)?;
    kept.sort();
    Ok(Plan {
        host,
        path: path.to_owned(),
        backup,
        import,
        kept,
        notes,
        replacement,
        original,
    })
}

/// Entries left in the host's file, by name, with why they stay.
type Kept = Vec<(String, String)>;

/// The host's servers that Toolgate can run, planned into the user's settings through the
/// import (`None` when there are none), and the entries that stay with the host, with why.
fn import_servers(
    host: HostKind,
    path: &Path,
    settings: &Settings,
    doc: &Value,
    servers: &Map<String, Value>,
) -> Result<(Option<ImportPlan>, Kept), HostError> {
    let mut kept: Kept = Vec::new();
    let mut moving = Map::new();
    for (name, value) in servers {
        match as_import_entry(host, value) {
            Ok(entry) => {
                moving.insert(name.clone(), entry);
            }
            Err(why) => kept.push((name.clone(), why)),
        }
    }
    let import = if moving.is_empty() {
        None
    } else {
        let mut text = Map::new();
        match shape(host) {
            Shape::VsCode => {
                text.insert("servers".into(), Value::Object(moving));
                if let Some(inputs) = doc.get("inputs") {
                    text.insert("inputs".into(), inputs.clone());
                }
            }
            _ => {
                text.insert("mcpServers".into(), Value::Object(moving));
            }
        }
        let plan = plan_import(
            settings,
            &Value::Object(text).to_string(),
            &ImportOptions::default(),
        )
        .map_err(|source| HostError::Import {
            path: path.to_owned(),
            source,
        })?;
        Some(plan)
    };
    // What the import will not take stays with the host.
    if let Some(import) = &import {
        for skipped in &import.report().skipped {
            let why = match &skipped.reason {
                SkipReason::UnsupportedTransport { transport } => {
                    format!("Toolgate cannot run its {transport} transport")
                }
                SkipReason::UnsafeEnv { variable } => {
                    format!("its environment sets {variable}, which Toolgate refuses to start")
                }
                SkipReason::Identical { .. } | SkipReason::DisabledDuplicate { .. } => continue,
            };
            kept.push((skipped.name.clone(), why));
        }
    }
    Ok((import, kept))
}

/// What the user should know about the rewrite: what it does not keep, and where the original is.
fn notes(host: HostKind, original: &[u8], backup: &Path) -> Vec<String> {
    let text = String::from_utf8_lossy(original);
    let mut notes = vec!["The rest of the file is kept, with its keys in sorted order.".to_owned()];
    let commented = match shape(host) {
        Shape::Goose => text.lines().any(|l| l.trim_start().starts_with('#')),
        _ => text.contains("//") || text.contains("/*"),
    };
    if commented {
        notes.push("Comments in the file are not kept in the rewritten file.".to_owned());
    }
    notes.push(format!(
        "The original is kept as {}, and `undo` puts it back.",
        backup.display()
    ));
    notes
}

/// The rewritten document as the host's file format writes it.
fn serialized(host: HostKind, path: &Path, doc: &Value) -> Result<Vec<u8>, HostError> {
    Ok(match shape(host) {
        Shape::Goose => yaml_serde::to_string(doc)
            .map_err(|e| HostError::Unreadable {
                host: host.label(),
                path: path.to_owned(),
                reason: e.to_string(),
            })?
            .into_bytes(),
        _ => {
            let mut text = serde_json::to_string_pretty(doc).unwrap_or_default();
            text.push('\n');
            text.into_bytes()
        }
    })
}

/// What `hosts.json` records about a connected host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connected {
    pub path: PathBuf,
    pub backup: PathBuf,
    /// The digest of the file Toolgate wrote.
    pub written: String,
}

/// The connected hosts, by id, from the data folder's `hosts.json`.
pub fn connected(state: &Path) -> BTreeMap<String, Connected> {
    std::fs::read(state)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn save_state(state: &Path, all: &BTreeMap<String, Connected>) -> Result<(), HostError> {
    let mut bytes = serde_json::to_vec_pretty(all).unwrap_or_default();
    bytes.push(b'\n');
    Ok(toolgate_settings::file::write_atomically(state, &bytes)?)
}

/// Rewrites the host's file as planned, if it is still what [`plan`] read; keeps the original
/// beside it and records the change in `state` (the data folder's `hosts.json`).
pub fn apply(plan: &Plan, state: &Path) -> Result<(), HostError> {
    let now = read(plan.host, &plan.path)?;
    if now != plan.original {
        return Err(HostError::ChangedSincePreview {
            path: plan.path.clone(),
        });
    }
    let io = |action, path: &Path| {
        let path = path.to_owned();
        move |source| HostError::Io {
            action,
            path,
            source,
        }
    };
    // The backup is new, never over an older one: that would lose the first original.
    let mut backup = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&plan.backup)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => HostError::AlreadyConnected {
                host: plan.host.label(),
                id: plan.host.id(),
                backup: plan.backup.clone(),
            },
            _ => io("keep the original as", &plan.backup)(e),
        })?;
    use std::io::Write;
    backup
        .write_all(&plan.original)
        .and_then(|()| backup.sync_all())
        .map_err(io("keep the original as", &plan.backup))?;
    if let Ok(meta) = std::fs::metadata(&plan.path) {
        let _ = std::fs::set_permissions(&plan.backup, meta.permissions());
    }
    if let Err(e) = toolgate_settings::file::write_atomically(&plan.path, &plan.replacement) {
        let _ = std::fs::remove_file(&plan.backup);
        return Err(e.into());
    }
    let mut all = connected(state);
    all.insert(
        plan.host.id().to_owned(),
        Connected {
            path: plan.path.clone(),
            backup: plan.backup.clone(),
            written: digest(&plan.replacement),
        },
    );
    save_state(state, &all)
}

/// Puts the host's original file back, byte for byte; returns its path. Refuses when the file
/// changed since Toolgate wrote it, unless `force`.
pub fn undo(host: HostKind, state: &Path, force: bool) -> Result<PathBuf, HostError> {
    let mut all = connected(state);
    let record = all
        .get(host.id())
        .cloned()
        .ok_or(HostError::NotConnected { host: host.label() })?;
    let now = std::fs::read(&record.path).ok();
    if !force && now.as_deref().map(digest) != Some(record.written.clone()) {
        return Err(HostError::ChangedSinceConnect {
            path: record.path,
            backup: record.backup,
        });
    }
    std::fs::rename(&record.backup, &record.path).map_err(|source| HostError::Io {
        action: "put back",
        path: record.backup.clone(),
        source,
    })?;
    all.remove(host.id());
    save_state(state, &all)?;
    Ok(record.path)
}
