//! The whole app's memory after a walk through every screen (issue 40): Toolgate's release app,
//! started by `tauri-driver` on a fresh data folder with the five servers, is taken through every
//! screen and section as a user would click them (each server's card, Activity, the provider,
//! every settings section, the palette, the Add server dialog, back to the chat), then left idle
//! [`SETTLE`] and measured as the idle app is. The smallest Tauri app is started by
//! the same driver and measured idle, so both carry what WebDriver's automation adds.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use fantoccini::{Client, Locator};
use toolgate_settings::ServerConfig;
use toolgate_tests::{processes_with, ProcField};

use crate::app::{self, AppMemory, SETTLE};
use crate::webdriver::{
    click, open_session_of, press, start_driver, start_driver_with, wait_gone, wait_text,
};

/// The app's main process: the one running `binary` whose environment names `dir`.
fn main_process(binary: &Path, dir: &Path) -> Result<u32> {
    let name = binary
        .file_name()
        .and_then(|n| n.to_str())
        .context("the binary's name")?;
    for _ in 0..200 {
        let ours = processes_with(&dir.to_string_lossy(), ProcField::Environ);
        if let Some(pid) = processes_with(name, ProcField::Cmdline)
            .into_iter()
            .find(|p| ours.contains(p))
        {
            return Ok(pid);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    anyhow::bail!("no {name} process started for {}", dir.display())
}

/// Every screen and section, clicked as a user would.
async fn walk(c: &Client) -> Result<()> {
    click(c, "[data-testid=tab-servers]").await?;
    let rows = c
        .find_all(Locator::Css("[data-testid^=server-row-]"))
        .await?
        .len();
    for i in 0..rows {
        let row = c
            .find_all(Locator::Css("[data-testid^=server-row-]"))
            .await?
            .into_iter()
            .nth(i)
            .context("a server's row")?;
        row.click().await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    click(c, "[data-testid=add-server-button]").await?;
    wait_text(c, "[data-testid=add-server-dialog]", "", 5).await?;
    click(c, "[data-testid=add-server-close]").await?;
    wait_gone(c, "[data-testid=add-server-dialog]", 5).await?;
    click(c, "[data-testid=tab-activity]").await?;
    wait_text(c, "[data-testid=audit-log]", "", 10).await?;
    click(c, "[data-testid=tab-provider]").await?;
    wait_text(c, "#key-status", "", 10).await?;
    click(c, "[data-testid=tab-settings]").await?;
    for section in ["general", "tools", "secrets", "import", "diagnostics"] {
        click(c, &format!("[data-testid=settings-{section}]")).await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    click(c, "[data-testid=tab-chat]").await?;
    press(c, "k", true).await?;
    wait_text(c, "[data-testid=command-palette]", "", 5).await?;
    press(c, "Escape", false).await?;
    wait_gone(c, "[data-testid=command-palette]", 5).await?;
    Ok(())
}

/// Toolgate's app with `servers`, after the walk.
pub async fn toolgate(binary: &Path, dir: &Path, servers: Vec<ServerConfig>) -> Result<AppMemory> {
    let count = servers.len();
    app::data_folder(dir, servers);
    std::fs::create_dir_all(dir.join("home"))?;
    // No model server anywhere: the first run finds none.
    let (driver, port) = start_driver(dir, "127.0.0.1:9")?;
    let c = open_session_of(port, binary).await?;
    let pid = main_process(binary, dir)?;
    for _ in 0..300 {
        if app::servers_of(pid) >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let walked = walk(&c).await;
    tokio::time::sleep(SETTLE).await;
    let memory = app::snapshot(pid);
    let _ = c.close().await;
    drop(driver);
    walked.context("the walk through every screen")?;
    anyhow::ensure!(
        memory.webkit_processes > 0,
        "no WebKit process was measured"
    );
    Ok(memory)
}

/// The smallest Tauri app, started by the same driver, idle.
pub async fn minimal(binary: &Path, dir: &Path, envs: &[(&str, &str)]) -> Result<AppMemory> {
    std::fs::create_dir_all(dir.join("home"))?;
    let (driver, port) = start_driver_with(dir, "127.0.0.1:9", envs)?;
    let c = open_session_of(port, binary).await?;
    let pid = main_process(binary, dir)?;
    tokio::time::sleep(SETTLE).await;
    let memory = app::snapshot(pid);
    let _ = c.close().await;
    drop(driver);
    anyhow::ensure!(
        memory.webkit_processes > 0,
        "no WebKit process was measured"
    );
    Ok(memory)
}
