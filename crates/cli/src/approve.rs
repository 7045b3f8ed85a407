//! Answering the gate from a terminal: each waiting request is shown in full and answered with
//! yes, no, always (unless no rule could let it run), or edit (in `$EDITOR`). With no terminal, nobody can be asked: the host's
//! gate is built unattended, so every request the rules leave open is refused, saying why.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use toolgate_agent::{Decision, GateError, Lasting, PendingCall, Reach, RequestKind};
use toolgate_host::Approvals;

use crate::screen;

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
pub fn spawn(gate: Approvals) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut changes = gate.changes();
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

/// The user's answer to `id`, or `None` once it is no longer asked (answered elsewhere, or
/// withdrawn when the turn was stopped): the next line typed is then not taken for it. At the end
/// of input the question is refused, saying so.
fn read_line(gate: &Approvals, id: &str) -> Option<String> {
    let asked = || gate.waiting().iter().any(|c| c.id == id);
    match crate::terminal::read_line(asked) {
        Some(line) => Some(line.trim().to_lowercase()),
        None => {
            let _ = gate.answer(
                id,
                Decision::Deny {
                    reason: Some("no answer: the terminal's input ended".to_owned()),
                },
            );
            None
        }
    }
}

/// Longest name, reason or domain shown on one line.
const NAME_MAX: usize = 80;
/// Longest block (arguments, a message, a result under review) shown before the question.
const BLOCK_MAX: usize = 20_000;

/// Who asks and what, in one line of Toolgate's own, every part from outside escaped and bounded
/// ([`crate::screen`]): printed above what the request carries and again at the question, so the
/// real server and tool are on screen when the user answers, however long the block between.
fn who_and_what(call: &PendingCall) -> String {
    let server = screen::line(&call.server_name, NAME_MAX);
    let tool = screen::line(&call.tool, NAME_MAX);
    match (call.request, &call.client) {
        (RequestKind::ToolCall, Some(client)) => format!(
            "{} wants to run {tool} on {server}",
            screen::line(client, NAME_MAX)
        ),
        (RequestKind::ToolCall, None) => format!("{tool} on {server} wants to run"),
        (RequestKind::Sampling, _) => format!("{server} wants to use your model"),
        (RequestKind::Elicitation, _) if call.link.is_some() => {
            format!("{server} asks you to open a page")
        }
        (RequestKind::Elicitation, _) => format!("{server} asks you a question"),
        (RequestKind::ToolResult, _) => format!("The result of {tool} on {server}"),
    }
}

/// Asks about one request until it is answered (or was answered elsewhere). Everything the
/// server or model said is printed through [`crate::screen`]: it cannot draw on the terminal.
fn ask(gate: &Approvals, call: &PendingCall) {
    let mut err = std::io::stderr();
    let pretty = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
    let arguments = screen::block(&pretty, BLOCK_MAX);
    let message = screen::block(call.message.as_deref().unwrap_or_default(), BLOCK_MAX);
    let who = who_and_what(call);
    let _ = match call.request {
        RequestKind::ToolCall => writeln!(err, "\n{who} with:\n{arguments}"),
        RequestKind::Sampling => writeln!(err, "\n{who}:\n{arguments}"),
        RequestKind::Elicitation => match &call.link {
            // A page to open: the domain first and alone on its line, then the whole address.
            Some(link) => writeln!(
                err,
                "\n{who} on\n\n    {}\n\n{message}\nThe whole address: {}",
                screen::line(&link.domain, NAME_MAX),
                screen::line(&link.url, BLOCK_MAX)
            ),
            None => writeln!(
                err,
                "\n{who}:\n{message}\nThe answer starts as:\n{arguments}"
            ),
        },
        RequestKind::ToolResult => writeln!(
            err,
            "\n{who} ({}), held for your review:\n{}",
            screen::line(call.message.as_deref().unwrap_or_default(), NAME_MAX),
            screen::block(
                call.arguments["text"].as_str().unwrap_or_default(),
                BLOCK_MAX
            )
        ),
    };
    if !call.reason.is_empty() {
        let _ = writeln!(err, "({})", screen::line(&call.reason, BLOCK_MAX));
    }
    loop {
        let _ = match call.request {
            RequestKind::Elicitation if call.link.is_some() => {
                write!(err, "{who}. Open it in your browser? [o]pen, [n]o: ")
            }
            RequestKind::Elicitation => {
                write!(err, "{who}. Answer? [e]dit and send, [s]end as is, [n]o: ")
            }
            RequestKind::ToolResult => write!(
                err,
                "{who}. Let the model see it? [p]ass, [e]dit (to redact), [w]ithhold: "
            ),
            // No rule would change the outcome of a call held for what it carries.
            _ if call.beyond_rules => write!(
                err,
                "{who}. No rule can let it run without asking. Allow this once? [y]es, [n]o, [e]dit: "
            ),
            _ => write!(err, "{who}. Allow? [y]es, [n]o, [a]lways, [e]dit: "),
        };
        let _ = err.flush();
        let Some(line) = read_line(gate, &call.id) else {
            let _ = writeln!(err);
            return;
        };
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
            "a" | "always" if call.beyond_rules => {
                let _ = writeln!(
                    err,
                    "An always-allow rule would not let such a call run: answer y or n."
                );
                continue;
            }
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
