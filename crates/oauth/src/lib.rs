//! Signing in to remote MCP servers.
//!
//! The MCP authorization spec (2025-11-25 and 2026-07-28) is followed through rmcp's `auth`
//! feature: its `AuthorizationManager` discovers the authorization server (a 401's
//! `resource_metadata`, the RFC 9728 well-known locations, then RFC 8414 and OpenID discovery),
//! registers the client (pre-registered, a Client ID Metadata Document, or RFC 7591 dynamic
//! registration with `application_type`), builds the authorization URL (PKCE S256, `state`,
//! `resource`), checks the `iss` of the answer (RFC 9207), exchanges and refreshes tokens
//! (`none`, `client_secret_basic` or `client_secret_post`). This crate adds what a desktop app
//! needs around it:
//! - its credential and state stores over the OS keychain ([`store`]): one item per server and
//!   issuer, nothing in settings, logs or errors;
//! - the sign-in itself ([`flow`]): the system browser opened on the authorization URL and a
//!   loopback redirect on 127.0.0.1 (RFC 8252) answering with a short page;
//! - a session for the connection ([`connect`]): an `AuthClient` that refreshes before expiry
//!   and on a 401, or why there is none;
//! - signing out ([`revoke`]): RFC 7009 revocation where offered, then every item removed;
//! - errors in words that name the server and say what to do ([`describe`]).

mod assertion;
mod challenge;
mod document;
mod dpop;
mod error;
mod flow;
mod machine;
mod revoke;
mod store;

use std::sync::{Arc, Mutex as StdMutex};

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadataSource, OAuthClientConfig,
    StoredCredentials,
};
use serde::Serialize;
use toolgate_secrets::SecretStore;

pub use assertion::{connect_assertion, Assertion, IdentityProvider};
pub use document::{
    client_metadata_document, redirect_uri, ClientIdError, BUILT_IN_CLIENT_METADATA_URL,
    CALLBACK_PATH,
};
pub use dpop::{key_item as dpop_key_item, SessionHttp};
pub use error::{KeychainError, OpenBrowserError, SignInError};
pub use flow::{open_in_browser, sign_in, SignInRequest};
pub use machine::{connect_machine, MachineClient, MachineCredential};
pub use revoke::sign_out;

/// What a signed-in server shows: never a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SignedInInfo {
    /// The authorization server that issued the tokens.
    pub issuer: String,
    /// When the access token expires, in seconds since 1970; refreshed before then when the
    /// authorization server gave a refresh token.
    pub expires_at: Option<u64>,
    pub renewable: bool,
    pub scopes: Vec<String>,
}

impl SignedInInfo {
    fn from_credentials(issuer: &str, credentials: &StoredCredentials) -> Option<Self> {
        use oauth2::TokenResponse;
        let token = credentials.token_response.as_ref()?;
        let expires_at = match (token.expires_in(), credentials.token_received_at) {
            (Some(lifetime), Some(received)) => Some(received + lifetime.as_secs()),
            _ => None,
        };
        Some(Self {
            issuer: issuer.to_owned(),
            expires_at,
            renewable: token.refresh_token().is_some(),
            scopes: credentials.granted_scopes.clone(),
        })
    }
}

/// Why a remote server has no usable sign-in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthProblem {
    /// Never signed in (or signed out).
    #[error("{0}")]
    SignInRequired(String),
    /// Signed in before, but the tokens are gone or refused: the user signs in again.
    #[error("{0}")]
    SignInAgain(String),
    /// The authorization server or the keychain did not answer; trying later may work.
    #[error("{0}")]
    Unavailable(String),
}

