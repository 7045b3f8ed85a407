//! Waiting for a call that runs apart from its request, and resuming it when the client sends
//! the call again with its answers (see `crate::rounds`).

use rmcp::model::InputResponses;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::{Client, ClientState, Session};
use crate::rounds::{asked, refused_state, Pending, Running, Step, ROUND_PREFIX};

impl Session {
    /// Waits for `running` on behalf of `context`'s request: its result, or its next round
    /// of questions (kept for the client to answer), or the request's cancellation (which
    /// cancels the call).
    pub(super) async fn wait_for(
        &self,
        client: &Client,
        mut running: Running,
        context: &RequestContext<RoleServer>,
    ) -> Result<Step, ErrorData> {
        let ct = context.ct.clone();
        // The call runs in this request's task, polled here; a request that goes away while it
        // waits (its future dropped) takes the call with it. A call that asked something is
        // kept, unpolled, for its round: it waits for the answers anyway.
        let guard = running.cancel.clone().drop_guard();
        let round = tokio::select! {
            biased;
            outcome = &mut running.outcome => return outcome.map(Step::Done),
            // Disabled once nobody can ask (an older client's call, or the call ending).
            Some(round) = running.rounds.recv() => round,
            () = ct.cancelled() => {
                running.cancel.cancel();
                return Err(ErrorData::new(rmcp::model::ErrorCode(-32800), "the call was cancelled", None));
            }
        };
        let state = format!(
            "{ROUND_PREFIX}{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let result = asked(round.questions, &state)?;
        guard.disarm();
        let pending = Pending {
            running,
            answers: round.answers,
        };
        client.state.waiting.lock().insert(state.clone(), pending);
        // A round nobody resumes is given up after the user's own wait.
        let (owner, wait) = (
            client.state.clone(),
            self.host.settings().policy.approval_timeout(),
        );
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            if let Some(gone) = owner.waiting.lock().remove(&state) {
                gone.running.cancel.cancel();
            }
        });
        Ok(Step::Asked(result))
    }

    /// The client sent its call again with `state` and its answers: they go to the round
    /// waiting under that state, and this request waits for what comes next.
    pub(super) async fn resume(
        &self,
        client: &Client,
        state: &str,
        answers: InputResponses,
        context: &RequestContext<RoleServer>,
    ) -> Result<Step, ErrorData> {
        let pending = take(&client.state, state).ok_or_else(refused_state)?;
        pending.running.target.follow(context);
        let _ = pending.answers.send(answers);
        self.wait_for(client, pending.running, context).await
    }
}

fn take(state: &ClientState, key: &str) -> Option<Pending> {
    state.waiting.lock().remove(key)
}
