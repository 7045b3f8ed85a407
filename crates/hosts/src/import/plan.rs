//! Planning an import: from the text to a complete [`ImportPlan`] whose [`ImportReport`] says
//! what would happen, checked against the user's settings but not applied.
//!
//! The plan rewrites password inputs to keychain references, offers secret-looking values for
//! the keychain under free names, and turns `autoApprove` lists into rules; applying it is
//! `apply.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::error::{ImportError, SecretLocation};
use super::launch::launch_line;
use super::merge::{merge, Accepted, Planned};
use super::read::{self, Format, InputDef, ReadEntry};
use super::report::{
    AddedServer, ImportReport, ImportedRule, InputRequest, SecretCandidate, TransportKind, Warnings,
};
use super::vars::{self, Reference};
use toolgate_settings::ServerConfig;
use toolgate_settings::Settings;
use toolgate_settings::Transport;

/// What the caller knows about the text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ImportOptions {
    /// Read the text as this format instead of detecting it.
    pub format: Option<Format>,
    /// The name for a server pasted alone ([`Format::SingleServer`]); ignored otherwise.
    pub name: Option<String>,
}

/// A complete import, ready to apply. Its servers may hold literal secrets until the user moves
/// them, so it is neither serialized nor shown whole: send [`ImportPlan::report`] to the window.
#[derive(Clone)]
pub struct ImportPlan {
    pub(super) report: ImportReport,
    pub(super) servers: Vec<Planned>,
}

impl fmt::Debug for ImportPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Server<'a>(&'a ServerConfig);
        impl fmt::Debug for Server<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut s = f.debug_struct("Server");
                s.field("id", &self.0.id).field("name", &self.0.name);
                match &self.0.transport {
                    Transport::Stdio { env, .. } => s
                        .field("transport", &"stdio")
                        .field("env", &env.keys().collect::<Vec<_>>()),
                    Transport::Http { headers, .. } => s
                        .field("transport", &"http")
                        .field("headers", &headers.keys().collect::<Vec<_>>()),
                };
                s.field("enabled", &self.0.enabled).finish()
            }
        }
        f.debug_struct("ImportPlan")
            .field(
                "servers",
                &self
                    .servers
                    .iter()
                    .map(|p| Server(&p.config))
                    .collect::<Vec<_>>(),
            )
            .field("report", &self.report)
            .finish()
    }
}

impl ImportPlan {
    /// What the import would do; safe to show and send to the window.
    pub fn report(&self) -> &ImportReport {
        &self.report
    }

    /// The servers to add, as planned: VS Code inputs other than passwords are still
    /// `${input:…}`, and secret candidates still hold their literal values.
    pub fn servers(&self) -> impl Iterator<Item = &ServerConfig> + '_ {
        self.servers.iter().map(|p| &p.config)
    }
}

/// Reads `text` (a config from another host, or a snippet of one) and plans adding its servers
/// to `existing`. The plan is complete and valid, or this returns the first problem found.
pub fn plan_import(
    existing: &Settings,
    text: &str,
    options: &ImportOptions,
) -> Result<ImportPlan, ImportError> {
    let value = read::parse_text(text)?;
    let source = read::find_servers(&value, options.format)?;
    let mut reads = source
        .entries
        .iter()
        .map(|entry| read::read_entry(entry, source.format, &source.inputs))
        .collect::<Result<Vec<_>, _>>()?;
    if source.format == Format::SingleServer {
        let name = options.name.as_deref().map(str::trim);
        if let (Some(name), Some(read)) = (name.filter(|n| !n.is_empty()), reads.first_mut()) {
            name.clone_into(&mut read.name);
        }
    }
    plan(existing, source.format, reads, &source.inputs)
}

fn plan(
    existing: &Settings,
    format: Format,
    reads: Vec<ReadEntry>,
    inputs: &BTreeMap<String, InputDef>,
) -> Result<ImportPlan, ImportError> {
    let mut warnings = Warnings::default();
    for (index, read) in reads.iter().enumerate() {
        for message in &read.warnings {
            warnings.add(index, Some(&read.name), message.clone());
        }
    }
    let (accepted, skipped, renamed) = merge(existing, &reads, &mut warnings);

    let mut taken_secrets: BTreeSet<String> = toolgate_settings::secrets_used(existing)
        .into_keys()
        .collect();
    let input_requests = plan_inputs(inputs, &accepted, &mut taken_secrets, &mut warnings);
    let password_names: BTreeMap<&str, &str> = input_requests
        .iter()
        .filter_map(|i| Some((i.id.as_str(), i.secret_name.as_deref()?)))
        .collect();
    let plain_inputs: BTreeSet<&str> = input_requests
        .iter()
        .filter(|i| !i.password)
        .map(|i| i.id.as_str())
        .collect();

    let mut added = Vec::new();
    let mut rules = Vec::new();
    let mut secret_candidates = Vec::new();
    let mut servers = Vec::with_capacity(accepted.len());
    for Accepted {
        index, mut planned, ..
    } in accepted
    {
        map_strings(&mut planned.config, |s| {
            vars::rewrite(s, |inner| match vars::classify(inner) {
                Reference::Input(id) => password_names
                    .get(id)
                    .map(|name| format!("${{secret:{name}}}")),
                _ => None,
            })
        });
        let config = &planned.config;
        secret_candidates.extend(candidates(config, &plain_inputs, &mut taken_secrets));
        rules.extend(auto_approvals(&planned, index, &mut warnings));
        added.push(AddedServer {
            id: config.id.clone(),
            name: config.name.clone(),
            transport: match config.transport {
                Transport::Stdio { .. } => TransportKind::Stdio,
                Transport::Http { sse: false, .. } => TransportKind::Http,
                Transport::Http { sse: true, .. } => TransportKind::Sse,
            },
            enabled: config.enabled,
            runs: launch_line(config),
        });
        servers.push(planned);
    }

    // The plan must apply: check the servers as the settings will hold them.
    let mut trial = existing.clone();
    trial
        .servers
        .extend(servers.iter().map(|p| p.config.clone()));
    trial.validate()?;
    let report = ImportReport {
        format,
        added,
        renamed,
        skipped,
        rules,
        inputs: input_requests,
        secret_candidates,
        warnings: warnings.into_sorted(),
    };
    Ok(ImportPlan { report, servers })
}

