//! The approval gate: a tool call waits here until the user answers it.
//!
//! A held call gets an unguessable id (a random UUID) and a one-shot channel. Whoever shows the
//! call (window, tray, terminal) answers it by id through [`Gate::answer`]; the first answer wins
//! and the id is gone after it, so an answer cannot be replayed. If the whole gate is dropped, the
//! waiting calls are denied: a lost answer never becomes an approval.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

/// A tool call held for the user's decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    /// The gate's id for this request: unguessable, answered once.
    pub id: String,
    /// The model's id for the call.
    pub call_id: String,
    pub server_id: String,
    pub server_name: String,
    pub tool: String,
    /// The arguments in full, exactly as they will be sent.
    pub arguments: Value,
    pub read_only: bool,
    pub destructive: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "camelCase")]
pub enum Decision {
    Approve,
    Deny { reason: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    #[error("no tool call is waiting with that id; it was already answered or the turn ended")]
    NotPending,
}

#[derive(Default)]
pub struct Gate {
    pending: Mutex<HashMap<String, (PendingCall, oneshot::Sender<Decision>)>>,
}

/// The answer to one held call. Resolves to a denial if the gate goes away unanswered.
pub struct Answer(oneshot::Receiver<Decision>);

impl std::future::Future for Answer {
    type Output = Decision;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Decision> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(|r| {
            r.unwrap_or(Decision::Deny {
                reason: Some("the request was dropped before anyone answered".into()),
            })
        })
    }
}

impl Gate {
    fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (PendingCall, oneshot::Sender<Decision>)>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds a call: gives it a fresh id and returns it with the future of its answer.
    pub fn hold(&self, mut call: PendingCall) -> (PendingCall, Answer) {
        call.id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        self.pending().insert(call.id.clone(), (call.clone(), tx));
        (call, Answer(rx))
    }

    /// Answers a held call. Each id can be answered once.
    pub fn answer(&self, id: &str, decision: Decision) -> Result<(), GateError> {
        let (_, tx) = self.pending().remove(id).ok_or(GateError::NotPending)?;
        tx.send(decision).map_err(|_| GateError::NotPending)
    }

    /// Takes back a call nobody needs an answer to any more (its turn was stopped).
    pub fn withdraw(&self, id: &str) {
        self.pending().remove(id);
    }

    /// The calls waiting for an answer, for a UI that opens late (or the tray).
    pub fn waiting(&self) -> Vec<PendingCall> {
        self.pending().values().map(|(c, _)| c.clone()).collect()
    }

    /// Denies every waiting call, for example when the user stops the turn or quits.
    pub fn deny_all(&self, reason: &str) {
        for (_, (_, tx)) in self.pending().drain() {
            let _ = tx.send(Decision::Deny {
                reason: Some(reason.to_owned()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> PendingCall {
        PendingCall {
            id: "chosen-by-caller".into(),
            call_id: "c1".into(),
            server_id: "s".into(),
            server_name: "S".into(),
            tool: "t".into(),
            arguments: serde_json::json!({}),
            read_only: false,
            destructive: false,
        }
    }

    #[tokio::test]
    async fn an_answer_is_delivered_once_to_a_fresh_id() {
        let gate = Gate::default();
        let (held, answer) = gate.hold(call());
        assert_ne!(held.id, "chosen-by-caller", "the gate picks the id");
        assert_eq!(held.id.len(), 36);
        assert_eq!(gate.waiting(), vec![held.clone()]);
        gate.answer(&held.id, Decision::Approve)
            .expect("first answer");
        assert_eq!(
            gate.answer(&held.id, Decision::Approve),
            Err(GateError::NotPending)
        );
        assert_eq!(answer.await, Decision::Approve);
        assert!(gate.waiting().is_empty());
    }

    #[tokio::test]
    async fn an_unknown_id_is_refused_and_dropping_the_gate_denies() {
        let gate = Gate::default();
        let (_held, answer) = gate.hold(call());
        assert_eq!(
            gate.answer("guess", Decision::Approve),
            Err(GateError::NotPending)
        );
        drop(gate);
        assert!(matches!(answer.await, Decision::Deny { .. }));
    }

    #[tokio::test]
    async fn deny_all_answers_every_waiting_call() {
        let gate = Gate::default();
        let (_a, first) = gate.hold(call());
        let (_b, second) = gate.hold(call());
        gate.deny_all("stopped");
        for answer in [first, second] {
            assert_eq!(
                answer.await,
                Decision::Deny {
                    reason: Some("stopped".into())
                }
            );
        }
    }
}
