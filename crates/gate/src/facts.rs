//! The approval card's facts as plain text, for the places that cannot show the window's card:
//! the tray's submenu and the desktop notification. Both show the same facts, built here once
//! from a [`PendingCall`]: who asks, what (server, tool, the tool's description), the arguments
//! folded, why it waits (the reason's words, which name where a value came from when that is
//! why), and the time left before it is denied.
//!
//! Nearly all of it comes from a server, a model or a client, so every piece is made plain
//! ([`one_line`]): control and direction-changing characters shown as `�` (a line must not
//! reorder or hide what follows), white space folded, long text cut with `…`, and `<`, `>`, `&`
//! replaced by look-alikes (`‹ › ＆`). A notification server reads a subset of HTML in a body
//! (`<b>`, `<a href>`, `<img>`), and escaping instead (`&lt;`) would show as such on a server
//! that does not; a menu reads `&` as a key mnemonic on some platforms.

use serde_json::Value;

use crate::wait::{PendingCall, RequestKind};

/// Arguments shown outside the window; the window shows them all.
const SHOWN_ARGUMENTS: usize = 4;
/// Characters of one argument's value.
const VALUE_CHARS: usize = 60;
/// Characters of a notification's body, all lines together.
const BODY_CHARS: usize = 700;

/// What the tray and the notification need besides the request: the chat's model (the gate does
/// not know it) and the time, for the time left.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asking<'a> {
    /// The model Toolgate's chat talks to, to say who asks for the chat's calls.
    pub chat_model: Option<&'a str>,
    /// Now, in Unix milliseconds.
    pub now_ms: u64,
}

impl<'a> Asking<'a> {
    /// Now, with the chat's model.
    pub fn now(chat_model: Option<&'a str>) -> Self {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Self { chat_model, now_ms }
    }
}

/// A waiting request's facts, each already plain text of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// "Approve echo on Everything?": the question, for a notification's title.
    pub title: String,
    /// "Asked by the connected app claude-code", "Asked by Toolgate's chat and its model, m".
    pub who: String,
    /// What the tool does: the first sentence of its server's description.
    pub description: Option<String>,
    /// What a server says to the user (its question), or what a held result was called with.
    pub message: Option<String>,
    /// The page a server asks to open: its domain first.
    pub page: Option<String>,
    /// "name: value" for the first few arguments (those deciding where data goes first); a
    /// value that looks like a secret is hidden. Empty when the request has no arguments shown.
    pub arguments: Vec<String>,
    /// Arguments left out of `arguments`.
    pub more: usize,
    /// Whether `arguments` are shown and the call has none at all.
    pub no_arguments: bool,
    /// Why it waits: the reason in words, and that no rule can let it run when none can.
    pub why: Vec<String>,
    /// "Denied in 9 min if not answered".
    pub time_left: Option<String>,
}

/// Text from a server, a model or a client, made fit for one plain line (see the module's
/// docs), cut to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut space = false;
    for c in text.chars() {
        if count >= max {
            out.push('…');
            break;
        }
        let c = if c.is_whitespace() {
            if space {
                continue;
            }
            space = true;
            ' '
        } else {
            space = false;
            match c {
                '<' => '‹',
                '>' => '›',
                '&' => '＆',
                c if c.is_control() || invisible(c) => '\u{fffd}',
                c => c,
            }
        };
        out.push(c);
        count += 1;
    }
    out.trim().to_owned()
}

/// Characters that change the direction of what follows or take no space, which would let a
/// line show something other than what it holds.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}'
    )
}

/// The first sentence of a description (up to its first full stop or blank line).
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let paragraph = text.split("\n\n").next().unwrap_or(text);
    match paragraph.find(". ") {
        Some(end) => &paragraph[..=end],
        None => paragraph,
    }
}

