//! A registry entry as a server of Toolgate's settings: what it runs (an npm or PyPI package
//! at the exact version, an OCI image, or a remote address), pinned; what the user must give
//! (variables, headers, arguments), each secret one to the keychain, never to the settings.

use std::collections::BTreeMap;

use serde::Serialize;
use toolgate_settings::{RegistryOrigin, ServerConfig, Transport};

use crate::model::{Argument, Input, KeyValueInput, Package, ServerResponse};
use crate::RegistryError;

/// One value the user is asked for before the server is added.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Ask {
    /// What the answer is keyed by (`env:NAME`, `header:NAME`, `url:NAME`, `arg:N`).
    pub key: String,
    /// The variable, header or argument, as the server names it.
    pub label: String,
    pub description: Option<String>,
    /// Kept in the keychain, never in the settings; asked without echo.
    pub secret: bool,
    pub required: bool,
    pub default: Option<String>,
    pub choices: Vec<String>,
}

/// What adding an entry would do, for the user to see first.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub name: String,
    pub version: String,
    /// An id for the settings, from the name (`io.github.x/time` → `time`).
    pub suggested_id: String,
    /// What will run, in words (`npx -y @scope/server@1.2.3`, `https://…`).
    pub runs: String,
    pub asks: Vec<Ask>,
    /// `deprecated`, with the registry's message, when it is.
    pub warning: Option<String>,
}

/// The server to add, and the secrets to store first (keychain name, value).
#[derive(Debug, Clone)]
pub struct Built {
    pub config: ServerConfig,
    pub secrets: Vec<(String, String)>,
}

enum Source<'a> {
    Package(&'a Package),
    Remote(&'a crate::model::Remote),
}

/// The first way of running the entry Toolgate supports: a stdio npm, PyPI or OCI package,
/// else a remote.
fn source(entry: &ServerResponse) -> Result<Source<'_>, RegistryError> {
    let server = &entry.server;
    let package = server.packages.iter().find(|p| {
        p.transport.kind == "stdio" && matches!(p.registry_type.as_str(), "npm" | "pypi" | "oci")
    });
    if let Some(package) = package {
        return Ok(Source::Package(package));
    }
    if let Some(remote) = server
        .remotes
        .iter()
        .find(|r| matches!(r.kind.as_str(), "streamable-http" | "sse"))
    {
        return Ok(Source::Remote(remote));
    }
    let kinds: Vec<&str> = server
        .packages
        .iter()
        .map(|p| p.registry_type.as_str())
        .collect();
    Err(RegistryError::Unsupported(format!(
        "{} offers no way Toolgate can run yet (packages: {}; Toolgate runs npm, PyPI and OCI packages over stdio, and remote servers; MCPB bundles are not installed from a registry yet)",
        server.name,
        if kinds.is_empty() { "none".to_owned() } else { kinds.join(", ") }
    )))
}

fn status_check(entry: &ServerResponse) -> Result<Option<String>, RegistryError> {
    let official = entry.meta.official.clone().unwrap_or_default();
    match official.status.as_deref() {
        Some("deleted") => Err(RegistryError::Deleted(entry.server.name.clone())),
        Some("deprecated") => Ok(Some(format!(
            "deprecated in the registry{}",
            official
                .status_message
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ))),
        _ => Ok(None),
    }
}

/// `io.github.x/mcp-server-time` → `mcp-server-time`, as a settings id.
pub fn suggested_id(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let id: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    id.trim_matches('-').to_owned()
}

fn ask(key: String, label: &str, input: &Input) -> Ask {
    Ask {
        key,
        label: label.to_owned(),
        description: input.description.clone(),
        secret: input.is_secret,
        required: input.is_required,
        default: input.default.clone(),
        choices: input.choices.clone(),
    }
}

/// The asks of one value: itself when it has no fixed value, else its `{variables}`.
fn asks_of(key: &str, label: &str, input: &Input, out: &mut Vec<Ask>) {
    match &input.value {
        None => out.push(ask(key.to_owned(), label, input)),
        Some(_) => {
            for (var, inner) in &input.variables {
                out.push(ask(format!("{key}:{var}"), var, inner));
            }
        }
    }
}

