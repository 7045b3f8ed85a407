//! The MCP Apps step of the WebDriver test: the example app server from npm is imported, the
//! model's call to its tool is approved, and the app appears under the call in its sandboxed
//! frame; inside it, the app's own button makes a `tools/call` that waits at the gate as the
//! app's, is approved in the window, and the app shows the server's answer.

use std::time::Duration;

use anyhow::{Context, Result};
use fantoccini::{Client, Locator};
use serde_json::json;

use super::{click, save_screenshot, send_and_wait_for_approval, wait_text};

/// The model's call of the app's tool, then its answer: pushed after the scenario's replies.
pub fn replies() -> Vec<toolgate_tests::Scripted> {
    use toolgate_tests::fixtures::anthropic;
    vec![
        toolgate_tests::Scripted::ok(anthropic::tool_use("toolu_e2e_app", "get-time", json!({}))),
        toolgate_tests::Scripted::ok(anthropic::text("The time is shown in the app.")),
    ]
}

/// Waits for an element inside the app's frame.
async fn in_app(c: &Client, css: &str) -> Result<fantoccini::elements::Element> {
    c.enter_parent_frame().await.ok();
    let frame = c
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css("[data-testid=mcp-app]"))
        .await
        .context("the app's frame")?;
    anyhow::ensure!(
        frame.attr("sandbox").await?.as_deref() == Some("allow-scripts"),
        "the frame is sandboxed with scripts only"
    );
    // Brought into view as a user scrolls to it: the chat's message list is a scroll area of
    // its own, and WebKit's driver does not scroll a parent's scroll area for an element inside
    // a frame, so a click would land on whatever covers the spot.
    c.execute(
        "arguments[0].scrollIntoView({block: 'center'})",
        vec![serde_json::to_value(&frame)?],
    )
    .await
    .context("scrolling the app's frame into view")?;
    frame
        .enter_frame()
        .await
        .context("entering the app's frame")?;
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(css))
        .await
        .with_context(|| format!("{css} in the app"))
}

pub async fn an_app_shows_its_result_and_its_calls_pass_the_gate(c: &Client) -> Result<()> {
    let entry = toolgate_tests::example_servers_dir()
        .join("node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
    click(c, "[data-testid=tab-servers]").await?;
    click(c, "[data-testid=add-server-button]").await?;
    click(c, "[data-testid=add-tab-json]").await?;
    let snippet = json!({"mcpServers": {"apps": {
        "command": "node", "args": [entry.to_string_lossy(), "--stdio"]}}});
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css("#import-text"))
        .await?
        .send_keys(&snippet.to_string())
        .await
        .context("pasting the snippet")?;
    click(c, "[data-testid=import-preview]").await?;
    wait_text(c, "[data-testid=import-report]", "Add apps", 10).await?;
    click(c, "[data-testid=import-confirm]").await?;
    wait_text(c, "[data-testid=import-done]", "Imported apps", 10).await?;
    click(c, "[data-testid=add-server-close]").await?;
    click(c, "[data-testid=server-row-apps]").await?;
    wait_text(
        c,
        "[data-testid=server-apps] [data-testid=server-status]",
        "ready",
        60,
    )
    .await?;

    click(c, "[data-testid=tab-chat]").await?;
    send_and_wait_for_approval(c, "What time is it?", "{}").await?;
    click(c, "[data-testid=approve]").await?;
    wait_text(
        c,
        "[data-testid=assistant-message]",
        "The time is shown in the app.",
        20,
    )
    .await?;
    // The app runs in its frame: its own button calls the server through Toolgate. The frame
    // has none of the window's powers: no Tauri internals, no parent document, no storage.
    let button = in_app(c, "#get-time-btn").await?;
    let reach = c
        .execute(
            "let parent = 'blocked'; try { parent = typeof window.parent.document; } catch (e) {} \
             let storage = 'blocked'; try { storage = typeof window.localStorage; } catch (e) {} \
             return [typeof window.__TAURI_INTERNALS__, typeof window.__TAURI__, parent, storage, String(window.origin)].join(',');",
            vec![],
        )
        .await?;
    anyhow::ensure!(
        reach.as_str() == Some("undefined,undefined,blocked,blocked,null"),
        "the app's frame reaches more than it should: {reach}"
    );
    button.click().await?;
    c.enter_parent_frame().await?;
    wait_text(
        c,
        "[data-testid=server-requests] [data-testid=approval-client]",
        "app",
        20,
    )
    .await?;
    wait_text(
        c,
        "[data-testid=server-requests] [data-testid=approval-tool]",
        "get-time",
        5,
    )
    .await?;
    click(c, "[data-testid=server-requests] [data-testid=approve]").await?;
    let time = in_app(c, "#server-time").await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let shown = time.text().await.unwrap_or_default();
        if shown.contains('T') && shown.chars().filter(char::is_ascii_digit).count() >= 8 {
            break;
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "the app never showed the server's time: {shown:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    c.enter_parent_frame().await?;
    let shot = save_screenshot(c, "e2e-app.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    Ok(())
}
