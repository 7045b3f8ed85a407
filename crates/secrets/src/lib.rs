//! Secrets in the OS keychain.
//!
//! Every API key and server secret is one keychain item, reached through [`SecretStore`]. The real
//! store is [`Keychain`] (Secret Service on Linux, through `keyring` with its backend chosen
//! explicitly: without one, `keyring` silently falls back to an in-memory mock). [`MemoryStore`]
//! is the deterministic fake for unit tests of code that needs a store.
//!
//! Errors never carry a secret's value, so they are safe to log and to show.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// What went wrong with the keychain, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("the OS keychain is not reachable ({detail}). Toolgate keeps API keys only in the keychain: start a Secret Service such as gnome-keyring or KWallet (it runs in a normal desktop session) and try again")]
    Unavailable { detail: String },
    #[error("the OS keychain is locked or refused access ({detail}). Unlock it (for example by logging in again or opening your keyring manager) and try again")]
    Locked { detail: String },
    #[error("the keychain item '{name}' is unreadable ({detail}). Clear it and set it again")]
    Corrupt { name: String, detail: String },
    #[error("the OS keychain failed: {detail}")]
    Other { detail: String },
}

/// A place to keep secrets by name.
pub trait SecretStore: Send + Sync {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError>;
    fn set(&self, name: &str, value: &str) -> Result<(), SecretError>;
    /// Removes the secret; removing one that is not there is not an error.
    fn delete(&self, name: &str) -> Result<(), SecretError>;
}

/// The OS keychain. Items are stored under `service` with the secret's name as the user.
#[derive(Debug, Clone)]
pub struct Keychain {
    service: String,
}

impl Keychain {
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into(),
        }
    }

    fn entry(&self, name: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(&self.service, name).map_err(|e| map_error(name, e))
    }
}

impl Default for Keychain {
    fn default() -> Self {
        Self::new("toolgate")
    }
}

/// Maps keyring's errors to ours without ever including stored bytes (`BadEncoding` carries them).
fn map_error(name: &str, error: keyring::Error) -> SecretError {
    use keyring::Error as E;
    match error {
        E::PlatformFailure(e) => {
            let detail = e.to_string();
            if detail.contains("locked") || detail.contains("dismissed") {
                SecretError::Locked { detail }
            } else {
                SecretError::Unavailable { detail }
            }
        }
        E::NoStorageAccess(e) => SecretError::Locked {
            detail: e.to_string(),
        },
        E::BadEncoding(_) => SecretError::Corrupt {
            name: name.to_owned(),
            detail: "its value is not valid UTF-8".to_owned(),
        },
        E::Ambiguous(_) => SecretError::Corrupt {
            name: name.to_owned(),
            detail: "there are several items of that name".to_owned(),
        },
        other => SecretError::Other {
            detail: other.to_string(),
        },
    }
}

impl SecretStore for Keychain {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        match self.entry(name)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_error(name, e)),
        }
    }

    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        self.entry(name)?
            .set_password(value)
            .map_err(|e| map_error(name, e))
    }

    fn delete(&self, name: &str) -> Result<(), SecretError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(map_error(name, e)),
        }
    }
}

/// An in-memory store for unit tests.
#[derive(Debug, Default)]
pub struct MemoryStore {
    items: Mutex<BTreeMap<String, String>>,
}

impl MemoryStore {
    fn items(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        // A poisoned lock only means another test thread panicked; the map is still usable.
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        Ok(self.items().get(name).cloned())
    }
    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        self.items().insert(name.to_owned(), value.to_owned());
        Ok(())
    }
    fn delete(&self, name: &str) -> Result<(), SecretError> {
        self.items().remove(name);
        Ok(())
    }
}

/// What the UI may learn about a secret: whether it is set, never its value.
pub fn is_set(store: &dyn SecretStore, name: &str) -> Result<bool, SecretError> {
    Ok(store.get(name)?.is_some_and(|v| !v.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_store_round_trip() {
        let store = MemoryStore::default();
        assert!(!is_set(&store, "k").expect("get"));
        store.set("k", "v").expect("set");
        assert_eq!(store.get("k").expect("get").as_deref(), Some("v"));
        store.delete("k").expect("delete");
        store.delete("k").expect("deleting twice is fine");
        assert_eq!(store.get("k").expect("get"), None);
    }

    #[test]
    fn bad_encoding_error_never_shows_the_bytes() {
        let err = map_error("x", keyring::Error::BadEncoding(b"hunter2".to_vec()));
        assert!(!err.to_string().contains("hunter2"));
        assert!(!format!("{err:?}").contains("hunter2"));
    }
}
