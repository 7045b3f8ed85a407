//! Editing a server in the window without its secrets passing through the window: values that
//! look like secrets and are written out in the settings (not `${secret:…}` references) are shown
//! as [`HIDDEN`], and an edit that leaves [`HIDDEN`] in place keeps the stored value.

use std::collections::BTreeMap;

use crate::vars::{header_looks_secret, looks_secret};
use crate::{ServerConfig, Transport};

/// What the window sees instead of a value that looks like a secret.
pub const HIDDEN: &str = "(hidden: kept as it is)";

fn hide(values: &BTreeMap<String, String>, secret: fn(&str) -> bool) -> BTreeMap<String, String> {
    values
        .iter()
        .map(|(name, value)| {
            let shown = if secret(name) && !value.contains("${secret:") {
                HIDDEN.to_owned()
            } else {
                value.clone()
            };
            (name.clone(), shown)
        })
        .collect()
}

fn keep(old: &BTreeMap<String, String>, edited: &mut BTreeMap<String, String>) {
    for (name, value) in edited.iter_mut() {
        if value == HIDDEN {
            match old.get(name) {
                Some(stored) => value.clone_from(stored),
                None => value.clear(),
            }
        }
    }
}

/// The server as the window may see it.
pub fn for_window(server: &ServerConfig) -> ServerConfig {
    let mut shown = server.clone();
    match &mut shown.transport {
        Transport::Stdio { env, .. } => *env = hide(env, looks_secret),
        Transport::Http { headers, .. } => *headers = hide(headers, header_looks_secret),
    }
    shown
}

/// The edit from the window applied to the stored server: hidden values keep what they were,
/// and a form that does not send the sandbox or the trust marks (they have their own editor on
/// the card) keeps them too.
pub fn apply(old: &ServerConfig, mut edited: ServerConfig) -> ServerConfig {
    if edited.sandbox.is_none() {
        edited.sandbox.clone_from(&old.sandbox);
    }
    if edited.trust.is_default() {
        edited.trust.clone_from(&old.trust);
    }
    match (&old.transport, &mut edited.transport) {
        (Transport::Stdio { env: before, .. }, Transport::Stdio { env, .. }) => keep(before, env),
        (
            Transport::Http {
                headers: before, ..
            },
            Transport::Http { headers, .. },
        ) => keep(before, headers),
        (
            _,
            Transport::Stdio { env: values, .. }
            | Transport::Http {
                headers: values, ..
            },
        ) => {
            // The transport changed: nothing stored to keep.
            values.retain(|_, v| v != HIDDEN);
        }
    }
    edited
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_the_window_and_survive_an_edit() {
        let mut server = ServerConfig::stdio("gh", "npx", ["server-github"]);
        if let Transport::Stdio { env, .. } = &mut server.transport {
            env.insert("GITHUB_TOKEN".into(), "ghp_plain_value".into());
            env.insert("API_KEY".into(), "${secret:API_KEY}".into());
            env.insert("LOG_LEVEL".into(), "debug".into());
        }
        let shown = for_window(&server);
        let Transport::Stdio { env, .. } = &shown.transport else {
            panic!("stdio")
        };
        assert_eq!(env["GITHUB_TOKEN"], HIDDEN);
        assert_eq!(env["API_KEY"], "${secret:API_KEY}");
        assert_eq!(env["LOG_LEVEL"], "debug");
        assert!(!format!("{shown:?}").contains("ghp_plain_value"));

        let mut edited = shown.clone();
        edited.name = "GitHub".into();
        if let Transport::Stdio { env, .. } = &mut edited.transport {
            env.insert("LOG_LEVEL".into(), "info".into());
            env.insert("NEW_TOKEN".into(), HIDDEN.into());
        }
        let saved = apply(&server, edited);
        let Transport::Stdio { env, .. } = &saved.transport else {
            panic!("stdio")
        };
        assert_eq!(env["GITHUB_TOKEN"], "ghp_plain_value", "kept");
        assert_eq!(env["LOG_LEVEL"], "info");
        assert_eq!(env["NEW_TOKEN"], "", "a placeholder never becomes a value");
        assert_eq!(saved.name, "GitHub");

        let mut to_http = shown;
        to_http.transport = Transport::Http {
            sse: false,
            url: "https://example.com/mcp".into(),
            headers: [("Authorization".to_owned(), HIDDEN.to_owned())].into(),
        };
        let Transport::Http { headers, .. } = apply(&server, to_http).transport else {
            panic!("http")
        };
        assert!(headers.is_empty());
    }
}
