//! Endpoints known to speak OpenAI Chat Completions, with what differs between them.
//!
//! A preset fills the provider form (base URL, whether a key is needed) and tells
//! [`HttpProvider`](crate::HttpProvider) which optional request fields the endpoint accepts.
//! Every quirk encoded here says where it comes from, or that it is a cautious assumption.

use serde::Serialize;

/// One known OpenAI-compatible endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preset {
    /// Stable id, for settings.
    pub id: &'static str,
    /// What the user sees.
    pub name: &'static str,
    /// The default base URL, ending before `/chat/completions`. Empty for "custom".
    pub base_url: &'static str,
    /// Whether requests fail without an API key (local servers ignore it).
    pub needs_key: bool,
    /// Whether the endpoint accepts `stream_options: {include_usage: true}`. Where it does not,
    /// the field is left out: some servers answer unknown fields with a 400.
    pub stream_usage: bool,
    /// The model list, relative to the base URL; answers `{"data": [{"id": …}]}`.
    pub models_endpoint: &'static str,
}

/// The presets, in the order the provider form offers them; "custom" is last.
pub const PRESETS: &[Preset] = &[
    Preset {
        id: "openai",
        name: "OpenAI",
        base_url: "https://api.openai.com/v1",
        needs_key: true,
        // OpenAI's API reference: `stream_options.include_usage` adds a last chunk with usage.
        stream_usage: true,
        models_endpoint: "/models",
    },
    Preset {
        id: "ollama",
        name: "Ollama",
        base_url: "http://localhost:11434/v1",
        // Ollama's OpenAI-compatibility docs: the key is "required but ignored".
        needs_key: false,
        // Supported since Ollama 0.5.2 (ollama/ollama#4448, #5200); older versions ignore the
        // field rather than reject it.
        stream_usage: true,
        models_endpoint: "/models",
    },
    Preset {
        id: "lmstudio",
        name: "LM Studio",
        base_url: "http://localhost:1234/v1",
        needs_key: false,
        // Not supported: lmstudio-ai/lmstudio-bug-tracker#713 is an open request for it.
        stream_usage: false,
        models_endpoint: "/models",
    },
    Preset {
        id: "vllm",
        name: "vLLM",
        base_url: "http://localhost:8000/v1",
        // Only when the server was started with `--api-key`.
        needs_key: false,
        // vLLM's OpenAI-compatible server implements `stream_options`.
        stream_usage: true,
        models_endpoint: "/models",
    },
    Preset {
        id: "openrouter",
        name: "OpenRouter",
        base_url: "https://openrouter.ai/api/v1",
        needs_key: true,
        // OpenRouter's docs mark `include_usage` deprecated with no effect: usage is always in
        // the last chunk, which the assembler reads anyway.
        stream_usage: false,
        models_endpoint: "/models",
    },
    Preset {
        id: "deepseek",
        name: "DeepSeek",
        // DeepSeek's docs give the base URL without `/v1` (both work).
        base_url: "https://api.deepseek.com",
        needs_key: true,
        // DeepSeek's chat completion reference documents `stream_options.include_usage`.
        stream_usage: true,
        models_endpoint: "/models",
    },
    Preset {
        id: "groq",
        name: "Groq",
        base_url: "https://api.groq.com/openai/v1",
        needs_key: true,
        // Groq's API reference now documents `stream_options` (it answered 400 to it in 2024,
        // vercel/ai#1578); it also puts usage in `x_groq.usage`, which the assembler reads.
        stream_usage: true,
        models_endpoint: "/models",
    },
    CUSTOM,
];

/// Any other endpoint. Cautious assumptions: no optional fields, a key only if the user gave one.
pub const CUSTOM: Preset = Preset {
    id: "custom",
    name: "Custom (OpenAI-compatible)",
    base_url: "",
    needs_key: false,
    stream_usage: false,
    models_endpoint: "/models",
};

/// The preset with this id.
pub fn by_id(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The preset whose endpoint `base_url` points at (same host, and same port for local
/// servers), or [`CUSTOM`].
pub fn for_base_url(base_url: &str) -> &'static Preset {
    let Some((host, port)) = host_and_port(base_url) else {
        return &CUSTOM;
    };
    PRESETS
        .iter()
        .filter(|p| !p.base_url.is_empty())
        .find(|p| {
            host_and_port(p.base_url).is_some_and(|(h, pp)| {
                let local = is_local(&h);
                if local {
                    is_local(&host) && pp == port
                } else {
                    h == host
                }
            })
        })
        .unwrap_or(&CUSTOM)
}

fn host_and_port(url: &str) -> Option<(String, Option<u16>)> {
    let url = reqwest::Url::parse(url).ok()?;
    Some((
        url.host_str()?.to_ascii_lowercase(),
        url.port_or_known_default(),
    ))
}

fn is_local(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "::1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_a_unique_id_and_custom_is_last() {
        let mut ids: Vec<&str> = PRESETS.iter().map(|p| p.id).collect();
        assert_eq!(ids.last(), Some(&"custom"));
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), PRESETS.len());
        assert_eq!(
            by_id("ollama").map(|p| p.base_url),
            Some("http://localhost:11434/v1")
        );
    }

    #[test]
    fn base_urls_find_their_preset() {
        assert_eq!(for_base_url("https://api.openai.com/v1").id, "openai");
        assert_eq!(for_base_url("http://127.0.0.1:11434/v1/").id, "ollama");
        assert_eq!(for_base_url("http://localhost:1234/v1").id, "lmstudio");
        assert_eq!(for_base_url("https://api.groq.com/openai/v1").id, "groq");
        assert_eq!(for_base_url("http://127.0.0.1:45678/v1").id, "custom");
        assert_eq!(for_base_url("http://gpu-box:11434/v1").id, "custom");
        assert_eq!(for_base_url("not a url").id, "custom");
    }
}
