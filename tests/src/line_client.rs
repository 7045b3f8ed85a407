//! A host's side of a stdio MCP server, for the tests that act as one: the process started with
//! its stdin and stdout piped, JSON-RPC lines sent, answers waited for by id, and the process
//! killed however the test ends (a failed assertion must not leave it running).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A running stdio server and the answers it has sent.
pub struct LineClient {
    pub child: Child,
    stdin: Option<ChildStdin>,
    answers: mpsc::Receiver<Value>,
}

impl LineClient {
    /// Starts `command` with piped stdin and stdout (its stderr is left as the command has it).
    pub fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(message) = serde_json::from_str::<Value>(&line) {
                    let _ = sender.send(message);
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            answers,
        }
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .expect("write");
        stdin.flush().expect("flush");
    }

    /// The answer to request `id`, or `None` if none comes within `wait`.
    pub fn ask_within(
        &mut self,
        wait: Duration,
        id: u64,
        method: &str,
        params: Value,
    ) -> Option<Value> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + wait;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.answers.recv_timeout(left) {
                Ok(message) if message["id"] == id => return Some(message),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// Closes stdin, as a host does to stop its server, and waits up to `wait` for it to end.
    pub fn close_within(mut self, wait: Duration) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + wait;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not end with stdin"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for LineClient {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