fn argument_label(i: usize, arg: &Argument) -> (String, String) {
    let label = arg
        .name
        .clone()
        .or_else(|| arg.value_hint.clone())
        .unwrap_or_else(|| format!("argument {}", i + 1));
    (format!("arg:{i}"), label)
}

fn package_version(entry: &ServerResponse, package: &Package) -> String {
    package
        .version
        .clone()
        .unwrap_or_else(|| entry.server.version.clone())
}

fn runs(entry: &ServerResponse, source: &Source<'_>) -> String {
    match source {
        Source::Package(p) => match p.registry_type.as_str() {
            "npm" => format!("npx -y {}@{}", p.identifier, package_version(entry, p)),
            "pypi" => format!("uvx {}=={}", p.identifier, package_version(entry, p)),
            _ => format!("docker run -i --rm {}", p.identifier),
        },
        Source::Remote(r) => r.url.clone(),
    }
}

/// What adding `entry` would run and ask.
pub fn plan(entry: &ServerResponse) -> Result<Plan, RegistryError> {
    let warning = status_check(entry)?;
    let source = source(entry)?;
    let mut asks = Vec::new();
    match &source {
        Source::Package(p) => {
            for (i, arg) in p
                .runtime_arguments
                .iter()
                .chain(&p.package_arguments)
                .enumerate()
            {
                let (key, label) = argument_label(i, arg);
                asks_of(&key, &label, &arg.input, &mut asks);
            }
            for var in &p.environment_variables {
                asks_of(
                    &format!("env:{}", var.name),
                    &var.name,
                    &var.input,
                    &mut asks,
                );
            }
        }
        Source::Remote(r) => {
            for (var, input) in &r.variables {
                asks.push(ask(format!("url:{var}"), var, input));
            }
            for header in &r.headers {
                asks_of(
                    &format!("header:{}", header.name),
                    &header.name,
                    &header.input,
                    &mut asks,
                );
            }
        }
    }
    Ok(Plan {
        name: entry.server.name.clone(),
        version: entry.server.version.clone(),
        suggested_id: suggested_id(&entry.server.name),
        runs: runs(entry, &source),
        asks,
        warning,
    })
}

/// Builds the answers into values: a secret becomes a `${secret:NAME}` reference and goes to
/// `secrets`; a missing required answer is an error naming it.
struct Filler<'a> {
    id: &'a str,
    answers: &'a BTreeMap<String, String>,
    secrets: Vec<(String, String)>,
}

impl Filler<'_> {
    /// The answer for one ask, or its default; `None` when optional and unanswered.
    fn answer(
        &mut self,
        key: &str,
        label: &str,
        input: &Input,
    ) -> Result<Option<String>, RegistryError> {
        let given = self
            .answers
            .get(key)
            .filter(|v| !v.is_empty())
            .cloned()
            .or_else(|| input.default.clone());
        let Some(value) = given else {
            if input.is_required {
                return Err(RegistryError::Missing(label.to_owned()));
            }
            return Ok(None);
        };
        if !input.choices.is_empty() && !input.choices.contains(&value) {
            return Err(RegistryError::Invalid(format!(
                "{label} must be one of {}",
                input.choices.join(", ")
            )));
        }
        if input.is_secret {
            let name = secret_name(self.id, label);
            self.secrets.push((name.clone(), value));
            return Ok(Some(format!("${{secret:{name}}}")));
        }
        Ok(Some(value))
    }

    /// A value: its fixed text with `{variables}` filled, or the answer.
    fn value(
        &mut self,
        key: &str,
        label: &str,
        input: &Input,
    ) -> Result<Option<String>, RegistryError> {
        let Some(fixed) = &input.value else {
            return self.answer(key, label, input);
        };
        let mut text = fixed.clone();
        for (var, inner) in &input.variables {
            let filled = self
                .answer(&format!("{key}:{var}"), var, inner)?
                .unwrap_or_default();
            text = text.replace(&format!("{{{var}}}"), &filled);
        }
        Ok(Some(text))
    }
}

