//! A client's call that runs apart from the request that started it, so that a server's
//! questions can go back to a 2026-07-28 client as its own call's `input_required` result.
//!
//! The call (a tool call, or a prompt) is a future the waiting request polls. The request waits
//! for it:
//! when the server asks something (`toolgate_mcp::Rounds`), the round is kept in the client's
//! state under a fresh request state (`tgr_…`, random) and the questions go back to the client;
//! when the client sends the call again with that state and its answers, the answers go to the
//! waiting round and the new request waits in turn, for the result or the next round. The
//! server's own request state never leaves Toolgate (the manager echoes it). A state Toolgate
//! did not give, or gave another client, or gave too long ago, is refused (-32602); a round
//! nobody resumes is given up after the user's approval wait.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolResult, GetPromptResult, InputRequests, InputRequiredResult, InputResponses,
    ProgressToken,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// What a client's request state starts with when Toolgate gave it.
pub(crate) const ROUND_PREFIX: &str = "tgr_";

/// What a call ends with.
pub(crate) enum Finished {
    Tool(CallToolResult),
    Prompt(GetPromptResult),
}

/// One round of a server's questions, waiting for the client's answers.
pub(crate) struct Round {
    pub questions: InputRequests,
    pub answers: oneshot::Sender<InputResponses>,
}

/// Where a call's progress and log messages go: the request now waiting for the call (its
/// peer, and the progress token it asked with). A call that asked its client something
/// continues on the client's next request.
#[derive(Clone)]
pub(crate) struct Target(Arc<Mutex<(Peer<RoleServer>, Option<ProgressToken>)>>);

impl Target {
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Self {
        Self(Arc::new(Mutex::new((
            context.peer.clone(),
            context.meta.get_progress_token(),
        ))))
    }

    pub(crate) fn follow(&self, context: &RequestContext<RoleServer>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) =
            (context.peer.clone(), context.meta.get_progress_token());
    }

    pub(crate) fn now(&self) -> (Peer<RoleServer>, Option<ProgressToken>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// What a call ends with, once polled to its end.
pub(crate) type Outcome =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Finished, ErrorData>> + Send>>;

/// A call under way: polled by the request that waits for it, kept between rounds.
pub(crate) struct Running {
    pub rounds: mpsc::Receiver<Round>,
    pub outcome: Outcome,
    /// Cancels the call at its server.
    pub cancel: CancellationToken,
    pub target: Target,
}

/// A round waiting for the client to send its call again.
pub(crate) struct Pending {
    pub running: Running,
    pub answers: oneshot::Sender<InputResponses>,
}

/// The rounds a client has waiting, by the request state it was given.
#[derive(Default)]
pub(crate) struct Waiting(Mutex<HashMap<String, Pending>>);

impl Waiting {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How a request waiting for a call ends.
pub(crate) enum Step {
    Done(Finished),
    Asked(InputRequiredResult),
}

pub(crate) fn asked(
    questions: InputRequests,
    state: &str,
) -> Result<InputRequiredResult, ErrorData> {
    serde_json::from_value(serde_json::json!({
        "resultType": "input_required",
        "inputRequests": questions,
        "requestState": state,
    }))
    .map_err(|e| {
        ErrorData::internal_error(
            format!("could not pass the server's questions on: {e}"),
            None,
        )
    })
}

pub(crate) fn refused_state() -> ErrorData {
    ErrorData::invalid_params(
        "this request state is not one Toolgate gave this client, or its round was given up: \
         send the call again without it to start over",
        None,
    )
}
