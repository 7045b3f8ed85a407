//! The approval gate: a tool call waits here until the user answers it.
//!
//! A held call gets an unguessable id (a random UUID) and a one-shot channel. Whoever shows the
//! call (window, tray, terminal) answers it by id through [`Gate::answer`]; the first answer wins
//! and the id is gone after it, so an answer cannot be replayed. If the whole gate is dropped, the
//! waiting calls are denied: a lost answer never becomes an approval.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

/// What a held request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum RequestKind {
    /// A tool call the model wants to make. Approving runs it with `arguments`.
    #[default]
    ToolCall,
    /// A server asks to use the user's model (`sampling/createMessage`). `arguments` are the
    /// request the model will get; a second request of this kind shows the model's reply before
    /// it goes back to the server.
    Sampling,
    /// A server asks the user a question (`elicitation/create`). `arguments` are the answer
    /// (filled with the form's defaults), `input_schema` the form, and `message` the question.
    Elicitation,
    /// A tool's result, held for the user's review before the model sees it. `arguments` are
    /// `{"text": …}`, the result as the model would get it; approving passes it, an edit
    /// replaces it, a denial withholds it. `message` says what the call was.
    ToolResult,
}

/// A request held for the user's decision: usually a tool call, or a server's request.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    /// The gate's id for this request: unguessable, answered once.
    pub id: String,
    /// Named `request`, not `kind`: turn events are tagged with `kind` and embed this struct.
    pub request: RequestKind,
    /// What the server says to the user (an elicitation's question).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
    /// The model's id for the call.
    pub call_id: String,
    pub server_id: String,
    pub server_name: String,
    pub tool: String,
    /// The arguments in full, exactly as they will be sent.
    pub arguments: Value,
    pub read_only: bool,
    pub destructive: bool,
    /// The tool's input schema, for editing the arguments before approving.
    pub input_schema: Value,
    /// Why the user is asked (no rule applies, a destructive tool, a grant whose tool changed…).
    pub reason: String,
    /// No rule could let this call run without a question (untrusted content and a way out,
    /// a secret, a value from outside content: `Verdict::beyond_rules`). Only a person's
    /// answer lets it run, so a question offers no "always allow", which would not change
    /// the outcome.
    pub beyond_rules: bool,
    /// The connected client that asks (through the gateway), e.g. `claude-code`; `None` for
    /// Toolgate's own chat and the servers' requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client: Option<String>,
    /// The title of Toolgate's chat that asks, when one does, as it was when it asked: the
    /// tray, the notification and *Activity* say which chat, where the chat is not in view.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub chat: Option<String>,
    /// A server's question that is a page to open (URL-mode elicitation): approving opens it
    /// in the browser, and only that does.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub link: Option<Link>,
    /// What the tool does, as its server describes it (the server's words: plain text).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// When the gate denies the request if nobody answers (Unix milliseconds), set by
    /// [`Gate::ask`]; `None` for a request held without a time limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub deadline: Option<u64>,
}

/// A page a server asks the user to open, with the domain to show prominently: the host as
/// the browser will reach it (an international name in its ASCII form, so a look-alike is
/// seen for what it is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Link {
    pub url: String,
    pub domain: String,
}

/// How far an "always" answer reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum Reach {
    /// This tool only.
    Tool,
    /// Every tool of this server.
    Server,
}

/// How long an "always" answer lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum Lasting {
    /// Until this conversation ends.
    Conversation,
    /// Until the user revokes it.
    Always,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(
    tag = "decision",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Decision {
    /// Run it, this once.
    Approve,
    /// Run it with these arguments instead (checked against the tool's schema first).
    ApproveEdited {
        arguments: Value,
    },
    /// Run it, and from now on allow it (or the whole server) without asking.
    Allow {
        reach: Reach,
        lasting: Lasting,
    },
    Deny {
        reason: Option<String>,
    },
    /// Refuse it, and from now on refuse it without asking.
    DenyAlways {
        reach: Reach,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    #[error("no tool call is waiting with that id; it was already answered or the turn ended")]
    NotPending,
    #[error("the arguments or answer do not fit what was asked for: {}", .0.join("; "))]
    InvalidArguments(Vec<String>),
}

pub struct Gate {
    pending: Mutex<HashMap<String, (PendingCall, oneshot::Sender<Decision>)>>,
    /// Bumped whenever a call starts or stops waiting, for the tray and other places that show
    /// the pending calls.
    changes: tokio::sync::watch::Sender<u64>,
    /// Why nobody can answer, when nobody can (the CLI without a terminal). Then a request the
    /// rules leave to the user is refused at once and logged as unattended, rather than held
    /// and "denied by the user", which no user did.
    unattended: Option<String>,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            pending: Mutex::default(),
            changes: tokio::sync::watch::channel(0).0,
            unattended: None,
        }
    }
}