/// Time left as the tray and a notification say it: in whole minutes, since neither is redrawn
/// every second (a menu set anew closes one the user has open).
fn time_left(deadline_ms: u64, now_ms: u64) -> String {
    let left = deadline_ms.saturating_sub(now_ms);
    if left == 0 {
        "Timed out: denied".to_owned()
    } else if left < 60_000 {
        "Denied in under a minute if not answered".to_owned()
    } else {
        format!("Denied in {} min if not answered", left.div_ceil(60_000))
    }
}

fn arguments(call: &PendingCall) -> (Vec<String>, usize) {
    let Some(map) = call.arguments.as_object() else {
        return (vec![one_line(&call.arguments.to_string(), VALUE_CHARS)], 0);
    };
    let hidden = crate::secrets::keys_in_arguments(&call.arguments);
    // Where the data goes first: those are what the question is about.
    let properties = call.input_schema.get("properties");
    let mut keys: Vec<(&String, &Value)> = map.iter().collect();
    keys.sort_by_key(|(key, _)| {
        !crate::provenance::decisive::is_decisive(key, properties.and_then(|p| p.get(key.as_str())))
    });
    let shown = keys
        .into_iter()
        .take(SHOWN_ARGUMENTS)
        .map(|(key, value)| {
            let value = if hidden.contains(key) {
                "[hidden: looks like a secret]".to_owned()
            } else {
                match value {
                    Value::String(s) => one_line(s, VALUE_CHARS),
                    other => one_line(&other.to_string(), VALUE_CHARS),
                }
            };
            format!("{}: {value}", one_line(key, 30))
        })
        .collect();
    (shown, map.len().saturating_sub(SHOWN_ARGUMENTS))
}

/// The facts of `call`, as the tray and the notification show them.
pub fn facts(call: &PendingCall, asking: Asking<'_>) -> Facts {
    let server = one_line(&call.server_name, 40);
    let tool = one_line(&call.tool, 40);
    let title = match call.request {
        RequestKind::ToolCall => format!("Approve {tool} on {server}?"),
        RequestKind::Sampling => format!("Let {server} use your model?"),
        RequestKind::Elicitation if call.link.is_some() => {
            format!("{server} asks you to open a page")
        }
        RequestKind::Elicitation => format!("{server} asks you a question"),
        RequestKind::ToolResult => format!("Review the result of {tool} on {server}?"),
    };
    // The chat by its title (the user's words, or the model's: shown as plain text like the
    // rest), since neither the tray nor a notification shows which chat is open; left out when
    // it looks like it holds a secret, as an argument would be hidden.
    let chat = match &call.chat {
        Some(title) if !crate::secrets::holds_secret(title) => {
            format!("Toolgate's chat “{}”", one_line(title, 40))
        }
        _ => "Toolgate's chat".to_owned(),
    };
    let chat = match asking.chat_model {
        Some(model) => format!("{chat} and its model, {}", one_line(model, 40)),
        None => chat,
    };
    let caller = match &call.client {
        Some(client) => format!("the connected app {}", one_line(client, 40)),
        None => chat,
    };
    let who = match call.request {
        RequestKind::ToolCall => format!("Asked by {caller}"),
        RequestKind::ToolResult => format!("Held for your review before {caller} sees it"),
        RequestKind::Sampling | RequestKind::Elicitation => format!("Asked by the server {server}"),
    };
    let description = call
        .description
        .as_deref()
        .map(|d| one_line(first_sentence(d), 120))
        .filter(|d| !d.is_empty());
    let message = call
        .message
        .as_deref()
        .map(|m| one_line(m, 160))
        .filter(|m| !m.is_empty());
    let page = call.link.as_ref().map(|link| {
        format!(
            "Page on {}: {}",
            one_line(&link.domain, 60),
            one_line(&link.url, 80)
        )
    });
    let (arguments, more) = match call.request {
        RequestKind::ToolCall => arguments(call),
        _ => (Vec::new(), 0),
    };
    let no_arguments = call.request == RequestKind::ToolCall
        && call.arguments.as_object().is_some_and(|m| m.is_empty());
    let mut why = Vec::new();
    if !call.reason.trim().is_empty() {
        why.push(format!("Why: {}", one_line(&call.reason, 200)));
    }
    if call.beyond_rules {
        why.push("No rule can let this run without asking: only your answer does".to_owned());
    }
    Facts {
        title: one_line(&title, 90),
        who,
        description,
        message,
        page,
        arguments,
        more,
        no_arguments,
        why,
        time_left: call.deadline.map(|at| time_left(at, asking.now_ms)),
    }
}

