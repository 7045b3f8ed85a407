//! The real built app asked to quit by a signal, as the session ending (SIGTERM) or Ctrl+C in
//! its terminal (SIGINT) asks, quits as the tray's Quit does: exit code 0, its server and its
//! WebKit processes gone, the gateway's socket removed. Before, a signal ended the process where
//! it stood: its exit steps (requests refused, servers stopped, the history committed, the
//! socket removed) never ran. A second request while it quits ends it at once (exit code 1),
//! still with nothing left running.
//!
//! Run as the WebDriver suite is (the README's test command): the app built with `tauri build
//! --debug` (or `TOOLGATE_APP`), inside a D-Bus session with a display.
#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use toolgate_settings::Settings;
use toolgate_tests::{
    app_binary, fault_server, processes_with, send_signal, wait_until_none, AppHome, ProcField,
};

/// The gateway's socket, from the app's log line saying where it listens (in the user's runtime
/// folder or the data folder).
fn socket_in(log: &str) -> Option<PathBuf> {
    let line = log
        .lines()
        .find(|l| l.contains("the gateway is listening"))?;
    let path = line.split_once("door=")?.1.trim();
    Some(PathBuf::from(path))
}

fn wait_for_exit(app: &mut Child, within: Duration) -> Result<Option<ExitStatus>> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(status) = app.try_wait()? {
            return Ok(Some(status));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(None)
}

/// The app started on `home`'s folders, its window hidden (as at login), in its own process
/// group, its log in `home/app.log`.
fn start_app(home: &AppHome) -> Result<Child> {
    Command::new(app_binary())
        .arg("--hidden")
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        // No Ollama to find on a first run.
        .env("OLLAMA_HOST", "http://127.0.0.1:9")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(home.join("app.log"))?)
        .spawn()
        .context("starting the app")
}

fn send(signal: &str, pid: u32) -> Result<()> {
    ensure!(send_signal(signal, pid), "kill -{signal} {pid} failed");
    Ok(())
}

/// Waits up to `within` for `ready`; else fails saying `what` did not happen, with the log.
fn wait_until(
    within: Duration,
    what: &str,
    said: impl Fn() -> String,
    ready: impl Fn() -> bool,
) -> Result<()> {
    let deadline = Instant::now() + within;
    while !ready() {
        if Instant::now() > deadline {
            bail!("{what} within {within:?}; the app said:\n{}", said());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Nothing the app started (its servers, WebKit's processes) outlives it.
fn nothing_left(home: &AppHome, after: &str) -> Result<()> {
    let left = tokio::runtime::Runtime::new()?.block_on(wait_until_none(10, || {
        processes_with(&home.to_string_lossy(), ProcField::Environ)
    }));
    ensure!(
        left.is_empty(),
        "processes outlived the app after {after}: {left:?}"
    );
    Ok(())
}

/// Starts the app with the example server, waits until the server runs and the gateway listens,
/// sends `signal`, and checks the app quit cleanly.
fn quits_on(signal: &str) -> Result<()> {
    let home = AppHome::new(&format!("quit-{}", signal.to_lowercase()));
    let log = home.join("app.log");
    let mut app = start_app(&home)?;
    let pid = app.id();
    let said = || std::fs::read_to_string(&log).unwrap_or_default();

    // Running: the example server (a child that is not WebKit's) and the gateway's socket.
    let deadline = Instant::now() + Duration::from_secs(90);
    let socket = loop {
        let server = processes_with(&home.to_string_lossy(), ProcField::Environ)
            .into_iter()
            .any(|p| {
                std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.contains("server-everything"))
            });
        match socket_in(&said()) {
            Some(socket) if server => break socket,
            _ if Instant::now() > deadline => {
                bail!(
                    "the app did not start its server and gateway in 90 s; it said:\n{}",
                    said()
                )
            }
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    };
    // Its log is a file: plain text, or the socket's path read from it would not be the path.
    ensure!(
        !said().contains('\u{1b}'),
        "the app's log, written to a file, carries terminal colour codes:\n{}",
        said()
    );
    let before = processes_with(&home.to_string_lossy(), ProcField::Environ);
    ensure!(
        before.len() >= 3,
        "expected the app, a WebKit process and the server, found {before:?}"
    );

    send(signal, pid)?;
    let Some(status) = wait_for_exit(&mut app, Duration::from_secs(30))? else {
        bail!(
            "the app was still running 30 s after SIG{signal}; it said:\n{}",
            said()
        );
    };
    ensure!(
        status.code() == Some(0),
        "after SIG{signal} the app ended with {status}, not by quitting (exit code 0); it said:\n{}",
        said()
    );
    ensure!(
        !socket.exists(),
        "the gateway's socket {} was left behind after SIG{signal}",
        socket.display()
    );
    nothing_left(&home, &format!("SIG{signal}"))?;
    ensure!(
        said().contains(&format!("SIG{signal} received: quitting")),
        "the app's log does not say why it quit:\n{}",
        said()
    );
    Ok(())
}

/// A second request while the app quits ends it at once, as a user pressing Ctrl+C again
/// expects: exit code 1, and still nothing left running. Its one server ignores stdin closing and
/// SIGTERM, so quitting waits the stop's two grace periods before it is killed: the second
/// request comes in that wait. The server goes with the app all the same (the kernel ends a
/// server whose Toolgate ended).
fn a_second_signal_ends_it_at_once() -> Result<()> {
    let home = AppHome::new("quit-twice");
    let data = home.join("data/dev.toolgate.desktop");
    std::fs::create_dir_all(&data)?;
    let settings = Settings::first_run(fault_server("stubborn", "stubborn"));
    toolgate_settings::file::save(&data.join("settings.json"), &settings)?;
    let log = home.join("app.log");
    let mut app = start_app(&home)?;
    let pid = app.id();
    let said = || std::fs::read_to_string(&log).unwrap_or_default();

    // The server runs and has answered its first list (its log says what it received).
    let server_log = data.join("logs/servers/stubborn.log");
    wait_until(
        Duration::from_secs(90),
        "the stubborn server did not answer its first list",
        said,
        || std::fs::read_to_string(&server_log).is_ok_and(|l| l.contains("recv tools/list")),
    )?;
    send("TERM", pid)?;
    wait_until(
        Duration::from_secs(10),
        "the app did not start quitting on SIGTERM",
        said,
        || said().contains("SIGTERM received: quitting"),
    )?;
    // At once: no pause needed for a second listener to be in place.
    ensure!(
        app.try_wait()?.is_none(),
        "the app ended before the second request, not held by its stubborn server; it said:\n{}",
        said()
    );
    send("INT", pid)?;
    let Some(status) = wait_for_exit(&mut app, Duration::from_secs(30))? else {
        bail!(
            "the app was still running 30 s after a second request; it said:\n{}",
            said()
        );
    };
    ensure!(
        status.code() == Some(1),
        "after a second request the app ended with {status}, not at once (exit code 1); it said:\n{}",
        said()
    );
    ensure!(
        said().contains("SIGINT again while quitting: ending now"),
        "the app's log does not say why it ended at once:\n{}",
        said()
    );
    nothing_left(&home, "a second request")
}

/// One app at a time: a second one in the same session would hand over to the first
/// (single instance), so the requests are tried in turn.
#[test]
fn a_signal_quits_the_app_as_the_trays_quit_does() -> Result<()> {
    quits_on("TERM")?;
    quits_on("INT")?;
    a_second_signal_ends_it_at_once()
}
