//! Reading other hosts' JSON: the text, its shape, and each server entry in it.
//!
//! Everything here is strict about types (a wrong type is an error naming the field) and lenient
//! about extras (an unknown field is ignored with a warning). Messages name fields and kinds of
//! value, never values: a misplaced value may be a secret.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::vars::{self, Reference};
use super::{Format, ImportError};
use crate::{OAuthSettings, Transport};

mod oauth;
use oauth::read_oauth;

/// Values of `timeout` above this are read as milliseconds, at or below it as seconds. Cline and
/// Roo Code write seconds and cap them at 3600; Gemini CLI writes milliseconds (600000 by
/// default). Reading a millisecond value at or below 3600 as seconds gives a longer limit, never
/// a shorter one.
pub(super) const TIMEOUT_MS_ABOVE: f64 = 3600.0;

/// The JSON of the text: comments and trailing commas allowed (VS Code's files are JSONC).
pub(super) fn parse_text(text: &str) -> Result<Value, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ImportError::Empty);
    }
    serde_json::from_str(&strip_jsonc(text))
        .map_err(|e| ImportError::Json(crate::without_values(&e)))
}

/// `text` with comments and trailing commas blanked out. Every removed byte becomes a space (a
/// newline stays a newline), so serde_json's line and column still point into the user's text.
fn strip_jsonc(text: &str) -> String {
    blank_trailing_commas(&blank_comments(text))
}

fn blank(out: &mut String, c: char) {
    if c == '\n' {
        out.push('\n');
    } else {
        out.extend(std::iter::repeat_n(' ', c.len_utf8()));
    }
}

fn blank_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let end = match (in_string, c, chars.get(i + 1)) {
            (false, '/', Some('/')) => (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len()),
            (false, '/', Some('*')) => (i + 2..chars.len())
                .find(|&j| chars[j] == '*' && chars.get(j + 1) == Some(&'/'))
                .map_or(chars.len(), |j| j + 2),
            _ => {
                out.push(c);
                if in_string && c == '\\' {
                    if let Some(&escaped) = chars.get(i + 1) {
                        out.push(escaped);
                        i += 1;
                    }
                } else if c == '"' {
                    in_string = !in_string;
                }
                i += 1;
                continue;
            }
        };
        for &c in &chars[i..end] {
            blank(&mut out, c);
        }
        i = end;
    }
    out
}

/// Blanks each `,` followed (after white space) by `}` or `]`; comments are already blanked.
fn blank_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            out.push(c);
        } else if c == ','
            && matches!(
                chars[i + 1..].iter().find(|c| !c.is_whitespace()),
                Some('}' | ']')
            )
        {
            out.push(' ');
        } else {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// One server entry found in the JSON, before it is read.
pub(super) struct Entry<'a> {
    /// Its key in the file; none for a single server pasted alone.
    pub name: Option<String>,
    /// Where it is, for messages: `mcpServers.github`, `servers["my server"]`, or empty.
    pub path: String,
    pub value: &'a Value,
}

/// A VS Code input (`inputs[]`).
#[derive(Debug, Clone)]
pub(super) struct InputDef {
    pub kind: String,
    pub description: String,
    pub password: bool,
    pub default: Option<String>,
    pub options: Vec<String>,
}

/// What the JSON holds, by shape.
pub(super) struct Source<'a> {
    pub format: Format,
    /// In key order, so the result does not depend on serde_json's map ordering.
    pub entries: Vec<Entry<'a>>,
    /// VS Code's inputs, by id.
    pub inputs: BTreeMap<String, InputDef>,
}

/// Finds the servers: in the format the caller named, or the one the shape shows.
pub(super) fn find_servers(
    value: &Value,
    named: Option<Format>,
) -> Result<Source<'_>, ImportError> {
    let Some(top) = value.as_object() else {
        return Err(ImportError::NotAnObject {
            found: kind_of(value),
        });
    };
    let format = match named {
        Some(format) => format,
        None => guess_format(top)?,
    };
    let mut inputs = BTreeMap::new();
    let entries = match format {
        Format::McpServers => {
            let servers = top
                .get("mcpServers")
                .ok_or(ImportError::Missing { key: "mcpServers" })?;
            entries_of(servers, "mcpServers")?
        }
        Format::VsCode => {
            let (container, prefix) = match (top.get("servers"), top.get("mcp")) {
                (None, Some(Value::Object(mcp))) => (mcp, "mcp."),
                _ => (top, ""),
            };
            let servers = container
                .get("servers")
                .ok_or(ImportError::Missing { key: "servers" })?;
            inputs = read_inputs(container.get("inputs"), &format!("{prefix}inputs"))?;
            entries_of(servers, &format!("{prefix}servers"))?
        }
        Format::ServerMap => {
            if top.is_empty() {
                return Err(ImportError::NotRecognized);
            }
            entries_of(value, "")?
        }
        Format::SingleServer => vec![Entry {
            name: None,
            path: String::new(),
            value,
        }],
    };
    Ok(Source {
        format,
        entries,
        inputs,
    })
}

