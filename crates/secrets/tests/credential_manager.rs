//! Windows: the keychain is the Credential Manager (keyring's `windows-native`), one generic
//! credential per secret, target `<secret>.<service>`. Run under Wine in the test command's Wine
//! step, against Wine's own Credential Manager (`advapi32`'s `Cred*` functions, kept in Wine's
//! registry): the real calls, not a mock. On Linux the Secret Service suites cover the keychain.
#![cfg(windows)]

use std::sync::Once;
use toolgate_secrets::{Keychain, SecretStore};

/// A keychain for one test, once Wine's Credential Manager has its key.
///
/// Wine encrypts every credential with one key it makes on the first write in a prefix
/// (`get_cred_mgr_encryption_key` in `advapi32/cred.c`: read the registry value, and if it is
/// missing, make one and write it), with no lock. Two first writes at once in a fresh prefix each
/// make a key, one overwrites the other, and the secret written with the lost key reads back as
/// noise of the right length. CI met it: the tests below run in parallel. So the first keychain
/// writes and removes one credential alone, and the others wait for it. On Windows the Credential
/// Manager has no such key; there this only costs one write.
fn keychain(service: String) -> Keychain {
    static KEY_MADE: Once = Once::new();
    KEY_MADE.call_once(|| {
        let first = Keychain::new(format!("toolgate-first-{}", std::process::id()));
        first.set("FIRST", "first").expect("stored");
        first.delete("FIRST").expect("removed");
    });
    Keychain::new(service)
}

#[test]
fn each_secret_is_kept_read_and_removed_on_its_own() {
    let store = keychain(format!("toolgate-test-{}", std::process::id()));
    assert_eq!(store.get("GITHUB_TOKEN").expect("read"), None);
    store.set("GITHUB_TOKEN", "ghp_first").expect("stored");
    store.set("NOTION_KEY", "sécrèt ✓ 🔑").expect("stored");
    assert_eq!(
        store.get("GITHUB_TOKEN").expect("read").as_deref(),
        Some("ghp_first")
    );
    assert_eq!(
        store.get("NOTION_KEY").expect("read").as_deref(),
        Some("sécrèt ✓ 🔑"),
        "any Unicode comes back as it went in"
    );
    store.set("GITHUB_TOKEN", "ghp_second").expect("replaced");
    assert_eq!(
        store.get("GITHUB_TOKEN").expect("read").as_deref(),
        Some("ghp_second")
    );
    store.delete("GITHUB_TOKEN").expect("removed");
    assert_eq!(store.get("GITHUB_TOKEN").expect("read"), None);
    assert_eq!(
        store.get("NOTION_KEY").expect("read").as_deref(),
        Some("sécrèt ✓ 🔑"),
        "the other secret is its own credential"
    );
    store
        .delete("GITHUB_TOKEN")
        .expect("removing twice is no error");
    store.delete("NOTION_KEY").expect("removed");
}

#[test]
fn another_service_sees_none_of_them() {
    let ours = keychain(format!("toolgate-a-{}", std::process::id()));
    let theirs = keychain(format!("toolgate-b-{}", std::process::id()));
    ours.set("API_KEY", "ours").expect("stored");
    assert_eq!(theirs.get("API_KEY").expect("read"), None);
    ours.delete("API_KEY").expect("removed");
}
