//! The one place that talks to a provider over HTTP.

use std::time::{Duration, SystemTime};

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;

use crate::error::{classify, retry_after};
use crate::presets::{self, Preset};
use crate::{
    anthropic, openai, replay, CancellationToken, ChatRequest, LlmError, Provider, Reply,
    StreamDelta, WireFormat,
};

/// A whole non-streaming answer may take minutes to generate before its first byte.
const COMPLETE_TIMEOUT: Duration = Duration::from_secs(600);
/// A stream may run for longer than any total limit, but never goes this long without a byte:
/// Anthropic sends `ping` events, and OpenAI-style servers send a chunk per token (a local
/// server loading a large model is the slowest case).
const STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
const MODELS_TIMEOUT: Duration = Duration::from_secs(30);

/// A provider reached over HTTP at a user-configured base URL.
pub struct HttpProvider {
    format: WireFormat,
    base_url: String,
    api_key: String,
    /// Whether to send `stream_options.include_usage` (OpenAI format only; see [`Preset`]).
    stream_usage: bool,
    models_endpoint: String,
    client: reqwest::Client,
}

impl std::fmt::Debug for HttpProvider {
    // Hand-written so the key can never reach a log through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpProvider")
            .field("format", &self.format)
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("stream_usage", &self.stream_usage)
            .finish()
    }
}

impl HttpProvider {
    /// A provider at `base_url`. For the OpenAI format the endpoint's quirks come from the
    /// preset the URL matches ([`presets::for_base_url`]), or the cautious "custom" ones.
    pub fn new(
        format: WireFormat,
        base_url: impl Into<String>,
        api_key: impl Into<String>,
    ) -> Result<Self, LlmError> {
        let base_url = base_url.into();
        let preset = presets::for_base_url(&base_url);
        Self::build(format, base_url, api_key.into(), preset)
    }

    /// An OpenAI-compatible provider with `preset`'s quirks, at `base_url` (the preset's own, or
    /// one the user changed, such as Ollama on another machine).
    pub fn for_preset(
        preset: &Preset,
        base_url: impl Into<String>,
        api_key: impl Into<String>,
    ) -> Result<Self, LlmError> {
        Self::build(WireFormat::OpenAi, base_url.into(), api_key.into(), preset)
    }

