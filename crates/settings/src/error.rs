//! Why settings are refused: [`SettingsError`], and the helpers that word it.
//!
//! Its own module so that every part of the settings (servers, provider, migrations) can name a
//! field in an error without reaching back into the crate root.

/// A setting that was rejected, naming the field and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
    #[error("the settings are not valid JSON for Toolgate: {0}")]
    Malformed(String),
    #[error(
        "the settings were written by a newer Toolgate (schema version {found}, this one knows up to {}); update Toolgate",
        crate::SCHEMA_VERSION
    )]
    TooNew { found: u32 },
}

pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> SettingsError {
    SettingsError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

/// serde's message with the quoted values taken out: a misplaced `env` or `headers` value may be
/// a secret, and these messages are shown and logged. Names in backticks (fields, variants) stay.
pub fn without_values(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let mut out = String::with_capacity(message.len());
    let mut in_quotes = false;
    for c in message.chars() {
        match (c, in_quotes) {
            ('"', false) => {
                in_quotes = true;
                out.push_str("\"…");
            }
            ('"', true) => {
                in_quotes = false;
                out.push('"');
            }
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out
}
