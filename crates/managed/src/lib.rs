//! The organisation's managed policy: what an administrator sets once for every desktop, which
//! the user cannot loosen.
//!
//! - `source.rs`: where each OS's management tools put it, and who may have written it;
//! - `document.rs`: what it says, and how several files merge;
//! - `remote.rs`: its signed remote form, fetched and kept for offline starts;
//! - `servers.rs`: which servers may run (checked at every start);
//! - `launcher.rs`: that a server admitted by its package runs it through the real launcher;
//! - `identity.rs`: what a server runs, which its rules bind (never its id alone);
//! - `locks.rs`: the settings as the organisation has them, and what a change would loosen.
//!
//! Its rules reach the gate as [`toolgate_policy::Rule`]s marked `managed`, ranked by the same
//! precedence as the user's (see `toolgate_policy::decide`), one for each configured server
//! that runs what the rule names ([`Managed::rules_for`]).
//!
//! A policy that names a remote document fails closed: when no verified copy of it can be had
//! (never fetched, the user's kept copy deleted or bad, and no system copy), no server runs
//! until one is fetched ([`Managed::remote_unavailable`]), and the doctor and every server's
//! status say why. The host (`crates/host`) reads it
//! at start, reads it again when a file changes or the remote document is fetched, and applies
//! it to everything: settings changes, server starts, rules.

mod document;
pub mod identity;
mod launcher;
#[cfg(all(test, unix))]
mod launcher_tests;
pub mod locks;
pub mod remote;
mod resolve;
mod servers;
pub mod source;

use std::ffi::OsStr;
use std::path::Path;
use std::time::SystemTime;

