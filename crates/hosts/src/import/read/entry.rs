//! One server entry read into a transport and its settings ([`read_entry`]), in steps: the
//! fields by type, the transport the entry asks for, then that transport built from them.
//!
//! Lenient about extras: an unknown field, or one that does not apply to the transport, is
//! ignored with a warning. Messages name fields and kinds of value, never values.

use std::collections::{BTreeMap, BTreeSet};

use super::fields::{display_path, field_path, key_path, kind_of, Fields};
use super::inputs::InputDef;
use super::names::{name_from_command, name_from_url};
use super::oauth::read_oauth;
use super::scan::{Place, Scan};
use super::shape::{Entry, Format};
use crate::import::error::ImportError;
use crate::import::vars;
use toolgate_settings::OAuthSettings;
use toolgate_settings::Transport;

/// Values of `timeout` above this are read as milliseconds, at or below it as seconds. Cline and
/// Roo Code write seconds and cap them at 3600; Gemini CLI writes milliseconds (600000 by
/// default). Reading a millisecond value at or below 3600 as seconds gives a longer limit, never
/// a shorter one.
const TIMEOUT_MS_ABOVE: f64 = 3600.0;

/// One entry, read.
pub(in crate::import) struct ReadEntry {
    pub name: String,
    pub kind: ReadKind,
    /// `autoApprove` and `alwaysAllow`, as written.
    pub auto_approve: Vec<String>,
    pub warnings: Vec<String>,
}

pub(in crate::import) enum ReadKind {
    Server {
        transport: Transport,
        enabled: bool,
        call_timeout_secs: Option<u64>,
        /// Toolgate's own `allowEnv`, for a server exported from Toolgate or edited to add it.
        allow_env: Vec<String>,
        /// The VS Code inputs its strings refer to.
        inputs_used: BTreeSet<String>,
        /// Sign-in choices (`oauth` of Claude Code's `.mcp.json` and VS Code's `mcp.json`).
        oauth: Option<Box<OAuthSettings>>,
    },
    /// A transport Toolgate does not speak, named as written.
    Unsupported { transport: String },
}

/// The fields some host writes that the import reads; any other is ignored with a warning.
const KNOWN_FIELDS: &[&str] = &[
    "type",
    "transportType",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "disabled",
    "enabled",
    "timeout",
    "autoApprove",
    "alwaysAllow",
    "envFile",
    "allowEnv",
    "oauth",
];

/// An entry's fields, typed, before they are made into a server.
struct Raw<'a> {
    /// `type`, or Cline's `transportType`.
    declared: Option<&'a str>,
    command: Option<&'a str>,
    /// The URL and the key it was under: `httpUrl`, `url` or `serverUrl`, in that preference.
    url: Option<(&'static str, &'a str)>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    cwd: Option<&'a str>,
    headers: BTreeMap<String, String>,
    disabled: Option<bool>,
    enabled: Option<bool>,
    timeout: Option<f64>,
    allow_env: Vec<String>,
    oauth: Option<Box<OAuthSettings>>,
    auto_approve: Vec<String>,
}

/// The transport an entry asks for.
enum Kind {
    Stdio,
    Http {
        sse: bool,
    },
    /// A `type` Toolgate does not speak, as written.
    Unsupported(String),
}

/// Reads one server entry.
pub(in crate::import) fn read_entry(
    entry: &Entry<'_>,
    format: Format,
    inputs: &BTreeMap<String, InputDef>,
) -> Result<ReadEntry, ImportError> {
    let path = entry.path.as_str();
    let Some(object) = entry.value.as_object() else {
        return Err(ImportError::Invalid {
            at: display_path(path),
            problem: format!(
                "expected an object with a `command` or a `url`, found {}",
                kind_of(entry.value)
            ),
        });
    };
    let fields = Fields { object, path };
    let mut warnings: Vec<String> = object
        .keys()
        .filter(|key| !KNOWN_FIELDS.contains(&key.as_str()))
        .map(|key| format!("ignored the unknown field `{key}`"))
        .collect();
    let raw = read_fields(&fields, &mut warnings)?;
    let mut scan = Scan::new(format == Format::VsCode, inputs);
    let transport = match transport_kind(&raw, path)? {
        Kind::Stdio => stdio(&raw, path, &mut scan, &mut warnings)?,
        Kind::Http { sse } => http(&raw, sse, path, &mut scan, &mut warnings)?,
        Kind::Unsupported(transport) => {
            let name = entry
                .name
                .clone()
                .unwrap_or_else(|| match (raw.command, raw.url) {
                    (_, Some((_, url))) => name_from_url(url),
                    (Some(command), None) => name_from_command(command, &raw.args),
                    (None, None) => "server".to_owned(),
                });
            return Ok(ReadEntry {
                name,
                kind: ReadKind::Unsupported { transport },
                auto_approve: raw.auto_approve,
                warnings,
            });
        }
    };
    warnings.extend(scan.warnings());

    let call_timeout_secs = raw.timeout.and_then(|t| read_timeout(t, &mut warnings));
    let name = entry.name.clone().unwrap_or_else(|| match &transport {
        Transport::Stdio { command, args, .. } => name_from_command(command, args),
        Transport::Http { url, .. } => name_from_url(url),
    });
    Ok(ReadEntry {
        name,
        kind: ReadKind::Server {
            transport,
            enabled: raw.enabled.unwrap_or(true) && !raw.disabled.unwrap_or(false),
            call_timeout_secs,
            allow_env: raw.allow_env,
            oauth: raw.oauth,
            inputs_used: scan.into_used(),
        },
        auto_approve: raw.auto_approve,
        warnings,
    })
}

