//! The real keychain: runs only inside a D-Bus session with an unlocked Secret Service, as the
//! README's test command sets up. It checks the item is really in the Secret Service (read back by
//! `secret-tool`, another process), not in `keyring`'s silent in-memory fallback.
//! Linux only; Windows' Credential Manager is `credential_manager.rs`.
#![cfg(target_os = "linux")]

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

/// Runs this test binary again, for one test, in an environment the parent sets up.
fn child(test: &str, shell: &str) -> std::process::Output {
    let exe = std::env::current_exe().expect("test binary");
    Command::new("bash")
        .args(["-c", shell, "bash"])
        .arg(exe)
        .args(["--exact", test, "--nocapture"])
        .env("TOOLGATE_KEYCHAIN_CHILD", "1")
        .output()
        .expect("bash runs")
}

fn in_child() -> bool {
    std::env::var_os("TOOLGATE_KEYCHAIN_CHILD").is_some()
}

#[test]
fn a_locked_keychain_says_to_unlock_it() {
    if in_child() {
        let err = Keychain::new("toolgate-locked-test")
            .get("provider.test.api_key")
            .expect_err("a locked keychain cannot be read");
        println!("MESSAGE: {err}");
        assert!(
            matches!(err, toolgate_secrets::SecretError::Locked { .. }),
            "{err:?}"
        );
        return;
    }
    // A keyring of its own, with nobody to answer the unlock prompt (no display), locked after
    // an item is stored: what a user sees with a locked login keyring. Its files are its own too:
    // a second daemon on the session's keyring files reloads them when the test beside this one
    // writes there, and the item stored here vanished (a CI run failed so).
    let out = child(
        "a_locked_keychain_says_to_unlock_it",
        r#"data="$(mktemp -d)"; trap 'rm -rf "$data"' EXIT
        XDG_DATA_HOME="$data" dbus-run-session -- bash -c '
            set -e
            unset DISPLAY WAYLAND_DISPLAY GNOME_KEYRING_CONTROL
            eval "$(printf toolgate | gnome-keyring-daemon --unlock --components=secrets)"
            printf v | secret-tool store --label=t service toolgate-locked-test username provider.test.api_key
            test "$(secret-tool lookup service toolgate-locked-test username provider.test.api_key)" = v
            busctl --user call org.freedesktop.secrets /org/freedesktop/secrets \
              org.freedesktop.Secret.Service Lock ao 1 /org/freedesktop/secrets/collection/login >/dev/null
            timeout 60 "$@"' bash "$@""#,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("MESSAGE: the OS keychain is locked or refused access")
            && stdout.contains("Unlock it"),
        "{stdout}"
    );
}

#[test]
fn no_secret_service_says_what_to_start() {
    if in_child() {
        let err = Keychain::new("toolgate-missing-test")
            .get("provider.test.api_key")
            .expect_err("no Secret Service");
        println!("MESSAGE: {err}");
        assert!(
            matches!(err, toolgate_secrets::SecretError::Unavailable { .. }),
            "{err:?}"
        );
        return;
    }
    let out = child(
        "no_secret_service_says_what_to_start",
        r#"DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/toolgate-bus exec timeout 60 "$@""#,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed: {stdout}");
    assert!(
        stdout.contains("MESSAGE: the OS keychain is not reachable")
            && stdout.contains("start a Secret Service"),
        "{stdout}"
    );
}
