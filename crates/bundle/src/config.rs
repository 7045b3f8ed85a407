//! A bundle's manifest as a stdio server of Toolgate's settings, the way Claude Desktop runs
//! one (`@anthropic-ai/mcpb`'s `getMcpConfigForManifest`): this OS's platform override
//! applied, then `${__dirname}` (the unpacked folder), `${HOME}`, `${DESKTOP}`,
//! `${DOCUMENTS}`, `${DOWNLOADS}`, `${pathSeparator}` / `${/}` and `${user_config.KEY}` (the
//! value given, else the manifest's default) substituted. An argument that is exactly
//! `${user_config.KEY}` of a `multiple` field becomes one argument per value.
//!
//! Differences, each for safety or clarity:
//! - a `sensitive` value goes to the keychain; the server's `env` names it as
//!   `${secret:ID_KEY}`, read at each start. Toolgate passes secrets only in the environment,
//!   so a bundle that puts one on its command line is refused, naming it;
//! - `${secret:…}` and `${env:…}` written in the manifest itself are refused: a bundle must
//!   not read other servers' secrets or Toolgate's environment;
//! - an optional value left empty drops the argument or variable that is exactly its
//!   reference (the official code passes the text `${user_config.KEY}` on);
//! - variables that make a program load other code (`NODE_PATH`, `LD_PRELOAD`…) are allowed
//!   only when every path they hold is inside the bundle's own folder.

use std::collections::BTreeMap;
use std::path::Path;

use toolgate_settings::{SandboxSettings, ServerConfig, Transport};

use crate::manifest::{this_platform, Manifest, UserConfigOption, UserConfigType};
use crate::BundleError;

/// The server to add, and the secrets to store first (keychain name, value).
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub config: ServerConfig,
    pub secrets: Vec<(String, String)>,
}

/// Why this OS cannot run the bundle, if it cannot.
pub(crate) fn unsupported(manifest: &Manifest) -> Option<String> {
    let platforms = manifest.compatibility.as_ref()?.platforms.as_ref()?;
    (!platforms.iter().any(|p| p == this_platform())).then(|| {
        format!(
            "{} runs on {} only, not on {}",
            manifest.name,
            platforms.join(", "),
            this_platform()
        )
    })
}

/// The keychain name of a bundle server's secret: `WEATHER_API_KEY`.
pub fn secret_name(id: &str, key: &str) -> String {
    toolgate_settings::secret_name_for(id, key)
}

/// What a reference stands for.
enum Value {
    Text(String),
    Many(Vec<String>),
    /// An optional value not given.
    Unset,
}

/// The server `manifest` unpacked in `dir` becomes under `id`, with the user's `values`
/// (several for a `multiple` field).
pub fn build(
    manifest: &Manifest,
    dir: &Path,
    id: &str,
    values: &BTreeMap<String, Vec<String>>,
) -> Result<Built, BundleError> {
    if let Some(why) = unsupported(manifest) {
        return Err(BundleError::Unsupported(why));
    }
    let base = &manifest.server.mcp_config;
    let mut command = base.command.clone();
    let mut args = base.args.clone();
    let mut env = base.env.clone();
    if let Some(o) = base.platform_overrides.get(this_platform()) {
        command = o.command.clone().unwrap_or(command);
        args = o.args.clone().unwrap_or(args);
        env = o.env.clone().unwrap_or(env);
    }
    let written = std::iter::once(&command)
        .chain(&args)
        .chain(env.values())
        .chain(env.keys());
    for text in written {
        if text.contains("${secret:") || text.contains("${env:") {
            return Err(BundleError::Unsafe(format!(
                "its manifest reads a secret or variable of Toolgate's ({text})"
            )));
        }
    }
    if let Some(unknown) = values
        .keys()
        .find(|k| !manifest.user_config.contains_key(*k))
    {
        let known: Vec<&str> = manifest.user_config.keys().map(String::as_str).collect();
        return Err(BundleError::Invalid(format!(
            "the bundle has no setting {unknown}; it has: {}",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        )));
    }

    let mut secrets = Vec::new();
    let mut variables: BTreeMap<String, Value> = fixed_variables(dir);
    let mut missing = Vec::new();
    for (key, option) in &manifest.user_config {
        let given: Vec<String> = values
            .get(key)
            .map(|v| v.iter().filter(|s| !s.is_empty()).cloned().collect())
            .unwrap_or_default();
        let chosen = if given.is_empty() {
            default_of(option)
        } else {
            given
        };
        let value = if chosen.is_empty() {
            if option.required {
                missing.push((key.clone(), option.title.clone()));
            }
            Value::Unset
        } else {
            let checked = check(key, option, chosen)?;
            if option.sensitive {
                let name = secret_name(id, key);
                secrets.push((name.clone(), checked.join(",")));
                Value::Text(format!("${{secret:{name}}}"))
            } else if option.multiple {
                Value::Many(checked)
            } else {
                Value::Text(checked.join(","))
            }
        };
        variables.insert(format!("user_config.{key}"), value);
    }
    if !missing.is_empty() {
        return Err(BundleError::Missing(missing));
    }
    let sensitive = |text: &str| {
        manifest
            .user_config
            .iter()
            .find(|(k, o)| o.sensitive && text.contains(&format!("${{user_config.{k}}}")))
            .map(|(k, _)| k.clone())
    };
    for text in std::iter::once(&command).chain(&args) {
        if let Some(key) = sensitive(text) {
            return Err(BundleError::Unsupported(format!(
                "the bundle passes its secret {key} on the command line; Toolgate hands \
                 secrets to a server only in its environment, so it cannot install this bundle"
            )));
        }
    }

    let command = substitute(&command, &variables);
    let args: Vec<String> = args
        .iter()
        .flat_map(
            |arg| match whole_reference(arg).and_then(|r| variables.get(r)) {
                Some(Value::Many(many)) => many.clone(),
                Some(Value::Unset) => Vec::new(),
                _ => vec![substitute(arg, &variables)],
            },
        )
        .collect();
    let mut allow_env = Vec::new();
    let mut server_env = BTreeMap::new();
    for (name, value) in &env {
        if matches!(
            whole_reference(value).and_then(|r| variables.get(r)),
            Some(Value::Unset)
        ) {
            continue;
        }
        let value = substitute(value, &variables);
        if toolgate_settings::hijacks_process(name) {
            if !inside(&value, dir) {
                return Err(BundleError::Unsafe(format!(
                    "it sets {name}, which makes the program load other code, to a place outside the bundle"
                )));
            }
            allow_env.push(name.clone());
        }
        server_env.insert(name.clone(), value);
    }

    let mut config = ServerConfig::stdio(id, command, args);
    config.name = manifest
        .display_name
        .clone()
        .unwrap_or_else(|| manifest.name.clone());
    if let Transport::Stdio { env, .. } = &mut config.transport {
        *env = server_env;
    }
    config.allow_env = allow_env;
    // Its files live inside Toolgate's folder, which the sandbox keeps closed: opened to it
    // for reading only, so it cannot change its own code.
    let mut sandbox = SandboxSettings::defaults_for(&config);
    sandbox.read.push(dir.to_path_buf());
    config.sandbox = Some(sandbox);
    Ok(Built { config, secrets })
}

