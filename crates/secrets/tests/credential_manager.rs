//! Windows: the keychain is the Credential Manager (keyring's `windows-native`), one generic
//! credential per secret, target `<secret>.<service>`. Run under Wine in the test command's Wine
//! step, against Wine's own Credential Manager (`advapi32`'s `Cred*` functions, kept in Wine's
//! registry): the real calls, not a mock. On Linux the Secret Service suites cover the keychain.
#![cfg(windows)]

use toolgate_secrets::{Keychain, SecretStore};

#[test]
fn each_secret_is_kept_read_and_removed_on_its_own() {
    let store = Keychain::new(format!("toolgate-test-{}", std::process::id()));
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
    let ours = Keychain::new(format!("toolgate-a-{}", std::process::id()));
    let theirs = Keychain::new(format!("toolgate-b-{}", std::process::id()));
    ours.set("API_KEY", "ours").expect("stored");
    assert_eq!(theirs.get("API_KEY").expect("read"), None);
    ours.delete("API_KEY").expect("removed");
}
