//! `toolgate chat` at a real terminal (util-linux `script` gives it one), typed at as a user
//! types, waiting for each prompt: Ctrl-C at a question stops the turn, and the next message
//! typed reaches the model (before, the withdrawn question kept reading and took it as its
//! answer); Ctrl-C at the prompt ends the chat (before, after the first turn it did nothing).
#![cfg(unix)]

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use toolgate_settings::{ProviderKind, ProviderSettings, Settings};
use toolgate_tests::{
    everything_server, fixtures::anthropic, temp_dir, Scripted, ScriptedProvider,
};

/// A command at a terminal of its own: what it shows, and keys typed when the test chooses.
struct AtATerminal {
    child: Child,
    keys: ChildStdin,
    screen: Arc<Mutex<Vec<u8>>>,
}

impl AtATerminal {
    fn start(command: &str) -> Self {
        let mut child = Command::new("script")
            .args(["-qec", command, "/dev/null"])
            .env("ANTHROPIC_API_KEY", "sk-ant-cli-test")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("script (util-linux) runs");
        let keys = child.stdin.take().expect("stdin");
        let mut out = child.stdout.take().expect("stdout");
        let screen = Arc::new(Mutex::new(Vec::new()));
        let shown = screen.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = out.read(&mut chunk) {
                shown.lock().expect("screen").extend_from_slice(&chunk[..n]);
            }
        });
        AtATerminal {
            child,
            keys,
            screen,
        }
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().expect("screen")).into_owned()
    }

    /// Waits until `text` has been shown `times` times in all.
    fn wait_for(&self, text: &str, times: usize) {
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

    fn type_keys(&mut self, keys: &[u8]) {
        self.keys.write_all(keys).expect("typed");
        self.keys.flush().expect("typed");
    }

    /// The command's exit code, once it has ended by itself (within 20 s).
    fn ended(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("script") {
                return (status.code(), self.screen());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "still running 20 s after the last key; the terminal shows:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for AtATerminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

const CTRL_C: &[u8] = b"\x03";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_question_without_taking_the_next_message_and_ends_the_chat_at_the_prompt() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(anthropic::tool_use(
            "toolu_ctrl_c",
            "echo",
            json!({"message": "never run"}),
        )),
        Scripted::ok(anthropic::text("The second message arrived.")),
    ])
    .await;
    let dir = temp_dir("chat-ctrl-c");
    let mut settings = Settings::first_run(everything_server("everything"));
    settings.provider = ProviderSettings {
        kind: ProviderKind::Anthropic,
        base_url: provider.anthropic_base_url(),
        model: "claude-test".into(),
    };
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
    let command = format!(
        "{} --data-dir {} chat",
        env!("CARGO_BIN_EXE_toolgate"),
        dir.display()
    );
    let mut terminal = AtATerminal::start(&command);

    terminal.wait_for("you> ", 1);
    terminal.type_keys(b"Please echo\n");
    terminal.wait_for("Allow? [y]es, [n]o, [a]lways, [e]dit", 1);
    // Ctrl-C at the question: the turn stops and the question is withdrawn.
    terminal.type_keys(CTRL_C);
    terminal.wait_for("you> ", 2);
    terminal.type_keys(b"the second message\n");
    terminal.wait_for("The second message arrived.", 1);
    let received = provider.received();
    assert_eq!(received.len(), 2, "{}", terminal.screen());
    let second = received[1].body["messages"].to_string();
    assert!(second.contains("the second message"), "{second}");
    // Ctrl-C at the prompt: the chat ends, its servers stopped as /exit stops them.
    terminal.wait_for("you> ", 3);
    terminal.type_keys(CTRL_C);
    let (code, screen) = terminal.ended();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        !screen.contains("Echo: never run"),
        "the stopped call never ran: {screen}"
    );
}
