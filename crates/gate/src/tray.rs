//! What the tray shows and what its items do, apart from any tray library: the desktop shell
//! renders [`menu`] and hands each clicked id to [`Action::parse`], then does the action with the
//! same gate and settings calls the window's commands use.

use crate::facts::{one_line, Asking};
use crate::wait::{PendingCall, RequestKind};

/// The state the tray icon shows, most urgent first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayState {
    /// A request waits for the user.
    Waiting,
    /// A server failed and is not restarting.
    ServerFailed,
    /// All tools are paused.
    Paused,
    Idle,
}

/// A server as the tray lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLine {
    pub name: String,
    /// "ready", "starting", "failed: …".
    pub status: String,
    pub failed: bool,
    /// The server's id when it waits for the user to sign in.
    pub sign_in: Option<String>,
}

/// One menu entry; `id` is what [`Action::parse`] reads back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// Text only.
    Label(String),
    Action {
        id: String,
        label: String,
    },
    /// A request with its own answers.
    Submenu {
        label: String,
        items: Vec<Item>,
    },
    Separator,
}

/// What a click asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Approve(String),
    Deny(String),
    Open,
    /// Sign in to a remote server (its id), in the browser.
    SignIn(String),
    /// Pause all tools, or lift the pause.
    SetPaused(bool),
    Quit,
}

impl Action {
    pub fn parse(id: &str) -> Option<Self> {
        if let Some(request) = id.strip_prefix("approve:") {
            return Some(Action::Approve(request.to_owned()));
        }
        if let Some(request) = id.strip_prefix("deny:") {
            return Some(Action::Deny(request.to_owned()));
        }
        if let Some(server) = id.strip_prefix("sign-in:") {
            return Some(Action::SignIn(server.to_owned()));
        }
        match id {
            "open" => Some(Action::Open),
            "pause" => Some(Action::SetPaused(true)),
            "resume" => Some(Action::SetPaused(false)),
            "quit" => Some(Action::Quit),
            _ => None,
        }
    }
}

fn action(id: impl Into<String>, label: impl Into<String>) -> Item {
    Item::Action {
        id: id.into(),
        label: label.into(),
    }
}

/// The tray's state: what its icon and tooltip say.
pub fn state(waiting: &[PendingCall], servers: &[ServerLine], paused: bool) -> TrayState {
    if !waiting.is_empty() {
        TrayState::Waiting
    } else if servers.iter().any(|s| s.failed) {
        TrayState::ServerFailed
    } else if paused {
        TrayState::Paused
    } else {
        TrayState::Idle
    }
}

/// The tooltip for the tray icon.
pub fn tooltip(waiting: &[PendingCall], servers: &[ServerLine], paused: bool) -> String {
    match state(waiting, servers, paused) {
        TrayState::Waiting => format!("Toolgate: {} waiting for approval", waiting.len()),
        TrayState::ServerFailed => {
            let failed = servers.iter().filter(|s| s.failed).count();
            format!("Toolgate: {failed} server(s) failed")
        }
        TrayState::Paused => "Toolgate: all tools paused".to_owned(),
        TrayState::Idle => "Toolgate".to_owned(),
    }
}

/// The lines of a request's submenu before its answers: the same facts as its notification
/// ([`crate::facts`]), one a line, then a separator.
fn facts(call: &PendingCall, asking: Asking<'_>) -> Vec<Item> {
    let mut lines: Vec<Item> = crate::facts::facts(call, asking)
        .lines()
        .into_iter()
        .map(Item::Label)
        .collect();
    lines.push(Item::Separator);
    lines
}