/// The entry's fields by type; the first of the wrong type is the error.
fn read_fields<'a>(
    fields: &Fields<'a>,
    warnings: &mut Vec<String>,
) -> Result<Raw<'a>, ImportError> {
    let declared = match fields.string("type")? {
        Some(t) => Some(t),
        None => fields.string("transportType")?,
    };
    let command = fields.string("command")?;
    let url = ["httpUrl", "url", "serverUrl"]
        .into_iter()
        .map(|key| fields.string(key).map(|v| v.map(|v| (key, v))))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .next();
    let args = fields.strings("args")?;
    let env = fields.string_map("env")?;
    let cwd = fields.string("cwd")?;
    let headers = fields.string_map("headers")?;
    let disabled = fields.boolean("disabled")?;
    let enabled = fields.boolean("enabled")?;
    let timeout = fields.number("timeout")?;
    let allow_env = fields.strings("allowEnv")?;
    let oauth = read_oauth(fields, warnings)?.map(Box::new);
    let mut auto_approve = fields.strings("autoApprove")?;
    auto_approve.extend(fields.strings("alwaysAllow")?);
    if fields.string("envFile")?.is_some() {
        warnings.push(
            "did not read `envFile`: Toolgate does not load env files; copy the variables the \
             server needs into `env`"
                .into(),
        );
    }
    Ok(Raw {
        declared,
        command,
        url,
        args,
        env,
        cwd,
        headers,
        disabled,
        enabled,
        timeout,
        allow_env,
        oauth,
        auto_approve,
    })
}

/// The transport the entry asks for: its `type`, else what it has (a command or a URL).
fn transport_kind(raw: &Raw<'_>, path: &str) -> Result<Kind, ImportError> {
    Ok(match raw.declared.map(str::to_ascii_lowercase).as_deref() {
        Some("stdio") => Kind::Stdio,
        Some("http" | "streamable-http" | "streamablehttp" | "streamable_http") => {
            Kind::Http { sse: false }
        }
        Some("sse") => Kind::Http { sse: true },
        Some(_) => Kind::Unsupported(raw.declared.unwrap_or_default().to_owned()),
        None => match (raw.command, raw.url) {
            (Some(_), None) => Kind::Stdio,
            // A server that only speaks the older SSE transport is still reached: it turns the
            // first POST down and Toolgate falls back.
            (None, Some(_)) => Kind::Http { sse: false },
            (Some(_), Some(_)) => {
                return Err(ImportError::Invalid {
                    at: display_path(path),
                    problem: "has both `command` and a URL: add `\"type\": \"stdio\"` or \
                              `\"type\": \"http\"` to say which to use"
                        .into(),
                })
            }
            (None, None) => {
                return Err(ImportError::MissingCommandOrUrl {
                    at: display_path(path),
                })
            }
        },
    })
}

