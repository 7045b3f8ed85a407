//! Where the audit goes: the organisation's policy, the user's settings and the standard
//! `OTEL_EXPORTER_OTLP_*` variables made into one answer by [`resolve`], a pure function.
//!
//! Precedence, first match wins:
//!
//! 1. **The organisation's endpoint** (the managed policy's `telemetry.otlp.endpoint`): export
//!    is on, to it, with its headers. Neither the settings (`enabled: false`) nor the
//!    environment (`OTEL_SDK_DISABLED`, another endpoint, extra headers) can turn it off or
//!    redirect it. Its `includeArguments`/`includeResults`, when set, are final; when not set,
//!    the user's apply.
//! 2. **Off**: the user's `enabled: false`, or `OTEL_SDK_DISABLED=true`.
//! 3. **The user's endpoint**, with the user's headers.
//! 4. **The environment**: `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL, `/v1/<signal>` added) or
//!    the per-signal `OTEL_EXPORTER_OTLP_{TRACES,LOGS,METRICS}_ENDPOINT` (used as they are), with
//!    `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values percent-encoded).
//! 5. Otherwise off.
//!
//! `OTEL_EXPORTER_OTLP_PROTOCOL` and `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds) apply below
//! the organisation. Headers never mix sources: a header from the environment could otherwise
//! replace the organisation's credentials. Header values stay as written here
//! (`${secret:NAME}` included); the exporter fills them in when it starts.

use std::time::Duration;

use toolgate_settings::{OtlpProtocol, OtlpSettings};

/// How long one export request may take unless `OTEL_EXPORTER_OTLP_TIMEOUT` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the endpoint came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Managed,
    Settings,
    Environment,
}

impl Source {
    pub fn describe(self) -> &'static str {
        match self {
            Source::Managed => "your organisation's policy",
            Source::Settings => "the settings",
            Source::Environment => "the OTEL_EXPORTER_OTLP_* environment variables",
        }
    }
}

/// A destination to export to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportConfig {
    pub source: Source,
    pub traces_url: String,
    pub logs_url: String,
    pub metrics_url: String,
    /// As written: values may hold `${secret:NAME}` or `${env:NAME}`.
    pub headers: Vec<(String, String)>,
    pub include_arguments: bool,
    pub include_results: bool,
    pub timeout: Duration,
}

impl ExportConfig {
    /// What identifies the destination's cursor in the history: where the audit's log records
    /// go.
    pub fn destination(&self) -> &str {
        &self.logs_url
    }
}

/// What [`resolve`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Off,
    On(ExportConfig),
    /// Configured, but not in a way this build can send: said in the doctor and the log.
    Unusable {
        source: Source,
        problem: String,
    },
}