    fn build(
        format: WireFormat,
        base_url: String,
        api_key: String,
        preset: &Preset,
    ) -> Result<Self, LlmError> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        // No total timeout on the client: a stream may rightly run longer than any fixed limit.
        // Each request sets its own (see the constants above).
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| LlmError::Network {
                url: base_url.clone(),
                detail: error_chain(&e),
            })?;
        Ok(Self {
            format,
            base_url,
            api_key,
            stream_usage: format == WireFormat::OpenAi && preset.stream_usage,
            models_endpoint: preset.models_endpoint.to_owned(),
            client,
        })
    }

    fn endpoint(&self) -> String {
        match self.format {
            WireFormat::Anthropic => format!("{}/v1/messages", self.base_url),
            WireFormat::OpenAi => format!("{}/chat/completions", self.base_url),
        }
    }

    fn authorized(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self.format {
            WireFormat::Anthropic => builder
                .header("x-api-key", &self.api_key)
                .header("anthropic-version", anthropic::API_VERSION),
            // Local servers need no key; an empty `Bearer` header only confuses some proxies.
            WireFormat::OpenAi if self.api_key.is_empty() => builder,
            WireFormat::OpenAi => builder.bearer_auth(&self.api_key),
        }
    }

    fn chat(&self, url: &str, request: &ChatRequest, stream: bool) -> reqwest::RequestBuilder {
        let builder = self.authorized(self.client.post(url));
        match self.format {
            WireFormat::Anthropic => {
                let mut wire = anthropic::to_wire(request);
                wire.stream = stream;
                builder.json(&wire)
            }
            WireFormat::OpenAi => {
                let mut wire = openai::to_wire(request);
                wire.stream = stream;
                wire.stream_options =
                    (stream && self.stream_usage).then_some(openai::StreamOptions {
                        include_usage: true,
                    });
                builder.json(&wire)
            }
        }
    }

    /// Sends the request; an answer that is not 2xx becomes its typed error.
    async fn send(
        &self,
        builder: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<reqwest::Response, LlmError> {
        let response = builder.send().await.map_err(|e| network(url, &e))?;
        let status = response.status().as_u16();
        if response.status().is_success() {
            return Ok(response);
        }
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let wait = retry_after(
            header("retry-after-ms").as_deref(),
            header("retry-after").as_deref(),
            SystemTime::now(),
        );
        let body = response.text().await.map_err(|e| network(url, &e))?;
        let (kind, message) = match self.format {
            WireFormat::Anthropic => anthropic::error_message(&body),
            WireFormat::OpenAi => openai::error_message(&body),
        };
        Err(classify(status, &kind, message, wait))
    }

    async fn complete_unredacted(&self, request: &ChatRequest) -> Result<Reply, LlmError> {
        let url = self.endpoint();
        let builder = self.chat(&url, request, false).timeout(COMPLETE_TIMEOUT);
        let response = self.send(builder, &url).await?;
        let body = response.text().await.map_err(|e| network(&url, &e))?;
        self.parse_reply(&body)
    }

    fn parse_reply(&self, body: &str) -> Result<Reply, LlmError> {
        match self.format {
            WireFormat::Anthropic => anthropic::from_wire(body),
            WireFormat::OpenAi => openai::from_wire(body),
        }
    }

    async fn stream_uncancelled(
        &self,
        request: &ChatRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<Reply, LlmError> {
        let url = self.endpoint();
        let response = self.send(self.chat(&url, request, true), &url).await?;
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            // A compatible server that ignores `stream` answers with one JSON body: still a
            // good answer, reported as one delta.
            let body = tokio::time::timeout(COMPLETE_TIMEOUT, response.text())
                .await
                .map_err(|_| idle(&url))?
                .map_err(|e| network(&url, &e))?;
            let reply = self.parse_reply(&body)?;
            replay(&reply, on_delta);
            return Ok(reply);
        }
        let mut assembler = match self.format {
            WireFormat::Anthropic => Assembler::Anthropic(anthropic::StreamAssembler::new()),
            WireFormat::OpenAi => Assembler::OpenAi(openai::StreamAssembler::new()),
        };
        let mut events = response.bytes_stream().eventsource();
        loop {
            let next = tokio::time::timeout(STREAM_IDLE_TIMEOUT, events.next())
                .await
                .map_err(|_| idle(&url))?;
            let event = match next {
                None => break,
                Some(Ok(event)) => event,
                Some(Err(EventStreamError::Transport(e))) => return Err(network(&url, &e)),
                Some(Err(e)) => {
                    return Err(LlmError::Malformed(format!(
                        "the event stream is not valid server-sent events: {e}"
                    )))
                }
            };
            if assembler.push(&event.event, &event.data, &mut |d| on_delta(d))? {
                break;
            }
        }
        if !assembler.is_complete() {
            // Cut off mid-reply: a dropped connection, worth a retry, not a malformed answer.
            return Err(LlmError::Network {
                url,
                detail: "the connection closed before the reply was complete".into(),
            });
        }
        assembler.finish()
    }

    async fn list_models_unredacted(&self) -> Result<Vec<String>, LlmError> {
        let url = match self.format {
            // The list is paged (20 by default); 1000 is the documented maximum page.
            WireFormat::Anthropic => format!("{}/v1/models?limit=1000", self.base_url),
            WireFormat::OpenAi => format!("{}{}", self.base_url, self.models_endpoint),
        };
        let builder = self
            .authorized(self.client.get(&url))
            .timeout(MODELS_TIMEOUT);
        let response = self.send(builder, &url).await?;
        let body = response.text().await.map_err(|e| network(&url, &e))?;
        let bad = |e: serde_json::Error| {
            LlmError::Malformed(format!(
                "the model list is not `{{\"data\": [{{\"id\": …}}]}}`: {e}"
            ))
        };
        // Anthropic (`GET /v1/models`) and OpenAI (`GET {base}/models`) answer the same shape.
        Ok(serde_json::from_str::<ModelList>(&body)
            .map_err(bad)?
            .data
            .into_iter()
            .map(|m| m.id)
            .collect())
    }
}

