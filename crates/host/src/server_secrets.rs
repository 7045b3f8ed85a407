//! The secrets servers' settings refer to as `${secret:NAME}`: which exist and who uses them,
//! set and cleared in the keychain. A changed secret restarts the servers that use it, since
//! references are read at each start.

use serde::Serialize;
use toolgate_secrets::SecretError;

use crate::provider_setup::keychain;
use crate::{Host, SecretChangeError};

/// A secret that a server's env or headers refer to as `${secret:NAME}`: whether it is set and
/// its last 4 characters, never its value.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SecretView {
    pub name: String,
    /// The servers whose settings refer to it.
    pub used_by: Vec<String>,
    pub set: bool,
    pub hint: Option<String>,
}

impl Host {
    /// Puts a new server's secrets (name, value) in the keychain, where its settings refer to
    /// them as `${secret:NAME}`.
    pub(crate) async fn store_server_secrets(
        &self,
        pairs: Vec<(String, String)>,
    ) -> Result<(), SecretError> {
        keychain(self.secrets.clone(), move |s| {
            for (name, value) in pairs {
                s.set(&toolgate_settings::secret_item(&name), &value)?;
            }
            Ok(())
        })
        .await
    }

    /// Takes back what [`Self::store_server_secrets`] stored, when adding the server failed
    /// after it; as much as can be.
    pub(crate) async fn forget_server_secrets(&self, names: Vec<String>) {
        let _ = keychain(self.secrets.clone(), move |s| {
            for name in names {
                let _ = s.delete(&toolgate_settings::secret_item(&name));
            }
            Ok(())
        })
        .await;
    }

    /// Every secret the settings refer to, with its state in the keychain.
    pub async fn secrets_in_use(&self) -> Result<Vec<SecretView>, SecretError> {
        let used = toolgate_settings::secrets_used(&self.settings());
        keychain(self.secrets.clone(), move |s| {
            used.into_iter()
                .map(|(name, used_by)| {
                    let value = s.get(&toolgate_settings::secret_item(&name))?;
                    Ok(SecretView {
                        hint: value.as_deref().and_then(toolgate_secrets::hint),
                        set: value.is_some_and(|v| !v.is_empty()),
                        name,
                        used_by,
                    })
                })
                .collect()
        })
        .await
    }

    /// Stores a server secret in the keychain, then restarts (in the background) the running
    /// servers that use it.
    pub async fn set_secret(&self, name: &str, value: &str) -> Result<(), SecretChangeError> {
        if !toolgate_settings::reference::valid_name(name) {
            return Err(SecretChangeError::Invalid(format!(
                "'{name}' is not a valid secret name: start with a letter or '_', then letters, digits, '_', '.' or '-'"
            )));
        }
        if value.is_empty() {
            return Err(SecretChangeError::Invalid(
                "the secret is empty; paste its value".into(),
            ));
        }
        let (item, value) = (toolgate_settings::secret_item(name), value.to_owned());
        keychain(self.secrets.clone(), move |s| s.set(&item, &value)).await?;
        self.restart_users(name);
        Ok(())
    }

    pub async fn clear_secret(&self, name: &str) -> Result<(), SecretError> {
        let item = toolgate_settings::secret_item(name);
        keychain(self.secrets.clone(), move |s| s.delete(&item)).await
    }

    /// The switched-on servers whose settings use secret `name`.
    fn users_of(&self, name: &str) -> Vec<String> {
        let settings = self.settings();
        let used = toolgate_settings::secrets_used(&settings)
            .remove(name)
            .unwrap_or_default();
        used.into_iter()
            .filter(|id| settings.servers.iter().any(|s| &s.id == id && s.enabled))
            .collect()
    }

    /// Restarts, in the background, the servers whose settings use the secret, so they get its
    /// new value; their status shows the progress.
    fn restart_users(&self, name: &str) {
        let users = self.users_of(name);
        let servers = self.servers.manager.clone();
        tokio::spawn(async move {
            for id in users {
                if let Err(e) = servers.restart(&id).await {
                    tracing::info!(server = %id, "not restarted after its secret changed: {e}");
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use toolgate_secrets::MemoryStore;
    use toolgate_settings::{ServerConfig, Transport};

    use super::*;
    use crate::HostOptions;

    #[tokio::test]
    async fn secrets_are_listed_by_their_users_and_checked_before_they_are_stored() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        host.update_settings(|s| {
            let mut server = ServerConfig::http("remote", "https://x.example/mcp");
            if let Transport::Http { headers, .. } = &mut server.transport {
                *headers = BTreeMap::from([(
                    "Authorization".to_owned(),
                    "Bearer ${secret:REMOTE_TOKEN}".to_owned(),
                )]);
            }
            server.enabled = false;
            s.servers.push(server);
        })
        .unwrap();

        let listed = host.secrets_in_use().await.unwrap();
        let token = listed.iter().find(|s| s.name == "REMOTE_TOKEN").unwrap();
        assert_eq!(token.used_by, ["remote"]);
        assert!(!token.set);

        assert!(matches!(
            host.set_secret("1bad name", "x").await,
            Err(SecretChangeError::Invalid(_))
        ));
        assert!(matches!(
            host.set_secret("REMOTE_TOKEN", "").await,
            Err(SecretChangeError::Invalid(_))
        ));
        // A switched-off user is not restarted.
        assert!(host.users_of("REMOTE_TOKEN").is_empty());
        host.set_secret("REMOTE_TOKEN", "tok-0123456789wxyz")
            .await
            .unwrap();
        let listed = host.secrets_in_use().await.unwrap();
        let token = listed.iter().find(|s| s.name == "REMOTE_TOKEN").unwrap();
        assert!(token.set);
        assert_eq!(token.hint.as_deref(), Some("…wxyz"));

        host.clear_secret("REMOTE_TOKEN").await.unwrap();
        let listed = host.secrets_in_use().await.unwrap();
        assert!(!listed.iter().any(|s| s.name == "REMOTE_TOKEN" && s.set));
    }
}
