//! The HTTP client the OTLP exporters send with: reqwest's blocking client, with exactly the
//! headers [`resolve`](crate::config::resolve) chose.
//!
//! `opentelemetry-otlp` adds the `OTEL_EXPORTER_OTLP_HEADERS` variable's headers to every
//! request on top of the ones it is given. Under the organisation's endpoint that would let
//! the environment replace its credentials, and under the user's it would mix two sources; so
//! this client drops every header but the protocol's own and sets the chosen ones.

use std::fmt;

use async_trait::async_trait;
use http::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_ENCODING, CONTENT_TYPE};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// Why the exporter's HTTP client could not be made: a header that cannot be sent (named, its
/// value never shown), or the client itself.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("'{0}' is not an HTTP header name")]
    HeaderName(String),
    #[error("the value of header '{0}' cannot be sent in HTTP")]
    HeaderValue(String),
    #[error("could not make the HTTP client: {0}")]
    Build(reqwest::Error),
}

pub struct PinnedHeaders {
    inner: reqwest::blocking::Client,
    headers: HeaderMap,
}

impl fmt::Debug for PinnedHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values are credentials: only their names.
        f.debug_struct("PinnedHeaders")
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl PinnedHeaders {
    /// Fails with the header's name (never its value) when one cannot be sent.
    pub fn new(
        timeout: std::time::Duration,
        headers: &[(String, String)],
    ) -> Result<Self, ClientError> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let key = HeaderName::try_from(name.as_str())
                .map_err(|_| ClientError::HeaderName(name.clone()))?;
            let mut value = HeaderValue::try_from(value.as_str())
                .map_err(|_| ClientError::HeaderValue(name.clone()))?;
            value.set_sensitive(true);
            map.insert(key, value);
        }
        let inner = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(ClientError::Build)?;
        Ok(PinnedHeaders {
            inner,
            headers: map,
        })
    }
}

#[async_trait]
impl HttpClient for PinnedHeaders {
    async fn send_bytes(&self, mut request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let sent = request.headers_mut();
        let kept: HeaderMap = [CONTENT_TYPE, CONTENT_ENCODING]
            .into_iter()
            .filter_map(|name| sent.get(&name).map(|v| (name, v.clone())))
            .collect();
        *sent = kept;
        for (name, value) in &self.headers {
            sent.insert(name, value.clone());
        }
        self.inner.send_bytes(request).await
    }
}
