//! A server's question during a connected client's call, asked of that client.
//!
//! When a client of the gateway calls a tool and the server asks something meanwhile (sampling:
//! "let your model write this"; elicitation: "ask your user this"), the question is the
//! client's to answer, as it would be were the server connected to it directly: its model, its
//! user. [`ClientAsker`] sends it to the client on the call's own stream (the request is marked
//! as the call's, so a Streamable HTTP client gets it on the call's response, not only on its
//! standalone stream) and passes the answer back unchanged. Only a client that declared the
//! capability gets one; otherwise the question goes to Toolgate's gate as before. A 2026-07-28
//! client (which a server may not send requests to) gets its server's questions as its own
//! call's `input_required` result instead ([`ClientRounds`]). See `toolgate_mcp::Asker`.
#![allow(deprecated)]

use async_trait::async_trait;
use rmcp::model::{
    ClientResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ErrorCode, GetExtensions, InputRequest,
    InputRequests, InputResponses, RequestId, ServerRequest,
};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions, ServiceError};
use rmcp::{ErrorData, Peer, RoleServer};
use tokio_util::sync::CancellationToken;
use toolgate_mcp::{Rounds, ServerRequests, Unanswered};

pub(crate) struct ClientAsker {
    peer: Peer<RoleServer>,
    /// The client's `tools/call` the questions belong to.
    call: RequestId,
    client: String,
}

impl ClientAsker {
    pub(crate) fn new(peer: Peer<RoleServer>, call: RequestId, client: String) -> Self {
        Self { peer, call, client }
    }

    /// Sends `request` to the client on its call's stream and waits for the answer, or until
    /// the server takes the question back (then the client is told to drop it too).
    async fn ask(
        &self,
        server: &str,
        what: &str,
        mut request: ServerRequest,
        cancel: CancellationToken,
    ) -> Result<ClientResult, ErrorData> {
        tracing::info!(client = %self.client, server, "passing a server's {what} request to the client that made the call");
        request
            .extensions_mut()
            .insert(OriginatingRequestId(self.call.clone()));
        let unanswered = |e: ServiceError| match e {
            ServiceError::McpError(error) => error,
            other => ErrorData::new(
                ErrorCode(-32603),
                format!("{} could not be asked ({what}): {other}", self.client),
                None,
            ),
        };
        let handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(unanswered)?;
        let id = handle.id.clone();
        tokio::select! {
            answer = handle.await_response() => answer.map_err(unanswered),
            () = cancel.cancelled() => {
                let _ = self
                    .peer
                    .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
                        Some(id),
                        Some("the server took its question back".to_owned()),
                    ))
                    .await;
                Err(ErrorData::new(
                    ErrorCode(-32800),
                    "the question was taken back",
                    None,
                ))
            }
        }
    }
}

#[async_trait]
impl ServerRequests for ClientAsker {
    async fn create_message(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
        cancel: CancellationToken,
    ) -> Result<CreateMessageResult, ErrorData> {
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match self.ask(server, "sampling", request, cancel).await? {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            _ => Err(ErrorData::internal_error(
                format!(
                    "{} answered a sampling request with something else",
                    self.client
                ),
                None,
            )),
        }
    }

    async fn elicit(
        &self,
        server: &str,
        params: ElicitRequestParams,
        cancel: CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match self.ask(server, "elicitation", request, cancel).await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(ErrorData::internal_error(
                format!(
                    "{} answered an elicitation request with something else",
                    self.client
                ),
                None,
            )),
        }
    }
}

/// A 2026-07-28 client's call: the server's questions go back to the client whole, as the
/// call's own `input_required` result (`session/rounds.rs`), and its answers come back here.
/// A server of the older era asks one question at a time, by request: each is one round.
#[derive(Clone)]
pub(crate) struct ClientRounds {
    rounds: tokio::sync::mpsc::Sender<crate::rounds::Round>,
    client: String,
}

impl ClientRounds {
    pub(crate) fn new(
        rounds: tokio::sync::mpsc::Sender<crate::rounds::Round>,
        client: String,
    ) -> Self {
        Self { rounds, client }
    }

    /// One question as a round of its own: its answer.
    async fn one(
        &self,
        server: &str,
        question: InputRequest,
        cancel: CancellationToken,
    ) -> Result<serde_json::Value, ErrorData> {
        let mut answers = self
            .round(server, [("question".to_owned(), question)].into(), cancel)
            .await
            .map_err(|e| ErrorData::new(ErrorCode(-32603), e.to_string(), None))?;
        answers.remove("question").ok_or_else(|| {
            ErrorData::new(
                ErrorCode(-32603),
                format!("{} sent the call again without an answer", self.client),
                None,
            )
        })
    }
}

#[async_trait]
impl Rounds for ClientRounds {
    async fn round(
        &self,
        server: &str,
        questions: InputRequests,
        cancel: CancellationToken,
    ) -> Result<InputResponses, Unanswered> {
        tracing::info!(client = %self.client, server, "passing a server's questions to the client that made the call, as its input_required result");
        let (answers, answered) = tokio::sync::oneshot::channel();
        let round = crate::rounds::Round { questions, answers };
        if self.rounds.send(round).await.is_err() {
            return Err(Unanswered::CallOver {
                client: self.client.clone(),
            });
        }
        tokio::select! {
            answered = answered => answered.map_err(|_| Unanswered::NotAnswered {
                client: self.client.clone(),
            }),
            () = cancel.cancelled() => Err(Unanswered::TakenBack),
        }
    }
}

#[async_trait]
impl ServerRequests for ClientRounds {
    async fn create_message(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
        cancel: CancellationToken,
    ) -> Result<CreateMessageResult, ErrorData> {
        let question = InputRequest::CreateMessage(CreateMessageRequest::new(params));
        let answer = self.one(server, question, cancel).await?;
        serde_json::from_value(answer).map_err(|e| {
            ErrorData::invalid_params(
                format!("{}'s answer is not a sampling result: {e}", self.client),
                None,
            )
        })
    }

    async fn elicit(
        &self,
        server: &str,
        params: ElicitRequestParams,
        cancel: CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        let question = InputRequest::Elicitation(ElicitRequest::new(params));
        let answer = self.one(server, question, cancel).await?;
        serde_json::from_value(answer).map_err(|e| {
            ErrorData::invalid_params(
                format!("{}'s answer is not an elicitation result: {e}", self.client),
                None,
            )
        })
    }
}
