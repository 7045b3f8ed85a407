//! The requests waiting for the user's answer, as the window, the tray and the terminal show
//! and answer them. Cheap to clone: a task that answers from elsewhere keeps its own.

use std::sync::Arc;

use toolgate_agent::{Decision, Gate, GateError, PendingCall};

/// The approval gate as front ends see it: what waits, a signal when that changes, and the
/// user's answers. Requests are put at the gate by the host's agents, never by a front end.
#[derive(Clone)]
pub struct Approvals {
    pub(crate) gate: Arc<Gate>,
}

impl Approvals {
    /// Every request waiting for an answer.
    pub fn waiting(&self) -> Vec<PendingCall> {
        self.gate.waiting()
    }

    /// A receiver that changes whenever a request starts or stops waiting.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.gate.subscribe()
    }

    /// The user's answer to request `id`; refused when it is no longer waiting (answered
    /// elsewhere first) or the edited arguments do not fit.
    pub fn answer(&self, id: &str, decision: Decision) -> Result<(), GateError> {
        self.gate.answer(id, decision)
    }

    /// The same answer to every waiting request (approve all, deny all); how many took it.
    pub fn answer_all(&self, decision: &Decision) -> usize {
        self.gate.answer_all(decision)
    }

    /// Refuses every waiting request with `reason`.
    pub fn deny_all(&self, reason: &str) {
        self.gate.deny_all(reason)
    }

    /// Why nobody can answer here (a host opened unattended refuses what the rules leave
    /// open), or `None` when someone can.
    pub fn nobody_to_ask(&self) -> Option<&str> {
        self.gate.nobody_to_ask()
    }
}