/// The menu: the waiting requests (Approve and Deny each; a server's question opens the
/// window), the servers' status, Pause all tools, Open and Quit. `asking` gives the chat's model
/// and the time, for who asks and the time left.
pub fn menu(
    waiting: &[PendingCall],
    servers: &[ServerLine],
    paused: bool,
    asking: Asking<'_>,
) -> Vec<Item> {
    let mut items = vec![Item::Label(match waiting.len() {
        0 => "Nothing waiting for approval".to_owned(),
        1 => "1 request waiting for approval".to_owned(),
        n => format!("{n} requests waiting for approval"),
    })];
    for call in waiting {
        // A result held for review is passed or withheld; reading it needs the window.
        let (yes, no) = match call.request {
            RequestKind::ToolResult => ("Pass it on", "Withhold"),
            _ if call.beyond_rules => ("Approve this once", "Deny"),
            _ => ("Approve", "Deny"),
        };
        let first = if call.request == RequestKind::Elicitation {
            action("open", "Answer in the window…")
        } else {
            action(format!("approve:{}", call.id), yes)
        };
        // What is asked, before the answers: who asks, the arguments, and why it waits.
        let mut entries = facts(call, asking);
        if call.request == RequestKind::ToolResult {
            entries.push(action("open", "Read it in the window…"));
        }
        entries.push(first);
        entries.push(action(format!("deny:{}", call.id), no));
        items.push(Item::Submenu {
            label: one_line(&call.summary(), 100),
            items: entries,
        });
    }
    items.push(Item::Separator);
    if !servers.is_empty() {
        items.push(Item::Submenu {
            label: format!("Servers ({})", servers.len()),
            items: servers
                .iter()
                .map(|s| Item::Label(format!("{}: {}", s.name, s.status)))
                .collect(),
        });
    }
    // A server that waits for a sign-in is listed on its own, with the way to do it.
    for server in servers {
        if let Some(id) = &server.sign_in {
            items.push(action(
                format!("sign-in:{id}"),
                format!("Sign in to {}…", server.name),
            ));
        }
    }
    items.push(if paused {
        action("resume", "Resume tools (paused)")
    } else {
        action("pause", "Pause all tools")
    });
    items.push(Item::Separator);
    items.push(action("open", "Open Toolgate"));
    items.push(action("quit", "Quit"));
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of the first waiting request's submenu, its answers in brackets when asked.
    fn first_request_lines(menu: &[Item], with_answers: bool) -> Vec<String> {
        let Item::Submenu { items, .. } = &menu[1] else {
            panic!("a submenu: {menu:?}")
        };
        items
            .iter()
            .filter_map(|i| match i {
                Item::Label(l) => Some(l.clone()),
                Item::Action { label, .. } if with_answers => Some(format!("[{label}]")),
                _ => None,
            })
            .collect()
    }

    fn request(id: &str, kind: RequestKind) -> PendingCall {
        PendingCall {
            id: id.into(),
            request: kind,
            message: None,
            call_id: String::new(),
            server_id: "e".into(),
            server_name: "Everything".into(),
            tool: "echo".into(),
            arguments: serde_json::json!({}),
            read_only: false,
            destructive: false,
            input_schema: serde_json::json!({}),
            reason: String::new(),
            beyond_rules: false,
            client: None,
            chat: None,
            link: None,
            description: None,
            deadline: None,
        }
    }

    fn ids(items: &[Item]) -> Vec<String> {
        items
            .iter()
            .flat_map(|item| match item {
                Item::Action { id, .. } => vec![id.clone()],
                Item::Submenu { items, .. } => ids(items),
                _ => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn a_result_held_for_review_is_read_in_the_window_passed_or_withheld() {
        let items = menu(
            &[request("r", RequestKind::ToolResult)],
            &[],
            false,
            Asking::default(),
        );
        let Item::Submenu { label, items } = &items[1] else {
            panic!("a submenu for the request: {items:?}")
        };
        assert!(label.starts_with("Review the result of"), "{label}");
        let labels: Vec<&str> = items
            .iter()
            .filter_map(|i| match i {
                Item::Action { label, .. } => Some(label.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(labels, ["Read it in the window…", "Pass it on", "Withhold"]);
        assert_eq!(
            ids(items)
                .iter()
                .filter_map(|id| Action::parse(id))
                .collect::<Vec<_>>(),
            [
                Action::Open,
                Action::Approve("r".into()),
                Action::Deny("r".into())
            ]
        );
    }

    #[test]
    fn a_server_waiting_for_a_sign_in_is_listed_with_the_way_to_do_it() {
        let servers = [ServerLine {
            name: "Linear".into(),
            status: "sign in required".into(),
            failed: false,
            sign_in: Some("linear".into()),
        }];
        let items = menu(&[], &servers, false, Asking::default());
        assert!(items.contains(&action("sign-in:linear", "Sign in to Linear…")));
        assert_eq!(
            Action::parse("sign-in:linear"),
            Some(Action::SignIn("linear".into()))
        );
    }

    #[test]
    fn every_item_of_the_menu_parses_to_its_action() {
        let waiting = [
            request("a", RequestKind::ToolCall),
            request("q", RequestKind::Elicitation),
        ];
        let servers = [ServerLine {
            name: "Everything".into(),
            status: "ready".into(),
            failed: false,
            sign_in: None,
        }];
        let items = menu(&waiting, &servers, false, Asking::default());
        let actions: Vec<Action> = ids(&items)
            .iter()
            .filter_map(|id| Action::parse(id))
            .collect();
        assert_eq!(
            actions,
            vec![
                Action::Approve("a".into()),
                Action::Deny("a".into()),
                Action::Open,
                Action::Deny("q".into()),
                Action::SetPaused(true),
                Action::Open,
                Action::Quit,
            ],
            "a question is answered in the window, never approved blind"
        );
        assert_eq!(
            items[0],
            Item::Label("2 requests waiting for approval".into())
        );
        assert!(items.contains(&Item::Submenu {
            label: "Servers (1)".into(),
            items: vec![Item::Label("Everything: ready".into())],
        }));
        assert_eq!(
            ids(&menu(&[], &[], true, Asking::default())),
            vec!["resume", "open", "quit"]
        );
        assert_eq!(Action::parse("header"), None);
    }

    #[test]
    fn the_icon_shows_the_most_urgent_state() {
        let failed = [ServerLine {
            name: "Files".into(),
            status: "failed: exited".into(),
            failed: true,
            sign_in: None,
        }];
        let waiting = [request("a", RequestKind::Sampling)];
        assert_eq!(state(&waiting, &failed, true), TrayState::Waiting);
        assert_eq!(state(&[], &failed, true), TrayState::ServerFailed);
        assert_eq!(state(&[], &[], true), TrayState::Paused);
        assert_eq!(state(&[], &[], false), TrayState::Idle);
        assert_eq!(
            tooltip(&waiting, &failed, false),
            "Toolgate: 1 waiting for approval"
        );
        assert_eq!(tooltip(&[], &failed, false), "Toolgate: 1 server(s) failed");
    }

    #[test]
    fn a_call_in_the_tray_shows_who_asks_its_arguments_and_why_before_the_answers() {
        let mut call = request("c", RequestKind::ToolCall);
        call.client = Some("claude-code".into());
        call.arguments = serde_json::json!({
            "recipient": "US133000000121212121212",
            "note": "line one\nline two \u{202e}gnp.exe",
            "x": 1, "y": 2, "z": 3, "zz": 4,
        });
        call.reason =
            "asking because the value “US13…” at /recipient came only from outside content".into();
        call.beyond_rules = true;
        let labels = first_request_lines(&menu(&[call], &[], false, Asking::default()), true);
        assert_eq!(labels[0], "Asked by the connected app claude-code");
        assert!(
            labels.contains(&"recipient: US133000000121212121212".to_owned()),
            "{labels:?}"
        );
        // Lines folded, a direction change shown rather than obeyed.
        assert!(
            labels.contains(&"note: line one line two \u{fffd}gnp.exe".to_owned()),
            "{labels:?}"
        );
        assert!(
            labels.contains(&"… and 2 more (open the window to see all)".to_owned()),
            "{labels:?}"
        );
        assert!(
            labels
                .iter()
                .any(|l| l.starts_with("Why: asking because the value")),
            "{labels:?}"
        );
        // No rule would change the outcome: the answer is for this call only, and says so.
        assert_eq!(
            &labels[labels.len() - 3..],
            [
                "No rule can let this run without asking: only your answer does",
                "[Approve this once]",
                "[Deny]"
            ]
        );
    }

    #[test]
    fn the_tray_shows_the_notifications_facts_what_the_tool_does_and_the_time_left() {
        let mut call = request("c", RequestKind::ToolCall);
        call.description = Some("Echoes back the input. Then more.".into());
        call.deadline = Some(120_000);
        let asking = Asking {
            chat_model: Some("gpt-4.1"),
            now_ms: 0,
        };
        let labels = first_request_lines(
            &menu(std::slice::from_ref(&call), &[], false, asking),
            false,
        );
        assert_eq!(labels, crate::facts::facts(&call, asking).lines());
        assert_eq!(
            labels,
            [
                "Asked by Toolgate's chat and its model, gpt-4.1",
                "Echoes back the input.",
                "No arguments",
                "Denied in 2 min if not answered",
            ]
        );
    }
}
