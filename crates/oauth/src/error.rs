//! Why a sign-in, a sign-out or a keychain access failed, in the words the user sees.
//!
//! Each message names the server and says what to do. None carries a token, and none has a
//! `source()`: the words already say what the cause said, so a caller printing the chain of
//! causes prints each thing once.

use rmcp::transport::auth::AuthError;
use toolgate_secrets::SecretError;

/// Why the keychain did not keep or give a server's sign-in (its tokens, its registration, its
/// DPoP key).
#[derive(Debug, thiserror::Error)]
pub enum KeychainError {
    #[error(transparent)]
    Store(#[from] SecretError),
    /// An item could not be written as JSON.
    #[error("{0}")]
    Encode(serde_json::Error),
    /// The blocking task that talks to the keychain panicked or was cancelled.
    #[error("the keychain task failed: {0}")]
    Task(tokio::task::JoinError),
    #[error("the DPoP key in the keychain is damaged")]
    DamagedKey,
    #[error("no DPoP key could be made")]
    KeyNotMade,
}

/// Why the browser could not be opened on the authorization URL; the user can open it by
/// hand.
#[derive(Debug, thiserror::Error)]
#[error("could not open a browser ({0})")]
pub struct OpenBrowserError(pub std::io::Error);

/// Why a sign-in in the browser did not finish. Nothing is stored when it fails.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// Discovery, registration or the token exchange failed (see [`crate::describe`]).
    #[error("{}", crate::describe(server, error))]
    Authorization {
        server: String,
        error: Box<AuthError>,
    },
    #[error(
        "{server} does not say how to sign in: it publishes no OAuth metadata (no protected resource metadata, no authorization server metadata) and does not ask for a sign-in. Check its URL, or whether it needs a sign-in at all"
    )]
    NoMetadata { server: String },
    #[error(
        "{server}'s authorization server published metadata without an issuer; Toolgate cannot sign in to a server that does not say who it is"
    )]
    NoIssuer { server: String },
    #[error("{server}'s DPoP key: {error}")]
    DpopKey {
        server: String,
        error: KeychainError,
    },
    #[error("{server}'s DPoP key could not be made")]
    DpopKeyNotMade { server: String },
    /// The metadata found a moment ago was gone when asked again (with DPoP).
    #[error("{server} stopped saying how to sign in; try again")]
    MetadataGone { server: String },
    #[error("{server}'s sign-in could not be read from the keychain: {error}")]
    KeychainRead {
        server: String,
        error: KeychainError,
    },
    #[error("could not listen for the sign-in's answer on 127.0.0.1: {0}")]
    Listen(std::io::Error),
    #[error("could not listen for the sign-in's answer: {0}")]
    ListenAddress(std::io::Error),
    #[error(
        "{server}'s authorization server ({issuer}) does not let apps register themselves. Register an app there with the redirect URI http://127.0.0.1:PORT/callback, then give Toolgate its client id: `toolgate servers login {server} --client-id ID` or oauth.clientId in the server's settings (with oauth.callbackPort set to that PORT)"
    )]
    NoRegistration { server: String, issuer: String },
    #[error(
        "the sign-in to {server} was not completed within {seconds} s; start it again when ready"
    )]
    TimedOut { server: String, seconds: u64 },
    #[error("the sign-in's answer could not be received: {0}")]
    Receive(std::io::Error),
    /// The user said no at the authorization server (`access_denied`).
    #[error(
        "the sign-in to {server} was declined{}; nothing was saved",
        said(description)
    )]
    Declined {
        server: String,
        description: Option<String>,
    },
    /// The authorization server answered with another OAuth error code.
    #[error(
        "the authorization server refused the sign-in to {server} ({code}{}); nothing was saved",
        said(description)
    )]
    Refused {
        server: String,
        code: String,
        description: Option<String>,
    },
    #[error(
        "the answer that came back for {server} does not belong to this sign-in (its state does not match), so Toolgate ignored it; nothing was saved. Start the sign-in again"
    )]
    StateMismatch { server: String },
    #[error("the authorization server sent no code back for {server}; nothing was saved")]
    NoCode { server: String },
    #[error("{server}'s sign-in could not be saved in the keychain: {error}")]
    KeychainSave {
        server: String,
        error: KeychainError,
    },
    #[error("the sign-in to {server} returned no token")]
    NoToken { server: String },
}

/// The authorization server's `error_description`, as the messages add it.
fn said(description: &Option<String>) -> String {
    description
        .as_deref()
        .map(|d| format!(": {d}"))
        .unwrap_or_default()
}