/// A model list: `{"data": [{"id": …}, …]}`, with whatever else each API adds ignored.
#[derive(Debug, serde::Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Debug, serde::Deserialize)]
struct ModelEntry {
    id: String,
}

#[async_trait::async_trait]
impl Provider for HttpProvider {
    async fn complete(&self, request: &ChatRequest) -> Result<Reply, LlmError> {
        self.complete_unredacted(request)
            .await
            .map_err(|e| e.redact(&self.api_key))
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Reply, LlmError> {
        // Dropping the request future on cancel drops the response, which closes the connection:
        // the provider stops generating (and billing) too.
        let result = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LlmError::Cancelled),
            result = self.stream_uncancelled(request, on_delta) => result,
        };
        result.map_err(|e| e.redact(&self.api_key))
    }

    async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        self.list_models_unredacted()
            .await
            .map_err(|e| e.redact(&self.api_key))
    }
}

enum Assembler {
    Anthropic(anthropic::StreamAssembler),
    OpenAi(openai::StreamAssembler),
}

impl Assembler {
    fn push(
        &mut self,
        name: &str,
        data: &str,
        emit: &mut dyn FnMut(StreamDelta),
    ) -> Result<bool, LlmError> {
        match self {
            Assembler::Anthropic(a) => a.push(name, data, emit),
            Assembler::OpenAi(a) => a.push(name, data, emit),
        }
    }

    fn is_complete(&self) -> bool {
        match self {
            Assembler::Anthropic(a) => a.is_complete(),
            Assembler::OpenAi(a) => a.is_complete(),
        }
    }

    fn finish(self) -> Result<Reply, LlmError> {
        match self {
            Assembler::Anthropic(a) => a.finish(),
            Assembler::OpenAi(a) => a.finish(),
        }
    }
}

fn network(url: &str, error: &(dyn std::error::Error + 'static)) -> LlmError {
    LlmError::Network {
        url: url.to_owned(),
        detail: error_chain(error),
    }
}

fn idle(url: &str) -> LlmError {
    LlmError::Network {
        url: url.to_owned(),
        detail: format!(
            "the provider sent nothing for {} s",
            STREAM_IDLE_TIMEOUT.as_secs()
        ),
    }
}

/// An error and its causes: reqwest's own message ("error sending request") says little, the
/// cause ("connection refused") says what the user can fix.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_key() {
        let p = HttpProvider::new(
            WireFormat::OpenAi,
            "http://127.0.0.1:1/v1",
            "sk-secret-value",
        )
        .expect("builds");
        assert!(!format!("{p:?}").contains("sk-secret-value"));
    }

    #[test]
    fn quirks_follow_the_preset() {
        let custom =
            HttpProvider::new(WireFormat::OpenAi, "http://127.0.0.1:9/v1/", "").expect("builds");
        assert!(!custom.stream_usage);
        assert_eq!(custom.base_url, "http://127.0.0.1:9/v1");
        let openai = HttpProvider::new(WireFormat::OpenAi, "https://api.openai.com/v1", "k")
            .expect("builds");
        assert!(openai.stream_usage);
        let anthropic = HttpProvider::new(WireFormat::Anthropic, "https://api.anthropic.com", "k")
            .expect("builds");
        assert!(!anthropic.stream_usage);
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_is_a_network_error_that_names_the_cause() {
        // Port 9 (discard) on loopback: nothing listens there in the test environment.
        let p = HttpProvider::new(WireFormat::OpenAi, "http://127.0.0.1:9/v1", "").expect("builds");
        let err = p.list_models().await.unwrap_err();
        assert!(
            matches!(&err, LlmError::Network { url, .. } if url == "http://127.0.0.1:9/v1/models"),
            "{err}"
        );
        assert!(err.is_retryable());
    }
}
