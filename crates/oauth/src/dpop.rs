//! DPoP (RFC 9449): tokens bound to a key of Toolgate's, so a copied token is useless without it.
//!
//! Used when the authorization server says it takes DPoP (`dpop_signing_alg_values_supported`
//! naming ES256) and the server does too (its 401 challenge names the `DPoP` scheme), or when
//! the server's settings say `"dpop": true`; never with `"dpop": false`. Each server gets its own P-256 key, kept in the keychain (`oauth-dpop:<server>`)
//! and made the first time it is needed. Every token request carries a proof of it (the
//! authorization code, each refresh: [`DpopOAuthHttp`]), and so does every request to the
//! server, with the token under the `DPoP` scheme and the proof naming the method, the address
//! and the token's hash ([`SessionHttp`]). A server or authorization server that answers
//! `use_dpop_nonce` gets the request again with the nonce it gave (RFC 9449 §8 and §9), and its
//! latest nonce is used from then on.
//!
//! rmcp's HTTP client keeps only the `WWW-Authenticate` header of a 401, not `DPoP-Nonce`, so a
//! server's nonce is read from a second request that cannot be carried out: the same address,
//! an empty JSON object as the body.

use std::sync::Arc;

mod client;
mod key;
mod token;

pub use client::SessionHttp;
pub use key::key_item;
pub(crate) use key::Dpop;
pub(crate) use token::DpopOAuthHttp;

/// Whether authorization server metadata says it takes DPoP proofs signed with ES256.
pub(crate) fn offered(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(|v| v.as_array())
        .is_some_and(|algs| algs.iter().any(|a| a == "ES256"))
}

/// A manager for `url` whose OAuth requests go through [`DpopOAuthHttp`] with `dpop`'s key.
pub(crate) async fn manager(
    url: &str,
    dpop: Arc<Dpop>,
) -> Result<rmcp::transport::auth::AuthorizationManager, rmcp::transport::auth::AuthError> {
    let http = DpopOAuthHttp::new(dpop).map_err(rmcp::transport::auth::AuthError::InternalError)?;
    rmcp::transport::auth::AuthorizationManager::new_with_oauth_http_client(url, Arc::new(http))
        .await
}

/// Whether a `WWW-Authenticate` header offers the DPoP scheme (one of its challenges begins
/// with `DPoP`).
pub(crate) fn in_challenge(header: &str) -> bool {
    header.split(',').any(|part| {
        part.trim_start()
            .split([' ', '='])
            .next()
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("dpop"))
            && !part.trim_start().to_ascii_lowercase().starts_with("dpop=")
    })
}

/// Whether a sign-in binds its tokens to a key: the authorization server takes ES256 proofs, and
/// the server asks for DPoP or the settings want it (`dpop`: `None` decides by the server).
pub(crate) fn wanted(
    metadata: &rmcp::transport::auth::AuthorizationMetadata,
    server_asks: bool,
    setting: Option<bool>,
) -> bool {
    offered(metadata) && setting.unwrap_or(server_asks)
}

/// Whether a stored token is DPoP-bound (its `token_type` is `DPoP`).
pub(crate) fn bound(credentials: &rmcp::transport::auth::StoredCredentials) -> bool {
    use oauth2::TokenResponse;
    credentials.token_response.as_ref().is_some_and(|t| {
        matches!(t.token_type(), oauth2::basic::BasicTokenType::Extension(kind) if kind.eq_ignore_ascii_case("dpop"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dpop_scheme_is_found_among_a_challenges_schemes() {
        assert!(in_challenge(r#"DPoP resource_metadata="http://x/m""#));
        assert!(in_challenge(r#"dpop error="use_dpop_nonce""#));
        assert!(in_challenge(r#"Bearer realm="x", DPoP algs="ES256""#));
        assert!(!in_challenge(r#"Bearer resource_metadata="http://x/dpop""#));
        assert!(!in_challenge(r#"Bearer scope="dpop""#));
    }
}
