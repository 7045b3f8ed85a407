//! The window's shell in the end-to-end test: the first run, a well-known server added from the
//! built-in list, a rule edited with its preview, and the window restored after a restart.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use fantoccini::{Client, Locator};

use super::{click, fill, save_screenshot, try_tool, wait_gone, wait_text};

/// Where the window is left before the restart, and must be found after it.
const WINDOW: (u64, u64, u64, u64) = (1024, 700, 40, 30);

/// Opens one section of Settings.
pub(crate) async fn open_settings(c: &Client, section: &str) -> Result<()> {
    click(c, "[data-testid=tab-settings]").await?;
    click(c, &format!("[data-testid=settings-{section}]")).await
}

/// The first run finds the scripted provider where Ollama would be (`OLLAMA_HOST`), with its
/// models; choosing it saves it as the provider and the chat answers at once.
pub(crate) async fn first_run_finds_the_local_model(c: &Client) -> Result<()> {
    wait_text(c, "[data-testid=local-ollama]", "Ollama", 20).await?;
    wait_text(c, "#local-model-ollama", "llama3.2:latest", 5).await?;
    let shot = save_screenshot(c, "e2e-first-run.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    click(c, "[data-testid=use-local-ollama]").await?;
    // The welcome is gone: a model is ready without a key.
    let deadline = Instant::now() + Duration::from_secs(10);
    while c
        .find(Locator::Css("[data-testid=first-run]"))
        .await
        .is_ok()
    {
        ensure!(
            Instant::now() < deadline,
            "the first run stayed after choosing Ollama"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_text(
        c,
        "[data-testid=model-picker] summary",
        "llama3.2:latest",
        5,
    )
    .await?;
    fill(c, "#chat-input", "Hello, local model").await?;
    click(c, "#chat-send").await?;
    wait_text(
        c,
        "[data-testid=assistant-message]",
        "Hello from your local model.",
        20,
    )
    .await?;
    wait_text(c, "[data-testid=chat-usage]", "9 in", 5).await?;
    let shot = save_screenshot(c, "e2e-first-chat.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    Ok(())
}

/// *Add server* → a well-known server: the form is filled with its README's command, the
/// placeholder is replaced, the exact command is shown before anything runs, and the server
/// then runs (the pinned npm package, found by `npx` without downloading).
pub(crate) async fn add_a_well_known_server(c: &Client, marker: &str) -> Result<()> {
    let folder = std::path::Path::new(marker).join("notes");
    std::fs::create_dir_all(&folder)?;
    std::fs::write(folder.join("hello.txt"), "hello from the notes folder")?;
    click(c, "[data-testid=tab-servers]").await?;
    click(c, "[data-testid=add-server-button]").await?;
    click(c, "[data-testid=add-tab-wellKnown]").await?;
    wait_text(
        c,
        "[data-testid=well-known-filesystem]",
        "server-filesystem",
        10,
    )
    .await?;
    let shot = save_screenshot(c, "e2e-add-server.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    click(c, "[data-testid=use-filesystem]").await?;
    let filled = c
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#add-command"))
        .await?
        .prop("value")
        .await?
        .unwrap_or_default();
    ensure!(
        filled == "npx -y @modelcontextprotocol/server-filesystem <folder>",
        "the form holds the README's command: {filled:?}"
    );
    let command = format!(
        "npx -y @modelcontextprotocol/server-filesystem {}",
        folder.display()
    );
    fill(c, "#add-command", &command).await?;
    click(c, "[data-testid=add-check]").await?;
    wait_text(c, "[data-testid=add-runs]", &command, 10).await?;
    let shot = save_screenshot(c, "e2e-add-confirm.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    click(c, "[data-testid=add-confirm]").await?;
    // Adding waits for the server's start, and a first `npx` start downloads the package (in a
    // confined server's fetch step, then the server itself): a network's time, not a UI's. The
    // progress shows in place meanwhile; once the server started, the dialog closes and the
    // server is listed.
    wait_text(c, "[data-testid=add-progress]", "Filesystem", 10).await?;
    wait_gone(c, "[data-testid=add-server-close]", 90)
        .await
        .context("the dialog closed once the server started")?;
    click(c, "[data-testid=server-row-filesystem]").await?;
    wait_text(
        c,
        "[data-testid=server-filesystem] [data-testid=server-status]",
        "ready",
        60,
    )
    .await?;
    try_tool(
        c,
        "[data-testid=server-filesystem]",
        "read_text_file",
        &serde_json::json!({ "path": folder.join("hello.txt") }).to_string(),
        "hello from the notes folder",
    )
    .await?;
    wait_text(c, "[data-testid=server-row-filesystem]", "ready", 5).await?;
    let shot = save_screenshot(c, "e2e-servers-list.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    Ok(())
}

/// Activity → the "always" rule on `echo`, edited: a condition narrows it, the backend's
/// preview lists which recent calls it would have matched, and it is saved.
pub(crate) async fn edit_a_rule_with_its_preview(c: &Client) -> Result<()> {
    click(c, "[data-testid=tab-activity]").await?;
    click(c, "[data-testid=rules] button[data-testid^=edit-rule-]").await?;
    wait_text(
        c,
        "[data-testid=rule-preview]",
        // Every echo call of the ten requests so far (six echoes, a tool that asked a
        // question, the question, the call held for a value from outside content, another
        // app's call).
        "It would have matched 6 of the last 10 requests",
        10,
    )
    .await?;
    // The editor knows echo's arguments once the window has the server's tools (the list may
    // still be refreshing after the server added just before).
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(r#"#rule-pointers option[value="/message"]"#))
        .await
        .context("echo's arguments offered to the rule editor")?;
    click(c, "[data-testid=add-condition]").await?;
    let pointer = c
        .find(Locator::Css("[data-testid=rule-pointer-0]"))
        .await?
        .prop("value")
        .await?
        .unwrap_or_default();
    ensure!(
        pointer == "/message",
        "echo's argument is offered: {pointer:?}"
    );
    fill(c, "[data-testid=rule-value-0]", "hello*").await?;
    // Of the echo calls the rule covered, one message starts with "hello".
    wait_text(
        c,
        "[data-testid=rule-preview]",
        "It would have matched 1 of the last 10 requests",
        10,
    )
    .await?;
    wait_text(
        c,
        "[data-testid=rule-preview-row]",
        "hello from toolgate e2e",
        5,
    )
    .await?;
    let shot = save_screenshot(c, "e2e-rule-editor.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    click(c, "[data-testid=rule-save]").await?;
    wait_text(
        c,
        "[data-testid=rule]",
        "Allow echo on Everything (example) (always, when message matches “hello*”)",
        10,
    )
    .await?;
    Ok(())
}

/// Leaves the window at a known size and place, on the Activity screen, and gives the store a
/// moment to write it.
pub(crate) async fn arrange_the_window(c: &Client) -> Result<()> {
    let (width, height, x, y) = WINDOW;
    let narrow = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    c.set_window_rect(narrow(x), narrow(y), narrow(width), narrow(height))
        .await
        .context("moving and resizing the window")?;
    click(c, "[data-testid=tab-activity]").await?;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    Ok(())
}

/// After a restart: the window's size and place, and the Activity screen.
pub(crate) async fn restored_after_restart(c: &Client) -> Result<()> {
    wait_text(c, "[data-testid=tab-activity]", "Activity", 30).await?;
    let selected = c
        .find(Locator::Css("[data-testid=tab-activity]"))
        .await?
        .attr("aria-selected")
        .await?;
    ensure!(
        selected.as_deref() == Some("true"),
        "the last screen was restored"
    );
    // The app's data came back with it: the rule edited before the restart.
    wait_text(
        c,
        "[data-testid=rule]",
        "Allow echo on Everything (example)",
        20,
    )
    .await?;
    wait_text(c, "[data-testid=audit-log]", "ts-sdk-client", 10).await?;
    let (x, y, width, height) = c.get_window_rect().await?;
    let (want_width, want_height, want_x, want_y) = WINDOW;
    ensure!(
        (width, height, x, y) == (want_width, want_height, want_x, want_y),
        "the window came back at {x},{y} {width}x{height}"
    );
    let shot = save_screenshot(c, "e2e-activity.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    Ok(())
}

/// The D-Bus name by which a running Toolgate is found by the next launch
/// (`tauri-plugin-single-instance`: the app's identifier and `.SingleInstance`).
const SINGLE_INSTANCE: &str = "dev.toolgate.desktop.SingleInstance";

/// Waits until no Toolgate holds its single-instance name on the session bus: a launch that
/// finds the name still held forwards its arguments to the old instance and exits.
pub(crate) async fn single_instance_released() -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                &format!("string:{SINGLE_INSTANCE}"),
            ])
            .output()
            .context("asking the session bus (dbus-send)")?;
        let reply = String::from_utf8_lossy(&out.stdout);
        if reply.contains("boolean false") {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "{SINGLE_INSTANCE} is still held 20 s after the app ended: {reply}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
