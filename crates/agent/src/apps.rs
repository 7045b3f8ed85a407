//! MCP Apps (the `io.modelcontextprotocol/ui` extension): a tool whose definition links a
//! `ui://` resource has its result shown by that resource, an HTML app, in the window.
//!
//! What this module decides, so the window only renders:
//! - **Which document.** Only a `ui://` resource of the server whose tool ran, of the app MIME
//!   type, as text, at most [`MAX_APP_BYTES`].
//! - **Its Content Security Policy**, built from what the resource declares
//!   (`_meta.ui.csp`) and nothing looser: no network, no nested frame, no other base, unless a
//!   declared origin allows it; a declared value that is not a plain origin is dropped, so a
//!   server cannot smuggle a keyword (`'unsafe-eval'`, `*`) or another directive in.
//! - **What the app may ask of the host**: calling its own server's tools, each through the
//!   same gate, rules and audit as a model's call ([`crate::Agent::call_for_app`]), and reading
//!   its own server's resources. Nothing else reaches the backend.
//!
//! The window frames the document sandboxed without same-origin (an opaque origin: no access to
//! the window, its storage or its commands), with no top navigation and no pop-ups, at a
//! bounded size.

use serde::Serialize;
use serde_json::Value;
use toolgate_mcp::{McpError, ServerManager, APP_MIME_TYPE};

/// The largest app document Toolgate shows.
pub const MAX_APP_BYTES: usize = 5 * 1024 * 1024;

/// A tool result the window shows in its server's app.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolApp {
    pub server_id: String,
    pub resource_uri: String,
    /// The arguments the call ran with, for `ui/notifications/tool-input`.
    pub arguments: Value,
    /// The whole `CallToolResult`, for `ui/notifications/tool-result`.
    pub result: Value,
}

/// An app's document, ready to serve.
#[derive(Debug, Clone, PartialEq)]
pub struct AppDocument {
    pub server_id: String,
    pub uri: String,
    pub html: String,
    /// The `Content-Security-Policy` to serve it with.
    pub csp: String,
    pub prefers_border: bool,
}

/// Why an app's document is not shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("{uri} is not an app (ui://) resource")]
    NotAnApp { uri: String },
    /// The server could not be asked for it.
    #[error(transparent)]
    Read(#[from] McpError),
    #[error("{uri} has no HTML text to show")]
    NoText { uri: String },
    /// Of another MIME type than [`APP_MIME_TYPE`] (`mime` empty: none given).
    #[error(
        "{uri} is {}, not an app ({APP_MIME_TYPE})",
        if mime.is_empty() { "of no type" } else { mime }
    )]
    WrongType { uri: String, mime: String },
    #[error("{uri} is {bytes} bytes; Toolgate shows apps of at most {MAX_APP_BYTES}")]
    TooLarge { uri: String, bytes: usize },
}

/// Reads a server's app document and builds its policy.
pub async fn load(
    servers: &ServerManager,
    server_id: &str,
    uri: &str,
) -> Result<AppDocument, AppError> {
    let named = || uri.to_owned();
    if !uri.starts_with("ui://") {
        return Err(AppError::NotAnApp { uri: named() });
    }
    let read = servers.read_resource(server_id, uri).await?;
    let (mime, html, meta) = read
        .contents
        .iter()
        .find_map(|content| match content {
            rmcp::model::ResourceContents::TextResourceContents {
                mime_type,
                text,
                meta,
                ..
            } => Some((mime_type.as_deref().unwrap_or_default(), text, meta)),
            _ => None,
        })
        .ok_or_else(|| AppError::NoText { uri: named() })?;
    if !mime.eq_ignore_ascii_case(APP_MIME_TYPE) {
        return Err(AppError::WrongType {
            uri: named(),
            mime: mime.to_owned(),
        });
    }
    if html.len() > MAX_APP_BYTES {
        return Err(AppError::TooLarge {
            uri: named(),
            bytes: html.len(),
        });
    }
    let ui = meta.as_ref().and_then(|m| m.get("ui"));
    Ok(AppDocument {
        server_id: server_id.to_owned(),
        uri: uri.to_owned(),
        html: html.clone(),
        csp: csp_for(ui.and_then(|ui| ui.get("csp"))),
        prefers_border: ui
            .and_then(|ui| ui.get("prefersBorder"))
            .and_then(Value::as_bool)
            .unwrap_or(true),
    })
}

