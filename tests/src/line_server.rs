//! The stdio loop of the Rust test servers (`bench-echo-server`, `toolgate-test-server`): one
//! JSON-RPC message a line on stdin, each request answered on stdout as soon as it is read;
//! notifications, responses and lines that are not JSON get no answer.

use std::io::{BufRead, Write};

use serde_json::{json, Value};

/// A request's result, or its JSON-RPC error (code and message).
pub type Answer = Result<Value, (i64, String)>;

/// Serves stdin until it ends. `answer` gets each request's method and params; an `Err` from it
/// stops the server (an I/O failure of its own, such as a log it must write).
pub fn serve(
    mut answer: impl FnMut(&str, &Value) -> std::io::Result<Answer>,
) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(message) = serde_json::from_str::<Value>(&line?) else {
            continue;
        };
        // Notifications (no id) and responses (no method) need no answer.
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            continue;
        };
        let reply = match answer(method, &message["params"])? {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, text)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}})
            }
        };
        serde_json::to_writer(&mut stdout, &reply)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
    }
    Ok(())
}
