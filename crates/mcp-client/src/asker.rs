//! Who answers a server's questions (sampling, elicitation) during a call.
//!
//! By default the manager's [`ServerRequests`] handler does: in the app and the CLI, the gate.
//! A call made for a client connected through Toolgate's gateway may name an [`Asker`] of its
//! own: that client, which said it can answer (its own model, its own user), as it would if the
//! server were connected to it directly.
//!
//! Which call a question belongs to: a 2026-07-28 server asks inside the call's own result
//! (`input_required`), so the link is exact. An older server sends a separate request, which
//! over stdio carries nothing that names the call; so it goes to a call's asker only when that
//! call is the only one running on the server ([`InFlight`]), and to the default handler when
//! there is none or more than one (when nobody can say whose question it is, the user answers
//! it at the gate).
//!
//! Roots, sampling and logging are deprecated for the 2026-07-28 era (SEP-2577), but every
//! server of the 2025-11-25 era asks through them, so they are answered.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, ErrorData,
};
use tokio_util::sync::CancellationToken;

/// Requests a server makes of the client. The app and the CLI provide the answers; this crate
/// only delivers the requests. Both are advertised to servers, so an implementation that cannot
/// ask anyone should decline, as [`DeclineServerRequests`] does.
#[async_trait]
pub trait ServerRequests: Send + Sync + 'static {
    /// `sampling/createMessage`: the server asks the user's model to write something.
    /// `cancel` fires when the server takes the request back or goes away.
    async fn create_message(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
        cancel: CancellationToken,
    ) -> Result<CreateMessageResult, ErrorData>;

    /// `elicitation/create`: the server asks the user for input.
    async fn elicit(
        &self,
        server: &str,
        params: ElicitRequestParams,
        cancel: CancellationToken,
    ) -> Result<ElicitResult, ErrorData>;
}

/// Declines every request cleanly: elicitation with `decline`, sampling with the error the spec
/// suggests for a user's refusal. For hosts with nobody to ask (and for tests); the app and the
/// CLI put these requests through the approval gate (`toolgate-agent`'s `ServerRequestGate`).
#[derive(Debug, Default, Clone, Copy)]
pub struct DeclineServerRequests;

#[async_trait]
impl ServerRequests for DeclineServerRequests {
    async fn create_message(
        &self,
        server: &str,
        _params: CreateMessageRequestParams,
        _cancel: CancellationToken,
    ) -> Result<CreateMessageResult, ErrorData> {
        tracing::info!(server, "declined a sampling request");
        Err(ErrorData::new(
            ErrorCode(-1),
            "Toolgate declined the sampling request: it does not yet let servers use the model",
            None,
        ))
    }

    async fn elicit(
        &self,
        server: &str,
        _params: ElicitRequestParams,
        _cancel: CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        tracing::info!(server, "declined an elicitation request");
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }
}

/// A caller that takes a server's whole round of questions to its own client and brings the
/// answers back: a 2026-07-28 client, to whom the questions go as its own call's
/// `input_required` result, answered when it sends the call again.
#[async_trait]
pub trait Rounds: Send + Sync + 'static {
    /// The answers to `questions` (keyed as asked), or why there are none. `cancel` fires
    /// when the call is given up.
    async fn round(
        &self,
        server: &str,
        questions: rmcp::model::InputRequests,
        cancel: CancellationToken,
    ) -> Result<rmcp::model::InputResponses, Unanswered>;
}

/// Why a round of questions got no answers, in words for the server's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unanswered {
    /// The call the questions belong to ended before they could be passed on.
    #[error("{client}'s call is over")]
    CallOver { client: String },
    /// The one asked gave the round up or went away.
    #[error("{client} did not answer (its round was given up, or it went away)")]
    NotAnswered { client: String },
    /// The server took its question back (the call was cancelled).
    #[error("the question was taken back")]
    TakenBack,
}

