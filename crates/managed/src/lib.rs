//! The organisation's managed policy: what an administrator sets once for every desktop, which
//! the user cannot loosen.
//!
//! - `source.rs`: where each OS's management tools put it, and who may have written it;
//! - `document.rs`: what it says, and how several files merge;
//! - `remote.rs`: its signed remote form, fetched and kept for offline starts;
//! - `servers.rs`: which servers may run (checked at every start);
//! - `locks.rs`: the settings as the organisation has them, and what a change would loosen.
//!
//! Its rules reach the gate as [`toolgate_policy::Rule`]s marked `managed`, ranked by the same
//! precedence as the user's (see `toolgate_policy::decide`). The host (`crates/host`) reads it
//! at start, reads it again when a file changes or the remote document is fetched, and applies
//! it to everything: settings changes, server starts, rules.

mod document;
pub mod locks;
pub mod remote;
mod servers;
pub mod source;

use std::path::Path;
use std::time::SystemTime;

pub use document::{Document, Invalid, Locks, ManagedRule, RegistryPolicy};
pub use locks::Violation;
pub use remote::RemotePolicy;
pub use servers::{admit, Runs};
pub use servers::{ServerMatch, ServerPolicy};
pub use source::{Origin, Source};
use toolgate_policy::Rule;
use toolgate_settings::ServerConfig;

/// The managed policy in force: the merged document and where it came from.
#[derive(Debug, Clone, Default)]
pub struct Managed {
    pub document: Document,
    /// Each place that contributed, in the order merged.
    pub origins: Vec<Origin>,
    /// Places refused (a file the user could write, a document that does not read), and the
    /// remote document's troubles: for the doctor and the window, never silently dropped.
    pub warnings: Vec<String>,
    /// When it was read.
    pub read_at: Option<SystemTime>,
}

impl Managed {
    /// Reads every place of `source` and, when they name a remote document, the last good copy
    /// of it kept in `cache`. Never fails: what cannot be used is a warning.
    pub fn load(source: &Source, cache: Option<&Path>) -> Self {
        let read = source.read();
        let mut warnings = read.warnings;
        let mut origins = Vec::new();
        let mut merged = serde_json::json!({});
        for (origin, value) in read.documents {
            document::merge(&mut merged, value);
            origins.push(origin);
        }
        let mut document = match Document::parse(merged.clone()) {
            Ok(document) => document,
            Err(e) => {
                // Each file read on its own; together they can still clash (two rules of one
                // id). Nothing of them is applied then.
                warnings.push(format!(
                    "the managed policy files do not fit together and none was applied: {e}"
                ));
                return Managed {
                    warnings,
                    read_at: Some(SystemTime::now()),
                    ..Managed::default()
                };
            }
        };
        if let (Some(remote), Some(cache)) = (document.remote.clone(), cache) {
            match std::fs::read(cache) {
                Ok(bytes) => match remote::verify(&remote, &bytes).and_then(checked) {
                    Ok(value) => {
                        let mut with_remote = merged.clone();
                        document::merge(&mut with_remote, value);
                        match Document::parse(with_remote) {
                            Ok(d) => {
                                document = d;
                                origins.push(Origin {
                                    place: remote.url.clone(),
                                    modified: std::fs::metadata(cache)
                                        .and_then(|m| m.modified())
                                        .ok(),
                                });
                            }
                            Err(e) => warnings.push(format!(
                                "the organisation's remote policy from {} does not fit the local one and was not applied: {e}",
                                remote.url
                            )),
                        }
                    }
                    Err(e) => warnings.push(format!(
                        "the kept copy of the organisation's remote policy from {} was not applied: {e}",
                        remote.url
                    )),
                },
                Err(_) => warnings.push(format!(
                    "the organisation's remote policy from {} has not been fetched yet",
                    remote.url
                )),
            }
        }
        Managed {
            document,
            origins,
            warnings,
            read_at: Some(SystemTime::now()),
        }
    }

    /// Whether any place set a policy.
    pub fn is_active(&self) -> bool {
        !self.origins.is_empty()
    }

    /// The organisation's rules, as the gate reads them.
    pub fn rules(&self) -> Vec<Rule> {
        self.document
            .rules
            .iter()
            .map(ManagedRule::to_rule)
            .collect()
    }

    /// Whether `server` may run. With `registryOnly` the organisation's registry is its
    /// allowlist: a server not added from it does not run (its own `required` ones do).
    pub fn admit(&self, server: &ServerConfig) -> Result<(), String> {
        servers::admit(&self.document.servers, server)?;
        let Some(registry) = self.document.registry.as_ref().filter(|r| r.registry_only) else {
            return Ok(());
        };
        let required = self
            .document
            .servers
            .required
            .iter()
            .any(|r| r.id == server.id);
        let url = registry
            .url
            .as_deref()
            .unwrap_or_default()
            .trim_end_matches('/');
        let from_it = server
            .registry
            .as_ref()
            .is_some_and(|r| r.url.trim_end_matches('/') == url);
        if required || from_it {
            return Ok(());
        }
        Err(format!(
            "your organisation runs only servers added from its registry ({url}), and {} was not",
            Runs::of(server).describe()
        ))
    }
}

/// A remote document's JSON when it reads as a policy document.
fn checked(value: serde_json::Value) -> Result<serde_json::Value, String> {
    Document::parse(value.clone())
        .map(|_| value)
        .map_err(|e| e.0)
}

/// Fetches the organisation's remote document, checks its signature and that it reads as a
/// policy, and keeps it in `cache` as the last good copy. On any failure the cache is left as
/// it was, and the error says what went wrong.
pub async fn refresh_remote(remote: &RemotePolicy, cache: &Path) -> Result<(), String> {
    let body = remote::fetch(remote).await?;
    remote::verify(remote, &body)
        .and_then(checked)
        .map_err(|e| format!("the document at {}: {e}", remote.url))?;
    remote::keep(cache, &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn with_registry_only_the_registry_is_the_allowlist() {
        let managed = Managed {
            document: Document::parse(json!({
                "registry": {"url": "https://registry.example.com/", "registryOnly": true},
                "servers": {"required": [{"id": "org", "name": "Org", "transport": "stdio", "command": "/opt/org"}]},
            }))
            .expect("valid"),
            ..Managed::default()
        };
        let mut own = ServerConfig::stdio("own", "npx", ["-y", "x@1.0.0"]);
        let refused = managed.admit(&own).expect_err("not from the registry");
        assert!(
            refused.contains("https://registry.example.com"),
            "{refused}"
        );
        own.registry = Some(toolgate_settings::RegistryOrigin {
            url: "https://registry.example.com".into(),
            name: "io.x/x".into(),
            version: "1.0.0".into(),
        });
        assert_eq!(managed.admit(&own), Ok(()));
        own.registry.as_mut().expect("origin").url = "https://elsewhere.example".into();
        assert!(
            managed.admit(&own).is_err(),
            "another registry is not the organisation's"
        );
        let org = managed.document.servers.required[0].clone();
        assert_eq!(managed.admit(&org), Ok(()));
    }
}
