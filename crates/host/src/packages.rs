//! The versions Toolgate installed for npx and uvx servers (`toolgate-install`): what each runs,
//! whether its registry has a newer one, and an update, which is offered and only taken when
//! the user asks.

use serde::Serialize;
use toolgate_install::{Record, Source};
use toolgate_settings::Transport;

use crate::Host;

/// One installed server's version and what its registry offers now.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct PackageView {
    pub server: String,
    pub package: String,
    pub installed: String,
    /// The newest version its registry has; `None` when the registry could not be asked
    /// (`problem` says why).
    pub available: Option<String>,
    pub problem: Option<String>,
}

/// Why an update was not made.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("no server '{0}' is configured")]
    Unknown(String),
    #[error("'{0}' is not an npx or uvx server that Toolgate installs")]
    NotInstalled(String),
    #[error(transparent)]
    Install(#[from] toolgate_install::InstallError),
}

impl Host {
    fn packages_root(&self) -> std::path::PathBuf {
        self.data_dir().join("packages")
    }

    /// The PATH npm and python3 are found on: the one servers get.
    async fn path_for_installs(&self) -> String {
        self.servers
            .manager
            .host_env()
            .await
            .path_var()
            .to_string_lossy()
            .into_owned()
    }

    /// Each installed server's version, and the version its registry offers now (asked of the
    /// registry: slow, and offline it says so).
    pub async fn packages(&self) -> Vec<PackageView> {
        let ids: Vec<String> = self
            .settings()
            .servers
            .iter()
            .map(|s| s.id.clone())
            .collect();
        let mut views = Vec::new();
        for id in ids {
            views.extend(self.package(&id).await);
        }
        views
    }

    /// Server `id`'s installed version and what its registry offers now; `None` when Toolgate
    /// installed nothing for it. Only its own registry is asked.
    pub async fn package(&self, id: &str) -> Option<PackageView> {
        let server = self
            .settings()
            .servers
            .iter()
            .find(|s| s.id == id)
            .cloned()?;
        let Transport::Stdio { command, args, .. } = &server.transport else {
            return None;
        };
        let source = Source::of(command, args)?;
        let record = Record::load(&toolgate_install::folder_of(&self.packages_root(), id))?;
        // The newest version there is, whatever the command line asked for: an offer.
        let newest = Source {
            spec: None,
            ..source
        };
        let (available, problem) =
            match toolgate_install::latest(&newest, &self.path_for_installs().await).await {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(e.to_string())),
            };
        Some(PackageView {
            server: server.id,
            package: record.package,
            installed: record.version,
            available,
            problem,
        })
    }

    /// Installs `version` (or the newest its registry has) for server `id`
    /// and switches it to that version from its next start; the old version's folder stays.
    /// Returns the version now installed.
    pub async fn update_package(
        &self,
        id: &str,
        version: Option<&str>,
        said: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<String, PackageError> {
        let server = self
            .settings()
            .servers
            .iter()
            .find(|s| s.id == id)
            .cloned()
            .ok_or_else(|| PackageError::Unknown(id.to_owned()))?;
        let Transport::Stdio { command, args, .. } = &server.transport else {
            return Err(PackageError::NotInstalled(id.to_owned()));
        };
        let source =
            Source::of(command, args).ok_or_else(|| PackageError::NotInstalled(id.to_owned()))?;
        // Without a version given: the newest there is, not what the command line's spec allows.
        let source = Source {
            spec: None,
            ..source
        };
        let folder = toolgate_install::folder_of(&self.packages_root(), id);
        let line = format!("{command}\0{}", args.join("\0"));
        let record = toolgate_install::install(
            &source,
            version,
            &folder,
            &line,
            &self.path_for_installs().await,
            said,
        )
        .await?;
        Ok(record.version)
    }
}