impl Facts {
    /// Who asks, what the tool does, and the server's question or page: what both forms open
    /// with.
    fn head(&self) -> Vec<String> {
        let mut lines = vec![self.who.clone()];
        lines.extend(self.description.clone());
        lines.extend(self.message.clone());
        lines.extend(self.page.clone());
        lines
    }

    /// The facts as lines, in the card's order: who, what the tool does, the question or page,
    /// the arguments, why, the time left.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = self.head();
        if self.no_arguments {
            lines.push("No arguments".to_owned());
        }
        lines.extend(self.arguments.iter().cloned());
        if self.more > 0 {
            lines.push(format!(
                "… and {} more (open the window to see all)",
                self.more
            ));
        }
        lines.extend(self.why.iter().cloned());
        lines.extend(self.time_left.clone());
        lines
    }

    /// A desktop notification's title and body: plain text, the body a few short lines and
    /// never more than a few hundred characters. Values that look like secrets are hidden (a
    /// notification can show on a locked screen); the full request is one click away.
    pub fn notification(&self) -> (String, String) {
        let mut lines = self.head();
        if self.no_arguments {
            lines.push("No arguments".to_owned());
        } else if !self.arguments.is_empty() {
            let mut line = self.arguments.join(" · ");
            if self.more > 0 {
                line.push_str(&format!(" (+{} more)", self.more));
            }
            lines.push(one_line(&line, 200));
        }
        lines.extend(self.why.iter().cloned());
        // The middle is cut, never the time left and the way to answer.
        let last = match &self.time_left {
            Some(left) => format!("{left}. Answer from the tray menu or open Toolgate."),
            None => "Answer from the tray menu or open Toolgate.".to_owned(),
        };
        let mut body = lines.join("\n");
        let room = BODY_CHARS - last.chars().count() - 1;
        if body.chars().count() > room {
            body = body.chars().take(room - 1).collect::<String>() + "…";
        }
        body.push('\n');
        body.push_str(&last);
        (format!("Toolgate: {}", self.title), body)
    }
}

impl PendingCall {
    /// A desktop notification's title and body for this request ([`Facts::notification`]).
    pub fn notification(&self, asking: Asking<'_>) -> (String, String) {
        facts(self, asking).notification()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> PendingCall {
        PendingCall {
            id: "a".into(),
            request: RequestKind::ToolCall,
            message: None,
            call_id: String::new(),
            server_id: "e".into(),
            server_name: "Everything (example)".into(),
            tool: "echo".into(),
            arguments: serde_json::json!({"message": "hello"}),
            read_only: false,
            destructive: false,
            input_schema: serde_json::json!({}),
            reason: "no rule allows this tool yet".into(),
            beyond_rules: false,
            client: None,
            chat: None,
            link: None,
            description: Some("Echoes back the input. Useful for tests.".into()),
            deadline: Some(600_000),
        }
    }

    const AT_START: Asking<'static> = Asking {
        chat_model: Some("claude-sonnet-4-5"),
        now_ms: 0,
    };

    /// No character that markup, a link or a direction change could start with.
    fn plain(text: &str) {
        for bad in [
            '<', '>', '&', '\u{202e}', '\u{2066}', '\u{200b}', '\u{1b}', '\0',
        ] {
            assert!(!text.contains(bad), "{bad:?} in {text:?}");
        }
    }

