//! How Toolgate reaches a server: a child process on stdio, or an address over HTTP.
//!
//! [`Transport`] is written to the file through a private serde form, so that an HTTP server held
//! to the older HTTP+SSE transport reads as `"transport": "sse"` while the code sees one `Http`
//! variant with a flag (the two differ only in how the first request is sent).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How Toolgate talks to a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A remote server speaking MCP's Streamable HTTP transport, or the older HTTP+SSE
    /// transport (protocol 2024-11-05) when `sse` is set (`"transport": "sse"` in the file) or
    /// when the server turns down Streamable HTTP.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// Only the older HTTP+SSE transport: written as `"transport": "sse"`.
        sse: bool,
    },
}

/// How [`Transport`] is written: `"transport": "sse"` is an HTTP server held to the older
/// transport.
#[derive(Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "transport", rename_all = "camelCase")]
enum TransportRepr {
    #[serde(rename_all = "camelCase")]
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        #[serde(default)]
        cwd: Option<PathBuf>,
    },
    #[serde(rename_all = "camelCase")]
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
    #[serde(rename_all = "camelCase")]
    Sse {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

/// The window's TypeScript for a [`Transport`] is that of what is written, `TransportRepr`
/// (flattened into a server's settings). By hand, since ts-rs cannot flatten a type given by
/// `#[ts(as = …)]`.
impl ts_rs::TS for Transport {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn name(cfg: &ts_rs::Config) -> String {
        TransportRepr::name(cfg)
    }

    fn inline(cfg: &ts_rs::Config) -> String {
        TransportRepr::inline(cfg)
    }

    fn inline_flattened(cfg: &ts_rs::Config) -> String {
        TransportRepr::inline_flattened(cfg)
    }

    fn visit_dependencies(v: &mut impl ts_rs::TypeVisitor) {
        TransportRepr::visit_dependencies(v)
    }
}

impl Serialize for Transport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let repr = match self.clone() {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => TransportRepr::Stdio {
                command,
                args,
                env,
                cwd,
            },
            Transport::Http {
                url,
                headers,
                sse: false,
            } => TransportRepr::Http { url, headers },
            Transport::Http {
                url,
                headers,
                sse: true,
            } => TransportRepr::Sse { url, headers },
        };
        repr.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Transport {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match TransportRepr::deserialize(deserializer)? {
            TransportRepr::Stdio {
                command,
                args,
                env,
                cwd,
            } => Transport::Stdio {
                command,
                args,
                env,
                cwd,
            },
            TransportRepr::Http { url, headers } => Transport::Http {
                url,
                headers,
                sse: false,
            },
            TransportRepr::Sse { url, headers } => Transport::Http {
                url,
                headers,
                sse: true,
            },
        })
    }
}
