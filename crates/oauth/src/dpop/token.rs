//! The authorization server's side of DPoP: every request rmcp's sign-in makes goes through
//! [`DpopOAuthHttp`], and token requests (a form POST with a `grant_type`: the code, each
//! refresh) carry a proof (RFC 9449 §5), sent again with the authorization server's nonce when
//! it answers `use_dpop_nonce` (§8).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

use super::key::Dpop;

/// Token answers and metadata are small; anything larger is refused.
const MAX_BODY: usize = 1 << 20;

/// rmcp's OAuth requests for a server whose tokens are DPoP-bound.
pub(crate) struct DpopOAuthHttp {
    dpop: Arc<Dpop>,
    follow: reqwest::Client,
    stop: reqwest::Client,
}

fn boxed(e: impl std::error::Error + Send + Sync + 'static) -> OAuthHttpClientError {
    Box::new(e)
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

impl DpopOAuthHttp {
    pub(crate) fn new(dpop: Arc<Dpop>) -> Result<Self, String> {
        let build = |policy| {
            reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .redirect(policy)
                .build()
                .map_err(|e| format!("could not set up HTTP: {e}"))
        };
        Ok(Self {
            dpop,
            follow: build(reqwest::redirect::Policy::limited(5))?,
            stop: build(reqwest::redirect::Policy::none())?,
        })
    }
}

impl OAuthHttpClient for DpopOAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let (parts, body) = request.request.into_parts();
            let uri = parts.uri.to_string();
            let to_token_endpoint = parts.method == reqwest::Method::POST
                && parts
                    .headers
                    .get(reqwest::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"))
                && url::form_urlencoded::parse(&body).any(|(k, _)| k == "grant_type");
            let mut retried = false;
            loop {
                let mut outgoing = client
                    .request(parts.method.clone(), &uri)
                    .headers(parts.headers.clone())
                    .body(body.clone());
                if to_token_endpoint {
                    let proof = self
                        .dpop
                        .proof("POST", &uri, None)
                        .map_err(|e| boxed(Refused(e.to_string())))?;
                    outgoing = outgoing.header("DPoP", proof);
                }
                let response = outgoing.send().await.map_err(boxed)?;
                let nonce = response
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                if let Some(nonce) = &nonce {
                    self.dpop.remember_nonce(&uri, nonce);
                }
                let status = response.status();
                let headers = response.headers().clone();
                let version = response.version();
                let bytes = response.bytes().await.map_err(boxed)?;
                if bytes.len() > MAX_BODY {
                    return Err(boxed(Refused(format!(
                        "the answer from {uri} is larger than {MAX_BODY} bytes"
                    ))));
                }
                let asks_nonce = to_token_endpoint
                    && status == reqwest::StatusCode::BAD_REQUEST
                    && nonce.is_some()
                    && String::from_utf8_lossy(&bytes).contains("use_dpop_nonce");
                if asks_nonce && !retried {
                    retried = true;
                    continue;
                }
                let mut answer = oauth2::http::Response::builder()
                    .status(status)
                    .version(version);
                for (name, value) in &headers {
                    answer = answer.header(name, value);
                }
                return answer.body(bytes.to_vec()).map_err(boxed);
            }
        })
    }
}
