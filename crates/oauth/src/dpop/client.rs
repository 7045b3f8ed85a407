//! The server's side of DPoP: [`SessionHttp`], the HTTP client under a signed-in connection,
//! sends a DPoP-bound token as `Authorization: DPoP <token>` with a fresh proof on each request
//! (RFC 9449 §7.1), and a request the server turns down with `use_dpop_nonce` again with the
//! server's nonce (§9). A token that is not DPoP-bound goes as rmcp sends it (`Bearer`).

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::key::Dpop;

type Headers = HashMap<HeaderName, HeaderValue>;
type Error = StreamableHttpError<reqwest::Error>;

/// The HTTP client rmcp's `AuthClient` sends a signed-in server's requests with.
#[derive(Clone)]
pub struct SessionHttp {
    client: reqwest::Client,
    dpop: Option<Arc<Dpop>>,
}

impl Default for SessionHttp {
    fn default() -> Self {
        Self::plain()
    }
}

impl std::fmt::Debug for SessionHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHttp")
            .field("dpop", &self.dpop.is_some())
            .finish_non_exhaustive()
    }
}

impl SessionHttp {
    /// Bearer tokens, as rmcp sends them.
    pub fn plain() -> Self {
        SessionHttp {
            client: reqwest::Client::new(),
            dpop: None,
        }
    }

    /// DPoP-bound tokens, proven with `dpop`'s key.
    pub(crate) fn bound(dpop: Arc<Dpop>) -> Self {
        SessionHttp {
            client: reqwest::Client::new(),
            dpop: Some(dpop),
        }
    }

    /// Whether tokens go with DPoP proofs.
    pub fn uses_dpop(&self) -> bool {
        self.dpop.is_some()
    }

    /// `custom` with the token under the DPoP scheme and a proof for `method` at `uri`.
    fn proven(
        dpop: &Dpop,
        method: &str,
        uri: &str,
        token: &str,
        mut custom: Headers,
    ) -> Result<Headers, Error> {
        let proof = dpop
            .proof(method, uri, Some(token))
            .map_err(|e| StreamableHttpError::UnexpectedServerResponse(e.to_string().into()))?;
        let value = |text: String| {
            HeaderValue::from_str(&text).map_err(|_| {
                StreamableHttpError::UnexpectedServerResponse(
                    "the token cannot be sent in a header".into(),
                )
            })
        };
        custom.insert(
            reqwest::header::AUTHORIZATION,
            value(format!("DPoP {token}"))?,
        );
        custom.insert(HeaderName::from_static("dpop"), value(proof)?);
        Ok(custom)
    }

    /// After a `use_dpop_nonce` challenge: the server's nonce, read from a request it cannot
    /// carry out (an empty JSON object; rmcp keeps only `WWW-Authenticate` of the 401). True
    /// when a new nonce was learned, so the request is worth sending again.
    async fn learn_nonce(&self, dpop: &Dpop, uri: &str, token: &str) -> bool {
        let Ok(headers) = Self::proven(dpop, "POST", uri, token, Headers::new()) else {
            return false;
        };
        let before = dpop.nonce(uri);
        let Ok(response) = self
            .client
            .post(uri)
            .headers(headers.into_iter().collect())
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body("{}")
            .send()
            .await
        else {
            return false;
        };
        match response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
        {
            Some(nonce) if before.as_deref() != Some(nonce) => {
                dpop.remember_nonce(uri, nonce);
                true
            }
            _ => false,
        }
    }

    /// Runs `send` with DPoP headers for `method` at `uri`, once more with the server's nonce
    /// when it asks for one.
    async fn with_proof<T, F, Fut>(
        &self,
        dpop: &Dpop,
        method: &str,
        uri: &str,
        token: &str,
        custom: Headers,
        send: F,
    ) -> Result<T, Error>
    where
        F: Fn(Headers) -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>>,
    {
        let first = send(Self::proven(dpop, method, uri, token, custom.clone())?).await;
        match first {
            Err(StreamableHttpError::AuthRequired(challenge))
                if challenge.www_authenticate_header.contains("use_dpop_nonce") =>
            {
                if self.learn_nonce(dpop, uri, token).await {
                    send(Self::proven(dpop, method, uri, token, custom)?).await
                } else {
                    Err(StreamableHttpError::AuthRequired(challenge))
                }
            }
            other => other,
        }
    }
}

impl StreamableHttpClient for SessionHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let (Some(dpop), Some(token)) = (&self.dpop, &auth_header) else {
            return self
                .client
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await;
        };
        self.with_proof(dpop, "POST", &uri, token, custom_headers, |headers| {
            self.client.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                None,
                headers,
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), Error> {
        let (Some(dpop), Some(token)) = (&self.dpop, &auth_header) else {
            return self
                .client
                .delete_session(uri, session_id, auth_header, custom_headers)
                .await;
        };
        self.with_proof(dpop, "DELETE", &uri, token, custom_headers, |headers| {
            self.client
                .delete_session(uri.clone(), session_id.clone(), None, headers)
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error> {
        let (Some(dpop), Some(token)) = (&self.dpop, &auth_header) else {
            return self
                .client
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
                .await;
        };
        self.with_proof(dpop, "GET", &uri, token, custom_headers, |headers| {
            self.client.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                None,
                headers,
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error> {
        let (Some(dpop), Some(token)) = (&self.dpop, &auth_header) else {
            return self
                .client
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await;
        };
        self.with_proof(dpop, "GET", &uri, token, custom_headers, |headers| {
            self.client.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                None,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }
}
