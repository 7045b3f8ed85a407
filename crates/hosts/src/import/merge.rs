//! Which read entries an import adds, under which id, and which it skips and why.
//!
//! An entry is skipped when the settings (or an earlier entry) already run it, when it is a
//! disabled copy of one that runs, or when its env could make its program load other code; the
//! rest get an id from their name, numbered when taken.

use std::collections::{BTreeMap, BTreeSet};

use toolgate_policy::ServerEndpoint;

use super::read::{ReadEntry, ReadKind};
use super::report::{Clash, RenamedServer, SkipReason, SkippedServer, Warnings};
use toolgate_settings::ServerConfig;
use toolgate_settings::Settings;
use toolgate_settings::Transport;

/// A server the import adds, with the tools its `autoApprove` named.
#[derive(Clone)]
pub(super) struct Planned {
    pub(super) config: ServerConfig,
    /// The tools `autoApprove` named, for the rules.
    pub(super) auto_approve: Vec<String>,
}

/// An entry that will be added, with what planning it further needs.
pub(super) struct Accepted {
    /// Its position among the entries, to keep the file's order.
    pub(super) index: usize,
    pub(super) planned: Planned,
    pub(super) inputs_used: BTreeSet<String>,
}

/// Decides, entry by entry, what is added (under which id) and what is skipped.
pub(super) fn merge(
    existing: &Settings,
    reads: &[ReadEntry],
    warnings: &mut Warnings,
) -> (Vec<Accepted>, Vec<SkippedServer>, Vec<RenamedServer>) {
    // Enabled entries first, so that a disabled duplicate is recognized whatever the order, and
    // the enabled one gets the plain id.
    let disabled = |r: &ReadEntry| matches!(r.kind, ReadKind::Server { enabled: false, .. });
    let order: Vec<usize> = (0..reads.len())
        .filter(|&i| !disabled(&reads[i]))
        .chain((0..reads.len()).filter(|&i| disabled(&reads[i])))
        .collect();
    let existing_ids: BTreeSet<&str> = existing.servers.iter().map(|s| s.id.as_str()).collect();
    let mut taken_ids: BTreeSet<String> = existing_ids.iter().map(|s| (*s).to_owned()).collect();
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut skipped: Vec<(usize, SkippedServer)> = Vec::new();
    let mut renamed = Vec::new();
    for index in order {
        let read = &reads[index];
        let (transport, enabled, call_timeout_secs, allow_env, inputs_used, oauth) =
            match &read.kind {
                ReadKind::Server {
                    transport,
                    enabled,
                    call_timeout_secs,
                    allow_env,
                    inputs_used,
                    oauth,
                } => (
                    transport,
                    *enabled,
                    *call_timeout_secs,
                    allow_env,
                    inputs_used,
                    oauth,
                ),
                ReadKind::Unsupported { transport } => {
                    let reason = SkipReason::UnsupportedTransport {
                        transport: transport.clone(),
                    };
                    skip(index, read, reason, &mut skipped, warnings);
                    continue;
                }
            };
        if let Some(reason) = skip_reason(existing, &accepted, transport, enabled, allow_env) {
            skip(index, read, reason, &mut skipped, warnings);
            continue;
        }

        let (wanted, id) = free_id(&read.name, &mut taken_ids);
        if id != wanted {
            renamed.push((
                index,
                RenamedServer {
                    name: read.name.clone(),
                    clash: if existing_ids.contains(wanted.as_str()) {
                        Clash::ExistingServer
                    } else {
                        Clash::ImportedServer
                    },
                    wanted_id: wanted,
                    id: id.clone(),
                },
            ));
        }
        let mut config = ServerConfig::with_transport(id, read.name.clone(), transport.clone());
        config.enabled = enabled;
        config.allow_env.clone_from(allow_env);
        config.oauth = oauth.as_deref().cloned();
        if let Some(secs) = call_timeout_secs {
            config.call_timeout_secs = secs;
            config.max_call_timeout_secs = config.max_call_timeout_secs.max(secs);
        }
        accepted.push(Accepted {
            index,
            planned: Planned {
                config,
                auto_approve: read.auto_approve.clone(),
            },
            inputs_used: inputs_used.clone(),
        });
    }
    accepted.sort_by_key(|a| a.index);
    skipped.sort_by_key(|(index, _)| *index);
    renamed.sort_by_key(|(index, _)| *index);
    let skipped = skipped.into_iter().map(|(_, s)| s).collect();
    let renamed = renamed.into_iter().map(|(_, r)| r).collect();
    (accepted, skipped, renamed)
}

/// The id a server named `name` wants (its slug) and the one it gets: the slug, or the first of
/// `slug-2`, `slug-3`… not taken; the id it gets is taken from then on.
fn free_id(name: &str, taken_ids: &mut BTreeSet<String>) -> (String, String) {
    let wanted = slug(name);
    let id = (1..)
        .map(|n| match n {
            1 => wanted.clone(),
            n => format!("{wanted}-{n}"),
        })
        .find(|id| !taken_ids.contains(id))
        .unwrap_or_else(|| wanted.clone());
    taken_ids.insert(id.clone());
    (wanted, id)
}

