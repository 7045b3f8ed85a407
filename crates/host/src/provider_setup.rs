//! The provider as the user sets it up: what a window shows of it (whether a key is set, where
//! from, its last characters; never the key), the starting points it offers, and the changes it
//! makes. Keychain calls block (Secret Service), so they run off the async workers.

use serde::Serialize;
use toolgate_llm::Provider as _;
use toolgate_secrets::{KeySource, SecretError, SecretStore};
use toolgate_settings::file::FileError;
use toolgate_settings::{ProviderKind, ProviderSettings};

use toolgate_llm::{HttpProvider, WireFormat};

use crate::{key_needed, Host, ProviderError};

/// The provider settings and whether a key is set, where it came from and its last 4
/// characters; never the key.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderView {
    #[serde(flatten)]
    pub settings: ProviderSettings,
    pub key_set: bool,
    pub key_source: Option<KeySource>,
    pub key_hint: Option<String>,
    /// The environment variable a key may also come from.
    pub key_env_var: &'static str,
    /// Why the keychain could not be read, if it could not.
    pub key_error: Option<String>,
    /// Whether the provider refuses requests without a key (a local server does not).
    pub key_needed: bool,
}

/// A provider a window offers as a starting point.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct PresetView {
    pub id: &'static str,
    pub name: &'static str,
    pub kind: ProviderKind,
    pub base_url: &'static str,
    pub needs_key: bool,
}

/// Why a secret (a provider's key or a server's `${secret:NAME}`) was not stored.
#[derive(Debug, thiserror::Error)]
pub enum SecretChangeError {
    /// The name or the value cannot be stored; the message says what to do.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Keychain(#[from] SecretError),
}

/// Runs a keychain operation off the async workers: Secret Service calls block.
pub(crate) async fn keychain<T: Send + 'static>(
    store: std::sync::Arc<dyn SecretStore>,
    op: impl FnOnce(&dyn SecretStore) -> Result<T, SecretError> + Send + 'static,
) -> Result<T, SecretError> {
    tokio::task::spawn_blocking(move || op(store.as_ref()))
        .await
        .map_err(|e| SecretError::Other {
            detail: e.to_string(),
        })?
}

/// Anthropic, then every OpenAI-compatible preset with a fixed address.
pub fn provider_presets() -> Vec<PresetView> {
    let anthropic = PresetView {
        id: "anthropic",
        name: "Anthropic",
        kind: ProviderKind::Anthropic,
        base_url: ProviderKind::Anthropic.default_base_url(),
        needs_key: true,
    };
    std::iter::once(anthropic)
        .chain(
            toolgate_llm::presets::PRESETS
                .iter()
                .filter(|p| !p.base_url.is_empty())
                .map(|p| PresetView {
                    id: p.id,
                    name: p.name,
                    kind: ProviderKind::Openai,
                    base_url: p.base_url,
                    needs_key: p.needs_key,
                }),
        )
        .collect()
}

impl Host {
    /// The user's provider as a window shows it; a keychain that cannot be read is reported in
    /// the view, not as an error.
    pub async fn provider_view(&self) -> ProviderView {
        let settings = self.settings().provider.clone();
        self.view_of(settings).await
    }

    async fn view_of(&self, settings: ProviderSettings) -> ProviderView {
        let (item, var) = (settings.kind.secret_name(), settings.kind.env_var());
        let found = keychain(self.secrets.clone(), move |s| {
            toolgate_secrets::provider_key(s, item, var)
        })
        .await;
        let (found, key_error) = match found {
            Ok(found) => (found, None),
            Err(e) => (None, Some(e.to_string())),
        };
        ProviderView {
            key_needed: key_needed(&settings),
            settings,
            key_set: found.is_some(),
            key_source: found.as_ref().map(|k| k.source),
            key_hint: found
                .as_ref()
                .and_then(|k| toolgate_secrets::hint(&k.value)),
            key_env_var: var,
            key_error,
        }
    }

    /// Saves the provider (its address and model trimmed); its key stays where it was.
    pub async fn set_provider(
        &self,
        kind: ProviderKind,
        base_url: &str,
        model: &str,
    ) -> Result<ProviderView, FileError> {
        let saved = self.update_settings(|s| {
            s.provider = ProviderSettings {
                kind,
                base_url: base_url.trim().to_owned(),
                model: model.trim().to_owned(),
            }
        })?;
        Ok(self.view_of(saved.provider).await)
    }

    /// Stores the key of the current provider in the keychain; the key goes nowhere else.
    pub async fn set_api_key(&self, key: &str) -> Result<ProviderView, SecretChangeError> {
        let key = key.trim().to_owned();
        if key.is_empty() {
            return Err(SecretChangeError::Invalid(
                "the API key is empty; paste the key from your provider's console".into(),
            ));
        }
        let settings = self.settings().provider.clone();
        let name = settings.kind.secret_name();
        keychain(self.secrets.clone(), move |s| s.set(name, &key)).await?;
        Ok(self.view_of(settings).await)
    }

    /// Removes the current provider's key from the keychain.
    pub async fn clear_api_key(&self) -> Result<ProviderView, SecretError> {
        let settings = self.settings().provider.clone();
        let name = settings.kind.secret_name();
        keychain(self.secrets.clone(), move |s| s.delete(name)).await?;
        Ok(self.view_of(settings).await)
    }

