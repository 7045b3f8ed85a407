//! The value of one `${secret:NAME}` or `${env:NAME}` reference, looked up just before use (a
//! server's env and headers at each start, the audit exporter's headers), or why there is none.
//! Never a secret's value in an error.

use toolgate_secrets::{SecretError, SecretStore};
use toolgate_settings::Reference;

/// Why a reference has no value: what is missing and where to set it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("the environment variable {name} is not set in Toolgate's environment")]
    EnvNotSet { name: String },
    #[error("the secret {name} cannot be read: no keychain is available here")]
    NoKeychain { name: String },
    #[error(
        "the secret {name} is not set; set it under Servers & tools → Secrets (or `toolgate secrets set {name}`)"
    )]
    SecretNotSet { name: String },
    #[error("the secret {name} cannot be read: {error}")]
    Keychain { name: String, error: SecretError },
}

/// The value of one reference, or why there is none (never a secret's value). Also what the
/// audit exporter's `${secret:…}` headers are filled in with.
pub fn lookup(
    secrets: Option<&dyn SecretStore>,
    reference: Reference<'_>,
) -> Result<String, LookupError> {
    match reference {
        Reference::Env(name) => std::env::var(name).map_err(|_| LookupError::EnvNotSet {
            name: name.to_owned(),
        }),
        Reference::Secret(name) => {
            let store = secrets.ok_or_else(|| LookupError::NoKeychain {
                name: name.to_owned(),
            })?;
            match store.get(&toolgate_settings::secret_item(name)) {
                Ok(Some(value)) => {
                    // Kept out of calls and results from now on (the secrets scan).
                    crate::known::remember(name, &value);
                    Ok(value)
                }
                Ok(None) => Err(LookupError::SecretNotSet {
                    name: name.to_owned(),
                }),
                Err(error) => Err(LookupError::Keychain {
                    name: name.to_owned(),
                    error,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_from_the_keychain_and_the_environment_and_say_what_is_missing() {
        use toolgate_secrets::MemoryStore;
        let store = MemoryStore::default();
        store
            .set(&toolgate_settings::secret_item("GH"), "ghp_value")
            .unwrap();
        assert_eq!(
            lookup(Some(&store), Reference::Secret("GH")).unwrap(),
            "ghp_value"
        );
        let missing = lookup(Some(&store), Reference::Secret("NOPE"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("the secret NOPE is not set"), "{missing}");
        let no_keychain = lookup(None, Reference::Secret("GH"))
            .unwrap_err()
            .to_string();
        assert!(no_keychain.contains("no keychain"), "{no_keychain}");
        assert!(lookup(None, Reference::Env("PATH")).is_ok());
        let unset = lookup(None, Reference::Env("TOOLGATE_SURELY_UNSET_VAR"))
            .unwrap_err()
            .to_string();
        assert!(
            unset.contains("not set in Toolgate's environment"),
            "{unset}"
        );
    }
}
