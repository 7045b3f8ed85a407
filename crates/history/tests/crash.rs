//! A message that `append` returned for survives the app being killed.
//!
//! The test runs its own binary again as a child (only the ignored test `crash_child`, told
//! what to do through environment variables), waits until the child says it has appended, kills
//! it with SIGKILL (no destructors, no checkpoint, no clean close), and then opens the file.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::json;
use toolgate_history::{History, StoredMessage};

const DB_VAR: &str = "TOOLGATE_HISTORY_CRASH_DB";
const CONV_VAR: &str = "TOOLGATE_HISTORY_CRASH_CONVERSATION";
const N: i64 = 20;

fn message(i: i64) -> StoredMessage {
    StoredMessage {
        role: "user".into(),
        body: json!({ "role": "user", "text": format!("message {i}") }),
        created_at: i,
    }
}

#[test]
fn a_killed_process_loses_no_appended_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("history.db");
    let conv = History::open(&db)
        .expect("open")
        .create("crash")
        .expect("create")
        .id;

    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["crash_child", "--exact", "--ignored", "--nocapture"])
        .env(DB_VAR, &db)
        .env(CONV_VAR, &conv)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("child stdout");
    let said_appended = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        // `ends_with`: the test harness may print "test crash_child ... " on the same line.
        .any(|line| line.trim_end().ends_with("appended"));
    // `kill` is SIGKILL on Unix: the child gets no chance to close anything.
    child.kill().expect("kill child");
    child.wait().expect("reap child");
    assert!(said_appended, "the child never reported its appends");

    let history = History::open(&db).expect("open after the crash");
    let messages = history.messages(&conv).expect("messages");
    assert!(messages.len() as i64 >= N, "only {} of {N}", messages.len());
    // The child kept appending until it was killed: whatever made it in is whole and in order.
    for (i, got) in messages.iter().enumerate() {
        assert_eq!(*got, message(i as i64 + 1));
    }
}

/// The child's half: appends `N` messages, says so, and goes on appending until killed.
#[test]
#[ignore = "run by a_killed_process_loses_no_appended_message as its child process"]
fn crash_child() {
    let (Some(db), Some(conv)) = (std::env::var_os(DB_VAR), std::env::var(CONV_VAR).ok()) else {
        return;
    };
    let history = History::open(db.as_ref()).expect("child open");
    for i in 1..=N {
        history.append(&conv, &message(i)).expect("child append");
    }
    println!("appended");
    for i in N + 1.. {
        history.append(&conv, &message(i)).expect("child append");
    }
}