    /// The models the user's provider offers, sorted, for a model picker.
    pub async fn list_models(&self) -> Result<Vec<String>, ProviderError> {
        let (provider, _) = self.provider().await?;
        let mut models = provider.list_models().await?;
        models.sort();
        Ok(models)
    }

    /// A provider as `settings` name it (saved or not), with its key from the keychain (read
    /// off the async workers: Secret Service calls block), else its environment variable.
    pub async fn provider_for(
        &self,
        settings: ProviderSettings,
    ) -> Result<(HttpProvider, ProviderSettings), ProviderError> {
        let (item, var) = (settings.kind.secret_name(), settings.kind.env_var());
        let secrets = self.secrets.clone();
        let key = tokio::task::spawn_blocking(move || {
            toolgate_secrets::provider_key(secrets.as_ref(), item, var)
        })
        .await
        .map_err(|e| SecretError::Other {
            detail: e.to_string(),
        })??
        .map(|found| found.value);
        // A local server (Ollama, LM Studio, a custom endpoint) runs without a key.
        let key = match key {
            Some(key) => key,
            None if !key_needed(&settings) => String::new(),
            None => {
                return Err(ProviderError::NoKey {
                    base_url: settings.base_url.clone(),
                    env_var: var,
                })
            }
        };
        let provider = HttpProvider::new(wire_format(settings.kind), &settings.base_url, key)?;
        Ok((provider, settings))
    }

    /// The models a provider not saved yet offers (the Provider screen's form: its format and
    /// address), so the list matches what would be saved. The key kept for that format goes
    /// only to the address it was saved with or to the format's own service; any other address
    /// is asked without a key, so an address typed into the form (or sent by a web-view that
    /// is not the user's) never receives it before the user saves it.
    pub async fn list_models_for(
        &self,
        kind: ProviderKind,
        base_url: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let settings = ProviderSettings {
            kind,
            base_url: base_url.trim().to_owned(),
            model: String::new(),
        };
        let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
        let keyed = {
            let saved = &self.settings().provider;
            (saved.kind == kind && same(&saved.base_url, &settings.base_url))
                || same(kind.default_base_url(), &settings.base_url)
        };
        let provider = if keyed {
            self.provider_for(settings).await?.0
        } else {
            HttpProvider::new(wire_format(kind), &settings.base_url, String::new())?
        };
        let mut models = provider.list_models().await?;
        models.sort();
        Ok(models)
    }
}

/// The wire format a provider of this kind speaks.
fn wire_format(kind: ProviderKind) -> WireFormat {
    match kind {
        ProviderKind::Anthropic => WireFormat::Anthropic,
        ProviderKind::Openai => WireFormat::OpenAi,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use toolgate_secrets::MemoryStore;

    use crate::{Host, HostOptions};

    use super::*;

    #[tokio::test]
    async fn a_key_is_stored_trimmed_and_shown_only_by_its_last_characters() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        assert!(matches!(
            host.set_api_key("   ").await,
            Err(SecretChangeError::Invalid(_))
        ));
        let view = host
            .set_api_key("  sk-test-0123456789abcd \n")
            .await
            .unwrap();
        assert!(view.key_set);
        assert_eq!(view.key_source, Some(KeySource::Keychain));
        assert_eq!(view.key_hint.as_deref(), Some("…abcd"));
        let item = host.settings().provider.kind.secret_name();
        assert_eq!(
            host.secrets.get(item).unwrap().as_deref(),
            Some("sk-test-0123456789abcd")
        );
        let shown = serde_json::to_value(&view).unwrap();
        assert!(!shown.to_string().contains("0123456789"), "{shown}");
        assert!(
            shown.get("baseUrl").is_some(),
            "settings flattened: {shown}"
        );

        let view = host
            .set_provider(
                ProviderKind::Openai,
                " http://127.0.0.1:11434/v1 ",
                " llama3.2 ",
            )
            .await
            .unwrap();
        assert_eq!(view.settings.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(view.settings.model, "llama3.2");
        assert!(!view.key_needed);
    }

    #[test]
    fn the_presets_start_with_anthropic_and_all_have_an_address() {
        let presets = provider_presets();
        assert_eq!(presets[0].id, "anthropic");
        assert!(presets.iter().all(|p| !p.base_url.is_empty()));
        assert!(presets[1..].iter().all(|p| p.kind == ProviderKind::Openai));
    }

    #[tokio::test]
    async fn listing_a_typed_address_s_models_never_sends_it_the_saved_key() {
        use std::io::{Read, Write};
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        host.set_provider(ProviderKind::Openai, "https://api.openai.com/v1", "gpt-4.1")
            .await
            .unwrap();
        host.set_api_key("sk-saved-0123456789abcd").await.unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut request = vec![0u8; 8192];
            let n = socket.read(&mut request).unwrap();
            let body = r#"{"object":"list","data":[{"id":"m1","object":"model"}]}"#;
            write!(
                socket,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            String::from_utf8_lossy(&request[..n]).into_owned()
        });
        let models = host
            .list_models_for(ProviderKind::Openai, &format!("http://127.0.0.1:{port}/v1"))
            .await
            .unwrap();
        assert_eq!(models, ["m1"]);
        let request = seen.join().unwrap();
        assert!(request.starts_with("GET /v1/models"), "{request}");
        assert!(
            !request.contains("sk-saved"),
            "the key went to a typed address: {request}"
        );
    }
}
