//! Calls a server runs as a task (the `io.modelcontextprotocol/tasks` extension): the server
//! answers `tools/call` with a task handle, and the call is then followed by polling `tasks/get`
//! at the interval the server asks for, its status passed on as progress, its questions
//! (`input_required`) answered through the same handler as any server request and sent with
//! `tasks/update`, until it completes, fails or is cancelled. Cancelling the call sends
//! `tasks/cancel` (the extension forbids `notifications/cancelled` for a task).
//!
//! The call belongs to the backend, not to a window: closing the window leaves it running and
//! the result reaches the conversation. A task is given at most its own time to live (`ttlMs`),
//! or [`UNLIMITED_CAP`] when it names none, so no call waits forever.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::model::{
    CancelTaskParams, CreateTaskResult, GetTaskParams, Task, TaskPayload, UpdateTaskParams,
};
use rmcp::service::Peer;
use rmcp::RoleClient;
use serde_json::Value;

use super::calls::{forwarding, Call};
use super::registry::ServerManager;
use crate::McpError;
use crate::{CallProgress, TaskState, ToolOutput};

/// The wait between polls when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// Bounds on the server's suggested wait: not so short that a server makes us spin, not so long
/// that a finished call sits unnoticed.
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(30);
/// How long a task that names no time to live is followed.
pub(super) const UNLIMITED_CAP: Duration = Duration::from_secs(24 * 60 * 60);

