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

// keyring falls back to an in-memory mock on any platform without a store of its own: keys would
// seem saved and be gone at exit. Refuse to build there rather than lose them quietly.
#[cfg(not(any(
    target_os = "linux",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "macos",
    target_os = "windows"
)))]
compile_error!("toolgate-secrets has no OS keychain for this platform; add one in its Cargo.toml");

/// What went wrong with the keychain, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error(
        "the OS keychain is not reachable ({detail}). {}",
        unreachable_advice(std::env::consts::OS)
    )]
    Unavailable { detail: String },
    #[error(
        "the OS keychain is locked or refused access ({detail}). {}",
        locked_advice(std::env::consts::OS)
    )]
    Locked { detail: String },
    #[error(
        "the keychain item '{name}' is unreadable ({detail}). {}",
        damaged_advice(std::env::consts::OS)
    )]
    Corrupt { name: String, detail: String },
    #[error("the OS keychain failed: {detail}")]
    Other { detail: String },
}

/// What to do when the keychain cannot be reached, on the OS named as
/// [`std::env::consts::OS`] names it.
pub fn unreachable_advice(os: &str) -> &'static str {
    match os {
        "macos" => "Toolgate keeps API keys only in the keychain: use Toolgate from your own logged-in desktop session (the login keychain is not open to a program started over SSH or by a launch daemon) and try again",
        "windows" => "Toolgate keeps API keys only in Windows Credential Manager: use Toolgate signed in to Windows as yourself (Credential Manager is not open to a service account or a program started without your profile) and try again",
        _ => "Toolgate keeps API keys only in the keychain: start a Secret Service such as gnome-keyring or KWallet (it runs in a normal desktop session) and try again",
    }
}

/// What to do when the keychain is locked or refused Toolgate, on the OS named as
/// [`std::env::consts::OS`] names it.
pub fn locked_advice(os: &str) -> &'static str {
    match os {
        "macos" => "Unlock the login keychain (in Keychain Access, or by logging in again), choose Allow or Always Allow when macOS asks whether Toolgate may use it, and try again",
        "windows" => "Run Toolgate as the Windows user who saved the keys (Credential Manager keeps each user's apart) and try again",
        _ => "Unlock it (for example by logging in again or opening your keyring manager) and try again",
    }
}

/// What to do about an item the keychain holds but Toolgate cannot read, on the OS named as
/// [`std::env::consts::OS`] names it.
pub fn damaged_advice(os: &str) -> &'static str {
    match os {
        "macos" => "Delete the item in Keychain Access and set it again",
        "windows" => "Remove the item in Credential Manager and set it again",
        _ => "Clear the item in your keyring manager and set it again",
    }
}

impl SecretError {
    /// What to do about this error on the OS named as [`std::env::consts::OS`] names it: the
    /// advice its message ends with, on that OS (a keychain that failed otherwise is treated as
    /// holding a damaged item).
    pub fn advice(&self, os: &str) -> &'static str {
        match self {
            SecretError::Unavailable { .. } => unreachable_advice(os),
            SecretError::Locked { .. } => locked_advice(os),
            SecretError::Corrupt { .. } | SecretError::Other { .. } => damaged_advice(os),
        }
    }
}

/// The keychain service every item of Toolgate's is kept under ([`Keychain::default`]). On macOS
/// it is the item's name and "where" in Keychain Access; another value would lose every saved key.
pub const SERVICE: &str = "toolgate";

/// Where one secret is kept in the OS keychain, as `keyring` is asked for it.
///
/// On macOS: a generic password in the login keychain whose service attribute is `service` and
/// whose account attribute is the secret's name, exactly as given (`provider.anthropic.api_key`,
/// `secret.GITHUB_TOKEN`, `oauth:github:https://github.com`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    pub service: &'a str,
    pub account: &'a str,
}

/// The item of secret `name` under `service`. An empty service or name is refused: macOS reads
/// an empty attribute as "any", so an item with an empty name would find any of Toolgate's.
pub fn item<'a>(service: &'a str, name: &'a str) -> Result<Item<'a>, SecretError> {
    if service.is_empty() || name.is_empty() {
        return Err(SecretError::Other {
            detail: format!(
                "a keychain item needs a service and a name (service {service:?}, name {name:?})"
            ),
        });
    }
    Ok(Item {
        service,
        account: name,
    })
}

