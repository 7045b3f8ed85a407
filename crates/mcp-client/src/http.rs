//! The HTTP client under rmcp's Streamable HTTP transport: plain, or rmcp's `AuthClient` for a
//! signed-in server; and a look at each `tools/list` answer on the way in.
//!
//! rmcp 3.11 sends the 2026-07-28 `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers itself, and
//! drops a tool whose `x-mcp-header` annotations are invalid with only a log line. The user
//! should see that tool and why it is refused, so the answer is checked here by the same rules
//! (rmcp's checker is crate-private) and the refusals recorded for the server's snapshot.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex as StdMutex};

use futures::stream::BoxStream;
use futures::StreamExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;

type HeaderMap = HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>;
type Sse = BoxStream<'static, Result<sse_stream::Sse, SseError>>;

/// Tools refused by name, with the reason.
pub type Refused = Arc<StdMutex<BTreeMap<String, String>>>;

#[derive(Clone)]
enum Inner {
    Plain(reqwest::Client),
    Signed(AuthClient<toolgate_oauth::SessionHttp>),
}

#[derive(Clone)]
pub struct Observed {
    inner: Inner,
    pub refused: Refused,
}

impl Observed {
    pub fn new(
        client: reqwest::Client,
        session: Option<toolgate_oauth::Session>,
        refused: Refused,
    ) -> Self {
        Self {
            inner: match session {
                Some(s) => Inner::Signed(s.client),
                None => Inner::Plain(client),
            },
            refused,
        }
    }

    fn look_at(&self, message: &ServerJsonRpcMessage, headers_apply: bool) {
        if !headers_apply {
            return;
        }
        let Ok(value) = serde_json::to_value(message) else {
            return;
        };
        let Some(tools) = value
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
        else {
            return;
        };
        let mut refused = self.refused.lock().unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            let (Some(name), Some(schema)) = (
                tool.get("name").and_then(Value::as_str),
                tool.get("inputSchema"),
            ) else {
                continue;
            };
            match header_annotation_problem(schema) {
                Some(reason) => {
                    refused.insert(name.to_owned(), reason);
                }
                None => {
                    refused.remove(name);
                }
            }
        }
    }
}

/// Whether the connection speaks 2026-07-28 or later, where `x-mcp-header` applies.
fn headers_apply(headers: &HeaderMap) -> bool {
    // Looked up by name: a `HeaderName` does not hash as the `str` it spells.
    headers
        .iter()
        .find(|(name, _)| name.as_str() == "mcp-protocol-version")
        .and_then(|(_, v)| v.to_str().ok())
        .is_some_and(|v| v >= "2026-07-28")
}

/// Why a tool's `x-mcp-header` annotations are invalid (SEP-2243), or `None`: each must be a
/// non-empty HTTP token, unique ignoring case, on a `string`, `integer` or `boolean` property
/// reached from the root through `properties` alone.
pub fn header_annotation_problem(schema: &Value) -> Option<String> {
    if schema.get("x-mcp-header").is_some() {
        return Some("x-mcp-header must annotate a property, not the whole input".into());
    }
    let mut seen = HashSet::new();
    let mut stack: Vec<(String, &Value)> = Vec::new();
    if let Some(Value::Object(props)) = schema.get("properties") {
        stack.extend(props.iter().map(|(k, v)| (k.clone(), v)));
    }
    while let Some((path, property)) = stack.pop() {
        if let Some(header) = property.get("x-mcp-header") {
            let Value::String(header) = header else {
                return Some(format!("property `{path}`: x-mcp-header must be a string"));
            };
            if header.is_empty() {
                return Some(format!("property `{path}`: x-mcp-header must not be empty"));
            }
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if !header.chars().all(token) {
                return Some(format!(
                    "property `{path}`: x-mcp-header `{header}` is not a valid HTTP header name"
                ));
            }
            if !seen.insert(header.to_ascii_lowercase()) {
                return Some(format!(
                    "property `{path}`: x-mcp-header `{header}` is used twice"
                ));
            }
            let kind = property.get("type").and_then(Value::as_str);
            if !matches!(kind, Some("string" | "integer" | "boolean")) {
                return Some(format!(
                    "property `{path}`: x-mcp-header needs a string, integer or boolean, not {}",
                    kind.unwrap_or("an untyped value")
                ));
            }
        }
        if let Some(Value::Object(props)) = property.get("properties") {
            stack.extend(props.iter().map(|(k, v)| (format!("{path}.{k}"), v)));
        }
    }
    None
}