/// The manifest's default as values: `[]` for none.
fn default_of(option: &UserConfigOption) -> Vec<String> {
    match &option.default {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect(),
        Some(other) => vec![other.to_string()],
    }
}

/// The values, checked against the field's type (paths made absolute from `~`).
fn check(
    key: &str,
    option: &UserConfigOption,
    values: Vec<String>,
) -> Result<Vec<String>, BundleError> {
    if values.len() > 1 && !option.multiple {
        return Err(BundleError::Invalid(format!(
            "{key} takes one value, not {}",
            values.len()
        )));
    }
    values
        .into_iter()
        .map(|value| match option.kind {
            UserConfigType::String => Ok(value),
            UserConfigType::Boolean => match value.as_str() {
                "true" | "false" => Ok(value),
                _ => Err(BundleError::Invalid(format!(
                    "{key} is true or false, not {value:?}"
                ))),
            },
            UserConfigType::Number => {
                let n: f64 = value.parse().map_err(|_| {
                    BundleError::Invalid(format!("{key} is a number, not {value:?}"))
                })?;
                if option.min.is_some_and(|min| n < min) || option.max.is_some_and(|max| n > max) {
                    return Err(BundleError::Invalid(format!(
                        "{key} must be between {} and {}",
                        option.min.map_or("-∞".into(), |m| m.to_string()),
                        option.max.map_or("∞".into(), |m| m.to_string())
                    )));
                }
                Ok(value)
            }
            UserConfigType::Directory | UserConfigType::File => {
                let path = match value.strip_prefix("~/") {
                    Some(rest) => home().map(|h| format!("{h}/{rest}")).unwrap_or(value),
                    None => value,
                };
                if !Path::new(&path).is_absolute() {
                    return Err(BundleError::Invalid(format!(
                        "{key} is a path from the root (/…) or your home folder (~/…), not {path:?}"
                    )));
                }
                Ok(path)
            }
        })
        .collect()
}

fn home() -> Option<String> {
    std::env::var("HOME").ok().filter(|h| !h.is_empty())
}

fn fixed_variables(dir: &Path) -> BTreeMap<String, Value> {
    let mut variables = BTreeMap::new();
    let text = |s: String| Value::Text(s);
    variables.insert("__dirname".into(), text(dir.to_string_lossy().into_owned()));
    let separator = std::path::MAIN_SEPARATOR.to_string();
    variables.insert("pathSeparator".into(), text(separator.clone()));
    variables.insert("/".into(), text(separator));
    if let Some(home) = home() {
        for (name, sub) in [
            ("DESKTOP", "Desktop"),
            ("DOCUMENTS", "Documents"),
            ("DOWNLOADS", "Downloads"),
        ] {
            variables.insert(name.into(), text(format!("{home}/{sub}")));
        }
        variables.insert("HOME".into(), text(home));
    }
    variables
}

/// `KEY` when `text` is exactly `${KEY}`.
fn whole_reference(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("${")?.strip_suffix('}')?;
    (!inner.contains('}')).then_some(inner)
}

/// Each `${KEY}` of a known variable replaced; others left as written.
fn substitute(text: &str, variables: &BTreeMap<String, Value>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                let key = &after[..end];
                match variables.get(key) {
                    Some(Value::Text(t)) => out.push_str(t),
                    Some(Value::Many(many)) => out.push_str(&many.join(",")),
                    Some(Value::Unset) => {}
                    None => out.push_str(&rest[start..start + 2 + end + 1]),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every path of a `PATH`-like value is inside `dir` (no `..`).
fn inside(value: &str, dir: &Path) -> bool {
    let separator = if cfg!(windows) { ';' } else { ':' };
    value.split(separator).filter(|p| !p.is_empty()).all(|p| {
        let path = Path::new(p);
        path.starts_with(dir)
            && !path
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
    })
}