/// The keychain name of a server's secret: `TIME_TIME_API_TOKEN`.
fn secret_name(id: &str, label: &str) -> String {
    toolgate_settings::secret_name_for(id, label)
}

/// The server `entry` becomes under `id`, pinned, with the user's `answers` (by [`Ask::key`]).
pub fn build(
    entry: &ServerResponse,
    id: &str,
    answers: &BTreeMap<String, String>,
    registry_url: &str,
) -> Result<Built, RegistryError> {
    status_check(entry)?;
    let source = source(entry)?;
    let mut fill = Filler {
        id,
        answers,
        secrets: Vec::new(),
    };
    let transport = match &source {
        Source::Package(p) => {
            let mut args_of = |list: &[Argument], offset: usize, out: &mut Vec<String>| {
                for (i, arg) in list.iter().enumerate() {
                    let (key, label) = argument_label(offset + i, arg);
                    if let Some(value) = fill.value(&key, &label, &arg.input)? {
                        if arg.kind == "named" {
                            out.extend(arg.name.clone());
                        }
                        out.push(value);
                    }
                }
                Ok::<_, RegistryError>(())
            };
            let mut runtime = Vec::new();
            args_of(&p.runtime_arguments, 0, &mut runtime)?;
            let mut package = Vec::new();
            args_of(
                &p.package_arguments,
                p.runtime_arguments.len(),
                &mut package,
            )?;
            let mut env = BTreeMap::new();
            for KeyValueInput { name, input } in &p.environment_variables {
                if let Some(value) = fill.value(&format!("env:{name}"), name, input)? {
                    env.insert(name.clone(), value);
                }
            }
            let version = package_version(entry, p);
            let (command, mut args) = match p.registry_type.as_str() {
                "npm" => {
                    let mut a = vec!["-y".to_owned()];
                    a.extend(runtime);
                    a.push(format!("{}@{version}", p.identifier));
                    ("npx", a)
                }
                "pypi" => {
                    let mut a = runtime;
                    a.push(format!("{}=={version}", p.identifier));
                    ("uvx", a)
                }
                _ => {
                    let mut a = vec!["run".to_owned(), "-i".into(), "--rm".into()];
                    a.extend(runtime);
                    // Each variable passed into the container by name (its value stays in the
                    // environment Toolgate gives docker), unless the entry passes it itself.
                    for name in env.keys() {
                        let passed = a.windows(2).any(|w| w[0] == "-e" && w[1] == *name);
                        if !passed {
                            a.extend(["-e".to_owned(), name.clone()]);
                        }
                    }
                    a.push(p.identifier.clone());
                    ("docker", a)
                }
            };
            args.extend(package);
            Transport::Stdio {
                command: command.to_owned(),
                args,
                env,
                cwd: None,
            }
        }
        Source::Remote(r) => {
            let mut url = r.url.clone();
            for (var, input) in &r.variables {
                let value = fill
                    .answer(&format!("url:{var}"), var, input)?
                    .unwrap_or_default();
                url = url.replace(&format!("{{{var}}}"), &value);
            }
            let mut headers = BTreeMap::new();
            for KeyValueInput { name, input } in &r.headers {
                if let Some(value) = fill.value(&format!("header:{name}"), name, input)? {
                    headers.insert(name.clone(), value);
                }
            }
            Transport::Http {
                url,
                headers,
                sse: r.kind == "sse",
            }
        }
    };
    let mut config = ServerConfig::with_transport(
        id.to_owned(),
        entry
            .server
            .title
            .clone()
            .unwrap_or_else(|| entry.server.name.clone()),
        transport,
    );
    config.registry = Some(RegistryOrigin {
        url: registry_url.to_owned(),
        name: entry.server.name.clone(),
        version: entry.server.version.clone(),
    });
    Ok(Built {
        config,
        secrets: fill.secrets,
    })
}