/// A live sign-in for one connection: the client that adds the token (refreshing it first when
/// it is about to expire, and once more on a 401), and what the window may see of it.
#[derive(Clone)]
pub struct Session {
    pub client: AuthClient<SessionHttp>,
    pub info: Arc<StdMutex<Option<SignedInInfo>>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    pub fn info(&self) -> Option<SignedInInfo> {
        self.info.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A valid access token, refreshed first if it is about to expire; for transports that add
    /// it themselves (the older SSE transport).
    pub async fn access_token(&self, server: &str) -> Result<String, AuthProblem> {
        self.client
            .get_access_token()
            .await
            .map_err(|e| problem(server, e))
    }

    /// After the server refused the token (401): a renewed one, or why there is none.
    pub async fn renew(&self, server: &str) -> Result<String, AuthProblem> {
        let manager = self.client.auth_manager.lock().await;
        match manager.refresh_token().await {
            Ok(_) => {}
            Err(e) => return Err(problem(server, e)),
        }
        drop(manager);
        self.access_token(server).await
    }
}

/// What the keychain says of a server's sign-in, without the network.
pub async fn stored_state(
    secrets: &Arc<dyn SecretStore>,
    server: &str,
) -> Result<Option<SignedInInfo>, KeychainError> {
    let server = server.to_owned();
    store::blocking(secrets, move |s| {
        let Some(index) = store::read_json::<store::Index>(s, &store::index_item(&server))? else {
            return Ok(None);
        };
        let Some(issuer) = index.current else {
            return Ok(None);
        };
        let record: Option<store::Record> =
            store::read_json(s, &store::record_item(&server, &issuer))?;
        Ok(record
            .and_then(|r| r.credentials)
            .and_then(|c| SignedInInfo::from_credentials(&issuer, &c)))
    })
    .await
}

/// Whether this server was ever signed in on this computer (so a 401 means "sign in again").
pub async fn signed_in_before(secrets: &Arc<dyn SecretStore>, server: &str) -> bool {
    let server = server.to_owned();
    store::blocking(secrets, move |s| {
        Ok(
            store::read_json::<store::Index>(s, &store::index_item(&server))?
                .is_some_and(|i| i.current.is_some()),
        )
    })
    .await
    .unwrap_or(false)
}

/// An authorization manager for `url`: hosts named by discovered metadata may be private
/// addresses (a company's sign-in server), loopback only for a loopback server.
async fn manager_for(url: &str) -> Result<AuthorizationManager, AuthError> {
    AuthorizationManager::new_allowing_private_addresses(url).await
}

/// The server's authorization metadata, found as the spec orders it: the `WWW-Authenticate`
/// challenge of a request without a token first (RFC 9728 §5.1: its `resource_metadata` is the
/// first place to look, wherever the server keeps it, and its `scope` is what to ask for), then
/// the RFC 9728, RFC 8414 and OpenID well-known places, then, for a server that did ask for a
/// sign-in but publishes no metadata at all (the 2025-03-26 era), `/authorize`, `/token` and
/// `/register` at its origin. `None`: the server publishes nothing and asked for nothing.
async fn discover(
    manager: &AuthorizationManager,
    url: &str,
) -> Result<Option<Discovered>, AuthError> {
    let challenge = challenge::challenge(url).await;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await?;
    let legacy = resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback;
    if legacy && challenge.is_none() {
        return Ok(None);
    }
    // The 2025-03-26 endpoints come with no issuer: the server's origin names the sign-in.
    let issuer = match (&resolution.metadata.issuer, legacy) {
        (Some(issuer), _) => Some(issuer.clone()),
        (None, true) => url::Url::parse(url)
            .ok()
            .map(|u| u.origin().ascii_serialization()),
        (None, false) => None,
    };
    Ok(Some(Discovered {
        metadata: resolution.metadata,
        issuer,
        legacy,
        asks_dpop: challenge.as_deref().is_some_and(dpop::in_challenge),
    }))
}

/// Discovery for a sign-in with no browser (a machine client, an assertion): the manager and
/// what was found, or, when the server publishes no metadata, why that stops `purpose`.
async fn discovered(
    server: &str,
    url: &str,
    purpose: &str,
) -> Result<(AuthorizationManager, Discovered), AuthProblem> {
    let manager = manager_for(url).await.map_err(|e| problem(server, e))?;
    match discover(&manager, url).await.map_err(|e| problem(server, e))? {
        Some(found) => Ok((manager, found)),
        None => Err(AuthProblem::Unavailable(format!(
            "{server} publishes no OAuth metadata, so there is no {purpose}; check its URL, or whether it needs a sign-in at all"
        ))),
    }
}

/// Puts `metadata` into `manager` with the keychain as its credential store, under `issuer`;
/// returns what the store keeps current of the sign-in for the window. `legacy`: the
/// 2025-03-26 endpoints, whose answers carry no issuer to check.
fn install(
    manager: &mut AuthorizationManager,
    metadata: rmcp::transport::auth::AuthorizationMetadata,
    legacy: bool,
    keychain: KeychainFor<'_>,
) -> Arc<StdMutex<Option<SignedInInfo>>> {
    manager.set_allow_missing_issuer(legacy);
    manager.set_metadata(metadata);
    let info = Arc::new(StdMutex::new(None));
    manager.set_credential_store(store::KeychainCredentials {
        secrets: keychain.secrets.clone(),
        server: keychain.server.to_owned(),
        issuer: keychain.issuer.to_owned(),
        resource: store::resource_of(keychain.url),
        info: info.clone(),
        on_change: keychain.on_change,
    });
    info
}

/// Whose sign-in a credential store holds: the server and its address, its authorization
/// server, and who is told when the store changes.
struct KeychainFor<'a> {
    secrets: &'a Arc<dyn SecretStore>,
    server: &'a str,
    url: &'a str,
    issuer: &'a str,
    on_change: Option<Arc<dyn Fn() + Send + Sync>>,
}