/// See the module docs for the precedence. `env` reads one variable.
pub fn resolve(
    managed: Option<&OtlpSettings>,
    user: Option<&OtlpSettings>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Resolution {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let flag = |s: Option<&OtlpSettings>, pick: fn(&OtlpSettings) -> Option<bool>| s.and_then(pick);
    let include_arguments = flag(managed, |s| s.include_arguments)
        .or(flag(user, |s| s.include_arguments))
        .unwrap_or(false);
    let include_results = flag(managed, |s| s.include_results)
        .or(flag(user, |s| s.include_results))
        .unwrap_or(false);
    let finish = |source: Source,
                  urls: Result<[String; 3], String>,
                  headers: Vec<(String, String)>,
                  protocol: Option<OtlpProtocol>,
                  timeout: Duration| {
        let urls = match urls {
            Ok(urls) => urls,
            Err(problem) => return Resolution::Unusable { source, problem },
        };
        if let Some(other) = protocol.filter(|p| *p != OtlpProtocol::HttpProtobuf) {
            return Resolution::Unusable {
                source,
                problem: format!(
                    "the protocol {} is not supported by this build; use http/protobuf (port 4318)",
                    other.as_str()
                ),
            };
        }
        let [traces_url, logs_url, metrics_url] = urls;
        Resolution::On(ExportConfig {
            source,
            traces_url,
            logs_url,
            metrics_url,
            headers,
            include_arguments,
            include_results,
            timeout,
        })
    };

    if let Some(org) = managed.filter(|m| m.endpoint.is_some()) {
        let base = org.endpoint.as_deref().unwrap_or_default();
        return finish(
            Source::Managed,
            signal_urls(base, [None, None, None]),
            headers_of(org),
            org.protocol,
            DEFAULT_TIMEOUT,
        );
    }
    let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if disabled || user.and_then(|u| u.enabled) == Some(false) {
        return Resolution::Off;
    }
    let env_protocol = env("OTEL_EXPORTER_OTLP_PROTOCOL");
    let timeout = env("OTEL_EXPORTER_OTLP_TIMEOUT")
        .and_then(|ms| ms.trim().parse().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    if let Some(own) = user.filter(|u| u.endpoint.is_some()) {
        let base = own.endpoint.as_deref().unwrap_or_default();
        let protocol = own
            .protocol
            .or_else(|| env_protocol.as_deref().and_then(OtlpProtocol::parse));
        return finish(
            Source::Settings,
            signal_urls(base, [None, None, None]),
            headers_of(own),
            protocol,
            timeout,
        );
    }
    let per_signal = [
        env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        env("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"),
        env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
    ];
    let base = env("OTEL_EXPORTER_OTLP_ENDPOINT");
    // The audit itself is the log records: without a logs endpoint there is nothing to stream.
    if base.is_none() && per_signal[1].is_none() {
        return Resolution::Off;
    }
    let protocol = match env_protocol {
        Some(word) => match OtlpProtocol::parse(&word) {
            Some(p) => Some(p),
            None => {
                return Resolution::Unusable {
                    source: Source::Environment,
                    problem: format!("OTEL_EXPORTER_OTLP_PROTOCOL={word} is not a protocol"),
                }
            }
        },
        None => None,
    };
    let urls = match base {
        Some(base) => signal_urls(&base, per_signal),
        None => {
            let [t, l, m] = per_signal;
            let l = l.unwrap_or_default();
            // A signal with no address of its own goes beside the logs.
            let beside = |own: Option<String>, path: &str| {
                own.unwrap_or_else(|| match l.rfind("/v1/logs") {
                    Some(at) => format!("{}{path}", &l[..at]),
                    None => l.clone(),
                })
            };
            let urls = [beside(t, "/v1/traces"), l.clone(), beside(m, "/v1/metrics")];
            match urls
                .iter()
                .find_map(|u| toolgate_settings::endpoint_problem(u))
            {
                Some(why) => Err(format!("an OTEL_EXPORTER_OTLP_*_ENDPOINT {why}")),
                None => Ok(urls),
            }
        }
    };
    let headers = env("OTEL_EXPORTER_OTLP_HEADERS")
        .map(|h| parse_env_headers(&h))
        .unwrap_or_default();
    finish(Source::Environment, urls, headers, protocol, timeout)
}

/// The three signals' URLs: `/v1/<signal>` added to `base`, unless a signal has its own.
fn signal_urls(base: &str, own: [Option<String>; 3]) -> Result<[String; 3], String> {
    if let Some(why) = toolgate_settings::endpoint_problem(base) {
        return Err(format!("the endpoint {why}"));
    }
    let base = base.trim_end_matches('/');
    let [t, l, m] = own;
    Ok([
        t.unwrap_or_else(|| format!("{base}/v1/traces")),
        l.unwrap_or_else(|| format!("{base}/v1/logs")),
        m.unwrap_or_else(|| format!("{base}/v1/metrics")),
    ])
}

fn headers_of(settings: &OtlpSettings) -> Vec<(String, String)> {
    settings
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas, values percent-encoded;
/// a pair without `=` is skipped.
fn parse_env_headers(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            let key = key.trim();
            let value = percent_encoding::percent_decode_str(value.trim())
                .decode_utf8()
                .ok()?
                .into_owned();
            (!key.is_empty()).then(|| (key.to_owned(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn otlp(endpoint: Option<&str>) -> OtlpSettings {
        OtlpSettings {
            endpoint: endpoint.map(str::to_owned),
            ..OtlpSettings::default()
        }
    }

    fn with_env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.get(name).cloned()
    }

    fn on(resolution: Resolution) -> ExportConfig {
        match resolution {
            Resolution::On(config) => config,
            other => panic!("expected export on, got {other:?}"),
        }
    }

    #[test]
    fn nothing_configured_is_off() {
        assert_eq!(resolve(None, None, &with_env(&[])), Resolution::Off);
        assert_eq!(
            resolve(Some(&otlp(None)), Some(&otlp(None)), &with_env(&[])),
            Resolution::Off
        );
    }

    #[test]
    fn the_organisations_endpoint_wins_and_cannot_be_turned_off_or_redirected() {
        let mut org = otlp(Some("https://otel.example.com:4318/"));
        org.headers
            .insert("x-org-key".into(), "${secret:ORG}".into());
        let mut user = otlp(Some("http://127.0.0.1:4318"));
        user.enabled = Some(false);
        user.headers.insert("x-user".into(), "u".into());
        let env = with_env(&[
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://elsewhere:4318"),
            (
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                "http://elsewhere:4318/v1/logs",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-org-key=stolen"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        let config = on(resolve(Some(&org), Some(&user), &env));
        assert_eq!(config.source, Source::Managed);
        assert_eq!(config.logs_url, "https://otel.example.com:4318/v1/logs");
        assert_eq!(config.traces_url, "https://otel.example.com:4318/v1/traces");
        assert_eq!(
            config.metrics_url,
            "https://otel.example.com:4318/v1/metrics"
        );
        assert_eq!(
            config.headers,
            vec![("x-org-key".to_owned(), "${secret:ORG}".to_owned())]
        );
    }

    #[test]
    fn the_organisation_decides_what_is_included_when_it_says_and_the_user_otherwise() {
        let mut org = otlp(Some("http://org:4318"));
        let mut user = otlp(None);
        user.include_arguments = Some(true);
        user.include_results = Some(true);
        let config = on(resolve(Some(&org), Some(&user), &with_env(&[])));
        assert!(config.include_arguments && config.include_results);
        org.include_arguments = Some(false);
        let config = on(resolve(Some(&org), Some(&user), &with_env(&[])));
        assert!(!config.include_arguments);
        assert!(config.include_results);
        // Nothing said anywhere: left out.
        let config = on(resolve(
            Some(&otlp(Some("http://org:4318"))),
            None,
            &with_env(&[]),
        ));
        assert!(!config.include_arguments && !config.include_results);
    }

    #[test]
    fn the_user_can_turn_off_the_environments_export_but_not_the_organisations() {
        let mut user = otlp(None);
        user.enabled = Some(false);
        let env = with_env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]);
        assert_eq!(resolve(None, Some(&user), &env), Resolution::Off);
        let disabled = with_env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SDK_DISABLED", "TRUE"),
        ]);
        assert_eq!(resolve(None, None, &disabled), Resolution::Off);
        let org = otlp(Some("http://org:4318"));
        assert_eq!(
            on(resolve(Some(&org), Some(&user), &disabled)).source,
            Source::Managed
        );
    }

    #[test]
    fn the_settings_endpoint_comes_before_the_environments_and_keeps_its_own_headers() {
        let mut user = otlp(Some("http://127.0.0.1:9999"));
        user.headers
            .insert("authorization".into(), "Bearer ${secret:T}".into());
        let env = with_env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://elsewhere:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-env=1"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ]);
        let config = on(resolve(None, Some(&user), &env));
        assert_eq!(config.source, Source::Settings);
        assert_eq!(config.logs_url, "http://127.0.0.1:9999/v1/logs");
        assert_eq!(
            config.headers,
            vec![("authorization".to_owned(), "Bearer ${secret:T}".to_owned())]
        );
        assert_eq!(config.timeout, Duration::from_millis(2500));
    }

    #[test]
    fn the_environment_alone_turns_export_on_with_its_headers_and_signal_endpoints() {
        let env = with_env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "http://metrics:9090/otlp",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "api-key=a%20b%2Cc, tenant = t1 ,junk",
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ]);
        let config = on(resolve(None, None, &env));
        assert_eq!(config.source, Source::Environment);
        assert_eq!(config.logs_url, "http://127.0.0.1:4318/v1/logs");
        assert_eq!(config.metrics_url, "http://metrics:9090/otlp");
        assert_eq!(
            config.headers,
            vec![
                ("api-key".to_owned(), "a b,c".to_owned()),
                ("tenant".to_owned(), "t1".to_owned())
            ]
        );
        assert_eq!(config.destination(), "http://127.0.0.1:4318/v1/logs");
        // Only a logs endpoint: the other signals go beside it.
        let env = with_env(&[("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://c:4318/v1/logs")]);
        let config = on(resolve(None, None, &env));
        assert_eq!(config.traces_url, "http://c:4318/v1/traces");
        // Only traces: the audit has nowhere to go.
        let env = with_env(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://c:4318/v1/traces",
        )]);
        assert_eq!(resolve(None, None, &env), Resolution::Off);
    }

    #[test]
    fn what_this_build_cannot_send_is_named_not_ignored() {
        let mut org = otlp(Some("http://org:4317"));
        org.protocol = Some(OtlpProtocol::Grpc);
        assert!(matches!(
            resolve(Some(&org), None, &with_env(&[])),
            Resolution::Unusable { source: Source::Managed, problem } if problem.contains("grpc")
        ));
        let env = with_env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon"),
        ]);
        assert!(matches!(
            resolve(None, None, &env),
            Resolution::Unusable { .. }
        ));
        let env = with_env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "c:4318")]);
        assert!(matches!(
            resolve(None, None, &env),
            Resolution::Unusable { .. }
        ));
    }
}
