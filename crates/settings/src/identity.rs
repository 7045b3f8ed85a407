//! The organisation's identity provider, for enterprise-managed authorization: the
//! `identityProvider` section (the managed policy's, when it sets one, wins).
//!
//! A server whose `oauth.grant` is `enterpriseManaged` is signed in to without a consent screen
//! of its own: the identity provider exchanges the user's ID token for an identity assertion
//! grant (ID-JAG, RFC 8693 token exchange) naming that server, which the server's
//! authorization server takes in the JWT bearer grant (RFC 7523).

use serde::{Deserialize, Serialize};

use crate::error::{invalid, SettingsError};
use crate::reference::{references, Reference};

/// Where the organisation's users sign in once for every enterprise-managed server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IdentityProvider {
    /// The identity provider's issuer identifier, exactly as its metadata gives it.
    pub issuer: String,
    /// Its token endpoint, where the token exchange is made.
    pub token_endpoint: String,
    /// The client id the identity provider knows Toolgate by.
    pub client_id: String,
    /// That client's secret, as a `${secret:NAME}` reference; absent: a public client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The user's ID token from the identity provider, as a `${secret:NAME}` reference (the
    /// organisation's sign-in tool, or `toolgate secrets set`, keeps it in the keychain).
    pub id_token: String,
}

impl IdentityProvider {
    /// The section's problems, named by key (`identityProvider.tokenEndpoint`).
    pub fn validate(&self) -> Result<(), SettingsError> {
        let at = |key: &str| format!("identityProvider.{key}");
        for (key, url) in [
            ("issuer", &self.issuer),
            ("tokenEndpoint", &self.token_endpoint),
        ] {
            let ok = url::Url::parse(url).is_ok_and(|u| {
                u.scheme() == "https"
                    || (u.scheme() == "http"
                        && matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")))
            });
            if !ok {
                return Err(invalid(
                    at(key),
                    format!("'{url}' must be an https:// address (http:// only on this computer)"),
                ));
            }
        }
        if self.client_id.trim().is_empty() {
            return Err(invalid(at("clientId"), "must not be empty"));
        }
        for (key, value, example) in [
            ("idToken", Some(&self.id_token), "IDP_ID_TOKEN"),
            (
                "clientSecret",
                self.client_secret.as_ref(),
                "IDP_CLIENT_SECRET",
            ),
        ] {
            let Some(value) = value else { continue };
            let refs = references(value).map_err(|reason| invalid(at(key), reason.to_string()))?;
            let whole = matches!(refs.as_slice(), [Reference::Secret(name)] if value.trim() == format!("${{secret:{name}}}"));
            if !whole {
                // Never repeat the value: it may be the token itself.
                return Err(invalid(
                    at(key),
                    format!("must be a keychain reference such as ${{secret:{example}}}; store the value with `toolgate secrets set {example}`"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idp() -> IdentityProvider {
        IdentityProvider {
            issuer: "https://idp.example.com".into(),
            token_endpoint: "https://idp.example.com/oauth2/token".into(),
            client_id: "toolgate".into(),
            client_secret: None,
            id_token: "${secret:IDP_ID_TOKEN}".into(),
        }
    }

    #[test]
    fn the_identity_provider_names_https_addresses_and_keychain_references_only() {
        assert!(idp().validate().is_ok());
        let local = IdentityProvider {
            issuer: "http://127.0.0.1:9".into(),
            token_endpoint: "http://localhost:9/token".into(),
            ..idp()
        };
        assert!(local.validate().is_ok(), "http on this computer");
        let plain = IdentityProvider {
            token_endpoint: "http://idp.example.com/token".into(),
            ..idp()
        };
        let why = plain.validate().unwrap_err().to_string();
        assert!(why.contains("identityProvider.tokenEndpoint"), "{why}");
        let pasted = IdentityProvider {
            id_token: "eyJraWQi.pasted.token".into(),
            ..idp()
        };
        let why = pasted.validate().unwrap_err().to_string();
        assert!(
            why.contains("identityProvider.idToken") && !why.contains("eyJ"),
            "{why}"
        );
        // Read through the settings: a misspelt key is named.
        let mut value = serde_json::to_value(crate::Settings::first_run(
            crate::ServerConfig::stdio("s", "true", Vec::<String>::new()),
        ))
        .unwrap();
        value["identityProvider"] = serde_json::json!({
            "issuer": "https://i", "tokenEndpoint": "https://i/t", "clientId": "c",
            "idToken": "${secret:T}", "idtoken": "x"});
        let why = crate::Settings::from_json(value).unwrap_err().to_string();
        assert!(why.contains("identityProvider"), "{why}");
    }
}
