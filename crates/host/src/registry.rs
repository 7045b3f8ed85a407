//! Servers from an MCP registry: the one the organisation's managed policy names, else the
//! one in the settings, else the official registry. A server added from it is pinned to the
//! version it was added at and remembers where it came from (which `registryOnly` admits); its
//! secret values go to the keychain before the settings name them.

use std::collections::BTreeMap;
use std::sync::Arc;

use toolgate_registry::{Page, Plan, Registry, RegistryError};
use toolgate_secrets::SecretError;
use toolgate_settings::file::FileError;
use toolgate_settings::ServerConfig;

use crate::Host;

/// Why a server was not added from the registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryAddError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("a server '{0}' exists already; remove it first or pick another id")]
    Exists(String),
    #[error("the keychain refused a secret of the server: {0}")]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Settings(#[from] FileError),
}

impl Host {
    /// The registry servers are added from.
    pub fn registry_url(&self) -> String {
        let managed = self.managed();
        managed
            .document
            .registry
            .as_ref()
            .and_then(|r| r.url.clone())
            .or_else(|| self.settings().registry.url.clone())
            .unwrap_or_else(|| toolgate_registry::OFFICIAL.to_owned())
    }

    fn registry(&self) -> Result<Registry, RegistryError> {
        Registry::new(&self.registry_url())
    }

    /// One page of the registry's servers whose name or description holds `search`.
    /// `limit` servers a page (default [`toolgate_registry::PAGE`]).
    pub async fn registry_search(
        &self,
        search: &str,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page, RegistryError> {
        self.registry()?.search(search, cursor, limit).await
    }

    /// What adding `name` at `version` (`latest`: the newest) would run, and what it asks.
    pub async fn registry_plan(&self, name: &str, version: &str) -> Result<Plan, RegistryError> {
        let entry = self.registry()?.version(name, version).await?;
        toolgate_registry::plan(&entry)
    }

    /// Adds `name` at `version` as server `id` with the user's `answers` (by each ask's key):
    /// the secrets to the keychain first (taken out again if the settings refuse the server),
    /// then the server, pinned, to the settings. Not started: the caller starts it where it
    /// runs servers.
    pub async fn add_from_registry(
        self: &Arc<Self>,
        name: &str,
        version: &str,
        id: &str,
        answers: &BTreeMap<String, String>,
    ) -> Result<ServerConfig, RegistryAddError> {
        if self.settings().servers.iter().any(|s| s.id == id) {
            return Err(RegistryAddError::Exists(id.to_owned()));
        }
        let registry = self.registry()?;
        let entry = registry.version(name, version).await?;
        let built = toolgate_registry::build(&entry, id, answers, registry.address())?;
        let stored: Vec<String> = built.secrets.iter().map(|(n, _)| n.clone()).collect();
        self.store_server_secrets(built.secrets.clone()).await?;
        let config = built.config.clone();
        let saved = self.change_settings(move |s| s.servers.push(config)).await;
        if let Err(e) = saved {
            self.forget_server_secrets(stored).await;
            return Err(e.into());
        }
        Ok(built.config)
    }
}