pub use document::{Document, Invalid, Locks, ManagedRule, RegistryPolicy};
pub use identity::Identity;
pub use locks::Violation;
pub use remote::{RemotePolicy, VerifyError};
pub use servers::{admit, AdmitError, Runs, Start};
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
    /// Why no server runs: the policy names a remote document and no verified copy of it could
    /// be had. `None`: none is named, or it is applied.
    pub remote_unavailable: Option<String>,
    /// The owner (uid) of system places: where a launcher the allow-list relies on must be.
    pub owner: u32,
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
        let mut remote_unavailable = None;
        if let Some(remote) = document.remote.clone() {
            // The user's kept copy (the newest fetched), then the system's (which the user
            // cannot delete or replace).
            let mut copies: Vec<(String, Result<Vec<u8>, String>, _)> = Vec::new();
            if let Some(cache) = cache.filter(|c| c.exists()) {
                copies.push((
                    cache.display().to_string(),
                    std::fs::read(cache).map_err(|e| e.to_string()),
                    std::fs::metadata(cache).and_then(|m| m.modified()).ok(),
                ));
            }
            if let Some(copy) = source.read_remote_copy() {
                let place = source
                    .remote_copy
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                let modified = source
                    .remote_copy
                    .as_ref()
                    .and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
                copies.push((place, copy.map_err(|e| e.to_string()), modified));
            }
            let mut troubles = Vec::new();
            let mut applied = false;
            for (place, bytes, modified) in copies {
                let with_remote = bytes
                    .and_then(|bytes| remote::verify(&remote, &bytes).map_err(|e| e.to_string()))
                    .and_then(|value| checked(value).map_err(|e| e.to_string()))
                    .and_then(|value| {
                        let mut with_remote = merged.clone();
                        document::merge(&mut with_remote, value);
                        Document::parse(with_remote)
                            .map_err(|e| format!("it does not fit the local policy: {e}"))
                    });
                match with_remote {
                    Ok(d) => {
                        document = d;
                        origins.push(Origin {
                            place: remote.url.clone(),
                            modified,
                        });
                        applied = true;
                        break;
                    }
                    Err(e) => troubles.push(format!("the copy in {place} was not applied: {e}")),
                }
            }
            if !applied {
                let why = if troubles.is_empty() {
                    format!(
                        "the organisation's remote policy from {} has not been fetched yet and no verified copy is kept",
                        remote.url
                    )
                } else {
                    format!(
                        "no verified copy of the organisation's remote policy from {} could be used ({})",
                        remote.url,
                        troubles.join("; ")
                    )
                };
                let why = format!("{why}: no server runs until it is fetched");
                warnings.push(why.clone());
                remote_unavailable = Some(why);
            }
        }
        Managed {
            document,
            origins,
            warnings,
            read_at: Some(SystemTime::now()),
            remote_unavailable,
            owner: source.owner,
        }
    }

    /// Whether any place set a policy.
    pub fn is_active(&self) -> bool {
        !self.origins.is_empty()
    }

    /// The organisation's rules as written (for the window and the CLI).
    pub fn rules(&self) -> Vec<Rule> {
        self.document
            .rules
            .iter()
            .map(ManagedRule::to_rule)
            .collect()
    }

    /// The organisation's rules as the gate reads them, bound to the configured `servers` by
    /// what they run (see [`identity::expand`]); `path` is the PATH their programs are found on.
    pub fn rules_for(&self, servers: &[ServerConfig], path: &OsStr) -> Vec<Rule> {
        identity::expand(
            &self.document.rules,
            &self.document.servers.required,
            servers,
            path,
        )
    }

    /// Whether `server` may be added: what its settings say is checked against the allow and
    /// deny lists; what needs the machine is checked at its start ([`Self::admit_to_run`]).
    pub fn admit(&self, server: &ServerConfig) -> Result<(), AdmitError> {
        servers::admit(&self.document.servers, server, None)?;
        self.admit_registry(server)
    }

    /// Whether `server` may start now, with programs found on `path`: no server while a
    /// required remote policy is unavailable; the allow and deny lists matched against what
    /// runs; a package admitted only through the real launcher.
    pub fn admit_to_run(&self, server: &ServerConfig, path: &OsStr) -> Result<(), AdmitError> {
        if let Some(why) = &self.remote_unavailable {
            return Err(AdmitError::RemoteUnavailable(why.clone()));
        }
        let start = servers::Start {
            path,
            owner: self.owner,
        };
        servers::admit(&self.document.servers, server, Some(start))?;
        self.admit_registry(server)
    }

    /// With `registryOnly` the organisation's registry is its allowlist: a server not added
    /// from it does not run (its own `required` ones do).
    fn admit_registry(&self, server: &ServerConfig) -> Result<(), AdmitError> {
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
        Err(AdmitError::NotFromRegistry {
            url: url.to_owned(),
            runs: Box::new(Runs::of(server)),
        })
    }
}

