//! A chat as the window and the CLI start one: its conversation in the history, its gated
//! agent, and its token totals kept as the turn goes.

use std::sync::Arc;

use toolgate_agent::{Agent, TurnEvent};
use toolgate_history::History;

use crate::{Caller, Host};

/// One chat's agent and where its conversation is saved.
pub struct Chat {
    pub agent: Agent,
    /// Its id in the history; `None` when it could not be saved (logged).
    pub conversation: Option<String>,
    history: Option<Arc<History>>,
}

impl Host {
    /// The chat for `conversation`, or, when it has none yet, a new one in the history titled
    /// from the user's first words (`None` when the history cannot take it: the chat still
    /// runs, unsaved, and `unsaved` is told why).
    pub async fn chat(
        self: &Arc<Self>,
        conversation: Option<String>,
        first_words: &str,
        servers_off: &[String],
        unsaved: impl FnOnce(&str),
    ) -> Chat {
        let history = self.history.clone().ok();
        let conversation = match (conversation, &history) {
            (Some(id), _) => Some(id),
            (None, Some(h)) => {
                let (h, title) = (h.clone(), toolgate_agent::title_for(first_words));
                let created = tokio::task::spawn_blocking(move || h.create(&title))
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|r| r.map_err(|e| e.to_string()));
                match created {
                    Ok(c) => Some(c.id),
                    Err(e) => {
                        unsaved(&e);
                        None
                    }
                }
            }
            (None, None) => None,
        };
        let agent = self
            .agent(Caller::Chat {
                conversation: conversation.clone(),
                servers_off,
            })
            .await;
        Chat {
            agent,
            conversation,
            history,
        }
    }
}

impl Chat {
    /// Adds a model call's tokens to the conversation's totals, after each call, so a turn that
    /// fails or is stopped still counts what it used. Queued: a failure is logged by the
    /// history's writer. Other events are ignored.
    pub fn count(&self, event: &TurnEvent) {
        let (
            TurnEvent::Usage {
                usage,
                cost_micro_usd,
            },
            Some(history),
            Some(id),
        ) = (event, &self.history, &self.conversation)
        else {
            return;
        };
        drop(history.queue_usage(
            id,
            &toolgate_history::TokenUsage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_tokens: usage.cache_read_tokens,
                cache_write_tokens: usage.cache_write_tokens,
                cost_micro_usd: *cost_micro_usd,
            },
        ));
    }
}