/// Why an entry that Toolgate can run is skipped, if it is: already run (by the settings or
/// an earlier entry), its env unsafe, or a disabled copy of one that runs.
fn skip_reason(
    existing: &Settings,
    accepted: &[Accepted],
    transport: &Transport,
    enabled: bool,
    allow_env: &[String],
) -> Option<SkipReason> {
    let same_endpoint = |t: &Transport| endpoint(t) == endpoint(transport);
    if let Some(s) = existing
        .servers
        .iter()
        .find(|s| same_server(&s.transport, transport))
    {
        Some(SkipReason::Identical {
            id: s.id.clone(),
            existing: true,
        })
    } else if let Some(a) = accepted
        .iter()
        .find(|a| a.planned.config.transport == *transport)
    {
        Some(SkipReason::Identical {
            id: a.planned.config.id.clone(),
            existing: false,
        })
    } else if let Some(variable) = unsafe_env(transport, allow_env) {
        Some(SkipReason::UnsafeEnv { variable })
    } else if enabled {
        None
    } else if let Some(s) = existing
        .servers
        .iter()
        .find(|s| same_endpoint(&s.transport))
    {
        Some(SkipReason::DisabledDuplicate {
            id: s.id.clone(),
            existing: true,
        })
    } else {
        accepted
            .iter()
            .find(|a| same_endpoint(&a.planned.config.transport))
            .map(|a| SkipReason::DisabledDuplicate {
                id: a.planned.config.id.clone(),
                existing: false,
            })
    }
}

fn skip(
    index: usize,
    read: &ReadEntry,
    reason: SkipReason,
    skipped: &mut Vec<(usize, SkippedServer)>,
    warnings: &mut Warnings,
) {
    if !read.auto_approve.is_empty() {
        warnings.add(
            index,
            Some(&read.name),
            "its auto-approved tools were not imported, because the server was skipped",
        );
    }
    skipped.push((
        index,
        SkippedServer {
            name: read.name.clone(),
            reason,
        },
    ));
}

/// Whether an imported transport is one the settings already have: equal, except that a value
/// the settings keep in the keychain (`${secret:…}`) may be literal in the import, as it is when
/// the same file is imported again after its secrets were moved.
fn same_server(existing: &Transport, imported: &Transport) -> bool {
    let same_values = |kept: &BTreeMap<String, String>, new: &BTreeMap<String, String>| {
        kept.len() == new.len()
            && kept
                .iter()
                .zip(new)
                .all(|((k1, v1), (k2, v2))| k1 == k2 && (v1 == v2 || v1.contains("${secret:")))
    };
    match (existing, imported) {
        (
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            },
            Transport::Stdio {
                command: c2,
                args: a2,
                env: e2,
                cwd: d2,
            },
        ) => command == c2 && args == a2 && cwd == d2 && same_values(env, e2),
        (
            Transport::Http { url, headers, sse },
            Transport::Http {
                url: u2,
                headers: h2,
                sse: s2,
            },
        ) => url == u2 && sse == s2 && same_values(headers, h2),
        _ => false,
    }
}

/// What identifies a server for grants and duplicates: its command line, or its URL.
pub(super) fn endpoint(transport: &Transport) -> ServerEndpoint<'_> {
    match transport {
        Transport::Stdio { command, args, .. } => ServerEndpoint::Stdio { command, args },
        Transport::Http { url, .. } => ServerEndpoint::Http { url },
    }
}

/// The first variable of a stdio server's env that could make its program load other code and
/// that `allow_env` does not allow: the rule of [`ServerConfig::unsafe_env`].
fn unsafe_env(transport: &Transport, allow_env: &[String]) -> Option<String> {
    let mut config = ServerConfig::with_transport(String::new(), String::new(), transport.clone());
    config.allow_env = allow_env.to_vec();
    config.unsafe_env()?;
    let Transport::Stdio { env, .. } = transport else {
        return None;
    };
    env.keys()
        .find(|name| {
            toolgate_settings::reference::hijacks_process(name)
                && !allow_env.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
        .cloned()
}

/// A server id from a name: lower-case ASCII letters and digits, runs of anything else as one
/// `-`, at most 48 characters; `server` when nothing is left.
fn slug(name: &str) -> String {
    let mut id = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    id.truncate(48);
    let id = id.trim_end_matches('-');
    if id.is_empty() {
        "server".to_owned()
    } else {
        id.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_valid_ids() {
        assert_eq!(slug("GitHub Tools"), "github-tools");
        assert_eq!(slug("  --my_server--  "), "my-server");
        assert_eq!(slug("日本"), "server");
        assert_eq!(slug(&"a".repeat(80)).len(), 48);
    }
}
