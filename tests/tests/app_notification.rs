//! The real built app, its window hidden (started as at login, `--hidden`), announces a request
//! that waits at its gate with a desktop notification that says what the approval card says, in
//! plain text. A connected client (the official TypeScript SDK, through `toolgate-app connect`)
//! calls the example server's `echo` with markup in its argument; the Notify call the app sends
//! on the session bus (`org.freedesktop.Notifications`) is read with `dbus-monitor`, so no
//! notification server is needed, and what any notification server would be handed is what is
//! checked.
//!
//! Run as the WebDriver suite is (the README's test command): the app built with `tauri build
//! --debug` (or `TOOLGATE_APP`), inside a D-Bus session (`dbus-run-session`).
#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use toolgate_tests::{app_binary, example_servers_dir, repo_root, AppHome};

/// A process of this test's, with its process group stopped when dropped (the app's servers
/// included).
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill")
            .args(["-TERM", "--", &group])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && matches!(self.0.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.wait();
    }
}

fn spawn(command: &mut Command) -> Result<Group> {
    Ok(Group(command.process_group(0).spawn()?))
}

/// What `dbus-monitor` printed of the Notify calls so far.
fn notify_calls(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

#[test]
fn a_request_waiting_while_the_window_is_hidden_is_announced_with_the_cards_facts() -> Result<()> {
    ensure!(
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
        "no session bus: run this test inside `dbus-run-session` (the README's test command does)"
    );
    let app = app_binary();
    // Dropped last: after the client, the app and the monitor have been stopped.
    let home = AppHome::new("notify");

    let log = home.join("notify.log");
    let _monitor = spawn(
        Command::new("dbus-monitor")
            .args([
                "--session",
                "type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
            ])
            .stdout(std::fs::File::create(&log)?)
            .stderr(Stdio::null()),
    )
    .context("starting dbus-monitor")?;

    let app_log = home.join("app.log");
    let _app = spawn(
        Command::new(&app)
            .arg("--hidden")
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            // No Ollama to find on a first run.
            .env("OLLAMA_HOST", "http://127.0.0.1:9")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&app_log)?),
    )
    .context("starting the app")?;

    // Markup a server or a model might put in a value: it must reach the notification as text.
    let message = "<b>bold</b> & <a href=\"https://evil.example/\">a link</a>";
    let data_dir = home.join("data/dev.toolgate.desktop");
    let client_log = home.join("client.log");
    let call = || -> Result<Group> {
        spawn(
            Command::new("node")
                .arg(repo_root().join("tests/clients/one_call.cjs"))
                .arg(example_servers_dir())
                .arg("echo")
                .arg(serde_json::json!({ "message": message }).to_string())
                .arg("--")
                .arg(&app)
                .args(["connect", "--no-start", "--wait", "60", "--data-dir"])
                .arg(&data_dir)
                .env("XDG_DATA_HOME", home.join("data"))
                .env("XDG_CONFIG_HOME", home.join("config"))
                .env("XDG_CACHE_HOME", home.join("cache"))
                .stdin(Stdio::null())
                .stdout(std::fs::File::create(&client_log)?)
                .stderr(
                    std::fs::File::options()
                        .append(true)
                        .create(true)
                        .open(&client_log)?,
                ),
        )
        .context("starting the TypeScript SDK client")
    };
    let mut client = call()?;

    let deadline = Instant::now() + Duration::from_secs(90);
    let calls = loop {
        let calls = notify_calls(&log);
        if calls.contains("Denied in") {
            // The whole call is printed at once; give the monitor a moment to finish writing.
            std::thread::sleep(Duration::from_millis(300));
            break notify_calls(&log);
        }
        // A call made before the example server was ready finds no such tool: call again.
        if matches!(client.0.try_wait(), Ok(Some(_))) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_secs(1));
            client = call()?;
        }
        if Instant::now() > deadline {
            bail!(
                "no notification in 90 s; the monitor saw:\n{calls}\nthe app said:\n{}\nthe client said:\n{}",
                std::fs::read_to_string(&app_log).unwrap_or_default(),
                std::fs::read_to_string(&client_log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };

    eprintln!("the app's Notify call:\n{calls}");
    // The Notify call's title and body, as `dbus-monitor` prints them (`string "…"`).
    for fact in [
        "Toolgate: Approve echo on Everything (example)?",
        "Asked by the connected app ts-sdk-client",
        "Echoes back the input string",
        "message: ‹b›bold‹/b› ＆ ‹a href=",
        "Why: asking because",
        "Denied in 10 min if not answered. Answer from the tray menu or open Toolgate.",
    ] {
        ensure!(
            calls.contains(fact),
            "the notification lacks {fact:?}:\n{calls}"
        );
    }
    // Nothing the client sent became markup, an entity or a link.
    for markup in ["<b>", "</a>", "<a href", "&"] {
        ensure!(
            !calls.contains(markup),
            "{markup:?} reached the notification:\n{calls}"
        );
    }

    Ok(())
}
