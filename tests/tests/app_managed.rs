//! The real app in WebKit under an organisation's managed policy: run by a program that binds
//! the test's policy folder over `/etc/toolgate` in a mount namespace of its own (needs root, as
//! CI runs), so the installed app reads the real place. The locked controls are disabled and
//! say "Set by your organisation", the organisation's rules are listed apart from the user's,
//! Diagnostics names where the policy came from, and a server is added from the organisation's
//! registry (`tests/registry/server.py`) in the Add server dialog: found by a search, shown
//! pinned before it is added, and running. Screenshots are saved in `artifacts/`.
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

#[path = "common/webdriver.rs"]
mod webdriver;

use std::os::unix::fs::PermissionsExt;

use anyhow::{ensure, Context, Result};
use fantoccini::Locator;
use serde_json::json;
use toolgate_tests::{managed_policy_folder, temp_dir, LocalRegistry};
use webdriver::{
    app_binary, click, fill, open_session_of, save_screenshot, start_driver, wait_text,
};

#[tokio::test]
async fn the_window_disables_what_the_organisation_locks_and_says_so() -> Result<()> {
    let dir = temp_dir("app-managed");
    let registry = LocalRegistry::start(&dir.join("registry.jsonl"));
    let policy = managed_policy_folder(
        &dir,
        &json!({
            "registry": {"url": registry.url, "registryOnly": true},
            "settings": {"autoAllowReadOnly": false, "approvalTimeoutSecs": 120},
            "rules": [{"id": "no-clock", "effect": "deny", "note": "no clocks for agents",
                       "target": {"kind": "tool", "serverId": "time", "tool": "get_current_time"}}],
        }),
    );
    std::fs::create_dir_all("/etc/toolgate").context(
        "/etc/toolgate could not be made: this test binds a policy folder there and needs root, as CI runs",
    )?;
    // The program tauri-driver starts as the app: the app itself, in a namespace of its own
    // where /etc/toolgate is the test's folder.
    let wrapper = dir.join("toolgate-app-managed");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec unshare --mount --propagation private sh -c 'mount --bind \"$0\" /etc/toolgate && shift && exec \"$@\"' '{}' -- '{}' \"$@\"\n",
            policy.display(),
            app_binary().display()
        ),
    )?;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))?;

    let (_driver, port) = start_driver(&dir, "http://127.0.0.1:9")?;
    let c = open_session_of(port, &wrapper).await?;
    let checked = async {
        click(&c, "[data-testid=tab-activity]").await?;
        wait_text(
            &c,
            "[data-testid=auto-allow-read-only-locked]",
            "Set by your organisation",
            20,
        )
        .await?;
        let read_only = c
            .find(Locator::Css("[data-testid=auto-allow-read-only]"))
            .await?;
        ensure!(
            !read_only.is_enabled().await?,
            "the locked checkbox can still be changed"
        );
        ensure!(
            !read_only.is_selected().await?,
            "it shows the organisation's value, off"
        );
        let timeout = c
            .find(Locator::Css("[aria-label='Seconds to wait for an answer']"))
            .await?;
        ensure!(
            !timeout.is_enabled().await?,
            "the locked time-out can still be changed"
        );
        ensure!(
            timeout.prop("value").await?.as_deref() == Some("120"),
            "the organisation's time-out"
        );
        wait_text(&c, "[data-testid=managed-rule]", "no clocks for agents", 10).await?;
        save_screenshot(&c, "managed-policy.png").await?;
        click(&c, "[data-testid=tab-settings]").await?;
        click(&c, "[data-testid=settings-diagnostics]").await?;
        wait_text(
            &c,
            "[data-testid=managed-summary]",
            "/etc/toolgate/managed.json",
            20,
        )
        .await?;

        // A server from the organisation's registry: searched, seen pinned, added, running.
        click(&c, "[data-testid=tab-servers]").await?;
        click(&c, "[data-testid=add-server-button]").await?;
        click(&c, "[data-testid=add-tab-registry]").await?;
        fill(&c, "[data-testid=registry-query]", "everything").await?;
        click(&c, "[data-testid=registry-search]").await?;
        wait_text(&c, "[data-testid=registry-result]", "server-everything", 20).await?;
        click(&c, "[data-testid=registry-result] button").await?;
        wait_text(
            &c,
            "[data-testid=registry-runs]",
            "npx -y @modelcontextprotocol/server-everything@2026.8.31",
            20,
        )
        .await?;
        save_screenshot(&c, "registry-add.png").await?;
        click(&c, "[data-testid=registry-add]").await?;
        wait_text(
            &c,
            "[data-testid=server-row-server-everything]",
            "ready",
            60,
        )
        .await?;
        Ok::<_, anyhow::Error>(())
    }
    .await;
    c.close().await.ok();
    checked
}