impl PendingCall {
    /// A short line naming the request, for a menu: "write_file on Files".
    pub fn summary(&self) -> String {
        let line = match self.request {
            RequestKind::ToolCall => match &self.client {
                Some(client) => format!(
                    "{client} wants to run {} on {}",
                    self.tool, self.server_name
                ),
                None => format!("{} on {}", self.tool, self.server_name),
            },
            RequestKind::Sampling => format!("{} wants to use your model", self.server_name),
            RequestKind::Elicitation if self.link.is_some() => {
                format!("{} asks you to open a page", self.server_name)
            }
            RequestKind::Elicitation => format!("{} asks you a question", self.server_name),
            RequestKind::ToolResult => format!("Review the result of {}", self.tool),
        };
        if line.chars().count() <= 48 {
            line
        } else {
            format!("{}…", line.chars().take(47).collect::<String>())
        }
    }
}

/// Remembers which waiting requests were already announced (by a desktop notification, say).
#[derive(Default)]
pub struct Announcer {
    seen: HashSet<String>,
}

impl Announcer {
    /// The requests among `waiting` not seen before. Forgets the ones no longer waiting, so the
    /// set stays as small as the gate.
    pub fn fresh(&mut self, waiting: &[PendingCall]) -> Vec<PendingCall> {
        let fresh = waiting
            .iter()
            .filter(|call| !self.seen.contains(&call.id))
            .cloned()
            .collect();
        self.seen = waiting.iter().map(|call| call.id.clone()).collect();
        fresh
    }
}

/// How a wait at the gate ended ([`Gate::ask`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// Someone answered.
    Answered(Decision),
    /// The wait was stopped: the user stopped the turn, or the one asking took it back.
    Stopped,
    /// Nobody answered in time.
    TimedOut(std::time::Duration),
    /// Nobody can be asked ([`Gate::unattended`]): why, in words.
    Unattended(String),
}

