//! The secret values this process has read from the keychain for its servers (their
//! environment, headers and sign-in settings, each `${secret:NAME}` at a start): the values the
//! secrets scan matches exactly in calls and results, whatever they look like. Kept for the life
//! of the process, by name (a value set again replaces the old one).

use std::collections::BTreeMap;
use std::sync::{PoisonError, RwLock};

static KNOWN: RwLock<BTreeMap<String, String>> = RwLock::new(BTreeMap::new());

/// Notes a value read for `name`.
pub(crate) fn remember(name: &str, value: &str) {
    let mut known = KNOWN.write().unwrap_or_else(PoisonError::into_inner);
    if known.get(name).map(String::as_str) != Some(value) {
        known.insert(name.to_owned(), value.to_owned());
    }
}

/// Every value read so far, with its name.
pub fn known_secrets() -> Vec<(String, String)> {
    KNOWN
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