/// A stdio server from the entry: its command line, env and working folder.
fn stdio(
    raw: &Raw<'_>,
    path: &str,
    scan: &mut Scan<'_>,
    warnings: &mut Vec<String>,
) -> Result<Transport, ImportError> {
    let (command, url_field, args, env, cwd, headers) = (
        raw.command,
        raw.url,
        &raw.args,
        &raw.env,
        raw.cwd,
        &raw.headers,
    );
    let at = field_path(path, "command");
    let Some(command) = command else {
        return Err(ImportError::Invalid {
            at,
            problem: "missing: a stdio server needs the program to start, for example npx".into(),
        });
    };
    if command.trim().is_empty() {
        return Err(ImportError::Invalid {
            at,
            problem: "must name the program that starts the server, for example npx".into(),
        });
    }
    if command.trim().contains(char::is_whitespace) && args.is_empty() {
        warnings.push(
            "`command` has spaces and there are no `args`: it is run as one program \
             name; if the server does not start, put the program in `command` and the \
             rest in `args`"
                .into(),
        );
    }
    let ignored: Vec<&str> = [
        url_field.map(|(key, _)| key),
        (!headers.is_empty()).then_some("headers"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !ignored.is_empty() {
        warnings.push(format!(
            "ignored {} on a stdio server",
            ignored
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    Ok(Transport::Stdio {
        command: scan.process(command, &at, Place::Verbatim("command"))?,
        args: args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let at = format!("{}[{i}]", field_path(path, "args"));
                scan.process(a, &at, Place::Verbatim("args"))
            })
            .collect::<Result<_, _>>()?,
        env: env
            .iter()
            .map(|(k, v)| {
                let at = key_path(&field_path(path, "env"), k);
                Ok((k.clone(), scan.process(v, &at, Place::Filled)?))
            })
            .collect::<Result<_, ImportError>>()?,
        cwd: cwd
            .map(|c| scan.process(c, &field_path(path, "cwd"), Place::Verbatim("cwd")))
            .transpose()?
            .map(Into::into),
    })
}

/// An HTTP server from the entry: its URL and headers.
fn http(
    raw: &Raw<'_>,
    sse: bool,
    path: &str,
    scan: &mut Scan<'_>,
    warnings: &mut Vec<String>,
) -> Result<Transport, ImportError> {
    let (command, args, env, cwd, headers) =
        (raw.command, &raw.args, &raw.env, raw.cwd, &raw.headers);
    let Some((key, url)) = raw.url else {
        return Err(ImportError::Invalid {
            at: field_path(path, "url"),
            problem: "missing: an HTTP server needs the address to reach".into(),
        });
    };
    let at = field_path(path, key);
    // Checked here rather than by the settings' validation, whose message repeats the
    // URL: a URL may carry a token.
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ImportError::Invalid {
            at,
            problem: "must start with http:// or https://".into(),
        });
    }
    warnings.extend(url_secret_warnings(url));
    let ignored: Vec<&str> = [
        command.map(|_| "command"),
        (!args.is_empty()).then_some("args"),
        (!env.is_empty()).then_some("env"),
        cwd.map(|_| "cwd"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !ignored.is_empty() {
        warnings.push(format!(
            "ignored {} on an HTTP server",
            ignored
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Transport::Http {
        sse,
        url: scan.process(url, &at, Place::Verbatim("url"))?,
        headers: headers
            .iter()
            .map(|(k, v)| {
                let at = key_path(&field_path(path, "headers"), k);
                Ok((k.clone(), scan.process(v, &at, Place::Filled)?))
            })
            .collect::<Result<_, ImportError>>()?,
    })
}

/// The call timeout from a `timeout` value; see [`TIMEOUT_MS_ABOVE`].
fn read_timeout(value: f64, warnings: &mut Vec<String>) -> Option<u64> {
    if !value.is_finite() || value <= 0.0 {
        warnings.push("ignored `timeout`: it is not a positive number".into());
        return None;
    }
    let (seconds, unit) = if value > TIMEOUT_MS_ABOVE {
        ((value / 1000.0).ceil(), "milliseconds")
    } else {
        (value.ceil(), "seconds")
    };
    // Within 1..=86400 after the clamp, so the cast is exact.
    let clamped = seconds.clamp(1.0, 86_400.0) as u64;
    let mut note = format!("read `timeout` {value} as {unit}: calls time out after {clamped} s");
    if seconds > 86_400.0 {
        note.push_str(" (the longest Toolgate allows)");
    }
    warnings.push(note);
    Some(clamped)
}

/// Warnings for query parameters or a user:password part of a URL that look like secrets. Only
/// names are shown.
fn url_secret_warnings(url: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    if authority.contains('@') {
        warnings.push(
            "the URL carries a user name or password; it stays in the settings as written \
             (only header and env values can move to the keychain)"
                .into(),
        );
    }
    if let Some((_, query)) = url.split_once('?') {
        let query = query.split('#').next().unwrap_or_default();
        for pair in query.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if vars::looks_secret(key) && !value.is_empty() && !value.contains("${") {
                warnings.push(format!(
                    "the URL's query parameter `{key}` looks like a secret; it stays in the \
                     settings as written (only header and env values can move to the keychain)"
                ));
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_follow_the_documented_rule() {
        let mut w = Vec::new();
        assert_eq!(read_timeout(60.0, &mut w), Some(60));
        assert_eq!(read_timeout(3600.0, &mut w), Some(3600));
        assert_eq!(read_timeout(30_000.0, &mut w), Some(30));
        assert_eq!(read_timeout(600_000.0, &mut w), Some(600));
        assert_eq!(read_timeout(1e12, &mut w), Some(86_400));
        assert_eq!(read_timeout(0.0, &mut w), None);
        assert_eq!(w.len(), 6);
    }
}