/// A caller that answers a server's questions during its own call, and which kinds it can.
#[derive(Clone)]
pub struct Asker {
    pub handler: Arc<dyn ServerRequests>,
    /// Takes a 2026-07-28 server's rounds of questions whole, every kind (roots included),
    /// instead of `handler` answering them one by one.
    pub rounds: Option<Arc<dyn Rounds>>,
    /// What a 2026-07-28 server is told the caller can answer (its `clientCapabilities`),
    /// instead of Toolgate's own: the client's, since the client is the one asked.
    pub capabilities: Option<rmcp::model::ClientCapabilities>,
    /// It declared `sampling`.
    pub sampling: bool,
    /// It declared `elicitation` (form questions).
    pub forms: bool,
    /// It declared URL elicitation.
    pub urls: bool,
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asker")
            .field("sampling", &self.sampling)
            .field("forms", &self.forms)
            .field("urls", &self.urls)
            .field("rounds", &self.rounds.is_some())
            .finish_non_exhaustive()
    }
}

/// A kind of question a server asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    Sampling,
    Form,
    Url,
}

impl Asker {
    /// Whether it can answer `question`.
    pub fn answers(&self, question: Question) -> bool {
        match question {
            Question::Sampling => self.sampling,
            Question::Form => self.forms,
            Question::Url => self.urls,
        }
    }
}

/// The kind of an elicitation: a URL question, else a form.
pub fn question_of(params: &rmcp::model::ElicitRequestParams) -> Question {
    match params {
        rmcp::model::ElicitRequestParams::UrlElicitationParams { .. } => Question::Url,
        _ => Question::Form,
    }
}

/// Each server's running calls: an id, and the call's asker if it has one.
type Calls = HashMap<String, Vec<(u64, Option<Asker>)>>;

/// The calls running on each server, with their askers.
#[derive(Default)]
pub struct InFlight {
    next: AtomicU64,
    calls: Mutex<Calls>,
}

impl InFlight {
    /// Records a call on `server` until the returned guard is dropped.
    pub fn enter(self: &Arc<Self>, server: &str, asker: Option<Asker>) -> Flight {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock()
            .entry(server.to_owned())
            .or_default()
            .push((id, asker));
        Flight {
            calls: self.clone(),
            server: server.to_owned(),
            id,
        }
    }

    /// Who answers `question` from `server` when it cannot say which call it belongs to: the
    /// asker of the one call running there, if that call has one that can; else nobody (the
    /// default handler).
    pub fn asker(&self, server: &str, question: Question) -> Option<Arc<dyn ServerRequests>> {
        let calls = self.lock();
        match calls.get(server).map(Vec::as_slice) {
            Some([(_, Some(asker))]) if asker.answers(question) => Some(asker.handler.clone()),
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One call's place in [`InFlight`], given up when dropped.
pub struct Flight {
    calls: Arc<InFlight>,
    server: String,
    id: u64,
}

impl Drop for Flight {
    fn drop(&mut self) {
        let mut calls = self.calls.lock();
        if let Some(list) = calls.get_mut(&self.server) {
            list.retain(|(id, _)| *id != self.id);
            if list.is_empty() {
                calls.remove(&self.server);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asker(sampling: bool) -> Asker {
        Asker {
            handler: Arc::new(DeclineServerRequests),
            rounds: None,
            capabilities: None,
            sampling,
            forms: true,
            urls: false,
        }
    }

    #[test]
    fn a_question_goes_to_the_only_call_running_when_it_can_answer() {
        let calls = Arc::new(InFlight::default());
        assert!(calls.asker("s", Question::Form).is_none(), "no call");
        let one = calls.enter("s", Some(asker(false)));
        assert!(calls.asker("s", Question::Form).is_some());
        assert!(
            calls.asker("s", Question::Sampling).is_none(),
            "it did not declare sampling"
        );
        assert!(calls.asker("s", Question::Url).is_none());
        assert!(calls.asker("other", Question::Form).is_none());
        let chat = calls.enter("s", None);
        assert!(
            calls.asker("s", Question::Form).is_none(),
            "two calls: nobody can tell whose question it is"
        );
        drop(chat);
        assert!(calls.asker("s", Question::Form).is_some());
        drop(one);
        assert!(calls.asker("s", Question::Form).is_none());
        assert!(calls.lock().is_empty(), "nothing left behind");
    }

    #[test]
    fn a_call_without_an_asker_leaves_questions_to_the_default() {
        let calls = Arc::new(InFlight::default());
        let _chat = calls.enter("s", None);
        assert!(calls.asker("s", Question::Sampling).is_none());
    }
}
