//! A server's question during a connected client's call, asked of that client.
//!
//! When a client of the gateway calls a tool and the server asks something meanwhile (sampling:
//! "let your model write this"; elicitation: "ask your user this"), the question is the
//! client's to answer, as it would be were the server connected to it directly: its model, its
//! user. [`ClientAsker`] sends it to the client on the call's own stream (the request is marked
//! as the call's, so a Streamable HTTP client gets it on the call's response, not only on its
//! standalone stream) and passes the answer back unchanged. Only a client that declared the
//! capability gets one; otherwise, and for 2026-07-28 clients (which a server may not send
//! requests to), the question goes to Toolgate's gate as before. See `toolgate_mcp::Asker`.
#![allow(deprecated)]

use async_trait::async_trait;
use rmcp::model::{
    ClientResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ErrorCode, GetExtensions, RequestId,
    ServerRequest,
};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions, ServiceError};
use rmcp::{ErrorData, Peer, RoleServer};
use tokio_util::sync::CancellationToken;
use toolgate_mcp::ServerRequests;

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