/// Takes a request off the gate when its wait ends, however it ends.
struct Withdraw<'a>(&'a Gate, String);

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.0.withdraw(&self.1);
    }
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

    /// A gate nobody answers: every request the rules leave to the user is refused with `why`.
    pub fn unattended(why: impl Into<String>) -> Self {
        Self {
            unattended: Some(why.into()),
            ..Self::default()
        }
    }

    /// Why nobody can be asked, if nobody can ([`Gate::unattended`]).
    pub fn nobody_to_ask(&self) -> Option<&str> {
        self.unattended.as_deref()
    }

    /// A receiver that changes whenever the set of waiting calls changes.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Holds a call: gives it a fresh id and returns it with the future of its answer.
    pub fn hold(&self, mut call: PendingCall) -> (PendingCall, Answer) {
        call.id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        self.pending().insert(call.id.clone(), (call.clone(), tx));
        self.changed();
        (call, Answer(rx))
    }

    /// Answers a held call. Each id can be answered once. Edited arguments that do not fit the
    /// tool's schema are refused and the call keeps waiting, so the user can fix them.
    pub fn answer(&self, id: &str, decision: Decision) -> Result<(), GateError> {
        let mut pending = self.pending();
        let (call, _) = pending.get(id).ok_or(GateError::NotPending)?;
        // What will be sent must fit: edited arguments always, and an answer to a server's
        // question as it stands (its defaults may leave a required field empty).
        let sent = match &decision {
            Decision::ApproveEdited { arguments } => Some(arguments),
            Decision::Approve | Decision::Allow { .. }
                if call.request == RequestKind::Elicitation =>
            {
                Some(&call.arguments)
            }
            _ => None,
        };
        if let Some(arguments) = sent {
            toolgate_policy::validate_arguments(&call.input_schema, arguments)
                .map_err(GateError::InvalidArguments)?;
        }
        let (_, tx) = pending.remove(id).ok_or(GateError::NotPending)?;
        drop(pending);
        self.changed();
        tx.send(decision).map_err(|_| GateError::NotPending)
    }

    /// Answers every waiting call the same way ("approve all", "deny all"), returning how many.
    pub fn answer_all(&self, decision: &Decision) -> usize {
        let ids: Vec<String> = self.pending().keys().cloned().collect();
        ids.iter()
            .filter(|id| self.answer(id, decision.clone()).is_ok())
            .count()
    }

    /// Holds `request` until it is answered, `cancel` fires, or `timeout` passes. `held` gets the
    /// request as the gate shows it (with its id) once it waits, to announce it. Whatever ends
    /// the wait, this future being dropped included (a turn cancelled, a client gone, a server
    /// that took its request back), the request leaves the gate: the window and the tray never
    /// show a question nobody waits for. A stop wins a tie with an answer, so nothing starts
    /// after the user stopped.
    pub async fn ask(
        &self,
        request: PendingCall,
        cancel: &tokio_util::sync::CancellationToken,
        timeout: std::time::Duration,
        held: impl FnOnce(PendingCall),
    ) -> Asked {
        if let Some(why) = self.nobody_to_ask() {
            return Asked::Unattended(why.to_owned());
        }
        let mut request = request;
        request.deadline = std::time::SystemTime::now()
            .checked_add(timeout)
            .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|at| u64::try_from(at.as_millis()).unwrap_or(u64::MAX));
        let (shown, answer) = self.hold(request);
        let _withdraw = Withdraw(self, shown.id.clone());
        held(shown);
        tokio::select! {
            biased;
            () = cancel.cancelled() => Asked::Stopped,
            answer = tokio::time::timeout(timeout, answer) => match answer {
                Ok(decision) => Asked::Answered(decision),
                Err(_) => Asked::TimedOut(timeout),
            },
        }
    }

    /// Takes back a call nobody needs an answer to any more (its turn was stopped).
    pub fn withdraw(&self, id: &str) {
        if self.pending().remove(id).is_some() {
            self.changed();
        }
    }

    /// The calls waiting for an answer, for a UI that opens late (or the tray).
    pub fn waiting(&self) -> Vec<PendingCall> {
        self.pending().values().map(|(c, _)| c.clone()).collect()
    }

    /// Denies every waiting call, for example when the user stops the turn or quits.
    pub fn deny_all(&self, reason: &str) {
        let drained: Vec<_> = self.pending().drain().collect();
        if !drained.is_empty() {
            self.changed();
        }
        for (_, (_, tx)) in drained {
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
            request: RequestKind::ToolCall,
            message: None,
            call_id: "c1".into(),
            server_id: "s".into(),
            server_name: "S".into(),
            tool: "t".into(),
            arguments: serde_json::json!({}),
            read_only: false,
            destructive: false,
            input_schema: serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"]
            }),
            reason: String::new(),
            beyond_rules: false,
            client: None,
            chat: None,
            link: None,
            description: None,
            deadline: None,
        }
    }

    #[tokio::test]
    async fn edited_arguments_must_fit_the_schema_and_a_bad_edit_keeps_the_call_waiting() {
        let gate = Gate::default();
        let (held, answer) = gate.hold(call());
        let bad = Decision::ApproveEdited {
            arguments: serde_json::json!({"path": 3}),
        };
        assert!(matches!(
            gate.answer(&held.id, bad),
            Err(GateError::InvalidArguments(_))
        ));
        assert_eq!(gate.waiting().len(), 1, "still waiting for a good answer");
        let good = Decision::ApproveEdited {
            arguments: serde_json::json!({"path": "/tmp/x"}),
        };
        gate.answer(&held.id, good.clone()).expect("fits");
        assert_eq!(answer.await, good);
    }

    #[tokio::test]
    async fn watchers_see_calls_arrive_and_leave() {
        let gate = Gate::default();
        let mut changes = gate.subscribe();
        let (held, _answer) = gate.hold(call());
        assert!(changes.has_changed().unwrap());
        changes.mark_unchanged();
        gate.answer(&held.id, Decision::Approve).unwrap();
        assert!(changes.has_changed().unwrap(), "an answer is a change too");
        assert_eq!(held.summary(), "t on S");
        let mut long = call();
        long.tool = "x".repeat(60);
        assert!(long.summary().ends_with('…') && long.summary().chars().count() == 48);
    }

    #[tokio::test]
    async fn answer_all_answers_each_waiting_call() {
        let gate = Gate::default();
        let (_a, first) = gate.hold(call());
        let (_b, second) = gate.hold(call());
        assert_eq!(gate.answer_all(&Decision::Approve), 2);
        assert_eq!(first.await, Decision::Approve);
        assert_eq!(second.await, Decision::Approve);
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
    async fn ask_withdraws_its_request_however_the_wait_ends() {
        use std::time::Duration;
        use tokio_util::sync::CancellationToken;
        let gate = std::sync::Arc::new(Gate::default());
        let long = Duration::from_secs(60);
        // A call asked in a task of its own, once it waits at the gate.
        async fn waiting(gate: &std::sync::Arc<Gate>) -> tokio::task::JoinHandle<Asked> {
            let asking = {
                let gate = gate.clone();
                tokio::spawn(async move {
                    gate.ask(
                        call(),
                        &CancellationToken::new(),
                        Duration::from_secs(60),
                        |_| {},
                    )
                    .await
                })
            };
            while gate.waiting().is_empty() {
                tokio::task::yield_now().await;
            }
            asking
        }

        // Answered.
        let asking = waiting(&gate).await;
        let id = gate.waiting()[0].id.clone();
        gate.answer(&id, Decision::Approve).unwrap();
        assert_eq!(asking.await.unwrap(), Asked::Answered(Decision::Approve));

        // Stopped: the stop wins even over an answer already given.
        let stop = CancellationToken::new();
        stop.cancel();
        let mut shown = None;
        let asked = gate.ask(call(), &stop, long, |c| shown = Some(c)).await;
        assert_eq!(asked, Asked::Stopped);
        assert!(
            shown.is_some(),
            "the request was announced before the stop was seen"
        );
        assert!(gate.waiting().is_empty());

        // Timed out.
        let asked = gate
            .ask(
                call(),
                &CancellationToken::new(),
                Duration::from_millis(5),
                |_| {},
            )
            .await;
        assert_eq!(asked, Asked::TimedOut(Duration::from_millis(5)));
        assert!(gate.waiting().is_empty());

        // Dropped mid-wait (a cancelled turn's future, a client that left).
        let asking = waiting(&gate).await;
        asking.abort();
        let _ = asking.await;
        assert!(
            gate.waiting().is_empty(),
            "a dropped wait leaves nothing behind"
        );

        // Nobody to ask: nothing is held at all.
        let unattended = Gate::unattended("no terminal");
        let mut announced = false;
        let asked = unattended
            .ask(call(), &CancellationToken::new(), long, |_| {
                announced = true
            })
            .await;
        assert_eq!(asked, Asked::Unattended("no terminal".into()));
        assert!(!announced && unattended.waiting().is_empty());
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

    fn request(id: &str, request: RequestKind) -> PendingCall {
        PendingCall {
            id: id.into(),
            request,
            message: None,
            call_id: String::new(),
            server_id: "e".into(),
            server_name: "Everything".into(),
            tool: "echo".into(),
            arguments: serde_json::json!({"secret": "do not show"}),
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

    #[test]
    fn each_request_is_announced_once() {
        let mut announcer = Announcer::default();
        let a = request("a", RequestKind::ToolCall);
        let b = request("b", RequestKind::Elicitation);
        assert_eq!(announcer.fresh(std::slice::from_ref(&a)), vec![a.clone()]);
        assert!(announcer.fresh(std::slice::from_ref(&a)).is_empty());
        assert_eq!(announcer.fresh(&[a.clone(), b.clone()]), vec![b.clone()]);
        // Answered, then a new request reusing nothing: only it is new.
        let c = request("c", RequestKind::Sampling);
        assert_eq!(announcer.fresh(std::slice::from_ref(&c)), vec![c]);
        assert_eq!(announcer.seen.len(), 1, "forgets what left the gate");
    }

    #[tokio::test]
    async fn a_request_asked_with_a_time_limit_carries_its_deadline() {
        use std::time::{Duration, SystemTime, UNIX_EPOCH};
        let gate = Gate::default();
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let mut shown = None;
        let asked = gate
            .ask(
                request("a", RequestKind::ToolCall),
                &tokio_util::sync::CancellationToken::new(),
                Duration::from_millis(5),
                |c| shown = Some(c),
            )
            .await;
        assert_eq!(asked, Asked::TimedOut(Duration::from_millis(5)));
        let deadline = shown.and_then(|c| c.deadline).expect("a deadline");
        let expected = (before + Duration::from_millis(5)).as_millis() as u64;
        assert!(
            (expected..expected + 1_000).contains(&deadline),
            "{deadline} against {expected}"
        );
    }

    #[test]
    fn a_connected_clients_call_is_announced_with_its_name() {
        let call = PendingCall {
            client: Some("claude-code".into()),
            chat: None,
            link: None,
            ..request("c", RequestKind::ToolCall)
        };
        assert_eq!(
            call.summary(),
            "claude-code wants to run echo on Everything"
        );
        let (title, body) = call.notification(crate::Asking::default());
        assert_eq!(title, "Toolgate: Approve echo on Everything?");
        assert!(
            body.starts_with("Asked by the connected app claude-code\n"),
            "{body}"
        );
    }
}