fn guess_format(top: &Map<String, Value>) -> Result<Format, ImportError> {
    let mcp_servers = top.contains_key("mcpServers");
    let vscode = top.contains_key("servers")
        || top
            .get("mcp")
            .and_then(Value::as_object)
            .is_some_and(|mcp| mcp.contains_key("servers"));
    match (mcp_servers, vscode) {
        (true, true) => return Err(ImportError::Ambiguous),
        (true, false) => return Ok(Format::McpServers),
        (false, true) => return Ok(Format::VsCode),
        (false, false) => {}
    }
    if is_single_server(top) {
        return Ok(Format::SingleServer);
    }
    let all_objects = !top.is_empty() && top.values().all(Value::is_object);
    let any_server = top
        .values()
        .filter_map(Value::as_object)
        .any(|entry| is_single_server(entry) || entry.contains_key("type"));
    if all_objects && any_server {
        Ok(Format::ServerMap)
    } else {
        Err(ImportError::NotRecognized)
    }
}

/// An object that is one server's entry: its `command` or URL is a string.
fn is_single_server(object: &Map<String, Value>) -> bool {
    ["command", "url", "httpUrl", "serverUrl"]
        .iter()
        .any(|key| object.get(*key).is_some_and(Value::is_string))
}

fn entries_of<'a>(servers: &'a Value, path: &str) -> Result<Vec<Entry<'a>>, ImportError> {
    let Some(map) = servers.as_object() else {
        return Err(ImportError::Invalid {
            at: path.to_owned(),
            problem: format!(
                "expected an object of servers by name, found {}",
                kind_of(servers)
            ),
        });
    };
    if map.is_empty() {
        return Err(ImportError::NoServers {
            at: path.to_owned(),
        });
    }
    let mut entries: Vec<Entry<'a>> = map
        .iter()
        .map(|(name, value)| Entry {
            name: Some(name.clone()),
            path: key_path(path, name),
            value,
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

fn read_inputs(
    inputs: Option<&Value>,
    path: &str,
) -> Result<BTreeMap<String, InputDef>, ImportError> {
    let items = match inputs {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(ImportError::Invalid {
                at: path.to_owned(),
                problem: format!("expected a list of inputs, found {}", kind_of(other)),
            })
        }
    };
    let mut out = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let Some(object) = item.as_object() else {
            return Err(ImportError::Invalid {
                at,
                problem: format!("expected an object, found {}", kind_of(item)),
            });
        };
        let fields = Fields { object, path: &at };
        let id = fields.string("id")?.ok_or_else(|| ImportError::Invalid {
            at: field_path(&at, "id"),
            problem: "missing: every input needs an id".into(),
        })?;
        let password = fields.boolean("password")?.unwrap_or(false);
        let options = match object.get("options") {
            Some(Value::Array(options)) => options
                .iter()
                .filter_map(|o| match o {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(o) => o.get("value").and_then(Value::as_str).map(str::to_owned),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        out.insert(
            id.to_owned(),
            InputDef {
                kind: fields.string("type")?.unwrap_or("promptString").to_owned(),
                description: fields.string("description")?.unwrap_or_default().to_owned(),
                password,
                // A password input's default would be a secret written in the file: not kept.
                default: if password {
                    None
                } else {
                    fields.string("default")?.map(str::to_owned)
                },
                options,
            },
        );
    }
    Ok(out)
}

/// One entry, read.
pub(super) struct ReadEntry {
    pub name: String,
    pub kind: ReadKind,
    /// `autoApprove` and `alwaysAllow`, as written.
    pub auto_approve: Vec<String>,
    pub warnings: Vec<String>,
}

pub(super) enum ReadKind {
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

/// Reads one server entry.
pub(super) fn read_entry(
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

    let declared = match fields.string("type")? {
        Some(t) => Some(t),
        None => fields.string("transportType")?,
    };
    let command = fields.string("command")?;
    let url_field = ["httpUrl", "url", "serverUrl"]
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
    let enabled_field = fields.boolean("enabled")?;
    let timeout = fields.number("timeout")?;
    let allow_env = fields.strings("allowEnv")?;
    let oauth = read_oauth(&fields, &mut warnings)?.map(Box::new);
    let mut auto_approve = fields.strings("autoApprove")?;
    auto_approve.extend(fields.strings("alwaysAllow")?);
    if fields.string("envFile")?.is_some() {
        warnings.push(
            "did not read `envFile`: Toolgate does not load env files; copy the variables the \
             server needs into `env`"
                .into(),
        );
    }

    enum Kind {
        Stdio,
        Http,
        Sse,
    }
    let kind = match declared.map(str::to_ascii_lowercase).as_deref() {
        Some("stdio") => Kind::Stdio,
        Some("http" | "streamable-http" | "streamablehttp" | "streamable_http") => Kind::Http,
        Some("sse") => Kind::Sse,
        Some(_) => {
            let transport = declared.unwrap_or_default().to_owned();
            let name = entry
                .name
                .clone()
                .unwrap_or_else(|| match (command, url_field) {
                    (_, Some((_, url))) => name_from_url(url),
                    (Some(command), None) => name_from_command(command, &args),
                    (None, None) => "server".to_owned(),
                });
            return Ok(ReadEntry {
                name,
                kind: ReadKind::Unsupported { transport },
                auto_approve,
                warnings,
            });
        }
        None => match (command, url_field) {
            (Some(_), None) => Kind::Stdio,
            // A server that only speaks the older SSE transport is still reached: it turns the
            // first POST down and Toolgate falls back.
            (None, Some(_)) => Kind::Http,
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
    };

    let mut scan = Scan {
        vscode: format == Format::VsCode,
        inputs,
        used: BTreeSet::new(),
        bare: BTreeSet::new(),
        other: BTreeSet::new(),
        verbatim: BTreeMap::new(),
        secrets_verbatim: BTreeMap::new(),
    };
    let transport = match kind {
        Kind::Stdio => {
            let at = field_path(path, "command");
            let Some(command) = command else {
                return Err(ImportError::Invalid {
                    at,
                    problem: "missing: a stdio server needs the program to start, for example npx"
                        .into(),
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
            Transport::Stdio {
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
            }
        }
        Kind::Http | Kind::Sse => {
            let sse = matches!(kind, Kind::Sse);
            let Some((key, url)) = url_field else {
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
            Transport::Http {
                sse,
                url: scan.process(url, &at, Place::Verbatim("url"))?,
                headers: headers
                    .iter()
                    .map(|(k, v)| {
                        let at = key_path(&field_path(path, "headers"), k);
                        Ok((k.clone(), scan.process(v, &at, Place::Filled)?))
                    })
                    .collect::<Result<_, ImportError>>()?,
            }
        }
    };
    warnings.extend(scan.warnings());

    let call_timeout_secs = timeout.and_then(|t| read_timeout(t, &mut warnings));
    let name = entry.name.clone().unwrap_or_else(|| match &transport {
        Transport::Stdio { command, args, .. } => name_from_command(command, args),
        Transport::Http { url, .. } => name_from_url(url),
    });
    Ok(ReadEntry {
        name,
        kind: ReadKind::Server {
            transport,
            enabled: enabled_field.unwrap_or(true) && !disabled.unwrap_or(false),
            call_timeout_secs,
            allow_env,
            oauth,
            inputs_used: scan.used,
        },
        auto_approve,
        warnings,
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

/// Where a string sits. Toolgate fills in references only in env values and HTTP headers; in
/// the command, its arguments, the working folder and the URL the text is used as written.
#[derive(Clone, Copy)]
enum Place {
    Filled,
    Verbatim(&'static str),
}

/// Rewrites the references in one string and remembers what it saw.
struct Scan<'a> {
    vscode: bool,
    inputs: &'a BTreeMap<String, InputDef>,
    used: BTreeSet<String>,
    /// Claude Code's `${NAME}`, written as `${env:NAME}`.
    bare: BTreeSet<String>,
    /// References kept in env values and headers that Toolgate does not fill in.
    other: BTreeSet<String>,
    /// References kept where nothing is filled in, by field.
    verbatim: BTreeMap<&'static str, BTreeSet<String>>,
    /// Password inputs used where nothing is filled in, by field.
    secrets_verbatim: BTreeMap<&'static str, BTreeSet<String>>,
}

impl Scan<'_> {
    fn process(&mut self, s: &str, at: &str, place: Place) -> Result<String, ImportError> {
        let mut failure = None;
        let out = vars::rewrite(s, |inner| match (vars::classify(inner), place) {
            (Reference::Input(id), _) if self.vscode => {
                match self.inputs.get(id) {
                    Some(def) => {
                        self.used.insert(id.to_owned());
                        if let (true, Place::Verbatim(field)) = (def.password, place) {
                            self.secrets_verbatim
                                .entry(field)
                                .or_default()
                                .insert(id.to_owned());
                        }
                    }
                    None => {
                        failure.get_or_insert(ImportError::Invalid {
                            at: at.to_owned(),
                            problem: format!("`${{input:{id}}}` names no entry of `inputs`"),
                        });
                    }
                }
                None
            }
            (Reference::Malformed, Place::Filled) => {
                failure.get_or_insert(ImportError::Invalid {
                    at: at.to_owned(),
                    problem: format!(
                        "`{}` does not name a variable or secret: a name starts with a letter or \
                         `_` and has only letters, digits, `_`, `.` and `-`",
                        vars::shown(inner)
                    ),
                });
                None
            }
            (Reference::Env | Reference::Secret(_), Place::Filled) => None,
            (Reference::Bare(name), Place::Filled) if !self.vscode => {
                self.bare.insert(name.to_owned());
                Some(format!("${{env:{name}}}"))
            }
            (_, Place::Filled) => {
                self.other.insert(vars::shown(inner));
                None
            }
            (_, Place::Verbatim(field)) => {
                self.verbatim
                    .entry(field)
                    .or_default()
                    .insert(vars::shown(inner));
                None
            }
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    fn warnings(&self) -> Vec<String> {
        let listed = |set: &BTreeSet<String>| {
            set.iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut warnings: Vec<String> = self
            .bare
            .iter()
            .map(|name| {
                format!(
                    "read `${{{name}}}` as the environment variable {name} (Claude Code's \
                     spelling) and wrote it as `${{env:{name}}}`"
                )
            })
            .collect();
        if !self.other.is_empty() {
            warnings.push(format!(
                "kept {} as written: Toolgate fills in only `${{env:NAME}}` and \
                 `${{secret:NAME}}`, so replace it if the server needs a real value",
                listed(&self.other)
            ));
        }
        for (field, references) in &self.verbatim {
            warnings.push(format!(
                "kept {} in `{field}` as written: Toolgate fills in references only in env \
                 values and headers, so the server receives this text as it is",
                listed(references)
            ));
        }
        for (field, ids) in &self.secrets_verbatim {
            let ids: BTreeSet<String> = ids.iter().map(|id| format!("${{input:{id}}}")).collect();
            warnings.push(format!(
                "the password input {} in `{field}` became a keychain reference, but Toolgate \
                 fills in secrets only in env values and headers: the server receives the \
                 reference, not the secret; pass the secret in `env` if the server reads it there",
                listed(&ids)
            ));
        }
        warnings
    }
}

/// Typed access to one object's fields; errors name the field.
struct Fields<'a> {
    object: &'a Map<String, Value>,
    path: &'a str,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, expected: &str, found: &Value) -> ImportError {
        ImportError::Invalid {
            at: field_path(self.path, key),
            problem: format!("expected {expected}, found {}", kind_of(found)),
        }
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "true or false", other)),
        }
    }

    fn number(&self, key: &str) -> Result<Option<f64>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(self.wrong(key, "a number", other)),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, ImportError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(ImportError::Invalid {
                        at: format!("{}[{i}]", field_path(self.path, key)),
                        problem: format!("expected a string, found {}", kind_of(other)),
                    }),
                })
                .collect(),
            Some(other) => Err(self.wrong(key, "a list of strings", other)),
        }
    }

    fn string_map(&self, key: &str) -> Result<BTreeMap<String, String>, ImportError> {
        match self.get(key) {
            None => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, item)| match item {
                    Value::String(s) => Ok((name.clone(), s.clone())),
                    other => Err(ImportError::Invalid {
                        at: key_path(&field_path(self.path, key), name),
                        problem: format!("expected a string, found {}", kind_of(other)),
                    }),
                })
                .collect(),
            Some(other) => Err(self.wrong(key, "an object of names to strings", other)),
        }
    }
}

pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// `path.key`, or `key` at the top.
fn field_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// `path.name` for a plain name, `path["my name"]` for any other.
fn key_path(path: &str, name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    if plain {
        field_path(path, name)
    } else {
        let quoted = serde_json::to_string(name).unwrap_or_else(|_| format!("\"{name}\""));
        format!("{path}[{quoted}]")
    }
}

fn display_path(path: &str) -> String {
    if path.is_empty() {
        "the server".to_owned()
    } else {
        path.to_owned()
    }
}

/// A name for a server pasted without one: the package a runner fetches (`npx -y
/// @scope/server-x@1` → `server-x`), the image `docker run` starts, else the program's name.
pub(super) fn name_from_command(command: &str, args: &[String]) -> String {
    let program = file_stem(command);
    let runners = ["npx", "uvx", "bunx", "pnpx", "pipx"];
    let package = if runners.contains(&program.as_str()) {
        args.iter()
            .find(|a| !a.starts_with('-'))
            .map(|p| package_name(p))
    } else if program == "docker" || program == "podman" {
        args.iter()
            .rev()
            .find(|a| !a.starts_with('-'))
            .map(|image| {
                let last = image.rsplit('/').next().unwrap_or(image);
                last.split([':', '@']).next().unwrap_or(last).to_owned()
            })
    } else {
        None
    };
    package.filter(|p| !p.is_empty()).unwrap_or(program)
}

/// `@scope/name@1.2` → `name`; `name==1.2` → `name`.
fn package_name(spec: &str) -> String {
    let unscoped = spec.strip_prefix('@').map_or(spec, |rest| {
        rest.split_once('/').map_or(rest, |(_, name)| name)
    });
    unscoped
        .split(['@', '=', '<', '>', '['])
        .next()
        .unwrap_or(unscoped)
        .to_owned()
}

fn file_stem(command: &str) -> String {
    let file = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let lower = file.to_ascii_lowercase();
    for ext in [".exe", ".cmd", ".bat", ".js", ".mjs", ".py"] {
        if lower.ends_with(ext) {
            return file[..file.len() - ext.len()].to_owned();
        }
    }
    file.to_owned()
}

/// The host of a URL, without any user:password part or port.
pub(super) fn name_from_url(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host);
    if host.is_empty() {
        "server".to_owned()
    } else {
        host.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas_are_blanked_in_place() {
        let text = "{\n  // a comment with é and a \"\n  \"a\": \"http://x \\\" // not a comment\", /* block\n */ \"b\": [1, 2, /* x */],\n}";
        let cleaned = strip_jsonc(text);
        assert_eq!(cleaned.len(), text.len());
        assert_eq!(cleaned.lines().count(), text.lines().count());
        let value: Value = serde_json::from_str(&cleaned).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": "http://x \" // not a comment", "b": [1, 2]})
        );
    }

    #[test]
    fn names_for_servers_pasted_alone() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            name_from_command(
                "npx",
                &args(&["-y", "@modelcontextprotocol/server-github@1.2"])
            ),
            "server-github"
        );
        assert_eq!(
            name_from_command("uvx", &args(&["mcp-server-time==0.6"])),
            "mcp-server-time"
        );
        assert_eq!(
            name_from_command(
                "docker",
                &args(&[
                    "run",
                    "-i",
                    "--rm",
                    "ghcr.io/github/github-mcp-server:latest"
                ])
            ),
            "github-mcp-server"
        );
        assert_eq!(
            name_from_command("/usr/local/bin/my-server", &[]),
            "my-server"
        );
        assert_eq!(name_from_command("C:\\tools\\srv.exe", &[]), "srv");
        assert_eq!(
            name_from_url("https://user:pw@mcp.example.com:8443/mcp?x=1"),
            "mcp.example.com"
        );
    }

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
