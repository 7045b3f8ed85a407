//! Signing in to a remote server from the window, for the WebDriver test.

use std::process::Command;

use anyhow::{Context, Result};
use fantoccini::Client;

use super::{click, fill, save_screenshot, try_tool, wait_gone, wait_text};

/// A remote server that asks for OAuth, added with the form: "Sign in required", Sign in (the
/// stand-in browser goes through the authorization server's login and consent), "Signed in",
/// and a tool call that runs. Returns the access and refresh tokens, read from the keychain, for
/// the scans that follow.
pub(super) async fn signs_in_to_a_remote_server(
    c: &Client,
    remote: &toolgate_tests::oauth::OAuthServers,
) -> Result<Vec<String>> {
    click(c, "[data-testid=tab-servers]").await?;
    click(c, "[data-testid=add-server-button]").await?;
    click(c, "[data-testid=add-tab-form]").await?;
    fill(c, "#add-name", "Remote").await?;
    click(c, "#add-kind option[value=http]").await?;
    fill(c, "#add-url", &remote.url).await?;
    click(c, "[data-testid=add-check]").await?;
    click(c, "[data-testid=add-confirm]").await?;
    // Added (waiting for a sign-in is no failed start): the dialog closes, the server is listed.
    wait_gone(c, "[data-testid=add-server-close]", 30)
        .await
        .context("the dialog closed once the server was added")?;
    click(c, "[data-testid=server-row-remote]").await?;
    let card = "[data-testid=server-remote]";
    wait_text(
        c,
        &format!("{card} [data-testid=sign-in-state]"),
        "Sign in required",
        30,
    )
    .await?;
    click(c, &format!("{card} [data-testid=sign-in-button]")).await?;
    wait_text(
        c,
        &format!("{card} [data-testid=sign-in-state]"),
        "Signed in",
        60,
    )
    .await?;
    wait_text(
        c,
        &format!("{card} [data-testid=server-status]"),
        "ready",
        30,
    )
    .await?;
    try_tool(
        c,
        card,
        "echo",
        r#"{"message": "signed in from the window"}"#,
        "Echo: signed in from the window",
    )
    .await?;
    // The card's sign-in state in view (the detail pane scrolls on its own).
    c.execute(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'start'})",
        vec![serde_json::json!(format!(
            "{card} [data-testid=sign-in-state]"
        ))],
    )
    .await?;
    let shot = save_screenshot(c, "e2e-sign-in.png").await?;
    eprintln!("screenshot saved: {}", shot.display());
    anyhow::ensure!(
        remote.calls().len() == 1,
        "the call reached the server with a token"
    );
    let item = Command::new("secret-tool")
        .args(["lookup", "service", "toolgate", "username"])
        .arg(format!("oauth:remote:{}", remote.issuer))
        .output()
        .context("secret-tool")?;
    let item: serde_json::Value =
        serde_json::from_slice(&item.stdout).context("the sign-in is in the keychain")?;
    let tokens: Vec<String> = ["access_token", "refresh_token"]
        .iter()
        .filter_map(|t| {
            item["credentials"]["token_response"][t]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    anyhow::ensure!(tokens.len() == 2, "both tokens are in the keychain");
    Ok(tokens)
}
