//! What the WebDriver tests share: tauri-driver started for a data folder of the test's own, a
//! session on the app (the installed one, or a program that runs it), and the steps every
//! test takes (click, type, wait for text, screenshot).
#![allow(dead_code)]

use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
pub(crate) use toolgate_tests::app_binary;
use toolgate_tests::{free_port, repo_root};

/// tauri-driver, stopped with WebKitWebDriver when dropped.
pub(crate) struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        // tauri-driver runs WebKitWebDriver, which outlives it unless its process group goes too.
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// tauri-driver on a free port, for an app whose data folders are under `data_home` (its
/// `data`, `config`, `cache` and `home`).
pub(crate) fn start_driver(data_home: &Path, ollama: &str) -> Result<(Driver, u16)> {
    start_driver_with(data_home, ollama, &[])
}

/// [`start_driver`] with `envs` added to the environment the app inherits.
pub(crate) fn start_driver_with(
    data_home: &Path,
    ollama: &str,
    envs: &[(&str, &str)],
) -> Result<(Driver, u16)> {
    assert!(
        std::env::var_os("DISPLAY").is_some(),
        "no DISPLAY: run this test through the README's test command (it starts Xvfb)"
    );
    let (port, native) = (free_port(), free_port());
    let child = Command::new("tauri-driver")
        .args([
            "--port",
            &port.to_string(),
            "--native-port",
            &native.to_string(),
        ])
        // A fresh data folder makes this the app's first run; the keyring daemon is unaffected.
        .env("XDG_DATA_HOME", data_home.join("data"))
        .env("XDG_CONFIG_HOME", data_home.join("config"))
        .env("XDG_CACHE_HOME", data_home.join("cache"))
        // A home of its own too: the autostart entry goes to $HOME/.config/autostart.
        .env("HOME", data_home.join("home"))
        // The stand-in browser first, so a sign-in opens it.
        .env("PATH", toolgate_tests::oauth::path_with_browser())
        // The scripted provider is where Ollama would be: the first run looks there.
        .env("OLLAMA_HOST", ollama)
        .envs(envs.iter().copied())
        // Servers started without a folder of their own run here, where the set-up installed
        // the pinned npm servers: `npx -y @modelcontextprotocol/server-filesystem` (a
        // well-known server added in the test) then finds it without downloading it.
        .current_dir(toolgate_tests::example_servers_dir())
        .stdout(Stdio::null())
        // The app's own log goes here, to be scanned for secrets with its other files.
        .stderr(std::fs::File::create(data_home.join("app-stderr.log"))?)
        .process_group(0)
        .spawn()
        .context("starting tauri-driver (cargo install tauri-driver --locked)")?;
    let driver = Driver(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            bail!("tauri-driver did not listen on port {port}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok((driver, port))
}

/// The element `css` finds, waiting up to 20 s for it.
async fn element(c: &Client, css: &str) -> Result<fantoccini::elements::Element> {
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(css))
        .await
        .with_context(|| format!("waiting for {css}"))
}

pub(crate) async fn click(c: &Client, css: &str) -> Result<()> {
    // A screen still filling in (a card above loading its list) moves what is below it: a click
    // aimed before it settles lands elsewhere or is refused. So each try waits for the element to
    // stay put, and a refused click is tried again on the element found afresh.
    let mut tries = 0;
    loop {
        let element = element(c, css).await?;
        match click_when_still(c, &element).await {
            Ok(()) => return Ok(()),
            Err(e) if tries < 3 => {
                tries += 1;
                eprintln!("clicking {css} again ({e:#})");
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Err(e) => return Err(e.context(format!("clicking {css}"))),
        }
    }
}

/// Scrolls `element` into view (panes scroll on their own: the server list beside its detail),
/// waits up to 2 s until it is in the same place twice 100 ms apart, and clicks it.
async fn click_when_still(c: &Client, element: &fantoccini::elements::Element) -> Result<()> {
    let arg = vec![serde_json::to_value(element)?];
    c.execute(
        "arguments[0].scrollIntoView({block: 'center'})",
        arg.clone(),
    )
    .await
    .context("scrolling to it")?;
    let place =
        "const r = arguments[0].getBoundingClientRect(); return [r.x, r.y, r.width, r.height];";
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut last = c.execute(place, arg.clone()).await?;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = c.execute(place, arg.clone()).await?;
        if now == last {
            break;
        }
        last = now;
    }
    element.click().await?;
    Ok(())
}

pub(crate) async fn fill(c: &Client, css: &str, text: &str) -> Result<()> {
    let element = element(c, css).await?;
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

/// A server card's *Try*: picks `tool`, types `arguments`, calls it and waits for a result
/// holding `needle`. The arguments box is read back before the call (a box that re-rendered
/// while being typed into is typed again), and a failure says what the panel showed (the
/// call's error, or what was sent) rather than only that no result came.
pub(crate) async fn try_tool(
    c: &Client,
    card: &str,
    tool: &str,
    arguments: &str,
    needle: &str,
) -> Result<String> {
    click(c, &format!("{card} [data-testid=tool-{tool}]")).await?;
    let box_css = format!("{card} [data-testid=try-arguments]");
    for _ in 0..3 {
        fill(c, &box_css, arguments).await?;
        let typed = element(c, &box_css)
            .await?
            .prop("value")
            .await?
            .unwrap_or_default();
        if typed == arguments {
            break;
        }
        eprintln!("the arguments box held {typed:?} after typing; typing again");
    }
    click(c, &format!("{card} [data-testid=try-call]")).await?;
    let result = format!("{card} [data-testid=try-result]");
    match wait_text(c, &result, needle, 30).await {
        Ok(text) => Ok(text),
        Err(e) => {
            let panel = match c.find(Locator::Css(&format!("{card} .try"))).await {
                Ok(panel) => panel.text().await.unwrap_or_default(),
                Err(_) => "(no Try panel)".to_owned(),
            };
            bail!("{e}; the Try panel showed: {panel:?}")
        }
    }
}

/// Waits until the element's text contains `needle`, and returns the text.
pub(crate) async fn wait_text(c: &Client, css: &str, needle: &str, seconds: u64) -> Result<String> {
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

/// Waits until no element matches `css` (a dialog closed, say).
pub(crate) async fn wait_gone(c: &Client, css: &str, seconds: u64) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        if c.find_all(Locator::Css(css))
            .await
            .is_ok_and(|e| e.is_empty())
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    bail!("{css} was still there after {seconds} s")
}

pub(crate) async fn save_screenshot(c: &Client, name: &str) -> Result<PathBuf> {
    let path = repo_root().join("artifacts").join(name);
    std::fs::create_dir_all(path.parent().expect("a file in artifacts/"))?;
    // Two animation frames first, so what was just rendered has been painted.
    c.execute_async(
        "const done = arguments[arguments.length - 1];\n\
         requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
        vec![],
    )
    .await
    .context("waiting for a frame")?;
    std::fs::write(&path, c.screenshot().await?)?;
    Ok(path)
}

/// Presses a window-wide key (`Ctrl+K`, `Ctrl+N`) or Escape where the focus is.
pub(crate) async fn press(c: &Client, key: &str, ctrl: bool) -> Result<()> {
    c.execute(
        "const [key, ctrl] = arguments; \
         (document.activeElement || document.body).dispatchEvent(new KeyboardEvent('keydown', \
         { key, ctrlKey: ctrl, bubbles: true, cancelable: true }));",
        vec![key.into(), ctrl.into()],
    )
    .await
    .with_context(|| format!("pressing {key}"))?;
    Ok(())
}

/// A WebDriver session on the app, which starts it.
pub(crate) async fn open_session(port: u16) -> Result<Client> {
    open_session_of(port, &app_binary()).await
}

/// A WebDriver session on `application` (the app, or a program that runs it).
pub(crate) async fn open_session_of(port: u16, application: &Path) -> Result<Client> {
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), json!("wry"));
    caps.insert(
        "tauri:options".into(),
        json!({"application": application.to_string_lossy()}),
    );
    ClientBuilder::rustls()?
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .context("opening a WebDriver session on the app")
}