/// Whether a status of macOS's Security framework means the keychain is locked or the user
/// refused Toolgate (so the user can act), rather than that it cannot be reached:
/// `errSecUserCanceled` (the keychain's prompt was cancelled), `errSecAuthFailed` (its password
/// was wrong, or access was denied) and `errSecInteractionNotAllowed` (it is locked and no prompt
/// can be shown). keyring already maps "no keychain" and "read-only" to `NoStorageAccess`.
pub fn macos_status_is_refusal(code: i32) -> bool {
    matches!(code, -128 | -25293 | -25308)
}

/// The macOS status inside a keyring platform failure, when there is one.
#[cfg(target_os = "macos")]
fn platform_refused(e: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    e.downcast_ref::<security_framework::base::Error>()
        .is_some_and(|e| macos_status_is_refusal(e.code()))
}

#[cfg(not(target_os = "macos"))]
fn platform_refused(_: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    false
}

/// A place to keep secrets by name.
pub trait SecretStore: Send + Sync {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError>;
    fn set(&self, name: &str, value: &str) -> Result<(), SecretError>;
    /// Removes the secret; removing one that is not there is not an error.
    fn delete(&self, name: &str) -> Result<(), SecretError>;
}

/// The OS keychain. Items are stored under `service` with the secret's name as the user (see
/// [`item`]).
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
        let item = item(&self.service, name)?;
        keyring::Entry::new(item.service, item.account).map_err(|e| map_error(name, e))
    }
}

impl Default for Keychain {
    fn default() -> Self {
        Self::new(SERVICE)
    }
}

