//! MCP Bundles (`.mcpb`) installed as servers: previewed with their signature's verdict, then
//! unpacked into `<data>/bundles/<id>/` and added as a stdio server (`toolgate-bundle` does
//! the checking and the mapping). Sensitive values go to the keychain before the settings
//! name them, as a registry server's do; a tampered bundle is never unpacked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use toolgate_bundle::{Bundle, BundleError, Limits, Preview, Signature};
use toolgate_secrets::SecretError;
use toolgate_settings::file::FileError;
use toolgate_settings::ServerConfig;

use crate::Host;

/// Where bundles are unpacked, one folder per server, inside the data folder.
pub const BUNDLES: &str = "bundles";

/// A bundle before it is installed, and the server id it would get.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct BundlePreview {
    #[serde(flatten)]
    pub bundle: Preview,
    pub suggested_id: String,
}

/// A bundle installed: the server added (not started) and who signed it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct InstalledBundle {
    pub id: String,
    pub name: String,
    pub version: String,
    pub signature: Signature,
    /// How many values went to the keychain.
    pub secrets: usize,
    /// Where its files are.
    #[ts(type = "string")]
    pub folder: PathBuf,
}

/// Why a bundle was not installed.
#[derive(Debug, thiserror::Error)]
pub enum BundleInstallError {
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error("a server '{0}' exists already; remove it first or pick another id")]
    Exists(String),
    #[error("'{0}' cannot be a server id: use letters, digits, '-', '_' or '.'")]
    InvalidId(String),
    #[error("the keychain refused a secret of the bundle: {0}")]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Settings(#[from] FileError),
    #[error("the bundle could not be unpacked: {0}")]
    Io(String),
}

impl Host {
    /// Opens and checks the bundle at `path`: its manifest, the values it asks for and what its
    /// signature says (a tampered bundle is shown as such, not refused here).
    pub async fn inspect_bundle(&self, path: &Path) -> Result<BundlePreview, BundleError> {
        let bundle = open(path).await?;
        let preview = bundle.preview();
        let mut suggested_id = toolgate_registry::suggested_id(&preview.name);
        let settings = self.settings();
        let taken = |id: &str| settings.servers.iter().any(|s| s.id == id);
        if taken(&suggested_id) {
            let base = suggested_id.clone();
            suggested_id = (2..)
                .map(|n| format!("{base}-{n}"))
                .find(|id| !taken(id))
                .unwrap_or(base);
        }
        Ok(BundlePreview {
            bundle: preview,
            suggested_id,
        })
    }

    /// Installs the bundle at `path` as server `id` with the user's `values` (several for a
    /// field that takes several): checked and mapped first (a required value missing is an
    /// error naming it, before anything is written), then unpacked into
    /// `<data>/bundles/<id>/`, its secrets put in the keychain, the server added to the
    /// settings. Any failure takes back what was done. Not started: the caller starts it
    /// where it runs servers.
    pub async fn install_bundle(
        self: &Arc<Self>,
        path: &Path,
        id: &str,
        values: &BTreeMap<String, Vec<String>>,
    ) -> Result<InstalledBundle, BundleInstallError> {
        if id.is_empty()
            || id.starts_with('.')
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(BundleInstallError::InvalidId(id.to_owned()));
        }
        if self.settings().servers.iter().any(|s| s.id == id) {
            return Err(BundleInstallError::Exists(id.to_owned()));
        }
        let bundle = open(path).await?;
        if let Signature::Tampered { reason } = bundle.signature() {
            return Err(BundleError::Tampered(reason.clone()).into());
        }
        let root = self.data_dir().join(BUNDLES);
        let folder = root.join(id);
        let built = toolgate_bundle::build(bundle.manifest(), &folder, id, values)?;

        let (unpack_root, unpack_folder, id_owned) = (root.clone(), folder.clone(), id.to_owned());
        let bundle = tokio::task::spawn_blocking(move || {
            unpack(&bundle, &unpack_root, &unpack_folder, &id_owned).map(|()| bundle)
        })
        .await
        .map_err(|e| BundleInstallError::Io(e.to_string()))??;

        let stored: Vec<String> = built.secrets.iter().map(|(n, _)| n.clone()).collect();
        let result = match self.store_server_secrets(built.secrets.clone()).await {
            Ok(()) => {
                let config: ServerConfig = built.config.clone();
                self.change_settings(move |s| s.servers.push(config))
                    .await
                    .map(|_| ())
                    .map_err(BundleInstallError::from)
            }
            Err(e) => Err(e.into()),
        };
        if let Err(e) = result {
            self.forget_server_secrets(stored).await;
            let gone = folder.clone();
            let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(gone)).await;
            return Err(e);
        }
        let manifest = bundle.manifest();
        Ok(InstalledBundle {
            id: id.to_owned(),
            name: manifest
                .display_name
                .clone()
                .unwrap_or_else(|| manifest.name.clone()),
            version: manifest.version.clone(),
            signature: bundle.signature().clone(),
            secrets: built.secrets.len(),
            folder,
        })
    }

    /// Removes the unpacked files of server `id`, if it was installed from a bundle (after the
    /// server is removed from the settings).
    pub fn forget_bundle(&self, id: &str) {
        if id.is_empty() || id.starts_with('.') || id.contains(['/', '\\']) {
            return;
        }
        let folder = self.data_dir().join(BUNDLES).join(id);
        if folder.is_dir() {
            if let Err(e) = std::fs::remove_dir_all(&folder) {
                tracing::warn!("the files of bundle server {id} were not removed: {e}");
            }
        }
    }
}