    #[test]
    fn the_notification_carries_the_cards_facts() {
        let (title, body) = call().notification(AT_START);
        assert_eq!(title, "Toolgate: Approve echo on Everything (example)?");
        assert_eq!(
            body,
            "Asked by Toolgate's chat and its model, claude-sonnet-4-5\n\
             Echoes back the input.\n\
             message: hello\n\
             Why: no rule allows this tool yet\n\
             Denied in 10 min if not answered. Answer from the tray menu or open Toolgate."
        );
    }

    #[test]
    fn a_chats_call_names_the_chat_by_its_title_as_plain_text() {
        let mut call = call();
        call.chat = Some(
            "Plan <b>the</b> trip\u{202e} & more\nwith a title far longer than forty characters"
                .into(),
        );
        let (_, body) = call.notification(AT_START);
        let who = body.lines().next().unwrap_or_default();
        assert_eq!(
            who,
            "Asked by Toolgate's chat “Plan ‹b›the‹/b› trip\u{fffd} ＆ more with a titl…” and its model, claude-sonnet-4-5"
        );
        plain(&body);
        // The tray's submenu says the same.
        let lines = facts(&call, AT_START).lines();
        assert!(lines.iter().any(|l| l.contains("chat “Plan")), "{lines:?}");
    }

    #[test]
    fn a_connected_apps_call_names_the_app_and_why_names_where_a_value_came_from() {
        let mut call = call();
        call.client = Some("claude-code".into());
        call.arguments = serde_json::json!({
            "note": "x", "a": 1, "b": 2, "c": 3,
            "recipient": "US133000000121212121212",
        });
        call.input_schema = serde_json::json!({"properties": {"recipient": {"type": "string"}}});
        call.reason =
            "asking because the value “US13…” at /recipient came only from outside content".into();
        call.beyond_rules = true;
        let facts = facts(
            &call,
            Asking {
                now_ms: 599_500,
                ..AT_START
            },
        );
        assert_eq!(facts.who, "Asked by the connected app claude-code");
        assert_eq!(
            facts.arguments[0], "recipient: US133000000121212121212",
            "where the data goes comes first"
        );
        assert_eq!(facts.more, 1);
        assert_eq!(
            facts.time_left.as_deref(),
            Some("Denied in under a minute if not answered")
        );
        let (_, body) = facts.notification();
        assert!(
            body.contains("recipient: US133000000121212121212 · "),
            "{body}"
        );
        assert!(body.contains("(+1 more)"), "{body}");
        assert!(body.contains("Why: asking because the value “US13…” at /recipient came only from outside content"), "{body}");
        assert!(
            body.contains("No rule can let this run without asking"),
            "{body}"
        );
        let mid = super::facts(
            &call,
            Asking {
                now_ms: 60_001,
                ..AT_START
            },
        );
        assert_eq!(
            mid.time_left.as_deref(),
            Some("Denied in 9 min if not answered")
        );
        let late = super::facts(
            &call,
            Asking {
                now_ms: 700_000,
                ..AT_START
            },
        );
        assert_eq!(late.time_left.as_deref(), Some("Timed out: denied"));
    }

