//! Tokens for an assertion, with nobody at a browser: workload identity and enterprise-managed
//! authorization.
//!
//! - **Workload identity** (`jwtBearer`): the JWT the platform Toolgate runs on issued to it (a
//!   Kubernetes service-account token, a cloud's identity token) is presented at the server's
//!   authorization server in the JWT bearer grant (RFC 7523 §2.1). One request: an error
//!   (`invalid_grant`, `invalid_scope`, `unauthorized_client`) is reported as the authorization
//!   server gave it, never retried and never answered by another grant.
//! - **Enterprise-managed authorization** (`enterpriseManaged`): the organisation's identity
//!   provider exchanges the user's ID token for an identity assertion grant naming this server
//!   (ID-JAG, RFC 8693), which the server's authorization server takes in the JWT bearer grant.
//!   rmcp's `enterprise` module makes both exchanges and checks the assertion's bindings.
//!
//! The token goes to the keychain as a person's sign-in does; such tokens come without a refresh
//! token, so one that expires is replaced by the same exchange at the next connection.

use std::sync::Arc;

use oauth2::{AccessToken, ClientSecret, TokenResponse};
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    default_oauth_http_client, AuthClient, AuthorizationMetadata, CredentialStore,
    OAuthClientConfig, OAuthTokenResponse, StoredCredentials,
};
use toolgate_secrets::SecretStore;

use crate::store::KeychainCredentials;
use crate::{discovered, install, problem, AuthProblem, KeychainFor, Session};

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// What Toolgate presents, read from the keychain or the platform's file just before use.
pub enum Assertion {
    /// A workload's own JWT, presented as it is.
    Workload {
        /// The client id the authorization server knows the workload by, if it has one.
        client_id: Option<String>,
        jwt: String,
        scopes: Vec<String>,
    },
    /// The user's ID token at the organisation's identity provider, exchanged for an ID-JAG.
    Enterprise {
        idp: IdentityProvider,
        id_token: String,
        /// Toolgate's registration at the server's authorization server.
        client_id: String,
        client_secret: Option<String>,
        scopes: Vec<String>,
    },
}

/// The organisation's identity provider, its secret read.
pub struct IdentityProvider {
    pub issuer: String,
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: Option<String>,
}

