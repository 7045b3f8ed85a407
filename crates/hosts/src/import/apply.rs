//! Applying a plan: the user's answers ([`ImportChoices`]) turned into new, validated settings
//! and the secrets the caller must store first ([`Applied`]). All or nothing: any problem is an
//! error and the settings passed in are left as they were.
//!
//! The answers may hold secrets, so every type here that carries one shows at most its last
//! four characters in `Debug`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use toolgate_policy::{server_fingerprint, Binding, Effect, Rule, Scope, Target};

use super::error::{ImportError, SecretLocation};
use super::merge::{endpoint, Planned};
use super::plan::{map_strings, ImportPlan};
use super::vars::{self, Reference};
use toolgate_settings::ServerConfig;
use toolgate_settings::Settings;
use toolgate_settings::Transport;

/// The user's answers to an [`ImportReport`](super::ImportReport).
#[derive(Clone, Default, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
pub struct ImportChoices {
    /// An answer for every entry of [`ImportReport::inputs`](super::ImportReport::inputs), by id. Password answers come back
    /// in [`Applied::secrets`]; the others are written into the settings.
    pub inputs: BTreeMap<String, String>,
    /// Which [`SecretCandidate`](super::SecretCandidate)s to move to the keychain.
    pub move_secrets: Vec<SecretMove>,
}

impl fmt::Debug for ImportChoices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inputs: BTreeMap<&str, Hidden<'_>> = self
            .inputs
            .iter()
            .map(|(id, value)| (id.as_str(), Hidden(value)))
            .collect();
        f.debug_struct("ImportChoices")
            .field("inputs", &inputs)
            .field("move_secrets", &self.move_secrets)
            .finish()
    }
}

/// "Move this candidate to the keychain", optionally under another name than the suggested one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SecretMove {
    pub server_id: String,
    pub location: SecretLocation,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_name: Option<String>,
}

/// A value the caller must store in the keychain before saving the settings: `name` is what the
/// settings' `${secret:NAME}` says; the keychain item is [`toolgate_settings::secret_item`]`(name)`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretToStore {
    pub name: String,
    pub value: String,
}

impl fmt::Debug for SecretToStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretToStore")
            .field("name", &self.name)
            .field("value", &Hidden(&self.value))
            .finish()
    }
}

/// The result of applying a plan: settings to save, and secrets to store first.
#[derive(Clone, PartialEq)]
pub struct Applied {
    /// Validated; holds `${secret:NAME}` references to the secrets below.
    pub settings: Settings,
    pub secrets: Vec<SecretToStore>,
}

impl fmt::Debug for Applied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Applied")
            .field(
                "servers",
                &self
                    .settings
                    .servers
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("rules", &self.settings.policy.rules.len())
            .field("secrets", &self.secrets)
            .finish()
    }
}

/// A value shown by its last four characters at most: `…wxyz`, or `…` for one shorter than 8.
struct Hidden<'a>(&'a str);

impl fmt::Debug for Hidden<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chars: Vec<char> = self.0.chars().collect();
        if chars.len() >= 8 {
            let tail: String = chars[chars.len() - 4..].iter().collect();
            write!(f, "\"…{tail}\"")
        } else {
            f.write_str("\"…\"")
        }
    }
}

/// The keychain name chosen for each candidate that moves, by server id, location and name.
type Moves<'a> = BTreeMap<(&'a str, SecretLocation, &'a str), String>;

impl ImportPlan {
    /// Every secret candidate, under its suggested name: "move them all".
    pub fn move_all_secrets(&self) -> Vec<SecretMove> {
        self.report
            .secret_candidates
            .iter()
            .map(|c| SecretMove {
                server_id: c.server_id.clone(),
                location: c.location,
                name: c.name.clone(),
                secret_name: None,
            })
            .collect()
    }

    /// Adds the planned servers and rules to `settings` with the user's answers, and validates
    /// the result. `now_ms` (milliseconds since the Unix epoch) dates the rules. The secrets
    /// returned must be stored in the keychain before the settings are saved.
    pub fn apply(
        &self,
        settings: &Settings,
        choices: &ImportChoices,
        now_ms: i64,
    ) -> Result<Applied, ImportError> {
        let mut names_in_use: BTreeSet<String> = BTreeSet::new();
        let (mut secrets, plain) = self.answers(choices, &mut names_in_use)?;
        let moves = self.secret_moves(settings, choices, &mut names_in_use)?;
        let mut out = settings.clone();
        for planned in &self.servers {
            if out.servers.iter().any(|s| s.id == planned.config.id) {
                return Err(ImportError::Stale {
                    id: planned.config.id.clone(),
                });
            }
            let config = answered(planned, &plain, &moves, &mut secrets);
            out.servers.push(config);
        }
        self.add_rules(&mut out, now_ms)?;
        out.validate()?;
        Ok(Applied {
            settings: out,
            secrets,
        })
    }

