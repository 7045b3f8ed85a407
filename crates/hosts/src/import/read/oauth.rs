//! The `oauth` object of a server entry: a remote server's sign-in choices.

use serde_json::Value;

use super::fields::{field_path, Fields};
use crate::import::error::ImportError;
use toolgate_settings::OAuthSettings;

/// The `oauth` object of Claude Code's `.mcp.json` (`clientId`, `callbackPort`, `scopes` as one
/// space-separated string) and VS Code's `mcp.json` (`clientId`, `scopes` as a list). A client
/// secret written out in the file is not imported: it belongs in the keychain.
pub(super) fn read_oauth(
    fields: &Fields<'_>,
    warnings: &mut Vec<String>,
) -> Result<Option<OAuthSettings>, ImportError> {
    let Some(value) = fields.get("oauth") else {
        return Ok(None);
    };
    let Some(object) = value.as_object() else {
        return Err(fields.wrong("oauth", "an object", value));
    };
    let path = field_path(fields.path, "oauth");
    let oauth = Fields {
        object,
        path: &path,
    };
    let client_id = oauth
        .string("clientId")?
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_owned);
    let scopes = match oauth.get("scopes").or_else(|| oauth.get("scope")) {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(_)) => oauth.strings("scopes")?,
        Some(other) => return Err(oauth.wrong("scopes", "a string or a list of strings", other)),
        None => Vec::new(),
    };
    let callback_port = match oauth.number("callbackPort")? {
        None => None,
        Some(n) if n.fract() == 0.0 && (1.0..=65535.0).contains(&n) => Some(n as u16),
        Some(_) => {
            return Err(ImportError::Invalid {
                at: field_path(&path, "callbackPort"),
                problem: "must be a port number from 1 to 65535".into(),
            })
        }
    };
    let client_secret = match oauth.string("clientSecret")? {
        Some(secret) if secret.trim().starts_with("${secret:") => Some(secret.trim().to_owned()),
        Some(_) => {
            warnings.push(
                "did not import `oauth.clientSecret`: store it in the keychain (Servers & tools → \
                 Secrets) and set the server's oauth.clientSecret to ${secret:NAME}"
                    .into(),
            );
            None
        }
        None => None,
    };
    for key in object.keys() {
        if ![
            "clientId",
            "clientSecret",
            "scopes",
            "scope",
            "callbackPort",
        ]
        .contains(&key.as_str())
        {
            warnings.push(format!("ignored the unknown field `oauth.{key}`"));
        }
    }
    Ok(Some(OAuthSettings {
        client_secret: client_secret.filter(|_| client_id.is_some()),
        client_id,
        scopes,
        client_metadata_url: None,
        callback_port,
        ..OAuthSettings::default()
    }))
}
