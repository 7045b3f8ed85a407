//! Why a request to the model failed, classified so the loop can act on it.

use std::time::{Duration, SystemTime};

use crate::StopReason;

/// Why a request to the model failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("the provider rejected the API key (HTTP {status}): {message}. Check the key in Settings → Provider")]
    Auth { status: u16, message: String },
    #[error("the provider is rate limiting requests{}: {message}", retry_after.map(|d| format!(" (retry after {} s)", d.as_secs())).unwrap_or_default())]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("the provider is overloaded (HTTP {status}); try again shortly")]
    Overloaded { status: u16 },
    #[error("the conversation is too long for this model: {0}. Start a new conversation or choose a model with a larger context")]
    ContextTooLong(String),
    #[error("could not reach the provider at {url}: {detail}")]
    Network { url: String, detail: String },
    #[error("the provider answered with an error (HTTP {status}): {message}")]
    Api { status: u16, message: String },
    #[error("the provider's answer could not be understood: {0}")]
    Malformed(String),
    #[error("the model's reply had neither text nor a tool call ({}); send the message again or rephrase it", empty_hint(*stop))]
    Empty { stop: StopReason },
    #[error("no API key is set for this provider. Add one in Settings → Provider")]
    NoKey,
    #[error("the request was cancelled")]
    Cancelled,
}

fn empty_hint(stop: StopReason) -> &'static str {
    match stop {
        StopReason::MaxTokens => "it stopped at the output token limit",
        StopReason::EndTurn => "it ended its turn without saying anything",
        StopReason::ToolUse | StopReason::Other => "it stopped without saying why",
    }
}

impl LlmError {
    /// Whether the same request may succeed if sent again later. Cancellation, bad keys, bad
    /// requests and unreadable answers will not get better by themselves.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. } | LlmError::Overloaded { .. } => true,
            LlmError::Network { .. } => true,
            LlmError::Api { status, .. } => *status >= 500 || *status == 408,
            _ => false,
        }
    }

    /// How long the provider asked us to wait, when it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Removes `key` from every text of the error, in case a provider or proxy echoed it back
    /// (some put the key in the URL, and URLs appear in network errors).
    pub(crate) fn redact(self, key: &str) -> Self {
        // Short keys ("ollama", "x") would blank unrelated words and are no secret anyway.
        if key.len() < 8 {
            return self;
        }
        let r = |s: String| s.replace(key, "<redacted>");
        match self {
            LlmError::Auth { status, message } => LlmError::Auth {
                status,
                message: r(message),
            },
            LlmError::RateLimited {
                retry_after,
                message,
            } => LlmError::RateLimited {
                retry_after,
                message: r(message),
            },
            LlmError::ContextTooLong(m) => LlmError::ContextTooLong(r(m)),
            LlmError::Network { url, detail } => LlmError::Network {
                url: r(url),
                detail: r(detail),
            },
            LlmError::Api { status, message } => LlmError::Api {
                status,
                message: r(message),
            },
            LlmError::Malformed(m) => LlmError::Malformed(r(m)),
            other => other,
        }
    }
}

/// Classifies an error answer from its HTTP status, the provider's error type or code, and its
/// message.
pub(crate) fn classify(
    status: u16,
    kind: &str,
    message: String,
    retry_after: Option<Duration>,
) -> LlmError {
    // Anthropic: 400 invalid_request_error "prompt is too long: N tokens > M maximum".
    // OpenAI: code context_length_exceeded, "This model's maximum context length is …".
    // Compatible servers vary; their messages usually contain one of these phrases.
    let lower = message.to_lowercase();
    let too_long = kind.contains("context_length")
        || lower.contains("prompt is too long")
        || lower.contains("maximum context length")
        || lower.contains("context length exceeded")
        || lower.contains("context window");
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

/// Classifies an error event that arrived inside a stream, where there is no HTTP status: the
/// error type stands for the status Anthropic documents for it.
pub(crate) fn classify_stream_error(kind: &str, message: String) -> LlmError {
    let status = match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        "context_length_exceeded" => 400,
        _ => 500,
    };
    classify(status, kind, message, None)
}

/// How long to wait before retrying, from the response headers.
///
/// `retry-after-ms` (milliseconds) is read first, as OpenAI's official SDKs do;
/// `retry-after` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3).
pub(crate) fn retry_after(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_millis(ms as u64));
        }
    }
    let value = retry_after?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    // Some servers send fractions; the RFC does not allow them, but their meaning is plain.
    if let Some(seconds) = value
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
    {
        return Some(Duration::from_secs_f64(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    // A date already past means "now".
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
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
        assert!(matches!(
            classify(403, "", "bad".into(), None),
            LlmError::Auth { status: 403, .. }
        ));
        assert_eq!(
            classify(429, "", "slow".into(), Some(Duration::from_secs(7))),
            LlmError::RateLimited {
                retry_after: Some(Duration::from_secs(7)),
                message: "slow".into()
            }
        );
        assert_eq!(
            classify(529, "", String::new(), None),
            LlmError::Overloaded { status: 529 }
        );
        assert_eq!(
            classify(503, "", String::new(), None),
            LlmError::Overloaded { status: 503 }
        );
        assert!(matches!(
            classify(
                400,
                "invalid_request_error",
                "prompt is too long: 300000 tokens > 200000 maximum".into(),
                None
            ),
            LlmError::ContextTooLong(_)
        ));
        assert!(matches!(
            classify(
                400,
                "context_length_exceeded",
                "This model's maximum context length is 128000 tokens.".into(),
                None
            ),
            LlmError::ContextTooLong(_)
        ));
        assert!(matches!(
            classify(400, "invalid_request_error", "bad tool".into(), None),
            LlmError::Api { status: 400, .. }
        ));
    }

    #[test]
    fn stream_error_types_map_like_their_statuses() {
        assert_eq!(
            classify_stream_error("overloaded_error", "Overloaded".into()),
            LlmError::Overloaded { status: 529 }
        );
        assert!(matches!(
            classify_stream_error("rate_limit_error", "slow".into()),
            LlmError::RateLimited {
                retry_after: None,
                ..
            }
        ));
        assert!(matches!(
            classify_stream_error("api_error", "oops".into()),
            LlmError::Api { status: 500, .. }
        ));
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(None, Some("12"), now),
            Some(Duration::from_secs(12))
        );
        assert_eq!(
            retry_after(Some("1500"), Some("12"), now),
            Some(Duration::from_millis(1500))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            retry_after(None, Some(&later), now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(retry_after(None, Some(&earlier), now), Some(Duration::ZERO));
        assert_eq!(retry_after(None, Some("soon"), now), None);
        assert_eq!(retry_after(None, None, now), None);
    }

    #[test]
    fn retryable_errors_are_the_transient_ones() {
        assert!(LlmError::Overloaded { status: 529 }.is_retryable());
        assert!(LlmError::Api {
            status: 502,
            message: String::new()
        }
        .is_retryable());
        assert!(!LlmError::Cancelled.is_retryable());
        assert!(!LlmError::Auth {
            status: 401,
            message: String::new()
        }
        .is_retryable());
        let limited = LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(3)),
            message: String::new(),
        };
        assert_eq!(limited.retry_after(), Some(Duration::from_secs(3)));
        assert!(limited.to_string().contains("retry after 3 s"));
    }

    #[test]
    fn redaction_removes_the_key_everywhere() {
        let e = LlmError::Network {
            url: "http://x/?key=sk-secret-value".into(),
            detail: "sk-secret-value refused".into(),
        }
        .redact("sk-secret-value");
        assert!(!e.to_string().contains("sk-secret-value"), "{e}");
    }
}
