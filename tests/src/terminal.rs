//! Commands run in a real terminal (`script`, from util-linux), as a user at a terminal runs
//! them: typed at all at once ([`at_a_terminal`]), or key by key as the screen asks
//! ([`AtATerminal`]).

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The `script` command that runs the shell command line `command` in a terminal of its own,
/// its keys from stdin and its screen on stdout.
///
/// The shell `script` starts execs the command, so the command alone gets the terminal's
/// signals, as it does when a user's shell runs it in the foreground. Otherwise the result would
/// depend on `$SHELL`: bash execs a lone command by itself, but dash (`/bin/sh`, what `script`
/// uses when `$SHELL` is unset, as in CI) stays as its parent, takes Ctrl-C's SIGINT too, and
/// dies of it once the command ends, whatever the command did with it (exit code 130).
fn script(command: &str) -> Command {
    let mut script = Command::new("script");
    script
        .args(["-qec", &format!("exec {command}"), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    script
}

/// Runs the shell command line `command` (one command, which the shell execs) in a real
/// terminal, typing `typed`; `setup` adds what the command's environment needs. What the
/// terminal showed is the output's stdout.
pub fn at_a_terminal(
    command: &str,
    typed: &[u8],
    setup: impl FnOnce(&mut Command),
) -> std::process::Output {
    let mut script = script(command);
    setup(&mut script);
    let mut child = script.spawn().expect("script (util-linux) runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(typed)
        .expect("typed");
    child.wait_with_output().expect("the command ends")
}

/// A command in a real terminal, typed at when the test chooses: after what it waits for has
/// been shown, as a user types after reading the prompt. Killed when dropped.
pub struct AtATerminal {
    child: Child,
    keys: ChildStdin,
    screen: Arc<Mutex<Vec<u8>>>,
}

impl AtATerminal {
    /// Starts the shell command line `command` (one command, which the shell execs); `setup` adds
    /// what its environment needs.
    pub fn start(command: &str, setup: impl FnOnce(&mut Command)) -> Self {
        let mut script = script(command);
        script.stderr(Stdio::null());
        setup(&mut script);
        let mut child = script.spawn().expect("script (util-linux) runs");
        let keys = child.stdin.take().expect("stdin");
        let mut out = child.stdout.take().expect("stdout");
        let screen = Arc::new(Mutex::new(Vec::new()));
        let shown = screen.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = out.read(&mut chunk) {
                shown
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend_from_slice(&chunk[..n]);
            }
        });
        AtATerminal {
            child,
            keys,
            screen,
        }
    }

    /// Everything the terminal has shown so far.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }

    /// Waits until `text` has been shown `times` times in all (within 30 s, else panics with the
    /// screen).
    pub fn wait_for(&self, text: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.screen().matches(text).count() < times {
            assert!(
                Instant::now() < deadline,
                "{text:?} was not shown {times} time(s) within 30 s; the terminal shows:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys` (`b"\x03"` is Ctrl-C, which the terminal turns into SIGINT).
    pub fn type_keys(&mut self, keys: &[u8]) {
        self.keys.write_all(keys).expect("typed");
        self.keys.flush().expect("typed");
    }

    /// The command's exit code and the screen, once it has ended by itself (within 20 s, else
    /// panics with the screen).
    pub fn ended(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("script") {
                return (status.code(), self.screen());
            }
            assert!(
                Instant::now() < deadline,
                "still running 20 s after the last key; the terminal shows:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for AtATerminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
