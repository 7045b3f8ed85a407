//! The one place that talks to a provider over HTTP.

use std::time::Duration;

use crate::{anthropic, openai, ChatRequest, LlmError, Provider, Reply};

/// Which wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    Anthropic,
    OpenAi,
}

/// A provider reached over HTTP at a user-configured base URL.
pub struct HttpProvider {
    format: WireFormat,
    base_url: String,
    api_key: String,
    client: reqwest::Client,
}

impl std::fmt::Debug for HttpProvider {
    // Hand-written so the key can never reach a log through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpProvider")
            .field("format", &self.format)
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .finish()
    }
}

impl HttpProvider {
    pub fn new(
        format: WireFormat,
        base_url: impl Into<String>,
        api_key: impl Into<String>,
    ) -> Result<Self, LlmError> {
        let base_url = base_url.into().trim_end_matches('/').to_owned();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .timeout(Duration::from_secs(600))
            .build()
            .map_err(|e| LlmError::Network {
                url: base_url.clone(),
                detail: e.to_string(),
            })?;
        Ok(Self {
            format,
            base_url,
            api_key: api_key.into(),
            client,
        })
    }

    fn endpoint(&self) -> String {
        match self.format {
            WireFormat::Anthropic => format!("{}/v1/messages", self.base_url),
            WireFormat::OpenAi => format!("{}/chat/completions", self.base_url),
        }
    }
}

#[async_trait::async_trait]
impl Provider for HttpProvider {
    async fn complete(&self, request: &ChatRequest) -> Result<Reply, LlmError> {
        let url = self.endpoint();
        let builder = self.client.post(&url);
        let builder = match self.format {
            WireFormat::Anthropic => builder
                .header("x-api-key", &self.api_key)
                .header("anthropic-version", anthropic::API_VERSION)
                .json(&anthropic::to_wire(request)),
            WireFormat::OpenAi => builder
                .bearer_auth(&self.api_key)
                .json(&openai::to_wire(request)),
        };
        let response = builder.send().await.map_err(|e| LlmError::Network {
            url: url.clone(),
            detail: e.to_string(),
        })?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let body = response.text().await.map_err(|e| LlmError::Network {
            url: url.clone(),
            detail: e.to_string(),
        })?;
        if (200..300).contains(&status) {
            return match self.format {
                WireFormat::Anthropic => anthropic::from_wire(&body),
                WireFormat::OpenAi => openai::from_wire(&body),
            };
        }
        let (kind, message) = match self.format {
            WireFormat::Anthropic => anthropic::error_message(&body),
            WireFormat::OpenAi => openai::error_message(&body),
        };
        let message = redact(&message, &self.api_key);
        Err(classify(status, &kind, message, retry_after))
    }
}

/// Removes the key from text a provider echoed back, in case it did.
fn redact(text: &str, key: &str) -> String {
    if key.len() >= 8 {
        text.replace(key, "<redacted>")
    } else {
        text.to_owned()
    }
}

fn classify(status: u16, kind: &str, message: String, retry_after: Option<u64>) -> LlmError {
    let too_long = kind.contains("context_length")
        || message.contains("prompt is too long")
        || message.contains("maximum context length");
    match status {
        401 | 403 => LlmError::Auth { status, message },
        429 => LlmError::RateLimited {
            retry_after,
            message,
        },
        503 | 529 => LlmError::Overloaded { status },
        400 | 413 if too_long => LlmError::ContextTooLong(message),
        _ => LlmError::Api { status, message },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_status_codes() {
        assert!(matches!(
            classify(401, "", "bad".into(), None),
            LlmError::Auth { .. }
        ));
        assert_eq!(
            classify(429, "", "slow".into(), Some(7)),
            LlmError::RateLimited {
                retry_after: Some(7),
                message: "slow".into()
            }
        );
        assert_eq!(
            classify(529, "", String::new(), None),
            LlmError::Overloaded { status: 529 }
        );
        assert!(matches!(
            classify(
                400,
                "invalid_request_error",
                "prompt is too long: 300000 tokens".into(),
                None
            ),
            LlmError::ContextTooLong(_)
        ));
    }

    #[test]
    fn debug_output_hides_the_key() {
        let p = HttpProvider::new(
            WireFormat::OpenAi,
            "http://127.0.0.1:1/v1",
            "sk-secret-value",
        )
        .expect("builds");
        assert!(!format!("{p:?}").contains("sk-secret-value"));
        assert_eq!(
            redact("key sk-secret-value bad", "sk-secret-value"),
            "key <redacted> bad"
        );
    }
}
