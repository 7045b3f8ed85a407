//! Where the audit log is streamed: an OpenTelemetry collector over OTLP (`toolgate-telemetry`
//! sends it). The same shape is the user's `telemetry` section and the organisation's managed
//! `telemetry`, so an administrator writes what a user would.
//!
//! Header values may be `${secret:NAME}` (read from the keychain when export starts) or
//! `${env:NAME}`, as a server's headers may; the settings hold only the reference.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{invalid, SettingsError};

/// The `telemetry` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TelemetrySettings {
    /// OTLP export of the audit log (spans, log records, metrics); absent: only what the
    /// standard `OTEL_EXPORTER_OTLP_*` variables say.
    /// Boxed: the settings are passed by value, and most have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otlp: Option<Box<OtlpSettings>>,
}

impl TelemetrySettings {
    pub fn is_empty(&self) -> bool {
        self.otlp.is_none()
    }
}

/// One OTLP destination.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OtlpSettings {
    /// `false` turns export off, the environment's too (never the organisation's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`: `http://host:4318`, to which
    /// `/v1/traces`, `/v1/logs` and `/v1/metrics` are added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Sent with every request (an API key, a tenant); values may be `${secret:NAME}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Only `http/protobuf` is sent by this build; the others are refused when export starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<OtlpProtocol>,
    /// Send each call's arguments (`gen_ai.tool.call.arguments`); off by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_arguments: Option<bool>,
    /// Send what the audit log keeps of each call's outcome beyond its size and whether it
    /// failed: the error text; off by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_results: Option<bool>,
}

/// `OTEL_EXPORTER_OTLP_PROTOCOL`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OtlpProtocol {
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    #[serde(rename = "http/json")]
    HttpJson,
    #[serde(rename = "grpc")]
    Grpc,
}

impl OtlpProtocol {
    /// The word the settings and the environment use.
    pub fn as_str(self) -> &'static str {
        match self {
            OtlpProtocol::HttpProtobuf => "http/protobuf",
            OtlpProtocol::HttpJson => "http/json",
            OtlpProtocol::Grpc => "grpc",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        [Self::HttpProtobuf, Self::HttpJson, Self::Grpc]
            .into_iter()
            .find(|p| p.as_str() == word.trim())
    }
}

impl OtlpSettings {
    /// Refuses an endpoint that is not an http(s) URL, a header name HTTP does not allow, and a
    /// malformed `${…}` reference. Never quotes a header's value.
    pub fn validate(&self, at: &str) -> Result<(), SettingsError> {
        if let Some(endpoint) = &self.endpoint {
            endpoint_problem(endpoint)
                .map_or(Ok(()), |why| Err(invalid(format!("{at}.endpoint"), why)))?;
        }
        for (name, value) in &self.headers {
            let valid_name = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !valid_name {
                return Err(invalid(
                    format!("{at}.headers"),
                    format!("'{name}' is not an HTTP header name"),
                ));
            }
            crate::references(value)
                .map_err(|why| invalid(format!("{at}.headers.{name}"), why.to_string()))?;
        }
        Ok(())
    }
}

/// Why `endpoint` cannot be a collector's address; `None`: it can.
pub fn endpoint_problem(endpoint: &str) -> Option<String> {
    match url::Url::parse(endpoint) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            (!url.username().is_empty() || url.password().is_some())
                .then(|| "put credentials in a header, not in the address".to_owned())
        }
        Ok(_) => Some("must be an http:// or https:// address".to_owned()),
        Err(e) => Some(format!("is not an address ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_reads_back_and_refuses_what_it_does_not_know() {
        let value = serde_json::json!({"otlp": {
            "endpoint": "http://127.0.0.1:4318",
            "headers": {"authorization": "Bearer ${secret:OTLP_TOKEN}"},
            "protocol": "http/protobuf",
            "includeArguments": true,
        }});
        let read: TelemetrySettings = serde_json::from_value(value.clone()).unwrap();
        let otlp = read.otlp.as_ref().unwrap();
        assert_eq!(otlp.protocol, Some(OtlpProtocol::HttpProtobuf));
        assert_eq!(otlp.include_arguments, Some(true));
        assert_eq!(serde_json::to_value(&read).unwrap(), value);
        otlp.validate("telemetry.otlp").unwrap();
        assert!(serde_json::from_value::<TelemetrySettings>(
            serde_json::json!({"otlp": {"endpiont": "x"}})
        )
        .is_err());
    }

    #[test]
    fn bad_endpoints_and_header_names_are_refused_without_quoting_values() {
        for endpoint in ["ftp://x", "not a url", "http://user:pw@host:4318"] {
            let otlp = OtlpSettings {
                endpoint: Some(endpoint.into()),
                ..OtlpSettings::default()
            };
            assert!(otlp.validate("t").is_err(), "{endpoint}");
        }
        let otlp = OtlpSettings {
            headers: [("bad name".to_owned(), "s3cret".to_owned())].into(),
            ..OtlpSettings::default()
        };
        let error = otlp.validate("t").unwrap_err().to_string();
        assert!(!error.contains("s3cret"), "{error}");
        let otlp = OtlpSettings {
            headers: [("x-key".to_owned(), "${secret:}".to_owned())].into(),
            ..OtlpSettings::default()
        };
        assert!(otlp.validate("t").is_err());
    }
}