    #[test]
    fn nothing_from_a_server_or_a_model_becomes_markup_a_link_or_a_reordered_line() {
        let mut call = call();
        call.tool = "echo<b>bold</b>".into();
        call.server_name = "Evil & Co".into();
        call.description = Some(
            "Reads <a href=\"https://evil.example/\">your files</a> <img src=\"https://evil.example/p.png\"/> &amp; more\u{202e}gnp.exe\u{1b}[31m".into(),
        );
        call.arguments = serde_json::json!({
            "<i>key</i>": "a\u{2066}b\u{200b}c\0d",
            "big": "x".repeat(10_000),
        });
        call.reason = "<script>alert(1)</script> &lt;".into();
        let (title, body) = call.notification(AT_START);
        plain(&title);
        plain(&body);
        assert_eq!(title, "Toolgate: Approve echo‹b›bold‹/b› on Evil ＆ Co?");
        assert!(
            body.contains("Reads ‹a href=\"https://evil.example/\"›your files‹/a›"),
            "{body}"
        );
        assert!(
            body.contains("＆amp; more\u{fffd}gnp.exe\u{fffd}[31m"),
            "{body}"
        );
        assert!(
            body.contains("‹i›key‹/i›: a\u{fffd}b\u{fffd}c\u{fffd}d"),
            "{body}"
        );
        // A 10 KB value is cut to a line, the body to a few hundred characters.
        assert!(
            body.contains(&format!("big: {}…", "x".repeat(VALUE_CHARS))),
            "{body}"
        );
        assert!(
            body.chars().count() <= BODY_CHARS,
            "{}",
            body.chars().count()
        );
        assert!(body.ends_with("Answer from the tray menu or open Toolgate."));
        for line in facts(&call, AT_START).lines() {
            plain(&line);
        }
    }

    #[test]
    fn a_long_body_is_cut_in_the_middle_never_the_time_left() {
        let mut call = call();
        call.description = Some("d".repeat(5_000));
        call.reason = "r".repeat(5_000);
        call.message = Some("m".repeat(5_000));
        call.arguments = serde_json::json!({"a": "1".repeat(500), "b": "2".repeat(500), "c": "3".repeat(500), "d": "4".repeat(500)});
        let (_, body) = call.notification(AT_START);
        assert!(
            body.chars().count() <= BODY_CHARS,
            "{}",
            body.chars().count()
        );
        assert!(
            body.ends_with(
                "Denied in 10 min if not answered. Answer from the tray menu or open Toolgate."
            ),
            "{body}"
        );
    }

    #[test]
    fn a_value_that_looks_like_a_secret_is_hidden_outside_the_window() {
        let mut call = call();
        call.arguments = serde_json::json!({"token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "path": "/tmp"});
        let (_, body) = call.notification(AT_START);
        assert!(!body.contains("ghp_"), "{body}");
        assert!(
            body.contains("token: [hidden: looks like a secret]"),
            "{body}"
        );
        assert!(body.contains("path: /tmp"), "{body}");
        // A chat titled with a pasted secret is named without its title.
        call.chat = Some("use ghp_abcdefghijklmnopqrstuvwxyz0123456789 to push".into());
        let (_, body) = call.notification(AT_START);
        assert!(!body.contains("ghp_"), "{body}");
        assert!(
            body.starts_with("Asked by Toolgate's chat and its model"),
            "{body}"
        );
    }

    #[test]
    fn each_kind_of_request_says_who_asks_and_what() {
        let mut question = call();
        question.request = RequestKind::Elicitation;
        question.message = Some("Which <b>colour</b>?".into());
        question.description = None;
        question.deadline = None;
        let facts = facts(&question, AT_START);
        assert_eq!(facts.title, "Everything (example) asks you a question");
        assert_eq!(facts.who, "Asked by the server Everything (example)");
        assert_eq!(facts.message.as_deref(), Some("Which ‹b›colour‹/b›?"));
        assert!(facts.arguments.is_empty() && facts.time_left.is_none());
        let mut review = call();
        review.request = RequestKind::ToolResult;
        review.client = Some("cursor".into());
        assert_eq!(
            super::facts(&review, AT_START).who,
            "Held for your review before the connected app cursor sees it"
        );
        let mut sampling = call();
        sampling.request = RequestKind::Sampling;
        assert_eq!(
            super::facts(&sampling, Asking::default()).title,
            "Let Everything (example) use your model?"
        );
        let mut none = call();
        none.arguments = serde_json::json!({});
        assert!(super::facts(&none, Asking::default())
            .lines()
            .contains(&"No arguments".to_owned()));
        assert_eq!(
            super::facts(&none, Asking::default()).who,
            "Asked by Toolgate's chat"
        );
    }
}
