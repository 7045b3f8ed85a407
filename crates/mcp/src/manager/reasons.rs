//! Why a start failed, in words for the user: rmcp's handshake errors told by what the connection
//! underneath says (connection refused, broken pipe, an HTTP status), never by type names; a
//! process's exit and last lines of output; URLs without their secrets.

use rmcp::service::ClientInitializeError;

use crate::logs::ServerLog;

/// The reason of a start cut short by a stop, which needs no last words.
pub(super) const STOPPED: &str = "stopped while starting";

/// A URL fit for an error message: without user and password or query, which may hold secrets.
pub(super) fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            let had_query = parsed.query().is_some();
            parsed.set_query(None);
            parsed.set_fragment(None);
            if had_query {
                format!("{parsed}?…")
            } else {
                parsed.to_string()
            }
        }
        Err(_) => "the server's URL".to_owned(),
    }
}

/// Why a handshake failed, in words: what the connection's underlying error says (connection
/// refused, broken pipe, an HTTP status), never rmcp's transport type names. `url` is the
/// redacted address of a remote server; `None` for a process, whose exit code and last words
/// [`with_last_words`] adds.
pub(super) fn handshake_problem(error: &ClientInitializeError, url: Option<&str>) -> String {
    let cause = match error {
        ClientInitializeError::TransportError { error, .. } => transport_problem(&*error.error),
        ClientInitializeError::ConnectionClosed(_) => "the connection closed".to_owned(),
        ClientInitializeError::JsonRpcError(data) => {
            format!(
                "the server answered with an error: {}",
                short(&data.message)
            )
        }
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => error.to_string(),
        other => format!(
            "its answer was not an MCP handshake ({})",
            short(&other.to_string())
        ),
    };
    match url {
        Some(url) => format!("connecting to {url} failed: {cause}"),
        None => format!("the server did not finish the MCP handshake: {cause}"),
    }
}

/// The most telling words in an error chain: an I/O error's kind (refused, reset, broken pipe),
/// what reqwest says of the request, or else the innermost message.
fn transport_problem(error: &(dyn std::error::Error + 'static)) -> String {
    type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
    type Quit = rmcp::transport::worker::WorkerQuitReason<HttpError>;
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut innermost = error.to_string();
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return io_problem(io);
        }
        // rmcp keeps the HTTP client's error out of the `source` chain: step into it by hand.
        let next: Option<&(dyn std::error::Error + 'static)> = match e.downcast_ref::<Quit>() {
            Some(rmcp::transport::worker::WorkerQuitReason::Fatal { error, .. }) => Some(error),
            _ => match e.downcast_ref::<HttpError>() {
                Some(HttpError::Client(client)) => Some(client),
                Some(HttpError::Io(io)) => return io_problem(io),
                _ => None,
            },
        };
        if let Some(request) = e.downcast_ref::<reqwest::Error>() {
            if request.is_timeout() {
                return "the request timed out".to_owned();
            }
            if let Some(status) = request.status() {
                return format!("the server answered HTTP {status}");
            }
        }
        innermost = e.to_string();
        current = next.or_else(|| e.source());
    }
    short(&innermost)
}

fn io_problem(io: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match io.kind() {
        ErrorKind::ConnectionRefused => {
            "connection refused: nothing is listening there (is the server running?)".to_owned()
        }
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => {
            "the connection was reset".to_owned()
        }
        ErrorKind::BrokenPipe => "the server closed its input (broken pipe)".to_owned(),
        ErrorKind::UnexpectedEof => "the connection closed".to_owned(),
        ErrorKind::TimedOut => "the connection timed out".to_owned(),
        _ => io.to_string(),
    }
}

/// At most 200 characters of a message that may carry a whole server reply.
fn short(text: &str) -> String {
    if text.chars().count() <= 200 {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(200).collect::<String>())
    }
}

/// Adds how the process ended and its last lines of output to a failure reason.
pub(super) fn with_last_words(reason: String, exit: Option<String>, log: &ServerLog) -> String {
    let mut reason = reason;
    if reason == STOPPED {
        return reason;
    }
    if let Some(exit) = exit {
        if !reason.contains(&exit) {
            reason = format!("{reason} ({exit})");
        }
    }
    let tail = log.tail(5);
    if tail.is_empty() {
        reason
    } else {
        format!("{reason}; its last output: {}", tail.join(" | "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_messages_keep_no_credentials() {
        assert_eq!(
            redact_url("https://user:pw@mcp.example.com/mcp?api_key=sk-1#x"),
            "https://mcp.example.com/mcp?…"
        );
        assert_eq!(redact_url("not a url sk-1"), "the server's URL");
    }
}
