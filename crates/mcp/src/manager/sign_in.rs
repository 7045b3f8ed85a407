//! A remote server's sign-in as the connection meets it: a machine client's credentials read
//! for the dial, the window told when a sign-in renews, and whether a refused handshake was a
//! 401 (a sign-in is needed) or a 403 `insufficient_scope` (more scopes are).

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::service::ClientInitializeError;

use super::registry::ServerManager;

impl ServerManager {
    /// Tells the window a server's sign-in was renewed (its card shows the new expiry).
    pub(super) fn on_renewal(&self, id: &str) -> Arc<dyn Fn() + Send + Sync> {
        let me = self.me.clone();
        let id = id.to_owned();
        Arc::new(move || {
            if let Some(me) = me.upgrade() {
                me.changed(&id);
            }
        })
    }

    /// The status for a server that answered 401.
    /// A machine client's credentials from the server's `oauth` settings, its secret or key
    /// read from the keychain just before use.
    pub(super) async fn machine_client(
        &self,
        oauth: &toolgate_settings::OAuthSettings,
    ) -> Result<toolgate_oauth::MachineClient, String> {
        let mut wanted = BTreeMap::new();
        if let Some(secret) = &oauth.client_secret {
            wanted.insert("clientSecret".to_owned(), secret.clone());
        }
        if let Some(key) = &oauth.private_key {
            wanted.insert("privateKey".to_owned(), key.clone());
        }
        let mut read = self.resolve("oauth", &wanted).await?;
        let credential = match (read.remove("clientSecret"), read.remove("privateKey")) {
            (Some(secret), None) => toolgate_oauth::MachineCredential::Secret(secret),
            (None, Some(pem)) => toolgate_oauth::MachineCredential::PrivateKey {
                pem,
                algorithm: oauth.signing_algorithm.clone(),
            },
            _ => {
                return Err(
                    "oauth: a machine client needs exactly one of clientSecret and privateKey"
                        .to_owned(),
                )
            }
        };
        Ok(toolgate_oauth::MachineClient {
            client_id: oauth.client_id.clone().unwrap_or_default(),
            credential,
            scopes: oauth.scopes.clone(),
        })
    }
}

impl ServerManager {
    /// What a workload-identity or enterprise-managed server is signed in to with: the
    /// workload's JWT (from the keychain or the platform's file, read now: the platform renews
    /// it), or the user's ID token and the organisation's identity provider.
    pub(super) async fn assertion(
        &self,
        oauth: &toolgate_settings::OAuthSettings,
    ) -> Result<toolgate_oauth::Assertion, String> {
        if oauth.grant == toolgate_settings::OAuthGrant::JwtBearer {
            let jwt = match (&oauth.assertion, &oauth.assertion_file) {
                (Some(reference), _) => {
                    let wanted = BTreeMap::from([("assertion".to_owned(), reference.clone())]);
                    self.resolve("oauth", &wanted)
                        .await?
                        .remove("assertion")
                        .unwrap_or_default()
                }
                (None, Some(path)) => tokio::fs::read_to_string(path).await.map_err(|e| {
                    format!(
                        "oauth.assertionFile: the workload's token could not be read from {} ({e}); check that your platform writes it there",
                        path.display()
                    )
                })?,
                (None, None) => {
                    return Err("oauth: jwtBearer needs assertion or assertionFile".to_owned())
                }
            };
            return Ok(toolgate_oauth::Assertion::Workload {
                client_id: oauth.client_id.clone(),
                jwt: jwt.trim().to_owned(),
                scopes: oauth.scopes.clone(),
            });
        }
        let idp = self
            .options
            .identity_provider
            .as_ref()
            .and_then(|source| source())
            .ok_or_else(|| {
                "oauth: enterpriseManaged needs your organisation's identity provider: add identityProvider to the settings (or ask your administrator to set it in the managed policy)".to_owned()
            })?;
        let mut wanted = BTreeMap::from([("idToken".to_owned(), idp.id_token.clone())]);
        if let Some(secret) = &idp.client_secret {
            wanted.insert("idpSecret".to_owned(), secret.clone());
        }
        if let Some(secret) = &oauth.client_secret {
            wanted.insert("clientSecret".to_owned(), secret.clone());
        }
        let mut read = self.resolve("identityProvider", &wanted).await?;
        Ok(toolgate_oauth::Assertion::Enterprise {
            idp: toolgate_oauth::IdentityProvider {
                issuer: idp.issuer,
                token_endpoint: idp.token_endpoint,
                client_id: idp.client_id,
                client_secret: read.remove("idpSecret"),
            },
            id_token: read.remove("idToken").unwrap_or_default().trim().to_owned(),
            client_id: oauth.client_id.clone().unwrap_or_default(),
            client_secret: read.remove("clientSecret"),
            scopes: oauth.scopes.clone(),
        })
    }
}

/// Whether a failed handshake was the server answering 401 (a sign-in is needed).
pub(super) fn auth_required(error: &ClientInitializeError) -> bool {
    type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
    type Quit = rmcp::transport::worker::WorkerQuitReason<HttpError>;
    let ClientInitializeError::TransportError { error, .. } = error else {
        return false;
    };
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(&*error.error);
    while let Some(e) = current {
        if let Some(Quit::Fatal { error, .. }) = e.downcast_ref::<Quit>() {
            if matches!(error, HttpError::AuthRequired(_)) {
                return true;
            }
        }
        if let Some(HttpError::AuthRequired(_)) = e.downcast_ref::<HttpError>() {
            return true;
        }
        current = e.source();
    }
    false
}

/// The scopes a handshake was refused for (403 `insufficient_scope`), if that is why it failed.
pub(super) fn scope_required(error: &ClientInitializeError) -> Option<String> {
    type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
    type Quit = rmcp::transport::worker::WorkerQuitReason<HttpError>;
    let ClientInitializeError::TransportError { error, .. } = error else {
        return None;
    };
    let named = |scope: &rmcp::transport::streamable_http_client::InsufficientScopeError| {
        scope
            .get_required_scope()
            .map(str::to_owned)
            .unwrap_or_else(|| "more than was granted".to_owned())
    };
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(&*error.error);
    while let Some(e) = current {
        if let Some(Quit::Fatal {
            error: HttpError::InsufficientScope(scope),
            ..
        }) = e.downcast_ref::<Quit>()
        {
            return Some(named(scope));
        }
        if let Some(HttpError::InsufficientScope(scope)) = e.downcast_ref::<HttpError>() {
            return Some(named(scope));
        }
        current = e.source();
    }
    None
}
