use std::sync::Arc;

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use toolgate_secrets::{MemoryStore, SecretStore};

use super::*;

fn token(
    access: &str,
    refresh: Option<&str>,
    lifetime: u64,
) -> rmcp::transport::auth::OAuthTokenResponse {
    let mut body = serde_json::json!({
        "access_token": access, "token_type": "Bearer", "expires_in": lifetime
    });
    if let Some(r) = refresh {
        body["refresh_token"] = serde_json::json!(r);
    }
    serde_json::from_value(body).expect("a token response")
}

#[tokio::test]
async fn credentials_live_in_one_item_per_server_and_issuer_and_keep_the_registration() {
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let info = Arc::new(StdMutex::new(None));
    let credentials = store::KeychainCredentials {
        secrets: secrets.clone(),
        server: "linear".into(),
        issuer: "https://as.example".into(),
        resource: store::resource_of("https://mcp.linear.app/mcp"),
        info: info.clone(),
        on_change: None,
    };
    store::update_record(secrets.as_ref(), "linear", "https://as.example", |r| {
        r.client = Some(store::ClientRecord {
            client_id: "c1".into(),
            client_secret: None,
            redirect_uri: "http://127.0.0.1:1/callback".into(),
            registered: true,
            document: false,
        })
    })
    .unwrap();
    let saved = StoredCredentials::new(
        "c1".into(),
        Some(token("at-123", Some("rt-456"), 3600)),
        vec!["mcp:tools".into()],
        Some(1_000),
    );
    credentials.save(saved).await.unwrap();
    let item = secrets
        .get("oauth:linear:https://as.example")
        .unwrap()
        .expect("the item");
    assert!(item.contains("at-123") && item.contains("rt-456") && item.contains("\"c1\""));
    let shown = info.lock().unwrap().clone().expect("published");
    assert_eq!(shown.expires_at, Some(4_600));
    assert!(shown.renewable);
    assert_eq!(
        stored_state(&secrets, "linear").await.unwrap(),
        Some(shown.clone())
    );
    assert!(signed_in_before(&secrets, "linear").await);
    assert!(!format!("{shown:?}").contains("at-123"));

    // A refused refresh token clears the tokens but keeps the client registration.
    credentials
        .on_refresh_token_rejected(&credentials.load().await.unwrap().unwrap())
        .await
        .unwrap();
    assert!(credentials.load().await.unwrap().is_none());
    let item = secrets
        .get("oauth:linear:https://as.example")
        .unwrap()
        .unwrap();
    assert!(!item.contains("at-123") && item.contains("\"c1\""));
    assert_eq!(stored_state(&secrets, "linear").await.unwrap(), None);
}

#[tokio::test]
async fn a_token_is_offered_only_to_the_address_it_was_got_for() {
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let store_for = |url: &str| store::KeychainCredentials {
        secrets: secrets.clone(),
        server: "github".into(),
        issuer: "https://github.com/login/oauth".into(),
        resource: store::resource_of(url),
        info: Arc::new(StdMutex::new(None)),
        on_change: None,
    };
    let saved = StoredCredentials::new(
        "c1".into(),
        Some(token("at-github", Some("rt-github"), 3600)),
        vec![],
        Some(1_000),
    );
    store_for("https://api.githubcopilot.com/mcp/")
        .save(saved)
        .await
        .unwrap();
    // The same address, spelled otherwise: the host's case and its default port.
    for same in [
        "https://api.githubcopilot.com/mcp/",
        "https://API.GitHubCopilot.com:443/mcp/",
    ] {
        assert!(store_for(same).load().await.unwrap().is_some(), "{same}");
    }
    // The same id with another address (another data folder's server, an import, a server
    // added again), or a neighbour path on the same host: the token is not offered.
    for other in [
        "https://evil.example/mcp/",
        "https://api.githubcopilot.com/other/",
        "http://api.githubcopilot.com/mcp/",
        "https://api.githubcopilot.com.evil.example/mcp/",
    ] {
        assert!(store_for(other).load().await.unwrap().is_none(), "{other}");
    }
    // An item from before addresses were kept is bound to the address it is next saved with.
    store::update_record(secrets.as_ref(), "old", "https://a", |r| {
        r.credentials = Some(StoredCredentials::new(
            "c".into(),
            Some(token("at", None, 60)),
            vec![],
            Some(1),
        ))
    })
    .unwrap();
    let old: store::Record =
        store::read_json(secrets.as_ref(), &store::record_item("old", "https://a"))
            .unwrap()
            .unwrap();
    assert!(old.resource.is_none() && old.is_for("https://anything.example/"));
}

#[tokio::test]
async fn sign_out_removes_every_item_even_without_the_network() {
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    store::update_record(secrets.as_ref(), "s", "https://a", |r| {
        r.credentials = Some(StoredCredentials::new(
            "c".into(),
            Some(token("at", None, 60)),
            vec![],
            Some(1),
        ))
    })
    .unwrap();
    store::note_issuer(secrets.as_ref(), "s", "https://a").unwrap();
    let notes = sign_out(&secrets, "s", "http://127.0.0.1:9/mcp")
        .await
        .unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(secrets.get("oauth:s:https://a").unwrap(), None);
    assert_eq!(secrets.get("oauth:s").unwrap(), None);
}

#[test]
fn errors_name_the_server_and_what_to_do() {
    let mismatch = describe(
        "linear",
        &AuthError::AuthorizationServerMismatch {
            expected_issuer: "https://a".into(),
            received_issuer: "https://evil".into(),
        },
    );
    assert!(
        mismatch.contains("linear")
            && mismatch.contains("https://evil")
            && mismatch.contains("nothing was saved")
    );
    let rejected = problem(
        "linear",
        AuthError::TokenRefreshRejected("invalid_grant".into()),
    );
    assert!(matches!(rejected, AuthProblem::SignInAgain(ref m) if m.contains("sign in again")));
    let down = problem("linear", AuthError::TokenRefreshFailed("HTTP 500".into()));
    assert!(matches!(down, AuthProblem::Unavailable(ref m) if m.contains("linear")));
}

#[test]
fn a_sign_in_that_ends_at_the_authorization_server_says_how() {
    let declined = SignInError::Declined {
        server: "linear".into(),
        description: Some("the user said no".into()),
    };
    assert_eq!(
        declined.to_string(),
        "the sign-in to linear was declined: the user said no; nothing was saved"
    );
    let refused = SignInError::Refused {
        server: "linear".into(),
        code: "server_error".into(),
        description: None,
    };
    assert_eq!(
        refused.to_string(),
        "the authorization server refused the sign-in to linear (server_error); nothing was saved"
    );
    let described = SignInError::Authorization {
        server: "linear".into(),
        error: Box::new(AuthError::PkceUnsupported),
    };
    assert_eq!(
        described.to_string(),
        describe("linear", &AuthError::PkceUnsupported)
    );
    // The words already say what the cause said: nothing is repeated by a chain of causes.
    assert!(std::error::Error::source(&described).is_none());
}
