//! The real keychain: runs only inside a D-Bus session with an unlocked Secret Service, as the
//! README's test command sets up. It checks the item is really in the Secret Service (read back by
//! `secret-tool`, another process), not in `keyring`'s silent in-memory fallback.

use std::process::Command;

use toolgate_secrets::{Keychain, SecretStore};

#[test]
fn a_secret_is_stored_in_the_secret_service_and_read_back_by_another_process() {
    let service = format!("toolgate-test-{}", std::process::id());
    let name = "provider.test.api_key";
    let store = Keychain::new(&service);
    store.set(name, "sk-test-1234").expect("set in keychain");

    // A second handle, as after an app restart.
    assert_eq!(
        Keychain::new(&service).get(name).expect("get").as_deref(),
        Some("sk-test-1234")
    );
    let out = Command::new("secret-tool")
        .args(["lookup", "service", &service, "username", name])
        .output()
        .expect("secret-tool runs (package libsecret-tools)");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "sk-test-1234");

    store.delete(name).expect("delete");
    assert_eq!(store.get(name).expect("get after delete"), None);
}
