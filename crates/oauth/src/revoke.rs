//! Signing out: each token revoked where the authorization server offers revocation (RFC 7009),
//! then every keychain item of the server removed, whether or not revocation worked.

use std::sync::Arc;

use oauth2::TokenResponse;
use toolgate_secrets::SecretStore;

use crate::store::{self, Index, Record};
use crate::{manager_for, KeychainError};

/// Signs `server` (at `url`) out. Returns notes for the user (a revocation that failed); the
/// tokens are gone from this computer either way. An error means the keychain failed.
pub async fn sign_out(
    secrets: &Arc<dyn SecretStore>,
    server: &str,
    url: &str,
) -> Result<Vec<String>, KeychainError> {
    let (records, index_exists) = {
        let server = server.to_owned();
        store::blocking(secrets, move |s| {
            let index: Option<Index> = store::read_json(s, &store::index_item(&server))?;
            let exists = index.is_some();
            let mut records = Vec::new();
            for issuer in index.unwrap_or_default().issuers {
                let record: Option<Record> =
                    store::read_json(s, &store::record_item(&server, &issuer))?;
                records.push((issuer, record));
            }
            Ok((records, exists))
        })
        .await?
    };
    let mut notes = Vec::new();
    let revocation = if records.iter().any(|(_, r)| has_tokens(r.as_ref())) {
        revocation_endpoint(url, &records).await
    } else {
        None
    };
    for (issuer, record) in &records {
        let Some(record) = record else { continue };
        let (Some(client), Some(credentials)) = (&record.client, &record.credentials) else {
            continue;
        };
        let Some(token) = &credentials.token_response else {
            continue;
        };
        let Some(endpoint) = revocation.as_ref().filter(|e| e.issuer == *issuer) else {
            continue;
        };
        // Revoking the refresh token ends the grant; the access token too, for servers that do
        // not tie the two.
        let mut tokens = Vec::new();
        if let Some(refresh) = token.refresh_token() {
            tokens.push((refresh.secret().clone(), "refresh_token"));
        }
        tokens.push((token.access_token().secret().clone(), "access_token"));
        let mut grant_ended = false;
        for (value, hint) in tokens {
            match revoke(endpoint, client, &value, hint).await {
                Ok(()) => grant_ended |= hint == "refresh_token",
                // A self-contained (JWT) access token cannot be revoked at many servers (RFC 7009
                // `unsupported_token_type`); with the grant ended, it only lives out its
                // minutes and is never renewed.
                Err(Refused::UnsupportedTokenType) if grant_ended => {}
                Err(why) => {
                    notes.push(format!(
                        "{issuer} did not confirm the revocation ({why}); the tokens were removed from this computer anyway"
                    ));
                    break;
                }
            }
        }
    }
    let server = server.to_owned();
    let issuers: Vec<String> = records.into_iter().map(|(i, _)| i).collect();
    store::blocking(secrets, move |s| {
        // The DPoP key goes too: a new sign-in gets a new key.
        s.delete(&crate::dpop::key_item(&server))?;
        if !index_exists {
            return Ok(());
        }
        for issuer in issuers {
            s.delete(&store::record_item(&server, &issuer))?;
        }
        Ok(s.delete(&store::index_item(&server))?)
    })
    .await?;
    Ok(notes)
}

fn has_tokens(record: Option<&Record>) -> bool {
    record.is_some_and(|r| {
        r.credentials
            .as_ref()
            .is_some_and(|c| c.token_response.is_some())
    })
}

/// Where and how to revoke at the server's current authorization server.
struct Revocation {
    issuer: String,
    endpoint: String,
    /// The client secret goes in the form (`client_secret_post`), not in a Basic header: the
    /// authorization server offers post and not basic (the rule rmcp follows at the token
    /// endpoint).
    secret_in_form: bool,
}

/// The revocation endpoint of the server's current authorization server, with its issuer.
async fn revocation_endpoint(
    url: &str,
    records: &[(String, Option<Record>)],
) -> Option<Revocation> {
    let manager = manager_for(url).await.ok()?;
    let metadata = manager.resolve_metadata().await.ok()?.metadata;
    let issuer = metadata.issuer.clone()?;
    if !records.iter().any(|(i, _)| *i == issuer) {
        return None;
    }
    let fields = &metadata.additional_fields;
    let endpoint = fields
        .get("revocation_endpoint")
        .and_then(serde_json::Value::as_str)?
        .to_owned();
    // RFC 8414: the revocation endpoint's methods, defaulting to the token endpoint's.
    let methods: Vec<&str> = fields
        .get("revocation_endpoint_auth_methods_supported")
        .or_else(|| fields.get("token_endpoint_auth_methods_supported"))
        .and_then(serde_json::Value::as_array)
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    let secret_in_form =
        methods.contains(&"client_secret_post") && !methods.contains(&"client_secret_basic");
    Some(Revocation {
        issuer,
        endpoint,
        secret_in_form,
    })
}

async fn revoke(
    at: &Revocation,
    client: &store::ClientRecord,
    token: &str,
    hint: &str,
) -> Result<(), Refused> {
    let http = reqwest::Client::new();
    let mut form = vec![("token", token), ("token_type_hint", hint)];
    let mut request = http.post(&at.endpoint);
    match &client.client_secret {
        Some(secret) if at.secret_in_form => {
            form.push(("client_id", client.client_id.as_str()));
            form.push(("client_secret", secret.as_str()));
        }
        Some(secret) => request = request.basic_auth(&client.client_id, Some(secret)),
        None => form.push(("client_id", client.client_id.as_str())),
    }
    let response = request
        .form(&form)
        .timeout(std::time::Duration::from_secs(15))
        .send()
        .await
        .map_err(|e| Refused::Other(e.without_url().to_string()))?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    if body["error"] == "unsupported_token_type" {
        return Err(Refused::UnsupportedTokenType);
    }
    Err(Refused::Other(format!("HTTP {status}")))
}

/// Why a token was not revoked.
enum Refused {
    /// The server does not revoke tokens of this kind (RFC 7009 §2.2.1).
    UnsupportedTokenType,
    Other(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::UnsupportedTokenType => f.write_str("it does not revoke tokens of this kind"),
            Refused::Other(why) => f.write_str(why),
        }
    }
}
