//! rmcp's credential and state stores over the OS keychain.
//!
//! Layout, all under Toolgate's keychain service:
//! - `oauth:<server>:<issuer>`: one item per server and authorization server, holding the client
//!   registration (client id, secret if any, redirect URI) and the tokens (rmcp's
//!   `StoredCredentials`). Keyed by issuer, so tokens one authorization server issued are never
//!   offered to another.
//!   The item also names the server's address the tokens were got for (`resource`): a token is
//!   offered only to that address, never to another server that took the same id (another data
//!   folder's, an import's, one added again with a new URL).
//! - `oauth:<server>`: the issuers this server has items with, and the current one, so the
//!   window can say "Signed in" without the network and signing out finds every item.
//! - `oauth-state:<state>`: one sign-in in flight (PKCE verifier, expected issuer), deleted when
//!   the flow ends either way.
//!
//! The keychain answers over D-Bus and may block: every access runs off the async workers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex, OnceLock};

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StateStore, StoredAuthorizationState,
    StoredCredentials,
};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use toolgate_secrets::SecretStore;

use crate::{KeychainError, SignedInInfo};

/// How Toolgate is known to one authorization server for one MCP server.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClientRecord {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub redirect_uri: String,
    /// Registered by Toolgate itself (dynamic registration), not entered by the user.
    #[serde(default)]
    pub registered: bool,
    /// The client id is the address of a Client ID Metadata Document: nothing was registered,
    /// and it is offered again only while the server's settings and authorization server allow.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub document: bool,
}

impl std::fmt::Debug for ClientRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRecord")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("redirect_uri", &self.redirect_uri)
            .field("registered", &self.registered)
            .field("document", &self.document)
            .finish()
    }
}

/// One keychain item: `oauth:<server>:<issuer>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Record {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// The server's address ([`resource_of`]) the credentials were got for. `None` only in
    /// items written before addresses were kept; such an item is bound to the address it is
    /// next used with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

impl Record {
    /// Whether the credentials may be offered to the server at `resource`.
    pub fn is_for(&self, resource: &str) -> bool {
        self.resource.as_deref().is_none_or(|r| r == resource)
    }
}

/// A server's address as the keychain keeps it: parsed and written back, so spellings of the
/// same address (a host's case, a default port, an empty path) compare equal.
pub(crate) fn resource_of(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.to_string())
}

/// The item `oauth:<server>`: which issuers hold this server's items.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Index {
    #[serde(default)]
    pub issuers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
}

pub(crate) fn record_item(server: &str, issuer: &str) -> String {
    format!("oauth:{server}:{issuer}")
}

pub(crate) fn index_item(server: &str) -> String {
    format!("oauth:{server}")
}

fn state_item(csrf: &str) -> String {
    format!("oauth-state:{csrf}")
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

/// Runs a keychain access off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    secrets: &Arc<dyn SecretStore>,
    f: impl FnOnce(&dyn SecretStore) -> Result<T, KeychainError> + Send + 'static,
) -> Result<T, KeychainError> {
    let secrets = secrets.clone();
    tokio::task::spawn_blocking(move || f(secrets.as_ref()))
        .await
        .map_err(KeychainError::Task)?
}

pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(
    secrets: &dyn SecretStore,
    item: &str,
) -> Result<Option<T>, KeychainError> {
    match secrets.get(item)? {
        None => Ok(None),
        // An item we cannot read is as good as none: the user signs in again and it is replaced.
        Some(text) => Ok(serde_json::from_str(&text).ok()),
    }
}

pub(crate) fn write_json<T: Serialize>(
    secrets: &dyn SecretStore,
    item: &str,
    value: &T,
) -> Result<(), KeychainError> {
    let text = serde_json::to_string(value).map_err(KeychainError::Encode)?;
    Ok(secrets.set(item, &text)?)
}

/// Read-modify-write of one server's record. Callers in this process hold [`record_lock`].
pub(crate) fn update_record(
    secrets: &dyn SecretStore,
    server: &str,
    issuer: &str,
    change: impl FnOnce(&mut Record),
) -> Result<Record, KeychainError> {
    let item = record_item(server, issuer);
    let mut record: Record = read_json(secrets, &item)?.unwrap_or_default();
    change(&mut record);
    if record.client.is_none() && record.credentials.is_none() {
        secrets.delete(&item)?;
    } else {
        write_json(secrets, &item, &record)?;
    }
    Ok(record)
}

