//! `hosts.json` in the data folder: which hosts Toolgate connected, and what it changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::HostError;

/// What `hosts.json` records about a connected host. Names only: the moved entries themselves
/// (with whatever secrets they held) stay in the host's backup, beside its file, never in
/// Toolgate's data folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connected {
    pub path: PathBuf,
    pub backup: PathBuf,
    /// The digest of the file Toolgate wrote.
    pub written: String,
    /// The entries connecting took out of the host's server map; `None` in records written
    /// before Toolgate kept them (undo then takes the backup's entries missing from the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<Vec<String>>,
}

/// The connected hosts, by id, from the data folder's `hosts.json`.
pub fn connected(state: &Path) -> BTreeMap<String, Connected> {
    std::fs::read(state)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

pub(crate) fn save(state: &Path, all: &BTreeMap<String, Connected>) -> Result<(), HostError> {
    let mut bytes = serde_json::to_vec_pretty(all).unwrap_or_default();
    bytes.push(b'\n');
    Ok(toolgate_settings::file::write_atomically(state, &bytes)?)
}