/// Why the remote document was not fetched and kept; the last good copy stays.
#[derive(Debug, thiserror::Error)]
pub enum RemoteFetchError {
    #[error("the managed policy names no remote document")]
    NoneNamed,
    /// No HTTP client could be made.
    #[error("{0}")]
    Client(reqwest::Error),
    #[error("could not fetch {url}: {error}")]
    Fetch { url: String, error: reqwest::Error },
    #[error("{url} answered {status}")]
    Status {
        url: String,
        status: reqwest::StatusCode,
    },
    #[error("could not read {url}: {error}")]
    Read { url: String, error: reqwest::Error },
    #[error("the document at {url}: {error}")]
    Unverified {
        url: String,
        error: remote::VerifyError,
    },
    #[error("the document at {url}: {error}")]
    NotAPolicy { url: String, error: Invalid },
    #[error("could not keep it in {}: {error}", path.display())]
    Keep {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
}

/// A remote document's JSON when it reads as a policy document.
fn checked(value: serde_json::Value) -> Result<serde_json::Value, Invalid> {
    Document::parse(value.clone()).map(|_| value)
}

/// Fetches the organisation's remote document, checks its signature and that it reads as a
/// policy, and keeps it in `cache` as the last good copy. On any failure the cache is left as
/// it was, and the error says what went wrong.
pub async fn refresh_remote(remote: &RemotePolicy, cache: &Path) -> Result<(), RemoteFetchError> {
    let body = remote::fetch(remote).await?;
    let value = remote::verify(remote, &body).map_err(|error| RemoteFetchError::Unverified {
        url: remote.url.clone(),
        error,
    })?;
    checked(value).map_err(|error| RemoteFetchError::NotAPolicy {
        url: remote.url.clone(),
        error,
    })?;
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
        let refused = managed
            .admit(&own)
            .expect_err("not from the registry")
            .to_string();
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

    /// The review's case: the user deletes the kept copy in their own data folder and blocks
    /// the fetch. No server runs then, unless the system keeps a verified copy.
    #[cfg(unix)]
    #[test]
    fn a_remote_policy_with_no_verified_copy_fails_closed() {
        use base64::Engine;
        use ring::signature::KeyPair;
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = std::env::temp_dir().join(format!("toolgate-remote-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).expect("dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("mode");
        let owner = std::fs::metadata(&dir).expect("dir").uid();
        let org = ring::signature::Ed25519KeyPair::from_seed_unchecked(&[3; 32]).expect("key");
        let b64 = base64::engine::general_purpose::STANDARD;
        let write = |path: &Path, value: &serde_json::Value| {
            std::fs::write(path, serde_json::to_vec(value).expect("json")).expect("write");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).expect("mode");
        };
        write(
            &dir.join("managed.json"),
            &json!({"remote": {"url": "https://policy.example/p",
                "publicKey": b64.encode(org.public_key().as_ref())}}),
        );
        let payload = br#"{"servers": {"deny": [{"npm": "bad"}]}}"#;
        let envelope = json!({"payload": b64.encode(payload),
            "signature": b64.encode(org.sign(payload).as_ref())});
        let source = Source::at(&dir, owner);
        let cache = dir.join("data/managed-remote.json");
        let server = ServerConfig::stdio("own", "/bin/true", Vec::<String>::new());
        let path = std::ffi::OsString::from("/usr/bin:/bin");

        // Never fetched, nothing kept: no server runs, and it says why.
        let managed = Managed::load(&source, Some(&cache));
        let why = managed
            .admit_to_run(&server, &path)
            .unwrap_err()
            .to_string();
        assert!(
            why.contains("has not been fetched yet") && why.contains("no server runs"),
            "{why}"
        );
        assert!(managed.warnings.iter().any(|w| w == &why));

        // Fetched and kept by the user: applied.
        write(&cache, &envelope);
        let managed = Managed::load(&source, Some(&cache));
        assert_eq!(managed.remote_unavailable, None);
        assert_eq!(managed.document.servers.deny.len(), 1);
        assert_eq!(managed.admit_to_run(&server, &path), Ok(()));

        // A kept copy that is not the organisation's: not applied, and no server runs.
        write(
            &cache,
            &json!({"payload": b64.encode(br#"{}"#), "signature": b64.encode([0u8; 64])}),
        );
        let managed = Managed::load(&source, Some(&cache));
        assert!(managed
            .admit_to_run(&server, &path)
            .unwrap_err()
            .to_string()
            .contains("signature"));

        // The user's copy deleted, the system's kept where only its owner writes: applied.
        std::fs::remove_file(&cache).expect("deleted");
        write(&dir.join("managed-remote.json"), &envelope);
        let managed = Managed::load(&source, Some(&cache));
        assert_eq!(managed.remote_unavailable, None, "{:?}", managed.warnings);
        assert_eq!(managed.document.servers.deny.len(), 1);
        // ... but not one others could have written.
        std::fs::set_permissions(
            dir.join("managed-remote.json"),
            std::fs::Permissions::from_mode(0o666),
        )
        .expect("mode");
        let managed = Managed::load(&source, Some(&cache));
        let why = managed
            .admit_to_run(&server, &path)
            .unwrap_err()
            .to_string();
        assert!(why.contains("can be changed by other users"), "{why}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
