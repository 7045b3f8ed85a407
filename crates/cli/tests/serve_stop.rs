//! `toolgate serve` asked to stop twice, as a user pressing Ctrl-C again when the first did not
//! end it soon enough: its one server ignores stdin closing and SIGTERM, so stopping waits the
//! stop's two grace periods before it is killed. The second request ends `serve` at once, and
//! the server goes all the same (the kernel ends a server whose Toolgate ended). Before, the
//! second Ctrl-C did nothing: once Toolgate listened for it, it no longer ended the process.
// Signals and /proc: Linux only.
#![cfg(unix)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolgate_settings::Settings;
use toolgate_tests::{
    fault_server, is_alive, processes_with, send_signal, temp_dir, wait_until_none, ProcField,
};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// Waits up to `seconds` for `ready`, else fails with `what` and serve's log.
fn wait_until(seconds: u64, what: &str, said: impl Fn() -> String, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "{what} within {seconds} s; serve said:\n{}",
            said()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn a_second_ctrl_c_while_serve_stops_ends_it_at_once() {
    let dir = temp_dir("serve-twice");
    let settings = Settings::first_run(fault_server("stubborn", "stubborn"));
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
    let log = dir.join("serve.log");
    // The folder's path in serve's environment, which its servers inherit: how this test finds
    // its own processes among others'.
    let mark = dir.to_string_lossy().into_owned();
    let mut serve = Command::new(TOOLGATE)
        .arg("--data-dir")
        .arg(&*dir)
        .arg("serve")
        .env("TOOLGATE_TEST_FOLDER", &mark)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("serve starts");
    let pid = serve.id();
    let said = || std::fs::read_to_string(&log).unwrap_or_default();

    let server_log = dir.join("logs/servers/stubborn.log");
    wait_until(
        60,
        "the stubborn server did not answer its first list",
        said,
        || std::fs::read_to_string(&server_log).is_ok_and(|l| l.contains("recv tools/list")),
    );
    let faults = processes_with("fault_server.py", ProcField::Cmdline);
    let server: Vec<u32> = processes_with(&mark, ProcField::Environ)
        .into_iter()
        .filter(|p| faults.contains(p))
        .collect();
    assert_eq!(server.len(), 1, "one server process: {server:?}");

    assert!(send_signal("INT", pid), "kill -INT {pid}");
    wait_until(10, "serve did not start stopping on Ctrl-C", said, || {
        said().contains("SIGINT received, stopping")
    });
    assert!(
        serve.try_wait().expect("serve").is_none(),
        "serve ended before the second request, not held by its stubborn server; it said:\n{}",
        said()
    );
    // At once: no pause needed for a second listener to be in place.
    assert!(send_signal("INT", pid), "kill -INT {pid}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = serve.try_wait().expect("serve") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "serve still ran 20 s after a second Ctrl-C; it said:\n{}",
            said()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(1), "{status}; serve said:\n{}", said());
    assert!(
        said().contains("SIGINT again while stopping: ending now"),
        "serve said:\n{}",
        said()
    );
    let left = wait_until_none(10, || {
        server.iter().copied().filter(|p| is_alive(*p)).collect()
    })
    .await;
    assert!(left.is_empty(), "the server outlived serve: {left:?}");
    let ours = wait_until_none(10, || processes_with(&mark, ProcField::Environ)).await;
    assert!(ours.is_empty(), "processes outlived serve: {ours:?}");
}
