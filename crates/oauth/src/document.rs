//! Toolgate's Client ID Metadata Document: the JSON a publisher hosts at an `https://` address
//! so that address can be Toolgate's client id at every authorization server that accepts such
//! documents (`client_id_metadata_document_supported`), with no registration. Both MCP
//! authorization eras (2025-11-25 and 2026-07-28) prefer it to dynamic registration.
//!
//! The sign-in's redirect is `http://127.0.0.1:<port>/callback` on a port the system picks, so
//! the document names `http://127.0.0.1/callback` without a port: RFC 8252 §7.3 (and OAuth 2.1)
//! require authorization servers to accept any port for a loopback IP redirect of a native app.
//! For one that matches ports exactly, the publisher adds fixed ports and the user sets the same
//! one as the server's `oauth.callbackPort`.

use serde_json::{json, Value};
use toolgate_settings::{client_id_url_problem, OAuthSettings};

/// The path of the loopback redirect.
pub const CALLBACK_PATH: &str = "/callback";

/// The document address built into this copy of Toolgate, used for every server whose settings
/// name none: set by whoever builds and publishes Toolgate (`TOOLGATE_CLIENT_METADATA_URL` at
/// build time) and hosts the document `toolgate client-metadata` prints for it. Unset in a
/// plain build, which then registers itself where it has to.
pub const BUILT_IN_CLIENT_METADATA_URL: Option<&str> = option_env!("TOOLGATE_CLIENT_METADATA_URL");

/// The loopback redirect URI on `port` (RFC 8252 §7.3: the IP literal, not `localhost`).
pub fn redirect_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}{CALLBACK_PATH}")
}

/// An address that cannot be a client id, and what is wrong with it (in words that follow
/// "it": "must be an https:// address").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url} cannot be a client id: it {problem}")]
pub struct ClientIdError {
    pub url: String,
    pub problem: &'static str,
}

/// The Client ID Metadata Document to host at `url` for this Toolgate: a public native client
/// (`token_endpoint_auth_method: none`, PKCE) with the loopback redirect on any port, plus
/// `callback_ports` for authorization servers that match redirect ports exactly.
pub fn client_metadata_document(url: &str, callback_ports: &[u16]) -> Result<Value, ClientIdError> {
    if let Some(problem) = client_id_url_problem(url) {
        return Err(ClientIdError {
            url: url.to_owned(),
            problem,
        });
    }
    let mut redirect_uris = vec![format!("http://127.0.0.1{CALLBACK_PATH}")];
    for port in callback_ports {
        let uri = redirect_uri(*port);
        if !redirect_uris.contains(&uri) {
            redirect_uris.push(uri);
        }
    }
    Ok(json!({
        "client_id": url,
        "client_name": "Toolgate",
        "application_type": "native",
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }))
}

/// The document address a sign-in offers: the server's `oauth.clientMetadataUrl`, else the
/// built-in one (when it is a usable client id).
pub(crate) fn document_url(settings: &OAuthSettings, built_in: Option<&str>) -> Option<String> {
    settings.client_metadata_url.clone().or_else(|| {
        built_in
            .filter(|url| client_id_url_problem(url).is_none())
            .map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_names_its_own_address_and_a_loopback_redirect_on_any_port() {
        let url = "https://example.org/toolgate/client.json";
        let document = client_metadata_document(url, &[]).unwrap();
        assert_eq!(document["client_id"], url);
        assert_eq!(document["client_name"], "Toolgate");
        assert_eq!(document["application_type"], "native");
        assert_eq!(document["token_endpoint_auth_method"], "none");
        assert_eq!(
            document["redirect_uris"],
            json!(["http://127.0.0.1/callback"])
        );
        assert!(document.get("client_secret").is_none());
        // The sign-in's redirect is that URI with the port added.
        assert_eq!(redirect_uri(5123), "http://127.0.0.1:5123/callback");

        let fixed = client_metadata_document(url, &[47123, 47123, 47124]).unwrap();
        assert_eq!(
            fixed["redirect_uris"],
            json!([
                "http://127.0.0.1/callback",
                "http://127.0.0.1:47123/callback",
                "http://127.0.0.1:47124/callback"
            ])
        );
        let refused = client_metadata_document("https://example.org", &[])
            .unwrap_err()
            .to_string();
        assert!(refused.contains("path"), "{refused}");
    }

    #[test]
    fn the_server_s_document_comes_before_the_built_in_one() {
        let own = OAuthSettings {
            client_metadata_url: Some("https://corp.example/toolgate.json".into()),
            ..Default::default()
        };
        let built_in = Some("https://publisher.example/toolgate/client.json");
        assert_eq!(
            document_url(&own, built_in).as_deref(),
            Some("https://corp.example/toolgate.json")
        );
        let none = OAuthSettings::default();
        assert_eq!(document_url(&none, built_in).as_deref(), built_in);
        assert_eq!(document_url(&none, None), None);
        // A built-in address that is no client id is not offered.
        assert_eq!(
            document_url(&none, Some("http://publisher.example/c")),
            None
        );
    }
}