async fn open(path: &Path) -> Result<Bundle, BundleError> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || Bundle::open(&path))
        .await
        .map_err(|e| BundleError::Io(e.to_string()))?
}

/// Unpacks into a fresh folder beside the final one, then renames it into place, so a
/// half-unpacked bundle never sits where a server runs from. A folder left by a server
/// removed earlier (no server has this id now) is replaced.
fn unpack(bundle: &Bundle, root: &Path, folder: &Path, id: &str) -> Result<(), BundleInstallError> {
    let io = |e: std::io::Error| BundleInstallError::Io(e.to_string());
    std::fs::create_dir_all(root).map_err(io)?;
    let partial = root.join(format!(".{id}.partial-{}", uuid::Uuid::new_v4()));
    if let Err(e) = bundle.unpack(&partial, Limits::default()) {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e.into());
    }
    if folder.exists() {
        std::fs::remove_dir_all(folder).map_err(io)?;
    }
    std::fs::rename(&partial, folder).map_err(|e| {
        let _ = std::fs::remove_dir_all(&partial);
        io(e)
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use toolgate_secrets::{MemoryStore, SecretStore};
    use toolgate_settings::Transport;

    use super::*;
    use crate::HostOptions;

    fn bundle_file(dir: &Path) -> PathBuf {
        let manifest = r#"{"manifest_version": "0.3", "name": "notes", "version": "0.2.0",
          "author": {"name": "Ann"},
          "server": {"type": "node", "entry_point": "server/index.js",
            "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"],
              "env": {"NOTES_TOKEN": "${user_config.token}"}}},
          "user_config": {"token": {"type": "string", "title": "Token", "description": "",
            "sensitive": true, "required": true}}}"#;
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, content) in [
            ("manifest.json", manifest),
            ("server/index.js", "console.log(1)"),
        ] {
            writer
                .start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            writer.write_all(content.as_bytes()).unwrap();
        }
        let path = dir.join("notes.mcpb");
        std::fs::write(&path, writer.finish().unwrap().into_inner()).unwrap();
        path
    }

    #[tokio::test]
    async fn a_bundle_is_previewed_then_installed_with_its_secret_in_the_keychain() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(MemoryStore::default());
        let host = Arc::new(
            Host::open(HostOptions {
                secrets: store.clone(),
                ..HostOptions::new(dir.path().join("data"))
            })
            .unwrap(),
        );
        let file = bundle_file(dir.path());
        let preview = host.inspect_bundle(&file).await.unwrap();
        assert_eq!(preview.suggested_id, "notes");
        assert_eq!(preview.bundle.signature, Signature::Unsigned);

        let none = BTreeMap::new();
        let error = host
            .install_bundle(&file, "notes", &none)
            .await
            .unwrap_err();
        assert!(error.to_string().contains("token (Token)"), "{error}");
        assert!(!dir.path().join("data/bundles/notes").exists());
        assert!(matches!(
            host.install_bundle(&file, "../up", &none).await,
            Err(BundleInstallError::InvalidId(_))
        ));

        let values = BTreeMap::from([("token".to_owned(), vec!["tok-9876".to_owned()])]);
        let installed = host.install_bundle(&file, "notes", &values).await.unwrap();
        assert_eq!(installed.secrets, 1);
        let folder = dir.path().join("data/bundles/notes");
        assert!(folder.join("server/index.js").is_file());
        assert_eq!(
            store
                .get(&toolgate_settings::secret_item("NOTES_TOKEN"))
                .unwrap(),
            Some("tok-9876".to_owned())
        );
        let server = host
            .settings()
            .servers
            .iter()
            .find(|s| s.id == "notes")
            .cloned()
            .unwrap();
        let Transport::Stdio { args, env, .. } = &server.transport else {
            panic!("stdio");
        };
        assert_eq!(
            args,
            &[folder.join("server/index.js").display().to_string()]
        );
        assert_eq!(env["NOTES_TOKEN"], "${secret:NOTES_TOKEN}");
        assert!(matches!(
            host.install_bundle(&file, "notes", &values).await,
            Err(BundleInstallError::Exists(_))
        ));
        assert_eq!(
            host.inspect_bundle(&file).await.unwrap().suggested_id,
            "notes-2"
        );

        host.forget_bundle("notes");
        assert!(!folder.exists());
    }
}