/// A session for a connection to `url` signed in by `assertion`: discovery as for a person's
/// sign-in, then the assertion exchanged for a token (saved in the keychain).
pub async fn connect_assertion(
    secrets: &Arc<dyn SecretStore>,
    server: &str,
    url: &str,
    assertion: Assertion,
    on_renewal: Option<Arc<dyn Fn() + Send + Sync>>,
) -> Result<Session, AuthProblem> {
    let (mut manager, found) = discovered(
        server,
        url,
        "authorization server to present Toolgate's assertion to",
    )
    .await?;
    let Some(issuer) = found.issuer.clone() else {
        return Err(AuthProblem::Unavailable(format!(
            "{server}'s authorization server published metadata without an issuer; Toolgate cannot tell which tokens belong to it"
        )));
    };
    let metadata = found.metadata.clone();
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
    let (client_id, token) = match assertion {
        Assertion::Workload {
            client_id,
            jwt,
            scopes,
        } => {
            let token =
                workload_token(server, url, &metadata, client_id.as_deref(), &jwt, &scopes).await?;
            (client_id.unwrap_or_default(), token)
        }
        Assertion::Enterprise {
            idp,
            id_token,
            client_id,
            client_secret,
            scopes,
        } => {
            let token = enterprise_token(
                server,
                url,
                &issuer,
                &metadata,
                &idp,
                &id_token,
                (&client_id, client_secret),
                &scopes,
            )
            .await?;
            (client_id, token)
        }
    };
    let granted = token
        .scopes()
        .map(|s| s.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    let credentials = StoredCredentials::new(client_id.clone(), Some(token), granted, Some(now()))
        .with_issuer(Some(issuer.clone()));
    KeychainCredentials {
        secrets: secrets.clone(),
        server: server.to_owned(),
        issuer: issuer.clone(),
        resource: crate::store::resource_of(url),
        info: info.clone(),
        on_change: None,
    }
    .save(credentials)
    .await
    .map_err(|e| problem(server, e))?;
    // A client to name in the manager, so an expired token means "exchange again" (there is no
    // refresh token) rather than a configuration error.
    manager
        .configure_client(OAuthClientConfig::new(
            if client_id.is_empty() {
                "toolgate".to_owned()
            } else {
                client_id
            },
            "http://127.0.0.1/unused",
        ))
        .map_err(|e| problem(server, e))?;
    tracing::info!(server, issuer, "a token for Toolgate's assertion");
    Ok(Session {
        client: AuthClient::new(crate::SessionHttp::plain(), manager),
        info,
    })
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The JWT bearer grant with the workload's JWT, once.
async fn workload_token(
    server: &str,
    url: &str,
    metadata: &AuthorizationMetadata,
    client_id: Option<&str>,
    jwt: &str,
    scopes: &[String],
) -> Result<OAuthTokenResponse, AuthProblem> {
    let scope = scopes.join(" ");
    let mut form = vec![
        ("grant_type", JWT_BEARER),
        ("assertion", jwt),
        ("resource", url),
    ];
    if let Some(id) = client_id {
        form.push(("client_id", id));
    }
    if !scope.is_empty() {
        form.push(("scope", &scope));
    }
    let unreachable = |e: reqwest::Error| {
        AuthProblem::Unavailable(format!(
            "could not reach {server}'s authorization server at {} to present the workload's token: {e}",
            metadata.token_endpoint
        ))
    };
    let response = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(unreachable)?
        .post(&metadata.token_endpoint)
        .header(reqwest::header::ACCEPT, "application/json")
        .form(&form)
        .send()
        .await
        .map_err(unreachable)?;
    let status = response.status();
    let body = response.bytes().await.map_err(unreachable)?;
    if !status.is_success() {
        return Err(AuthProblem::Unavailable(format!(
            "{server}'s authorization server refused the workload's token ({}); check the token your platform issues (its audience must be {}) and oauth.clientId",
            oauth_error(status, &body),
            metadata.issuer.as_deref().unwrap_or(&metadata.token_endpoint)
        )));
    }
    serde_json::from_slice(&body).map_err(|e| {
        AuthProblem::Unavailable(format!(
            "{server}'s authorization server answered the workload's token with something that is not a token ({e})"
        ))
    })
}

/// The identity provider's token exchange, then the JWT bearer grant at the server's
/// authorization server.
#[allow(clippy::too_many_arguments)]
async fn enterprise_token(
    server: &str,
    url: &str,
    issuer: &str,
    metadata: &AuthorizationMetadata,
    idp: &IdentityProvider,
    id_token: &str,
    (client_id, client_secret): (&str, Option<String>),
    scopes: &[String],
) -> Result<OAuthTokenResponse, AuthProblem> {
    let mut provider =
        EmaAuthorizationServer::new(&idp.issuer, &idp.token_endpoint, &idp.client_id);
    if let Some(secret) = &idp.client_secret {
        provider = provider.with_client_authentication(EmaClientAuthentication::ClientSecretBasic(
            ClientSecret::new(secret.clone()),
        ));
    }
    let mut resource_as = EmaAuthorizationServer::new(issuer, &metadata.token_endpoint, client_id);
    if let Some(secret) = client_secret {
        let methods = metadata
            .additional_fields
            .get("token_endpoint_auth_methods_supported")
            .and_then(|v| v.as_array())
            .map(|m| m.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>())
            .unwrap_or_default();
        let secret = ClientSecret::new(secret);
        // Basic unless the authorization server names only the form body (RFC 8414's default
        // is Basic).
        let auth = if !methods.is_empty()
            && !methods.contains(&"client_secret_basic")
            && methods.contains(&"client_secret_post")
        {
            EmaClientAuthentication::ClientSecretPost(secret)
        } else {
            EmaClientAuthentication::ClientSecretBasic(secret)
        };
        resource_as = resource_as.with_client_authentication(auth);
    }
    let http = default_oauth_http_client().map_err(|e| problem(server, e))?;
    let token = EmaExchangeRequest::new_with_id_token(provider, resource_as, url, id_token)
        .with_scopes(scopes.iter().cloned())
        .exchange(&http, &http)
        .await
        .map_err(|e| {
            AuthProblem::Unavailable(format!(
                "the enterprise sign-in to {server} through {} did not give a token ({e}); check identityProvider and the server's oauth.clientId, or sign in to your organisation again for a fresh ID token",
                idp.issuer
            ))
        })?;
    let mut response = serde_json::json!({
        "access_token": AccessToken::secret(&token.access_token),
        "token_type": "Bearer",
    });
    if let Some(lifetime) = token.expires_in {
        response["expires_in"] = lifetime.as_secs().into();
    }
    if !token.scopes.is_empty() {
        let mut scopes: Vec<_> = token.scopes.iter().cloned().collect();
        scopes.sort();
        response["scope"] = scopes.join(" ").into();
    }
    serde_json::from_value(response).map_err(|e| {
        AuthProblem::Unavailable(format!(
            "{server}: the enterprise token could not be kept: {e}"
        ))
    })
}

/// An OAuth error answer in words: its `error` and `error_description`, or the status.
fn oauth_error(status: reqwest::StatusCode, body: &[u8]) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let field = |name: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.get(name))
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    match (field("error"), field("error_description")) {
        (Some(code), Some(words)) => format!("{code}: {words}"),
        (Some(code), None) => code,
        _ => format!("HTTP {status}"),
    }
}
