//! Why a text could not be imported, or a plan applied ([`ImportError`]), and where a value
//! that could move to the keychain is ([`SecretLocation`]), which those errors name.
//!
//! A leaf of the import: reading, planning and applying all return these errors.

use std::fmt;

use serde::{Deserialize, Serialize};

use toolgate_settings::SettingsError;

/// Why a text could not be imported, or a plan applied. Messages name fields, never values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("nothing to import: the text is empty")]
    Empty,
    /// serde_json's message, with its line and column.
    #[error("the text is not valid JSON: {0}")]
    Json(String),
    #[error("the JSON must be an object like {{\"mcpServers\": {{…}}}}, but it is {found}")]
    NotAnObject { found: &'static str },
    #[error(
        "no `mcpServers` or `servers` object found: paste the whole JSON from the server's README"
    )]
    NotRecognized,
    #[error("the JSON has both `mcpServers` and `servers`: choose which format to import")]
    Ambiguous,
    /// The caller named a format the text does not have.
    #[error("no `{key}` object found at the top of the JSON")]
    Missing { key: &'static str },
    #[error("`{at}` is empty: there is no server to import")]
    NoServers { at: String },
    /// A field has the wrong type or value; `at` is its path, like `mcpServers.github.args[1]`.
    #[error("{at}: {problem}")]
    Invalid { at: String, problem: String },
    #[error("{at}: needs a `command` (a program to start) or a `url` (a server to reach)")]
    MissingCommandOrUrl { at: String },
    #[error("the input `{id}` needs a value: ask the user for it")]
    MissingInput { id: String },
    #[error("{server_id}: {location} `{name}` is not one of the values offered for the keychain")]
    UnknownSecretCandidate {
        server_id: String,
        location: SecretLocation,
        name: String,
    },
    #[error("{server_id}: {location} `{name}` is chosen twice")]
    SecretChosenTwice {
        server_id: String,
        location: SecretLocation,
        name: String,
    },
    #[error("`{name}` cannot name a secret: {problem}")]
    InvalidSecretName { name: String, problem: String },
    #[error("the server id `{id}` was taken after this import was planned: import again")]
    Stale { id: String },
    #[error("the imported approval rules are not valid: {0}")]
    Policy(String),
    #[error("the imported settings are not valid: {0}")]
    Settings(#[from] SettingsError),
}

/// Where a value that could move to the keychain is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ts_rs::TS,
)]
#[serde(rename_all = "camelCase")]
pub enum SecretLocation {
    /// An environment variable of a stdio server.
    Env,
    /// An HTTP header of an HTTP server.
    Header,
}

impl fmt::Display for SecretLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SecretLocation::Env => "env",
            SecretLocation::Header => "header",
        })
    }
}