    /// The answers to the inputs: a password's to store in the keychain (its name now in use),
    /// the others by id, to be written into the settings.
    fn answers<'a>(
        &'a self,
        choices: &'a ImportChoices,
        names_in_use: &mut BTreeSet<String>,
    ) -> Result<(Vec<SecretToStore>, BTreeMap<&'a str, &'a str>), ImportError> {
        let mut secrets = Vec::new();
        let mut plain: BTreeMap<&str, &str> = BTreeMap::new();
        for input in &self.report.inputs {
            let value = choices
                .inputs
                .get(&input.id)
                .ok_or_else(|| ImportError::MissingInput {
                    id: input.id.clone(),
                })?;
            match &input.secret_name {
                Some(name) => {
                    names_in_use.insert(name.clone());
                    secrets.push(SecretToStore {
                        name: name.clone(),
                        value: value.clone(),
                    });
                }
                None => {
                    plain.insert(&input.id, value);
                }
            }
        }
        Ok((secrets, plain))
    }

    /// The keychain name of each candidate the user chose to move, checked: a candidate of
    /// this plan, chosen once, under a valid name nothing else uses.
    fn secret_moves<'a>(
        &'a self,
        settings: &Settings,
        choices: &ImportChoices,
        names_in_use: &mut BTreeSet<String>,
    ) -> Result<Moves<'a>, ImportError> {
        let referenced = toolgate_settings::secrets_used(settings);
        let mut moves: Moves<'a> = BTreeMap::new();
        for choice in &choices.move_secrets {
            let candidate = self
                .report
                .secret_candidates
                .iter()
                .find(|c| {
                    c.server_id == choice.server_id
                        && c.location == choice.location
                        && c.name == choice.name
                })
                .ok_or_else(|| ImportError::UnknownSecretCandidate {
                    server_id: choice.server_id.clone(),
                    location: choice.location,
                    name: choice.name.clone(),
                })?;
            let secret_name = choice
                .secret_name
                .clone()
                .unwrap_or_else(|| candidate.suggested_secret.clone());
            if !vars::valid_name(&secret_name) {
                return Err(ImportError::InvalidSecretName {
                    name: secret_name,
                    problem: "use letters, digits, `_`, `.` and `-`, starting with a letter or `_`"
                        .into(),
                });
            }
            if referenced.contains_key(&secret_name) || !names_in_use.insert(secret_name.clone()) {
                return Err(ImportError::InvalidSecretName {
                    name: secret_name,
                    problem: "another server or value already uses it".into(),
                });
            }
            let key = (
                candidate.server_id.as_str(),
                candidate.location,
                candidate.name.as_str(),
            );
            if moves.insert(key, secret_name).is_some() {
                return Err(ImportError::SecretChosenTwice {
                    server_id: choice.server_id.clone(),
                    location: choice.location,
                    name: choice.name.clone(),
                });
            }
        }
        Ok(moves)
    }

    /// The "always allow" rules of the plan, added to `out`, each bound to its server's launch.
    fn add_rules(&self, out: &mut Settings, now_ms: i64) -> Result<(), ImportError> {
        let mut rule_ids: BTreeSet<String> =
            out.policy.rules.iter().map(|r| r.id.clone()).collect();
        for imported in &self.report.rules {
            let Some(server) = out.servers.iter().find(|s| s.id == imported.server_id) else {
                continue;
            };
            let base = format!("import-{}-{}", imported.server_id, imported.tool);
            let id = (1..)
                .map(|n| {
                    if n == 1 {
                        base.clone()
                    } else {
                        format!("{base}-{n}")
                    }
                })
                .find(|id| !rule_ids.contains(id))
                .unwrap_or(base);
            rule_ids.insert(id.clone());
            let rule = Rule {
                id,
                effect: Effect::Allow,
                scope: Scope::Always,
                target: Target::Tool {
                    server_id: imported.server_id.clone(),
                    tool: imported.tool.clone(),
                },
                conditions: Vec::new(),
                bound_to: Some(Binding {
                    server_fingerprint: server_fingerprint(&endpoint(&server.transport)),
                    tool_fingerprint: None,
                }),
                created_at: now_ms,
                expires_at: None,
                note: Some(format!(
                    "{} in {} (auto-approved in the imported config)",
                    imported.tool, imported.server_id
                )),
                client: None,
                managed: false,
            };
            out.policy
                .add_rule(rule)
                .map_err(|e| ImportError::Policy(e.to_string()))?;
        }
        Ok(())
    }
}

/// A planned server with the user's answers: plain inputs written in, and the values chosen
/// for the keychain replaced by references (their values added to `secrets`).
fn answered(
    planned: &Planned,
    plain: &BTreeMap<&str, &str>,
    moves: &Moves<'_>,
    secrets: &mut Vec<SecretToStore>,
) -> ServerConfig {
    let mut config = planned.config.clone();
    map_strings(&mut config, |s| {
        vars::rewrite(s, |inner| match vars::classify(inner) {
            Reference::Input(id) => plain.get(id).map(|v| (*v).to_owned()),
            _ => None,
        })
    });
    let id = config.id.clone();
    let (location, values) = match &mut config.transport {
        Transport::Stdio { env, .. } => (SecretLocation::Env, env),
        Transport::Http { headers, .. } => (SecretLocation::Header, headers),
    };
    for (name, value) in values.iter_mut() {
        let Some(secret_name) = moves.get(&(id.as_str(), location, name.as_str())) else {
            continue;
        };
        let reference = format!("${{secret:{secret_name}}}");
        let authorization = location == SecretLocation::Header
            && name.to_ascii_uppercase().contains("AUTHORIZATION");
        let (stored, replacement) = match vars::split_scheme(value) {
            Some((scheme, credentials)) if authorization => {
                (credentials.to_owned(), format!("{scheme} {reference}"))
            }
            _ => (value.clone(), reference),
        };
        *value = replacement;
        secrets.push(SecretToStore {
            name: secret_name.clone(),
            value: stored,
        });
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_values_show_at_most_four_characters() {
        assert_eq!(format!("{:?}", Hidden("ghp_abcdefgh1234")), "\"…1234\"");
        assert_eq!(format!("{:?}", Hidden("short")), "\"…\"");
    }
}
