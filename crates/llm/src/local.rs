//! Model servers already running on this computer, found for the first run: Ollama and LM
//! Studio, asked for their model lists at their usual addresses.
//!
//! Ollama's address follows `OLLAMA_HOST`, the variable Ollama itself reads (`ollama serve`
//! listens there and the `ollama` command connects there), so a user who moved Ollama to
//! another port is still found. It is read here and nowhere else. LM Studio has no such
//! variable; it is looked for on its default port only.

use std::time::Duration;

use crate::presets::{self, Preset};
use crate::{HttpProvider, Provider};

/// How long one server may take to answer before it counts as not running. Short: the first
/// run waits for this, and a server that is up answers a local request at once.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);

/// Ollama's default address, when `OLLAMA_HOST` is not set.
const OLLAMA_DEFAULT: &str = "127.0.0.1:11434";

/// A model server that answered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct LocalServer {
    /// The preset it is (`ollama`, `lmstudio`).
    pub preset: &'static str,
    pub name: &'static str,
    /// The OpenAI-compatible base URL to configure (ends in `/v1`).
    pub base_url: String,
    /// The models it offers, sorted; empty when none is downloaded yet.
    pub models: Vec<String>,
}

/// Where each local server is looked for: Ollama where `ollama_host` (the value of
/// `OLLAMA_HOST`, if set) says, LM Studio on its default port.
pub fn candidates(ollama_host: Option<&str>) -> Vec<(&'static Preset, String)> {
    let mut found = Vec::new();
    if let Some(ollama) = presets::by_id("ollama") {
        found.push((ollama, ollama_base_url(ollama_host)));
    }
    if let Some(lmstudio) = presets::by_id("lmstudio") {
        found.push((
            lmstudio,
            lmstudio.base_url.replace("localhost", "127.0.0.1"),
        ));
    }
    found
}

/// The base URL Ollama answers on, from `OLLAMA_HOST` the way Ollama reads it: `host`,
/// `host:port`, `:port` or a URL (whose scheme brings its own default port); a
/// listen-everywhere address is reached on 127.0.0.1.
pub fn ollama_base_url(ollama_host: Option<&str>) -> String {
    let raw = ollama_host
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .unwrap_or(OLLAMA_DEFAULT);
    // As Ollama's `envconfig.Host`: a scheme given explicitly brings its own default port.
    let (scheme, rest, default_port) = match raw.split_once("://") {
        Some(("https", rest)) => ("https", rest, "443"),
        Some((scheme, rest)) => (scheme, rest, "80"),
        None => ("http", raw, "11434"),
    };
    let rest = rest.split('/').next().unwrap_or_default();
    let (host, port) = match rest.rsplit_once(':') {
        // `[::1]:11434` and `host:port`; a bare IPv6 address has no port to split off.
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) && !host.ends_with(':') => {
            (host, port)
        }
        _ => (rest, default_port),
    };
    let host = match host {
        "" | "0.0.0.0" => "127.0.0.1",
        "[::]" => "[::1]",
        other => other,
    };
    format!("{scheme}://{host}:{port}/v1")
}

/// Asks every candidate for its models at once; returns those that answered, Ollama first.
pub async fn detect() -> Vec<LocalServer> {
    let ollama_host = std::env::var("OLLAMA_HOST").ok();
    let probes = candidates(ollama_host.as_deref())
        .into_iter()
        .map(|(preset, base_url)| probe(preset, base_url));
    futures_util::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}

async fn probe(preset: &'static Preset, base_url: String) -> Option<LocalServer> {
    let provider = HttpProvider::for_preset(preset, &base_url, "").ok()?;
    let mut models = tokio::time::timeout(PROBE_TIMEOUT, provider.list_models())
        .await
        .ok()?
        .map_err(|e| tracing::debug!("no {} at {base_url}: {e}", preset.name))
        .ok()?;
    models.sort();
    Some(LocalServer {
        preset: preset.id,
        name: preset.name,
        base_url,
        models,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_is_read_the_way_ollama_reads_it() {
        let cases = [
            (None, "http://127.0.0.1:11434/v1"),
            (Some(""), "http://127.0.0.1:11434/v1"),
            (Some("127.0.0.1:11500"), "http://127.0.0.1:11500/v1"),
            (Some("0.0.0.0"), "http://127.0.0.1:11434/v1"),
            (Some(":8080"), "http://127.0.0.1:8080/v1"),
            (
                Some("https://gpu.example.com/"),
                "https://gpu.example.com:443/v1",
            ),
            (Some("http://box"), "http://box:80/v1"),
            (Some("http://box:9000"), "http://box:9000/v1"),
            (Some("[::1]:11434"), "http://[::1]:11434/v1"),
        ];
        for (given, expected) in cases {
            assert_eq!(ollama_base_url(given), expected, "{given:?}");
        }
    }

    #[test]
    fn ollama_and_lm_studio_are_looked_for() {
        let found: Vec<(&str, String)> = candidates(None)
            .into_iter()
            .map(|(p, url)| (p.id, url))
            .collect();
        assert_eq!(
            found,
            [
                ("ollama", "http://127.0.0.1:11434/v1".to_owned()),
                ("lmstudio", "http://127.0.0.1:1234/v1".to_owned()),
            ]
        );
    }

    #[tokio::test]
    async fn a_closed_port_is_no_server() {
        // Port 9 (discard) is closed on a test machine; the probe gives up quietly.
        let preset = presets::by_id("ollama").expect("preset");
        assert_eq!(probe(preset, "http://127.0.0.1:9/v1".into()).await, None);
    }
}