/// What [`discover`] found.
struct Discovered {
    metadata: rmcp::transport::auth::AuthorizationMetadata,
    /// Names the sign-in in the keychain: the authorization server's issuer, or the server's
    /// origin for the 2025-03-26 endpoints; `None` when metadata came without an issuer.
    issuer: Option<String>,
    /// The 2025-03-26 endpoints at the server's origin, for want of any metadata.
    legacy: bool,
    /// The server's challenge names the DPoP scheme: it takes DPoP-bound tokens.
    asks_dpop: bool,
}

/// The server's sign-in for a connection, when the keychain holds one: discovery (to learn which
/// authorization server is in charge now, so tokens from another are never used), the stored
/// tokens, refreshed if they are about to expire. `Ok(None)`: nothing stored, connect without.
/// `on_renewal` is told after each silent renewal.
pub async fn connect(
    secrets: &Arc<dyn SecretStore>,
    server: &str,
    url: &str,
    on_renewal: Option<Arc<dyn Fn() + Send + Sync>>,
) -> Result<Option<Session>, AuthProblem> {
    if !signed_in_before(secrets, server).await {
        return Ok(None);
    }
    // A server signed in to with DPoP has a key: its token requests (refreshes) carry proofs.
    let key = dpop::Dpop::load(secrets, server, false)
        .await
        .map_err(|e| AuthProblem::Unavailable(keychain_words(server, &e)))?;
    let mut manager = match &key {
        Some(key) => dpop::manager(url, key.clone()).await,
        None => manager_for(url).await,
    }
    .map_err(|e| problem(server, e))?;
    let Some(found) = discover(&manager, url)
        .await
        .map_err(|e| problem(server, e))?
    else {
        return Err(AuthProblem::SignInAgain(format!(
            "{server} no longer says how to sign in (no OAuth metadata at its address); sign in again or check its URL"
        )));
    };
    let Some(issuer) = found.issuer.clone() else {
        return Err(AuthProblem::Unavailable(format!(
            "{server}'s authorization server published metadata without an issuer; Toolgate cannot tell which tokens belong to it"
        )));
    };
    let info = install(
        &mut manager,
        found.metadata,
        found.legacy,
        KeychainFor {
            secrets,
            server,
            url,
            issuer: &issuer,
            on_change: on_renewal,
        },
    );
    manager.set_state_store(store::KeychainStates {
        secrets: secrets.clone(),
    });
    let record: Option<store::Record> = {
        let (owned, issuer) = (server.to_owned(), issuer.clone());
        store::blocking(secrets, move |s| {
            store::read_json(s, &store::record_item(&owned, &issuer))
        })
        .await
        .map_err(|e| AuthProblem::Unavailable(keychain_words(server, &e)))?
    };
    let resource = store::resource_of(url);
    if let Some(other) = record
        .as_ref()
        .and_then(|r| r.resource.as_deref())
        .filter(|r| *r != resource)
    {
        return Err(AuthProblem::SignInAgain(format!(
            "{server}'s sign-in in the keychain was made for {other}, and {server} is now at {resource}; \
             Toolgate does not send a token to an address it was not got for. Sign in again to use {resource}"
        )));
    }
    if record.as_ref().is_some_and(|r| r.resource.is_none()) {
        // An item from before addresses were kept: bound to this address from now on.
        let (owned, issuer, bound) = (server.to_owned(), issuer.clone(), resource.clone());
        store::blocking(secrets, move |s| {
            store::update_record(s, &owned, &issuer, |r| r.resource = Some(bound)).map(|_| ())
        })
        .await
        .map_err(|e| AuthProblem::Unavailable(keychain_words(server, &e)))?;
    }
    let Some(client) = record.as_ref().and_then(|r| r.client.clone()) else {
        return Err(again(server, &issuer));
    };
    let Some(credentials) = record.and_then(|r| r.credentials) else {
        return Err(again(server, &issuer));
    };
    *info.lock().unwrap_or_else(|p| p.into_inner()) =
        SignedInInfo::from_credentials(&issuer, &credentials);
    let mut config = OAuthClientConfig::new(client.client_id.clone(), client.redirect_uri.clone());
    if let Some(secret) = client.client_secret.clone() {
        config = config.with_client_secret(secret);
    }
    manager
        .configure_client(config)
        .map_err(|e| problem(server, e))?;
    // A DPoP-bound token goes with a proof of the key on every request.
    let http = match key {
        Some(key) if dpop::bound(&credentials) => SessionHttp::bound(key),
        _ => SessionHttp::plain(),
    };
    let session = Session {
        client: AuthClient::new(http, manager),
        info,
    };
    // No request goes out without a valid token: refresh now if it is about to expire.
    session.access_token(server).await?;
    Ok(Some(session))
}

