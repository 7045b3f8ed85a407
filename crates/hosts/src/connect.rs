//! Connecting a host: what would change ([`plan`]) and changing it ([`apply`]).

use std::path::{Path, PathBuf};

use crate::import::{plan_import, ImportOptions, ImportPlan, SkipReason};
use serde_json::{Map, Value};
use toolgate_settings::Settings;

use crate::format::{self, as_import_entry, entry, is_connected, servers_key, shape, Shape};
use crate::state::{self, Connected};
use crate::ENTRY;
use crate::{
    backup_of, digest, edit, parse, read, servers_in, ConnectCommand, HostError, HostKind,
};

/// What connecting a host would do; see the crate docs.
pub struct Plan {
    pub host: HostKind,
    pub path: PathBuf,
    pub backup: PathBuf,
    /// The servers the host runs now, imported into Toolgate; `None` when it runs none.
    pub import: Option<ImportPlan>,
    /// Entries left in the host's file, by name, and why.
    pub kept: Vec<(String, String)>,
    /// The entries taken out of the host's file (they move to Toolgate), by name.
    pub moved: Vec<String>,
    /// What the user should know about the change (what it keeps, where the original goes).
    pub notes: Vec<String>,
    /// The host's file after connecting.
    pub replacement: Vec<u8>,
    original: Vec<u8>,
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
    let (text, doc) = parse(host, path, &original)?;
    let servers = servers_in(host, path, &doc)?;
    if is_connected(&servers) {
        return Err(already());
    }
    let (import, mut kept) = import_servers(host, path, settings, &doc, &servers)?;
    let moved: Vec<String> = servers
        .keys()
        .filter(|name| !kept.iter().any(|(k, _)| k == *name))
        .cloned()
        .collect();
    let ours = entry(host, connect);
    // A moved entry that was itself named `toolgate` is taken out before ours goes in.
    let remove: Vec<&str> = moved.iter().map(String::as_str).collect();
    let replacement = edit::servers(
        format::syntax(host),
        &text,
        servers_key(host),
        &remove,
        &[(ENTRY, &ours)],
    )
    .map_err(|reason| HostError::Unreadable {
        host: host.label(),
        path: path.to_owned(),
        reason,
    })?
    .into_bytes();
    let notes = notes(host, &original, &backup);
    kept.sort();
    Ok(Plan {
        host,
        path: path.to_owned(),
        backup,
        import,
        kept,
        moved,
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

/// What the user should know about the change: what it keeps, and where the original is.
fn notes(host: HostKind, original: &[u8], backup: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    match format::syntax(host) {
        format::Syntax::Yaml => {
            notes.push("Only the moved servers' entries and Toolgate's change; the rest of the file keeps its order.".to_owned());
            let text = String::from_utf8_lossy(original);
            if text.lines().any(|l| l.trim_start().starts_with('#')) {
                notes.push("Comments in the file are not kept in the rewritten file.".to_owned());
            }
        }
        format::Syntax::Jsonc | format::Syntax::Toml => notes.push(
            "Only the moved servers' entries and Toolgate's change: the rest of the file stays as it is, comments included."
                .to_owned(),
        ),
    }
    notes.push(format!(
        "The original is kept as {}, and `undo` puts it back (keeping what {} writes to the file meanwhile).",
        backup.display(),
        host.label()
    ));
    notes
}

/// Changes the host's file as planned, if it is still what [`plan`] read; keeps the original
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
    let mut all = state::connected(state);
    all.insert(
        plan.host.id().to_owned(),
        Connected {
            path: plan.path.clone(),
            backup: plan.backup.clone(),
            written: digest(&plan.replacement),
            moved: Some(plan.moved.clone()),
        },
    );
    state::save(state, &all)
}