/// The VS Code inputs the added servers use, with a keychain name for each password input.
fn plan_inputs(
    inputs: &BTreeMap<String, InputDef>,
    accepted: &[Accepted],
    taken_secrets: &mut BTreeSet<String>,
    warnings: &mut Warnings,
) -> Vec<InputRequest> {
    let used: BTreeSet<&String> = accepted.iter().flat_map(|a| &a.inputs_used).collect();
    let mut requests = Vec::new();
    for id in used {
        let Some(def) = inputs.get(id) else { continue };
        let secret_name = def.password.then(|| {
            let base = vars::secret_name_from(id);
            let name = vars::unique(&base, &|n| taken_secrets.contains(n));
            taken_secrets.insert(name.clone());
            name
        });
        if !matches!(def.kind.as_str(), "promptString" | "pickString") {
            warnings.add(
                usize::MAX,
                None,
                format!(
                    "the input `{id}` is of type `{}`, which Toolgate cannot run; the user is \
                     asked for its value instead",
                    def.kind
                ),
            );
        }
        requests.push(InputRequest {
            id: id.clone(),
            description: def.description.clone(),
            password: def.password,
            secret_name,
            default: def.default.clone(),
            options: def.options.clone(),
            used_by: accepted
                .iter()
                .filter(|a| a.inputs_used.contains(id))
                .map(|a| a.planned.config.id.clone())
                .collect(),
        });
    }
    requests
}

/// The literal, secret-looking env values or headers of one server, each with a free name.
/// A value made only of plain-input references counts as literal: it will be once answered.
fn candidates(
    config: &ServerConfig,
    plain_inputs: &BTreeSet<&str>,
    taken_secrets: &mut BTreeSet<String>,
) -> Vec<SecretCandidate> {
    let (location, values) = match &config.transport {
        Transport::Stdio { env, .. } => (SecretLocation::Env, env),
        Transport::Http { headers, .. } => (SecretLocation::Header, headers),
    };
    let mut found = Vec::new();
    for (name, value) in values {
        let secret_like = match location {
            SecretLocation::Env => vars::looks_secret(name),
            SecretLocation::Header => vars::header_looks_secret(name),
        };
        let literal = vars::references(value).into_iter().all(|inner| {
            matches!(vars::classify(inner), Reference::Input(id) if plain_inputs.contains(id))
        });
        if !secret_like || !literal || value.trim().is_empty() {
            continue;
        }
        let prefixed = vars::secret_name_from(
            &format!("{}_{name}", config.id)
                .to_ascii_uppercase()
                .replace('-', "_"),
        );
        let base = match location {
            SecretLocation::Env if vars::valid_name(name) && !taken_secrets.contains(name) => {
                name.clone()
            }
            _ => prefixed,
        };
        let suggested = vars::unique(&base, &|n| taken_secrets.contains(n));
        taken_secrets.insert(suggested.clone());
        found.push(SecretCandidate {
            server_id: config.id.clone(),
            location,
            name: name.clone(),
            suggested_secret: suggested,
        });
    }
    found
}

/// The rules one server's `autoApprove` list asks for: one per named tool.
fn auto_approvals(planned: &Planned, index: usize, warnings: &mut Warnings) -> Vec<ImportedRule> {
    let config = &planned.config;
    let mut seen = BTreeSet::new();
    let mut rules = Vec::new();
    for tool in &planned.auto_approve {
        let tool = tool.trim();
        if tool.is_empty() {
            warnings.add(
                index,
                Some(&config.name),
                "ignored an empty tool name among the auto-approved tools",
            );
        } else if tool.contains('*') {
            warnings.add(
                index,
                Some(&config.name),
                format!(
                    "did not import the auto-approval `{tool}`: Toolgate's grants name one tool; \
                     allow the whole server when it first asks, if that is what you mean"
                ),
            );
        } else if seen.insert(tool) {
            rules.push(ImportedRule {
                server_id: config.id.clone(),
                tool: tool.to_owned(),
            });
        }
    }
    rules
}

/// Applies `f` to every string of a server's transport that may hold a reference.
pub(super) fn map_strings(config: &mut ServerConfig, mut f: impl FnMut(&str) -> String) {
    match &mut config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            *command = f(command);
            for arg in args.iter_mut() {
                *arg = f(arg);
            }
            for value in env.values_mut() {
                *value = f(value);
            }
            if let Some(dir) = cwd.as_mut() {
                *dir = PathBuf::from(f(&dir.to_string_lossy()));
            }
        }
        Transport::Http { url, headers, .. } => {
            *url = f(url);
            for value in headers.values_mut() {
                *value = f(value);
            }
        }
    }
}