fn again(server: &str, issuer: &str) -> AuthProblem {
    AuthProblem::SignInAgain(format!(
        "{server}'s sign-in with {issuer} has ended (signed out, revoked or expired): sign in again"
    ))
}

fn keychain_words(server: &str, detail: impl std::fmt::Display) -> String {
    format!("{server}'s sign-in could not be read from the keychain: {detail}")
}

/// An rmcp auth error as the problem it is for the user.
pub fn problem(server: &str, error: AuthError) -> AuthProblem {
    match error {
        AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => {
            AuthProblem::SignInAgain(format!(
                "{server}'s sign-in has expired or was revoked and could not be renewed: sign in again"
            ))
        }
        other => AuthProblem::Unavailable(describe(server, &other)),
    }
}

/// An rmcp auth error in words that name the server and say what to do. Never a token: rmcp's
/// errors carry URLs and the authorization server's error text, not credentials.
pub fn describe(server: &str, error: &AuthError) -> String {
    match error {
        AuthError::DiscoveryRequestFailed { url, source } => format!(
            "could not reach {} to find out how to sign in to {server} ({}): check your connection, or try again later if that server is down",
            without_query(url),
            chain(source.as_ref())
        ),
        AuthError::ProtectedResourceMetadataInvalid { url, reason } => format!(
            "{server} published sign-in information Toolgate cannot use at {} ({reason}); tell the server's maintainers",
            without_query(url)
        ),
        AuthError::AuthorizationServersUnavailable {
            authorization_servers,
            ..
        } => format!(
            "{server} names the authorization server {} but it did not answer with usable metadata (down, or misconfigured); try again later",
            authorization_servers.join(", ")
        ),
        AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } => format!(
            "the authorization server for {server} answered as {received_issuer} where {expected_issuer} was expected, so Toolgate stopped the sign-in (a misconfigured or impersonated server); nothing was saved"
        ),
        AuthError::AuthorizationServerMissingIssuer { expected_issuer } => format!(
            "the authorization server for {server} did not say who it is (no issuer; {expected_issuer} was expected), so Toolgate stopped the sign-in; nothing was saved"
        ),
        AuthError::PkceUnsupported => format!(
            "the authorization server for {server} does not support PKCE with S256, which Toolgate requires to sign in safely"
        ),
        AuthError::RegistrationFailed(detail) => format!(
            "registering Toolgate with {server}'s authorization server failed ({detail}); register an app there by hand and put its client id in the server's settings (oauth.clientId)"
        ),
        AuthError::TokenExchangeFailed(detail) => format!(
            "the authorization server for {server} refused to complete the sign-in ({detail}); sign in again"
        ),
        AuthError::TokenRefreshFailed(detail) => format!(
            "could not renew the sign-in to {server} ({detail}); Toolgate will try again"
        ),
        AuthError::CredentialStoreError(detail) => keychain_words(server, detail),
        AuthError::HttpError(e) => format!(
            "could not reach the authorization server for {server}: {}",
            chain(e)
        ),
        AuthError::NoAuthorizationSupport => format!(
            "{server} does not say how to sign in (no OAuth metadata); check its URL, or whether it needs a sign-in at all"
        ),
        other => format!("signing in to {server} failed: {other}"),
    }
}

fn without_query(url: &url::Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// An error and its causes in one line.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut words = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        let text = e.to_string();
        if !words.contains(&text) {
            words = format!("{words}: {text}");
        }
        next = e.source();
    }
    words
}

#[cfg(test)]
mod tests;
