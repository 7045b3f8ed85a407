//! `${secret:NAME}` and `${env:NAME}` in a server's env are filled in from the real keychain
//! (gnome-keyring in the test session) and Toolgate's environment when the server starts, and
//! only then: the settings keep the reference, and a missing secret fails the start with a reason
//! that names it and never shows a value. `tests/fault_server.py` uses `FAULT_ECHO_DESCRIPTION` as
//! its echo tool's description, so what the process received is visible in its tool list.

use std::sync::Arc;

use toolgate_mcp::{ManagerOptions, ServerManager, ServerStatus};
use toolgate_secrets::{Keychain, SecretStore};
use toolgate_settings::{secret_item, ServerConfig, Transport};
use toolgate_tests::{fault_server, temp_dir};

const CANARY: &str = "canary-7f3a9c-in-the-keychain-only";

fn with_env(id: &str, name: &str, value: &str) -> ServerConfig {
    let mut config = fault_server(id, "ok");
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert(name.into(), value.into());
    }
    config
}

async fn status_of(servers: &ServerManager, id: &str) -> (ServerStatus, Option<String>) {
    let snapshot = servers.snapshot().await;
    let server = snapshot.iter().find(|s| s.id == id).expect("configured");
    let description = server
        .tools
        .iter()
        .find(|t| t.name == "echo")
        .map(|t| t.description.clone());
    (server.status.clone(), description)
}

#[tokio::test]
async fn secrets_and_environment_references_are_filled_in_at_start_and_only_there() {
    let service = format!("toolgate-secrets-test-{}", std::process::id());
    let keychain = Keychain::new(&service);
    keychain
        .set(&secret_item("ECHO_DESCRIPTION"), CANARY)
        .expect("the test session has an unlocked keychain");
    std::env::set_var("TOOLGATE_TEST_ECHO_SUFFIX", "from-env");
    let logs = temp_dir("server-secrets");
    let servers = ServerManager::new(ManagerOptions {
        secrets: Some(Arc::new(keychain.clone())),
        log_dir: Some(logs.to_path_buf()),
        ..ManagerOptions::default()
    });
    let configs = [
        with_env(
            "with-secret",
            "FAULT_ECHO_DESCRIPTION",
            "${secret:ECHO_DESCRIPTION} ${env:TOOLGATE_TEST_ECHO_SUFFIX}",
        ),
        with_env(
            "missing",
            "FAULT_ECHO_DESCRIPTION",
            "${secret:NOT_SET_ANYWHERE}",
        ),
        with_env("hijack", "LD_PRELOAD", "/tmp/nothing.so"),
    ];
    servers.start_all(&configs).await;

    let (status, description) = status_of(&servers, "with-secret").await;
    assert_eq!(status, ServerStatus::Ready);
    assert_eq!(
        description.as_deref(),
        Some(format!("{CANARY} from-env").as_str()),
        "the process got the secret's value"
    );

    let (status, _) = status_of(&servers, "missing").await;
    let ServerStatus::Failed { reason } = status else {
        panic!("a missing secret fails the start: {status:?}");
    };
    assert!(
        reason.contains("env.FAULT_ECHO_DESCRIPTION: the secret NOT_SET_ANYWHERE is not set"),
        "{reason}"
    );

    let (status, _) = status_of(&servers, "hijack").await;
    let ServerStatus::Failed { reason } = status else {
        panic!("LD_PRELOAD is refused: {status:?}");
    };
    assert!(
        reason.contains("LD_PRELOAD") && reason.contains("allowEnv"),
        "{reason}"
    );

    // The value lives in the keychain and the process only: not in the configuration kept by
    // the manager, not in any snapshot, not in the server logs.
    let snapshot = format!("{:?}", servers.snapshot().await);
    assert_eq!(
        snapshot.matches(CANARY).count(),
        1,
        "only as the tool's own description"
    );
    servers.stop_all().await;
    for entry in std::fs::read_dir(&logs).expect("logs") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).unwrap_or_default();
        assert!(!text.contains(CANARY), "a log holds the secret");
    }
    keychain
        .delete(&secret_item("ECHO_DESCRIPTION"))
        .expect("delete");
}