/// Maps keyring's errors to ours without ever including stored bytes (`BadEncoding` carries them).
fn map_error(name: &str, error: keyring::Error) -> SecretError {
    use keyring::Error as E;
    match error {
        E::PlatformFailure(e) => {
            let detail = e.to_string();
            if detail.contains("locked") || detail.contains("dismissed") || platform_refused(&*e) {
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

/// The last 4 characters of a secret, for the user to tell keys apart ("…a1b2"); nothing for a
/// value shorter than 12 characters, of which 4 would be too large a part.
pub fn hint(value: &str) -> Option<String> {
    let count = value.chars().count();
    (count >= 12).then(|| {
        let tail: String = value.chars().skip(count - 4).collect();
        format!("…{tail}")
    })
}

/// Where a key was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum KeySource {
    Keychain,
    /// An environment variable of Toolgate's process (such as `ANTHROPIC_API_KEY`).
    Environment,
}

/// A key and where it came from. Its `Debug` shows only the hint.
#[derive(Clone)]
pub struct FoundKey {
    pub value: String,
    pub source: KeySource,
}

impl std::fmt::Debug for FoundKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoundKey")
            .field("value", &hint(&self.value).unwrap_or_else(|| "…".into()))
            .field("source", &self.source)
            .finish()
    }
}

/// A provider's key: the keychain item `item` if set, else the environment variable `env_var`.
/// When the keychain cannot be read but the variable is set, the variable is used; otherwise
/// the keychain's error is returned.
pub fn provider_key(
    store: &dyn SecretStore,
    item: &str,
    env_var: &str,
) -> Result<Option<FoundKey>, SecretError> {
    let from_env = || {
        std::env::var(env_var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|value| FoundKey {
                value: value.trim().to_owned(),
                source: KeySource::Environment,
            })
    };
    match store.get(item) {
        Ok(Some(value)) if !value.is_empty() => Ok(Some(FoundKey {
            value,
            source: KeySource::Keychain,
        })),
        Ok(_) => Ok(from_env()),
        Err(e) => from_env().map(Some).ok_or(e),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_keychain_is_the_platforms_store_never_keyrings_memory_mock() {
        let entry = keyring::Entry::new("toolgate-test", "probe").expect("an entry");
        assert!(
            entry
                .get_credential()
                .downcast_ref::<keyring::mock::MockCredential>()
                .is_none(),
            "keyring was built without this platform's store: keys would live in memory only"
        );
    }

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

    #[test]
    fn hints_show_only_the_last_four_characters_of_long_values() {
        assert_eq!(hint("sk-ant-0123456789abcd").as_deref(), Some("…abcd"));
        assert_eq!(hint("short-value"), None);
        assert_eq!(hint("ééééééééé1234").as_deref(), Some("…1234"));
    }

    #[test]
    fn a_provider_key_comes_from_the_keychain_first_then_the_environment() {
        let store = MemoryStore::default();
        let var = "TOOLGATE_TEST_PROVIDER_KEY_VAR";
        assert!(provider_key(&store, "k", var).unwrap().is_none());
        std::env::set_var(var, "sk-from-env-000000");
        let found = provider_key(&store, "k", var).unwrap().unwrap();
        assert_eq!(found.source, KeySource::Environment);
        assert!(!format!("{found:?}").contains("sk-from-env"));
        store.set("k", "sk-from-keychain").unwrap();
        let found = provider_key(&store, "k", var).unwrap().unwrap();
        assert_eq!(
            (found.value.as_str(), found.source),
            ("sk-from-keychain", KeySource::Keychain)
        );
        std::env::remove_var(var);
    }

    #[test]
    fn each_secret_is_one_item_under_toolgates_service_named_as_it_is() {
        assert_eq!(SERVICE, "toolgate");
        let keychain = Keychain::default();
        assert_eq!(keychain.service, SERVICE);
        // The names Toolgate gives its items (provider keys, the user's secrets, a server's
        // secret, OAuth tokens and DPoP keys, the door's tokens) are the accounts, unchanged.
        for name in [
            "provider.anthropic.api_key",
            "secret.GITHUB_TOKEN",
            "secret.WEATHER_API_KEY",
            "oauth:github:https://github.com/login/oauth",
            "oauth-dpop:linear",
            "door:token:cursor",
        ] {
            assert_eq!(
                item(&keychain.service, name).expect("an item"),
                Item {
                    service: "toolgate",
                    account: name
                }
            );
        }
        assert_eq!(
            item("toolgate-test", "k").expect("an item").service,
            "toolgate-test"
        );
    }

    #[test]
    fn an_empty_name_never_reaches_the_keychain() {
        assert!(item("toolgate", "").is_err());
        assert!(item("", "k").is_err());
        // Refused before the OS is asked: no keychain is needed for this.
        let keychain = Keychain::default();
        for result in [
            keychain.get("").map(|_| ()),
            keychain.set("", "v"),
            keychain.delete(""),
        ] {
            let e = result.expect_err("refused");
            assert!(
                matches!(e, SecretError::Other { .. })
                    && e.to_string().contains("needs a service and a name"),
                "{e}"
            );
        }
    }

    #[test]
    fn each_os_is_told_about_its_own_keychain_and_no_other() {
        const LINUX: &[&str] = &[
            "gnome-keyring",
            "KWallet",
            "Secret Service",
            "keyring manager",
        ];
        const MAC: &[&str] = &["Keychain Access", "login keychain"];
        // The OS, words its advice must have (unreachable, locked, damaged), words of other
        // systems'.
        type Row<'a> = (&'a str, [&'a str; 3], &'a [&'a [&'a str]]);
        let rows: [Row; 3] = [
            (
                "linux",
                [
                    "start a Secret Service",
                    "keyring manager",
                    "keyring manager",
                ],
                &[MAC, &["Credential Manager"]],
            ),
            (
                "macos",
                [
                    "logged-in desktop session",
                    "Keychain Access",
                    "Keychain Access",
                ],
                &[LINUX, &["Credential Manager"]],
            ),
            (
                "windows",
                [
                    "Credential Manager",
                    "Credential Manager",
                    "Credential Manager",
                ],
                &[LINUX, MAC],
            ),
        ];
        for (os, musts, others) in rows {
            let advice = [
                unreachable_advice(os),
                locked_advice(os),
                damaged_advice(os),
            ];
            for (text, must) in advice.iter().zip(musts) {
                assert!(text.contains(must), "{os}: {text}");
                for other in others.iter().flat_map(|words| words.iter()) {
                    assert!(!text.contains(other), "{os}: {text}");
                }
            }
        }
        // Each message ends with this OS's advice.
        let os = std::env::consts::OS;
        let unreachable = SecretError::Unavailable { detail: "d".into() }.to_string();
        assert!(
            unreachable.ends_with(unreachable_advice(os)),
            "{unreachable}"
        );
        let locked = SecretError::Locked { detail: "d".into() }.to_string();
        assert!(locked.ends_with(locked_advice(os)), "{locked}");
        let damaged = SecretError::Corrupt {
            name: "n".into(),
            detail: "d".into(),
        };
        assert!(
            damaged.to_string().ends_with(damaged.advice(os)),
            "{damaged}"
        );
    }

    #[test]
    fn macos_statuses_that_the_user_can_answer_are_refusals() {
        // errSecUserCanceled, errSecAuthFailed, errSecInteractionNotAllowed.
        for code in [-128, -25293, -25308] {
            assert!(macos_status_is_refusal(code), "{code}");
        }
        // errSecItemNotFound (no such key), errSecNotAvailable (no keychain),
        // errSecMissingEntitlement, errSecDuplicateItem.
        for code in [-25300, -25291, -34018, -25299] {
            assert!(!macos_status_is_refusal(code), "{code}");
        }
    }
}