impl StreamableHttpClient for Observed {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
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
        custom_headers: HeaderMap,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let applies = headers_apply(&custom_headers);
        let response = match &self.inner {
            Inner::Plain(c) => {
                c.post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await?
            }
            Inner::Signed(c) => {
                c.post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await?
            }
        };
        Ok(match response {
            StreamableHttpPostResponse::Json(message, session) => {
                self.look_at(&message, applies);
                StreamableHttpPostResponse::Json(message, session)
            }
            StreamableHttpPostResponse::Sse(stream, session) if applies => {
                let me = self.clone();
                let stream = stream.inspect(move |event| {
                    if let Ok(event) = event {
                        if let Some(Ok(message)) = event
                            .data
                            .as_deref()
                            .map(serde_json::from_str::<ServerJsonRpcMessage>)
                        {
                            me.look_at(&message, true);
                        }
                    }
                });
                StreamableHttpPostResponse::Sse(stream.boxed(), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        match &self.inner {
            Inner::Plain(c) => {
                c.delete_session(uri, session_id, auth_header, custom_headers)
                    .await
            }
            Inner::Signed(c) => {
                c.delete_session(uri, session_id, auth_header, custom_headers)
                    .await
            }
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
    ) -> Result<Sse, StreamableHttpError<Self::Error>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            crate::stdio::MESSAGE_LIMIT,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
        max_sse_event_size: usize,
    ) -> Result<Sse, StreamableHttpError<Self::Error>> {
        match &self.inner {
            Inner::Plain(c) => {
                c.get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await
            }
            Inner::Signed(c) => {
                c.get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await
            }
        }
    }
}

/// Why a Streamable HTTP transport could not be set up. Never quotes a header's value: it may
/// hold a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("'{0}' is not a valid HTTP header name")]
    HeaderName(String),
    #[error("the value of header '{0}' is not a valid HTTP header value")]
    HeaderValue(String),
    #[error("could not set up HTTP: {0}")]
    Client(String),
}

/// A server's configured headers as HTTP headers.
pub fn header_map(
    headers: &BTreeMap<String, String>,
) -> Result<reqwest::header::HeaderMap, SetupError> {
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::try_from(name.as_str())
            .map_err(|_| SetupError::HeaderName(name.clone()))?;
        let value = reqwest::header::HeaderValue::try_from(value.as_str())
            .map_err(|_| SetupError::HeaderValue(name.to_string()))?;
        map.insert(name, value);
    }
    Ok(map)
}

/// The Streamable HTTP transport; with a sign-in, rmcp's `AuthClient` adds the token (refreshed
/// before it expires, and once more after a 401). Tools it refuses are noted in `refused`.
pub fn transport(
    url: &str,
    headers: &reqwest::header::HeaderMap,
    session: Option<toolgate_oauth::Session>,
    refused: Refused,
) -> Result<StreamableHttpClientTransport<Observed>, SetupError> {
    let custom: HashMap<_, _> = headers
        .iter()
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    // Largest HTTP response or SSE event accepted: tool results can be large.
    config.max_json_response_size = crate::stdio::MESSAGE_LIMIT;
    config.max_sse_event_size = crate::stdio::MESSAGE_LIMIT;
    let client = reqwest::Client::builder()
        .build()
        .map_err(|e| SetupError::Client(e.to_string()))?;
    Ok(StreamableHttpClientTransport::with_client(
        Observed::new(client, session, refused),
        config,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_header_annotations_are_named() {
        let ok = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
        assert_eq!(header_annotation_problem(&ok), None);
        let empty = json!({"properties": {"r": {"type": "string", "x-mcp-header": ""}}});
        assert!(header_annotation_problem(&empty)
            .unwrap()
            .contains("must not be empty"));
        let object = json!({"properties": {"r": {"type": "object", "x-mcp-header": "R"}}});
        assert!(header_annotation_problem(&object)
            .unwrap()
            .contains("string, integer or boolean"));
        let twice = json!({"properties": {
            "a": {"type": "string", "x-mcp-header": "Tenant"},
            "b": {"type": "string", "x-mcp-header": "tenant"}}});
        assert!(header_annotation_problem(&twice)
            .unwrap()
            .contains("used twice"));
        let space = json!({"properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}});
        assert!(header_annotation_problem(&space)
            .unwrap()
            .contains("not a valid HTTP header name"));
    }
}

/// What a refused request says about the sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthRefusal {
    /// 401 after the one silent refresh: the sign-in has ended.
    SignIn,
    /// 403 `insufficient_scope`: the scopes the server named.
    Scope(String),
}

/// Finds a 401 or 403 `insufficient_scope` in a failed request's error chain.
pub fn auth_refusal(error: &(dyn std::error::Error + 'static)) -> Option<AuthRefusal> {
    type HttpError = StreamableHttpError<reqwest::Error>;
    let mut current = Some(error);
    while let Some(e) = current {
        match e.downcast_ref::<HttpError>() {
            Some(HttpError::AuthRequired(_)) => return Some(AuthRefusal::SignIn),
            Some(HttpError::InsufficientScope(scope)) => {
                let named = scope
                    .get_required_scope()
                    .map(str::to_owned)
                    .unwrap_or_else(|| "more than was granted".to_owned());
                return Some(AuthRefusal::Scope(named));
            }
            Some(HttpError::Auth(_)) => return Some(AuthRefusal::SignIn),
            _ => {}
        }
        current = e.source();
    }
    None
}