/// Adds `issuer` to the server's index and makes it the current one.
pub(crate) fn note_issuer(
    secrets: &dyn SecretStore,
    server: &str,
    issuer: &str,
) -> Result<(), KeychainError> {
    let item = index_item(server);
    let mut index: Index = read_json(secrets, &item)?.unwrap_or_default();
    if !index.issuers.iter().any(|i| i == issuer) {
        index.issuers.push(issuer.to_owned());
    }
    index.current = Some(issuer.to_owned());
    write_json(secrets, &item, &index)
}

/// One lock per server's record in this process: a refresh (load, exchange, save) and a sign-in
/// never interleave, so a rotated refresh token is never lost to a stale write.
pub(crate) fn record_lock(server: &str, issuer: &str) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<StdMutex<HashMap<String, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    locks
        .entry(record_item(server, issuer))
        .or_default()
        .clone()
}

/// rmcp's credential store for one server and one authorization server.
pub(crate) struct KeychainCredentials {
    pub secrets: Arc<dyn SecretStore>,
    pub server: String,
    pub issuer: String,
    /// The server's address ([`resource_of`]): the only one its tokens are offered to.
    pub resource: String,
    /// What the window may learn of the sign-in (expiry, scopes), updated on every save.
    pub info: Arc<StdMutex<Option<SignedInInfo>>>,
    /// Told after each change of `info` (a silent renewal), so the window shows the new expiry.
    pub on_change: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl KeychainCredentials {
    fn publish(&self, credentials: Option<&StoredCredentials>) {
        let info = credentials.and_then(|c| SignedInInfo::from_credentials(&self.issuer, c));
        *self.info.lock().unwrap_or_else(|p| p.into_inner()) = info;
        if let Some(tell) = &self.on_change {
            tell();
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for KeychainCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let (server, issuer) = (self.server.clone(), self.issuer.clone());
        let record: Option<Record> = blocking(&self.secrets, move |s| {
            read_json(s, &record_item(&server, &issuer))
        })
        .await
        .map_err(store_error)?;
        Ok(record
            .filter(|r| {
                let ours = r.is_for(&self.resource);
                if !ours {
                    tracing::warn!(
                        "{}'s sign-in in the keychain was made for another address; it is not offered to {}",
                        self.server,
                        self.resource
                    );
                }
                ours
            })
            .and_then(|r| r.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.publish(Some(&credentials));
        let (server, issuer) = (self.server.clone(), self.issuer.clone());
        let resource = self.resource.clone();
        blocking(&self.secrets, move |s| {
            update_record(s, &server, &issuer, |r| {
                r.credentials = Some(credentials);
                r.resource = Some(resource);
            })?;
            note_issuer(s, &server, &issuer)
        })
        .await
        .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.publish(None);
        let (server, issuer) = (self.server.clone(), self.issuer.clone());
        blocking(&self.secrets, move |s| {
            update_record(s, &server, &issuer, |r| r.credentials = None).map(|_| ())
        })
        .await
        .map_err(store_error)
    }

    /// The authorization server refused the refresh token (revoked, expired): the tokens are
    /// useless, so they go; the client registration stays for the next sign-in.
    async fn on_refresh_token_rejected(
        &self,
        _credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.clear().await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = record_lock(&self.server, &self.issuer).lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

/// rmcp's state store for sign-ins in flight.
pub(crate) struct KeychainStates {
    pub secrets: Arc<dyn SecretStore>,
}

#[async_trait::async_trait]
impl StateStore for KeychainStates {
    async fn save(
        &self,
        csrf_token: &str,
        state: StoredAuthorizationState,
    ) -> Result<(), AuthError> {
        let item = state_item(csrf_token);
        blocking(&self.secrets, move |s| write_json(s, &item, &state))
            .await
            .map_err(store_error)
    }

    async fn load(&self, csrf_token: &str) -> Result<Option<StoredAuthorizationState>, AuthError> {
        let item = state_item(csrf_token);
        blocking(&self.secrets, move |s| read_json(s, &item))
            .await
            .map_err(store_error)
    }

    async fn delete(&self, csrf_token: &str) -> Result<(), AuthError> {
        let item = state_item(csrf_token);
        blocking(&self.secrets, move |s| Ok(s.delete(&item)?))
            .await
            .map_err(store_error)
    }
}