fn poll_interval(task: &Task) -> Duration {
    task.poll_interval_ms
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

fn status_name(task: &Task) -> String {
    serde_json::to_value(task.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "working".to_owned())
}

/// Sends `tasks/cancel` for a task whose caller went away before it ended.
struct CancelTaskOnDrop {
    peer: Option<Peer<RoleClient>>,
    task: String,
}

impl CancelTaskOnDrop {
    fn send(&mut self) {
        let Some(peer) = self.peer.take() else { return };
        let task = self.task.clone();
        tokio::spawn(async move {
            if let Err(e) = peer.cancel_task(CancelTaskParams::new(task.clone())).await {
                tracing::info!(%task, "could not cancel the task: {e}");
            }
        });
    }
}

impl Drop for CancelTaskOnDrop {
    fn drop(&mut self) {
        if self.peer.is_some() && tokio::runtime::Handle::try_current().is_ok() {
            self.send();
        }
    }
}

impl ServerManager {
    /// Follows a call the server turned into a task, to its result.
    pub(super) async fn follow_task(
        &self,
        call: &Call<'_>,
        created: CreateTaskResult,
    ) -> Result<ToolOutput, McpError> {
        let mut task = created.task;
        let id = task.task_id.clone();
        tracing::info!(server = call.server, tool = call.tool, task = %id, "the call runs as a task");
        let cap = task
            .ttl_ms
            .map_or(UNLIMITED_CAP, Duration::from_millis)
            .max(call.timeout);
        let deadline = tokio::time::Instant::now() + cap;
        let mut guard = CancelTaskOnDrop {
            peer: Some(call.peer.clone()),
            task: id.clone(),
        };
        let mut polls = 0u32;
        let mut answered: HashSet<String> = HashSet::new();
        let mut shown: Option<(String, Option<String>)> = None;
        loop {
            // Each status is shown once, with the message the server gave it.
            let state = (status_name(&task), task.status_message.clone());
            if shown.as_ref() != Some(&state) {
                if let Some(progress) = &call.progress {
                    let _ = progress.sink.send(CallProgress {
                        progress: f64::from(polls),
                        total: None,
                        message: state.1.clone(),
                        task: Some(TaskState {
                            id: id.clone(),
                            status: state.0.clone(),
                        }),
                    });
                }
                shown = Some(state);
            }
            tokio::select! {
                () = tokio::time::sleep(poll_interval(&task)) => {}
                () = call.cancel.cancelled() => {
                    guard.send();
                    return Err(call.cancelled());
                }
                never = forwarding(&call.progress) => match never {},
            }
            if tokio::time::Instant::now() >= deadline {
                guard.send();
                return Err(call.failed(format!(
                    "its task {id} did not finish within {} s, its time to live; Toolgate cancelled it",
                    cap.as_secs()
                )));
            }
            polls += 1;
            let polled = tokio::select! {
                polled = tokio::time::timeout(call.timeout, call.peer.get_task(GetTaskParams::new(id.clone()))) => polled,
                () = call.cancel.cancelled() => {
                    guard.send();
                    return Err(call.cancelled());
                }
                never = forwarding(&call.progress) => match never {},
            };
            let detailed = match polled {
                Ok(Ok(result)) => result.task,
                Ok(Err(e)) => return Err(call.service_error(e)),
                Err(_) => {
                    return Err(call.failed(format!(
                        "it did not answer a poll of its task {id} within {} s",
                        call.timeout.as_secs()
                    )))
                }
            };
            task = detailed.task;
            match detailed.payload {
                TaskPayload::Working => {}
                TaskPayload::InputRequired { input_requests } => {
                    // A question stays outstanding until the server has taken the answer in,
                    // so later polls repeat it: each is asked once.
                    let fresh: rmcp::model::InputRequests = input_requests
                        .into_iter()
                        .filter(|(key, _)| !answered.contains(key))
                        .collect();
                    if fresh.is_empty() {
                        continue;
                    }
                    answered.extend(fresh.keys().cloned());
                    // The stop wins over answers its own cancellation produced.
                    let responses = tokio::select! {
                        biased;
                        () = call.cancel.cancelled() => {
                            guard.send();
                            return Err(call.cancelled());
                        }
                        answers = self.fulfil(call.server, &call.roots, fresh, &call.cancel, call.asker.as_ref()) => answers
                            .map_err(|e| call.failed(format!("its task's question was not answered: {e}")))?,
                    };
                    if call.cancel.is_cancelled() {
                        guard.send();
                        return Err(call.cancelled());
                    }
                    let update = UpdateTaskParams::new(id.clone(), responses);
                    match tokio::time::timeout(call.timeout, call.peer.update_task(update)).await {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => return Err(call.service_error(e)),
                        Err(_) => {
                            return Err(call.failed(format!(
                                "it did not take the answers for its task {id} within {} s",
                                call.timeout.as_secs()
                            )))
                        }
                    }
                }
                TaskPayload::Completed { result } => {
                    guard.peer = None;
                    // Typed here, as a direct call's result is by rmcp.
                    return serde_json::from_value(Value::Object(result))
                        .map(ToolOutput::new)
                        .map_err(|e| {
                            call.failed(format!("its task's result is not a tool result: {e}"))
                        });
                }
                TaskPayload::Failed { error } => {
                    guard.peer = None;
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .map_or_else(|| Value::Object(error.clone()).to_string(), str::to_owned);
                    return Err(call.failed(format!("its task failed: {message}")));
                }
                TaskPayload::Cancelled => {
                    guard.peer = None;
                    return Err(call.failed(match &task.status_message {
                        Some(why) => format!("it cancelled the task: {why}"),
                        None => "it cancelled the task".to_owned(),
                    }));
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_poll_interval_is_honoured_within_bounds() {
        let mut task = Task::new("t", rmcp::model::TaskStatus::Working, "", "");
        assert_eq!(poll_interval(&task), DEFAULT_POLL);
        task.poll_interval_ms = Some(250);
        assert_eq!(poll_interval(&task), Duration::from_millis(250));
        task.poll_interval_ms = Some(0);
        assert_eq!(poll_interval(&task), MIN_POLL);
        task.poll_interval_ms = Some(3_600_000);
        assert_eq!(poll_interval(&task), MAX_POLL);
        assert_eq!(status_name(&task), "working");
    }
}
