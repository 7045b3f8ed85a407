//! The WebDriver test's steps on the window: click, type, wait for text, keep a screenshot.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fantoccini::{Client, Locator};
use toolgate_tests::repo_root;

pub async fn click(c: &Client, css: &str) -> Result<()> {
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(css))
        .await
        .with_context(|| format!("waiting for {css}"))?
        .click()
        .await
        .with_context(|| format!("clicking {css}"))?;
    Ok(())
}

pub async fn fill(c: &Client, css: &str, text: &str) -> Result<()> {
    let element = c
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(css))
        .await
        .with_context(|| format!("waiting for {css}"))?;
    element
        .clear()
        .await
        .with_context(|| format!("clearing {css}"))?;
    element
        .send_keys(text)
        .await
        .with_context(|| format!("typing into {css}"))?;
    Ok(())
}

/// Waits until the element's text contains `needle`, and returns the text.
pub async fn wait_text(c: &Client, css: &str, needle: &str, seconds: u64) -> Result<String> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Ok(elements) = c.find_all(Locator::Css(css)).await {
            for element in elements {
                last = element.text().await.unwrap_or_default();
                if last.contains(needle) {
                    return Ok(last);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    bail!("{css} never contained {needle:?}; last text: {last:?}")
}

pub async fn save_screenshot(c: &Client, name: &str) -> Result<PathBuf> {
    let dir = repo_root().join("artifacts");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(name);
    std::fs::write(&path, c.screenshot().await?)?;
    Ok(path)
}
