//! Conversations kept in the history database: every message recorded as it is added, and a
//! stored conversation read back to be continued.

use std::sync::Arc;

use toolgate_history::{History, StoredMessage};
use toolgate_llm::Message;

use crate::Recorder;

/// Appends each message of a conversation to the history database as it is added, so a crash
/// mid-turn loses nothing already shown.
pub struct HistoryRecorder {
    history: Arc<History>,
    conversation: String,
}

impl HistoryRecorder {
    pub fn new(history: Arc<History>, conversation: impl Into<String>) -> Self {
        Self {
            history,
            conversation: conversation.into(),
        }
    }
}

#[async_trait::async_trait]
impl Recorder for HistoryRecorder {
    async fn record(&self, message: &Message) {
        // Awaited: the message is committed before the turn shows it or goes on. A failed write
        // must not stop the turn the user is watching; it is logged loudly.
        let written = self
            .history
            .queue_append(&self.conversation, &stored(message))
            .await;
        if let Err(e) = written {
            tracing::error!(conversation = %self.conversation, "could not record a message: {e}");
        }
    }
}

/// A message as the history keeps it: its role, and the message itself as JSON.
pub fn stored(message: &Message) -> StoredMessage {
    let body = serde_json::to_value(message).unwrap_or_default();
    let role = body
        .get("role")
        .and_then(|r| r.as_str())
        .unwrap_or("unknown")
        .to_owned();
    StoredMessage::new(role, body)
}

/// The messages of a stored conversation. A message this version cannot read is skipped with a
/// warning rather than losing the whole conversation.
pub fn restore(stored: &[StoredMessage]) -> Vec<Message> {
    stored
        .iter()
        .filter_map(|m| match serde_json::from_value::<Message>(m.body.clone()) {
            Ok(message) => Some(message),
            Err(e) => {
                tracing::warn!(role = %m.role, "skipped a stored message this version cannot read: {e}");
                None
            }
        })
        .collect()
}

/// A title for a new conversation: its first message, cut at a word near 60 characters.
pub fn title_for(first_message: &str) -> String {
    let line = first_message.lines().next().unwrap_or("").trim();
    if line.chars().count() <= 60 {
        return if line.is_empty() {
            "New conversation".to_owned()
        } else {
            line.to_owned()
        };
    }
    let cut: String = line.chars().take(60).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > 30 => &cut[..i],
        _ => &cut,
    };
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_llm::ToolCall;

    #[test]
    fn messages_round_trip_through_the_history() {
        let history = Arc::new(History::open_in_memory().unwrap());
        let id = history.create("t").unwrap().id;
        let recorder = HistoryRecorder::new(history.clone(), id.clone());
        let messages = vec![
            Message::User { text: "hi".into() },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "echo".into(),
                    arguments: serde_json::json!({"text": "x"}),
                }],
            },
        ];
        for m in &messages {
            futures::executor::block_on(recorder.record(m));
        }
        assert_eq!(restore(&history.messages(&id).unwrap()), messages);
        assert_eq!(
            history.list(Some("HI")).unwrap().len(),
            1,
            "user text is searchable"
        );
    }

    #[test]
    fn titles_are_short_and_never_empty() {
        assert_eq!(title_for("  \n"), "New conversation");
        assert_eq!(title_for("List my files\nplease"), "List my files");
        let long = "word ".repeat(30);
        let title = title_for(&long);
        assert!(
            title.ends_with('…') && title.chars().count() <= 61,
            "{title}"
        );
    }
}
