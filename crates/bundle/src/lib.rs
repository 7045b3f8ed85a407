//! MCP Bundles (`.mcpb`, formerly `.dxt`): a zip with `manifest.json` at its root and the
//! server's files, optionally signed by `mcpb sign`.
//!
//! - [`Bundle::open`]: reads the file (at most [`MAX_BUNDLE`] bytes), splits off and checks
//!   the signature (`signature.rs`, the chain in `chain.rs`), opens the zip, checks every
//!   entry's name, reads the manifest (`manifest.rs`) and checks that the entry point is there;
//! - [`Bundle::preview`]: what the window and the terminal show before installing;
//! - [`Bundle::unpack`]: into a new folder, safely (`extract.rs`), refusing a tampered bundle;
//! - [`build`]: the manifest as a server of Toolgate's settings (`config.rs`).
//!
//! **What vouches for the files.** The MCPB manifest carries no hashes of the files
//! (checked against the specification and `@anthropic-ai/mcpb` 2.1.2: its `pack` prints a
//! SHA-1 of the archive, which is not stored anywhere). So an unsigned bundle is checked only
//! for the integrity of its zip: every entry's CRC-32 as it is unpacked, and nothing after the
//! zip's end. That catches damage, not a deliberate change. A signed bundle's signature
//! covers every byte of the zip; a mismatch is [`Signature::Tampered`] and never installs. A
//! self-signed certificate proves only that the bundle is unchanged since whoever holds that
//! key signed it, not who that is; [`Signer::trusted`] says whether the chain ends at an
//! authority this computer trusts.

mod chain;
mod config;
mod extract;
pub mod manifest;
mod signature;

use std::io::Read;
use std::path::Path;

use serde::Serialize;

pub use config::{build, secret_name, Built};
pub use extract::Limits;
pub use manifest::{Manifest, ServerType, UserConfigOption, UserConfigType};
pub use signature::{Signature, Signer};

/// The largest `.mcpb` file opened.
pub const MAX_BUNDLE: u64 = 512 << 20;
/// The largest `manifest.json` read.
const MAX_MANIFEST: u64 = 1 << 20;

/// Why a bundle was not opened or installed, in words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BundleError {
    #[error("the bundle cannot be read: {0}")]
    Io(String),
    #[error("not an MCP bundle: {0}")]
    NotABundle(String),
    #[error("the bundle is damaged: {0}")]
    Damaged(String),
    #[error("the bundle was changed after it was signed, or damaged ({0}); it is not installed")]
    Tampered(String),
    #[error("the bundle is refused: {0}")]
    Unsafe(String),
    #[error("the bundle is too large: {0}")]
    TooLarge(String),
    #[error("{0}")]
    Unsupported(String),
    /// Required values not given: (key, title).
    #[error("the bundle needs a value for {}", missing_list(.0))]
    Missing(Vec<(String, String)>),
    #[error("{0}")]
    Invalid(String),
}

