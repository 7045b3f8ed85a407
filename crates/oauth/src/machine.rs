//! Toolgate as a machine client: the client credentials grant (RFC 6749 §4.4), for a server
//! that knows Toolgate by a client id of its own (`toolgate serve` on a server, where nobody
//! signs in in a browser). The client authenticates with a secret (`client_secret_basic` or
//! `_post`, as the authorization server's metadata offers) or with an assertion signed by its
//! private key (`private_key_jwt`, RFC 7523). The secret and the key come from the keychain
//! (`${secret:NAME}` in the server's `oauth` settings); the tokens go to the keychain as a
//! person's sign-in does, and a token that expires is exchanged for a new one at the next
//! connection.

use std::sync::Arc;

use rmcp::transport::auth::{AuthClient, ClientCredentialsConfig, JwtSigningAlgorithm};
use toolgate_secrets::SecretStore;

use crate::{discovered, install, AuthProblem, KeychainFor, Session, SignedInInfo};

/// A machine client's credentials, read from the keychain just before use.
pub struct MachineClient {
    pub client_id: String,
    pub credential: MachineCredential,
    /// Scopes to ask for; empty: the authorization server's default.
    pub scopes: Vec<String>,
}

/// How the machine client proves who it is.
pub enum MachineCredential {
    Secret(String),
    /// A PEM private key and the algorithm named in the settings (`RS256` when none is).
    PrivateKey {
        pem: String,
        algorithm: Option<String>,
    },
}

fn algorithm(name: Option<&str>) -> Result<JwtSigningAlgorithm, String> {
    Ok(match name.unwrap_or("RS256") {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => {
            return Err(format!(
                "'{other}' is not a signing algorithm Toolgate uses"
            ))
        }
    })
}

/// A session for a connection to `url` as a machine client: discovery as for a person's
/// sign-in, then the client's credentials exchanged for a token (saved in the keychain).
pub async fn connect_machine(
    secrets: &Arc<dyn SecretStore>,
    server: &str,
    url: &str,
    client: MachineClient,
    on_renewal: Option<Arc<dyn Fn() + Send + Sync>>,
) -> Result<Session, AuthProblem> {
    let (mut manager, found) = discovered(
        server,
        url,
        "token endpoint to exchange Toolgate's client credentials at",
    )
    .await?;
    let issuer = found.issuer.clone().unwrap_or_else(|| url.to_owned());
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
    // The resource indicator names the server exactly as the spec asks (RFC 8707).
    let resource = Some(url.to_owned());
    let config = match client.credential {
        MachineCredential::Secret(secret) => ClientCredentialsConfig::ClientSecret {
            client_id: client.client_id,
            client_secret: secret,
            scopes: client.scopes,
            resource,
        },
        MachineCredential::PrivateKey {
            pem,
            algorithm: alg,
        } => ClientCredentialsConfig::PrivateKeyJwt {
            client_id: client.client_id,
            signing_key: pem.into_bytes(),
            signing_algorithm: algorithm(alg.as_deref())
                .map_err(|why| AuthProblem::Unavailable(format!("{server}: {why}")))?,
            token_endpoint_audience: None,
            scopes: client.scopes,
            resource,
        },
    };
    let refused = |e: rmcp::transport::auth::AuthError| {
        AuthProblem::Unavailable(format!(
            "{server}'s authorization server ({issuer}) did not give Toolgate a token for its client credentials: {e}. Check oauth.clientId and the secret or key in the server's settings"
        ))
    };
    manager
        .validate_client_credentials_metadata(&config)
        .map_err(refused)?;
    manager
        .configure_client_credentials(&config)
        .map_err(refused)?;
    // rmcp's exchange future is not `Send` (its JWT signing holds a non-`Sync` closure across
    // an await), so it runs to completion on a blocking thread of its own.
    let handle = tokio::runtime::Handle::current();
    let (manager, exchanged) = tokio::task::spawn_blocking(move || {
        let exchanged = handle.block_on(manager.exchange_client_credentials(&config));
        (manager, exchanged)
    })
    .await
    .map_err(|e| AuthProblem::Unavailable(format!("{server}: the token exchange stopped: {e}")))?;
    exchanged.map_err(refused)?;
    tracing::info!(server, "a token for Toolgate's client credentials");
    let session = Session {
        client: AuthClient::new(crate::SessionHttp::plain(), manager),
        info,
    };
    if session.info().is_none() {
        *session.info.lock().unwrap_or_else(|p| p.into_inner()) = Some(SignedInInfo {
            issuer,
            expires_at: None,
            renewable: false,
            scopes: Vec::new(),
        });
    }
    Ok(session)
}
