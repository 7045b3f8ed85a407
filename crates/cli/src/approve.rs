//! Answering the gate from a terminal: each waiting request is shown in full and answered with
//! yes, no, always, or edit (in `$EDITOR`). With no terminal, nobody can be asked: the host's
//! gate is built unattended, so every request the rules leave open is refused, saying why.

use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use toolgate_agent::{Decision, Gate, GateError, Lasting, PendingCall, Reach, RequestKind};

/// Why a call is denied when no terminal is attached.
/// What would let the call run is the gatekeeper's to say (`toolgate_agent::gatekeeper::remedy`):
/// it depends on why the call was asked.
pub const NO_TERMINAL: &str = "no terminal is attached to ask the user";

/// Whether the user can be asked: stdin and stderr are terminals.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks at the terminal about every request held at `gate`, until the task is dropped. Without
/// a terminal there is nothing to spawn: the gate is built unattended instead.
pub fn spawn(gate: Arc<Gate>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut changes = gate.subscribe();
        let mut asked: HashSet<String> = HashSet::new();
        loop {
            for call in gate.waiting() {
                if !asked.insert(call.id.clone()) {
                    continue;
                }
                let gate = gate.clone();
                // One question at a time: the terminal is read in a blocking thread.
                let _ = tokio::task::spawn_blocking(move || ask(&gate, &call)).await;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    })
}

fn read_line() -> String {
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    line.trim().to_lowercase()
}

/// Asks about one request until it is answered (or was answered elsewhere).
fn ask(gate: &Gate, call: &PendingCall) {
    let mut err = std::io::stderr();
    let pretty = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
    let _ = match call.request {
        RequestKind::ToolCall => match &call.client {
            Some(client) => writeln!(
                err,
                "\n{client} wants to run {} on {} with:\n{pretty}",
                call.tool, call.server_name
            ),
            None => writeln!(
                err,
                "\n{} on {} wants to run with:\n{pretty}",
                call.tool, call.server_name
            ),
        },
        RequestKind::Sampling => writeln!(
            err,
            "\n{} wants to use your model:\n{pretty}",
            call.server_name
        ),
        RequestKind::Elicitation => match &call.link {
            // A page to open: the domain first and alone on its line, then the whole address.
            Some(link) => writeln!(
                err,
                "\n{} asks you to open a page on\n\n    {}\n\n{}\nThe whole address: {}",
                call.server_name,
                link.domain,
                call.message.as_deref().unwrap_or_default(),
                link.url
            ),
            None => writeln!(
                err,
                "\n{} asks: {}\nThe answer starts as:\n{pretty}",
                call.server_name,
                call.message.as_deref().unwrap_or_default()
            ),
        },
        RequestKind::ToolResult => writeln!(
            err,
            "\nThe result of {} on {} ({}), held for your review:\n{}",
            call.tool,
            call.server_name,
            call.message.as_deref().unwrap_or_default(),
            call.arguments["text"].as_str().unwrap_or_default()
        ),
    };
    if !call.reason.is_empty() {
        let _ = writeln!(err, "({})", call.reason);
    }
    loop {
        let _ = match call.request {
            RequestKind::Elicitation if call.link.is_some() => {
                write!(err, "Open it in your browser? [o]pen, [n]o: ")
            }
            RequestKind::Elicitation => {
                write!(err, "Answer? [e]dit and send, [s]end as is, [n]o: ")
            }
            RequestKind::ToolResult => write!(
                err,
                "Let the model see it? [p]ass, [e]dit (to redact), [w]ithhold: "
            ),
            _ => write!(err, "Allow? [y]es, [n]o, [a]lways, [e]dit: "),
        };
        let _ = err.flush();
        let line = read_line();
        if call.link.is_some() {
            // Only an explicit "open" opens it; there is nothing to edit.
            let decision = match line.as_str() {
                "o" | "open" => Decision::Approve,
                "n" | "no" => Decision::Deny {
                    reason: Some("not opened".to_owned()),
                },
                _ => continue,
            };
            let _ = gate.answer(&call.id, decision);
            return;
        }
        if call.request == RequestKind::ToolResult {
            let decision = match line.as_str() {
                "p" | "pass" | "y" | "yes" => Decision::Approve,
                "w" | "withhold" | "n" | "no" => Decision::Deny {
                    reason: Some("withheld at the prompt".to_owned()),
                },
                "e" | "edit" => {
                    match edit_text(call.arguments["text"].as_str().unwrap_or_default()) {
                        Ok(text) => Decision::ApproveEdited {
                            arguments: serde_json::json!({ "text": text }),
                        },
                        Err(problem) => {
                            let _ = writeln!(err, "{problem}");
                            continue;
                        }
                    }
                }
                _ => continue,
            };
            match gate.answer(&call.id, decision) {
                Ok(()) | Err(GateError::NotPending) => return,
                Err(problem) => {
                    let _ = writeln!(err, "{problem}");
                    continue;
                }
            }
        }
        let decision = match line.as_str() {
            "y" | "yes" | "s" | "send" => Decision::Approve,
            "a" | "always" if call.request != RequestKind::Elicitation => Decision::Allow {
                reach: if call.request == RequestKind::ToolCall {
                    Reach::Tool
                } else {
                    Reach::Server
                },
                lasting: Lasting::Always,
            },
            "n" | "no" => Decision::Deny {
                reason: Some("denied at the prompt".to_owned()),
            },
            "e" | "edit" => match edit(&call.arguments) {
                Ok(arguments) => Decision::ApproveEdited { arguments },
                Err(problem) => {
                    let _ = writeln!(err, "{problem}");
                    continue;
                }
            },
            _ => continue,
        };
        match gate.answer(&call.id, decision) {
            Ok(()) | Err(GateError::NotPending) => return,
            Err(problem) => {
                let _ = writeln!(err, "{problem}");
            }
        }
    }
}

/// Opens the arguments in `$VISUAL` / `$EDITOR` (else `vi`) and reads them back.
fn edit(arguments: &serde_json::Value) -> Result<serde_json::Value, String> {
    let text = serde_json::to_string_pretty(arguments).unwrap_or_default();
    let edited = in_editor(&text, "json")?;
    serde_json::from_str(&edited).map_err(|e| format!("the edited arguments are not JSON: {e}"))
}

/// Creates `path` (it must not exist) readable by the user only, holding `text`.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// Opens a result's text in the editor, to redact it, and reads it back.
fn edit_text(text: &str) -> Result<String, String> {
    in_editor(text, "txt")
}

/// Writes `text` to a temporary file only the user can read (arguments and results may hold
/// secrets), opens it in `$VISUAL` / `$EDITOR` (else `vi`), and returns what was saved; the
/// file is removed either way.
fn in_editor(text: &str, extension: &str) -> Result<String, String> {
    let path: PathBuf = std::env::temp_dir().join(format!(
        "toolgate-edit-{}.{extension}",
        uuid::Uuid::new_v4()
    ));
    write_private(&path, text).map_err(|e| format!("could not write {}: {e}", path.display()))?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_owned());
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("{editor} \"$1\""), "sh"])
        .arg(&path)
        .status()
        .map_err(|e| format!("could not start the editor {editor}: {e}"));
    let edited = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    if !status?.success() {
        return Err(format!("the editor {editor} failed; nothing was changed"));
    }
    edited.map_err(|e| format!("could not read what was edited: {e}"))
}