fn missing_list(missing: &[(String, String)]) -> String {
    missing
        .iter()
        .map(|(key, title)| format!("{key} ({title})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An opened bundle: its bytes, its signature's verdict and its manifest.
#[derive(Debug)]
pub struct Bundle {
    bytes: Vec<u8>,
    /// Where the zip ends (the signature block follows).
    zip_len: usize,
    signature: Signature,
    manifest: Manifest,
    files: usize,
}

/// One value the bundle asks for.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigField {
    pub key: String,
    #[serde(flatten)]
    pub option: UserConfigOption,
}

/// What installing would install, shown before it is done.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub name: String,
    pub display_name: String,
    pub version: String,
    pub description: String,
    pub author: String,
    pub server_type: ServerType,
    pub manifest_version: String,
    pub signature: Signature,
    pub user_config: Vec<ConfigField>,
    pub files: usize,
    /// Why it cannot run here (another OS), when it cannot.
    #[ts(optional)]
    pub unsupported: Option<String>,
}

impl Bundle {
    /// Reads and checks the bundle at `path`. A tampered signature still opens (so it can be
    /// shown), unless the zip itself is unreadable; [`Bundle::unpack`] refuses it.
    pub fn open(path: &Path) -> Result<Self, BundleError> {
        let file = std::fs::File::open(path)
            .map_err(|e| BundleError::Io(format!("{}: {e}", path.display())))?;
        let mut bytes = Vec::new();
        file.take(MAX_BUNDLE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| BundleError::Io(format!("{}: {e}", path.display())))?;
        if bytes.len() as u64 > MAX_BUNDLE {
            return Err(BundleError::TooLarge(format!(
                "the file is over {} MiB",
                MAX_BUNDLE >> 20
            )));
        }
        Self::from_bytes(bytes)
    }

    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, BundleError> {
        let (zip, signature) = signature::split(&bytes);
        let zip_len = zip.len();
        let unreadable = |e: String| match &signature {
            Signature::Tampered { reason } => BundleError::Tampered(reason.clone()),
            _ => BundleError::NotABundle(e),
        };
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip))
            .map_err(|e| unreadable(format!("not a zip file ({e})")))?;
        let names = extract::checked_names(&mut archive, Limits::default())?;
        let manifest = read_manifest(&mut archive).map_err(|e| match e {
            BundleError::NotABundle(why) => unreadable(why),
            other => other,
        })?;
        let entry = Path::new(&manifest.server.entry_point);
        if !names.iter().any(|n| n == entry) {
            return Err(BundleError::NotABundle(format!(
                "its entry point {} is not in it",
                manifest.server.entry_point
            )));
        }
        let files = names.len();
        Ok(Self {
            bytes,
            zip_len,
            signature,
            manifest,
            files,
        })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    pub fn preview(&self) -> Preview {
        let m = &self.manifest;
        Preview {
            name: m.name.clone(),
            display_name: m.display_name.clone().unwrap_or_else(|| m.name.clone()),
            version: m.version.clone(),
            description: m.description.clone().unwrap_or_default(),
            author: m.author.name.clone(),
            server_type: m.server.kind,
            manifest_version: m.version_of_format().unwrap_or("").to_owned(),
            signature: self.signature.clone(),
            user_config: m
                .user_config
                .iter()
                .map(|(key, option)| ConfigField {
                    key: key.clone(),
                    option: option.clone(),
                })
                .collect(),
            files: self.files,
            unsupported: config::unsupported(m),
        }
    }

    /// Unpacks the bundle into `dir` (which must not exist), refusing a tampered one.
    pub fn unpack(&self, dir: &Path, limits: Limits) -> Result<(), BundleError> {
        if let Signature::Tampered { reason } = &self.signature {
            return Err(BundleError::Tampered(reason.clone()));
        }
        extract::unpack(&self.bytes[..self.zip_len], dir, limits)
    }
}

fn read_manifest(
    archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
) -> Result<Manifest, BundleError> {
    let entry = archive
        .by_name("manifest.json")
        .map_err(|_| BundleError::NotABundle("it has no manifest.json at its root".into()))?;
    let mut text = String::new();
    entry
        .take(MAX_MANIFEST + 1)
        .read_to_string(&mut text)
        .map_err(|e| BundleError::NotABundle(format!("its manifest.json cannot be read: {e}")))?;
    if text.len() as u64 > MAX_MANIFEST {
        return Err(BundleError::TooLarge(
            "its manifest.json is over 1 MiB".into(),
        ));
    }
    let manifest: Manifest = serde_json::from_str(&text)
        .map_err(|e| BundleError::NotABundle(format!("its manifest.json is not valid: {e}")))?;
    if manifest.version_of_format().is_none() {
        return Err(BundleError::NotABundle(
            "its manifest.json has neither manifest_version nor dxt_version".into(),
        ));
    }
    Ok(manifest)
}

#[cfg(test)]
mod tests;