/// The policy for an app that declared `declared` (`_meta.ui.csp`): inline script and style
/// (an app is one HTML document), data: images and fonts, and each origin only where declared.
pub fn csp_for(declared: Option<&Value>) -> String {
    let origins = |key: &str| -> Vec<String> {
        declared
            .and_then(|d| d.get(key))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|o| is_origin(o))
            .map(str::to_owned)
            .collect()
    };
    let list = |base: &str, extra: &[String]| -> String {
        let mut parts: Vec<String> = base.split_whitespace().map(str::to_owned).collect();
        parts.extend(extra.iter().cloned());
        if parts.is_empty() {
            "'none'".to_owned()
        } else {
            parts.join(" ")
        }
    };
    let resources = origins("resourceDomains");
    let connect = origins("connectDomains");
    let frames = origins("frameDomains");
    let bases = origins("baseUriDomains");
    [
        "default-src 'none'".to_owned(),
        format!("script-src {}", list("'unsafe-inline'", &resources)),
        format!("style-src {}", list("'unsafe-inline'", &resources)),
        format!("img-src {}", list("data: blob:", &resources)),
        format!("font-src {}", list("data:", &resources)),
        format!("media-src {}", list("data: blob:", &resources)),
        format!("connect-src {}", list("", &connect)),
        format!("frame-src {}", list("", &frames)),
        format!("base-uri {}", list("", &bases)),
        "form-action 'none'".to_owned(),
        "object-src 'none'".to_owned(),
    ]
    .join("; ")
}

/// Whether `value` is an origin a CSP source list may hold: `https://host[:port]` (or `http`,
/// `wss`, `ws`), the host's first label possibly `*`. Nothing else: no path, keyword, scheme
/// alone or separator.
fn is_origin(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "https" | "http" | "wss" | "ws") {
        return false;
    }
    let host = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match host.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (host, None),
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let host = host.strip_prefix("*.").unwrap_or(host);
    !host.is_empty()
        && host.contains('.')
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        || host == "localhost"
}

impl crate::Agent {
    /// A `tools/call` an MCP App of `server_id` makes: only that server's tools (its app-only
    /// ones too), under the user's rules and the same gate and audit as a model's call (the
    /// host's agent for an app names it, so the card and the log say who asks, and shares the
    /// exposure of the chat it is shown in). The whole result comes back, for the app.
    pub async fn call_for_app(
        &self,
        server_id: &str,
        tool: &str,
        arguments: Value,
        options: &crate::TurnOptions,
        on_event: &(dyn Fn(crate::TurnEvent) + Send + Sync),
    ) -> Result<crate::CallOutcome, crate::AgentError> {
        // The whole offer first: a chat resumed after a restart recalls what it had read. A
        // catalog that cannot be offered to a model is no reason to refuse the app's own call.
        if let Err(e) = self.offer().await {
            tracing::debug!("an app's call without the chat's whole offer: {e}");
        }
        let mut snapshot = self.servers.snapshot().await;
        snapshot.retain(|s| s.id == server_id);
        let offer = crate::offer::Offer::new(
            crate::tools::catalog_with(&snapshot, &self.tools, true)?,
            &snapshot,
        );
        let Some(model_name) = offer
            .catalog
            .entries()
            .iter()
            .find(|e| e.tool.name == tool)
            .map(|e| e.model_name.clone())
        else {
            return Ok(crate::CallOutcome::Refused(format!(
                "The app's server offers no tool named '{tool}' (or it is switched off)."
            )));
        };
        let call = toolgate_llm::ToolCall {
            id: uuid::Uuid::new_v4().to_string(),
            name: model_name,
            arguments,
        };
        Ok(self.gated(&offer, &call, options, on_event).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_app_that_declares_nothing_reaches_nothing() {
        let csp = csp_for(None);
        assert!(csp.starts_with("default-src 'none'; script-src 'unsafe-inline';"));
        assert!(csp.contains("connect-src 'none'"));
        assert!(csp.contains("frame-src 'none'"));
        assert!(csp.contains("base-uri 'none'"));
        assert!(csp.contains("form-action 'none'"));
        assert!(!csp.contains("'self'") && !csp.contains('*'));
    }

    #[test]
    fn declared_origins_open_only_their_own_directive_and_nothing_else_gets_in() {
        let csp = csp_for(Some(&json!({
            "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
            "resourceDomains": ["https://*.cdn.example.com", "'unsafe-eval'", "*", "https:",
                                "https://a.example.com; script-src *", "https://x.example.com/path"],
            "frameDomains": ["https://www.youtube.com"],
        })));
        assert!(csp.contains("connect-src https://api.example.com wss://live.example.com:8443"));
        assert!(csp.contains("script-src 'unsafe-inline' https://*.cdn.example.com;"));
        assert!(csp.contains("frame-src https://www.youtube.com"));
        for smuggled in ["unsafe-eval", " * ", "https:;", "a.example.com", "/path"] {
            assert!(!csp.contains(smuggled), "{smuggled} in {csp}");
        }
        assert_eq!(csp.matches("script-src").count(), 1);
    }

    #[test]
    fn what_is_not_an_app_says_what_it_is() {
        let untyped = AppError::WrongType {
            uri: "ui://a".into(),
            mime: String::new(),
        };
        assert_eq!(
            untyped.to_string(),
            "ui://a is of no type, not an app (text/html;profile=mcp-app)"
        );
        let large = AppError::TooLarge {
            uri: "ui://a".into(),
            bytes: MAX_APP_BYTES + 1,
        };
        assert_eq!(
            large.to_string(),
            "ui://a is 5242881 bytes; Toolgate shows apps of at most 5242880"
        );
    }
}
