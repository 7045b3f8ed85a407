//! The HTTP door's tokens and settings: who may come in, and where the door is.
//!
//! Every client of the gateway's HTTP door (`toolgate-gateway`'s `door`) presents a bearer
//! token Toolgate issued for it, by name (`toolgate door token add NAME`, or the window). The
//! name is the client's: its gateway profile, its name on the gate's card and in the audit log,
//! and what rules limited to a client match, exactly as `toolgate connect --profile NAME`.
//!
//! - **Kept in the keychain only:** one item per token, `door:token:<name>`, and an index of the
//!   names, `door:index`. Neither name can be a `${secret:…}` reference (those take no `:`), so no
//!   server's settings can ask for a token. The settings file, the logs and the window only ever
//!   see names.
//! - **Shown once:** [`DoorTokens::issue`] returns it to print or show; it is never read back for
//!   display.
//! - **Revocable:** [`DoorTokens::revoke`] removes it; the running door stops accepting it at its
//!   next request when it runs in the same process, and within [`RELOAD_AFTER`] when another
//!   process (the CLI) revoked it.
//! - **Checked** by comparing the presented token with each issued one in constant time.
//! - **Its port is Toolgate's**: the configured port is held from Host's start, whether the door
//!   is open or not ([`hold_port`]), so no confined server can bind it first (and collect the
//!   tokens clients send) or connect to it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use toolgate_secrets::{SecretError, SecretStore};
use toolgate_settings::{door_address_problem, HttpDoorSettings};

use crate::Host;

/// The keychain item listing the names of the issued tokens, one per line.
const INDEX: &str = "door:index";
/// What every token starts with, so one found in a file can be recognised as Toolgate's.
pub const TOKEN_PREFIX: &str = "tgd_";
/// How long the door trusts what it read from the keychain before reading it again, so a
/// revocation made by another process takes effect.
pub const RELOAD_AFTER: Duration = Duration::from_secs(2);

fn item(name: &str) -> String {
    format!("door:token:{name}")
}

/// Why a token could not be issued, listed or revoked.
#[derive(Debug, thiserror::Error)]
pub enum DoorTokenError {
    #[error("'{0}' cannot name a client: use 1 to 64 letters, digits, '-', '_' or '.' (it is also the client's gateway profile)")]
    BadName(String),
    #[error("a token named '{0}' already exists: revoke it first (`toolgate door token revoke {0}`) or choose another name")]
    Exists(String),
    #[error("no token is named '{0}' (`toolgate door token list` shows them)")]
    Unknown(String),
    #[error(transparent)]
    Keychain(#[from] SecretError),
}

/// Whether `name` can name a client: it is written into keychain item names and shown as is.
pub fn check_client_name(name: &str) -> Result<(), DoorTokenError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(DoorTokenError::BadName(name.to_owned()))
    }
}

/// A new token: `tgd_` and 64 hexadecimal digits from two random UUIDs (244 random bits).
fn new_token() -> String {
    let a = uuid::Uuid::new_v4().simple().to_string();
    let b = uuid::Uuid::new_v4().simple().to_string();
    format!("{TOKEN_PREFIX}{a}{b}")
}

/// Equal strings, compared in time that depends only on their lengths.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |diff, (x, y)| diff | (x ^ y))
            == 0
}

/// When the tokens were read, and each one's name and token.
type Read = (Instant, Vec<(String, String)>);

/// The issued tokens, read from the keychain and kept for [`RELOAD_AFTER`].
pub struct DoorTokens {
    store: Arc<dyn SecretStore>,
    /// What was read last, or nothing yet.
    cache: Mutex<Option<Read>>,
}

impl DoorTokens {
    pub fn new(store: Arc<dyn SecretStore>) -> Self {
        Self {
            store,
            cache: Mutex::default(),
        }
    }

    /// The names of the issued tokens, sorted.
    pub fn names(&self) -> Result<Vec<String>, DoorTokenError> {
        let mut names: Vec<String> = self
            .store
            .get(INDEX)?
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn save_names(&self, names: &[String]) -> Result<(), DoorTokenError> {
        if names.is_empty() {
            self.store.delete(INDEX)?;
        } else {
            self.store.set(INDEX, &names.join("\n"))?;
        }
        Ok(())
    }

    /// Issues a token for the client `name`: returned once, to be shown once.
    pub fn issue(&self, name: &str) -> Result<String, DoorTokenError> {
        check_client_name(name)?;
        let mut names = self.names()?;
        if names.iter().any(|n| n == name) {
            return Err(DoorTokenError::Exists(name.to_owned()));
        }
        let token = new_token();
        self.store.set(&item(name), &token)?;
        names.push(name.to_owned());
        self.save_names(&names)?;
        self.forget();
        tracing::info!(client = name, "issued an HTTP door token");
        Ok(token)
    }

    /// Revokes the token of `name`: the door stops accepting it.
    pub fn revoke(&self, name: &str) -> Result<(), DoorTokenError> {
        let mut names = self.names()?;
        let before = names.len();
        names.retain(|n| n != name);
        let had_item = self.store.get(&item(name))?.is_some();
        if names.len() == before && !had_item {
            return Err(DoorTokenError::Unknown(name.to_owned()));
        }
        self.store.delete(&item(name))?;
        self.save_names(&names)?;
        self.forget();
        tracing::info!(client = name, "revoked an HTTP door token");
        Ok(())
    }

    /// The client a presented token was issued to, or `None` when Toolgate did not issue it (or
    /// it was revoked). Reads the keychain when what was read is older than [`RELOAD_AFTER`].
    pub fn client_of(&self, presented: &str) -> Result<Option<String>, DoorTokenError> {
        let fresh = self
            .lock()
            .as_ref()
            .is_some_and(|(read, _)| read.elapsed() < RELOAD_AFTER);
        if !fresh {
            let mut tokens = Vec::new();
            for name in self.names()? {
                if let Some(token) = self.store.get(&item(&name))? {
                    tokens.push((name, token));
                }
            }
            *self.lock() = Some((Instant::now(), tokens));
        }
        let cache = self.lock();
        let tokens = cache
            .as_ref()
            .map(|(_, t)| t.as_slice())
            .unwrap_or_default();
        // Every token is compared, so the time taken does not say which one came close.
        let mut found = None;
        for (name, token) in tokens {
            if same(token, presented) && found.is_none() {
                found = Some(name.clone());
            }
        }
        Ok(found)
    }

    /// Drops what was read, so the next check reads the keychain.
    fn forget(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Read>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The door as the window shows it: its settings, the names of its clients, and whether it
/// listens. Never a token.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct DoorView {
    /// Opened when the app starts.
    pub enabled: bool,
    /// Where it listens, `127.0.0.1:8787`.
    pub address: String,
    /// What a client is given: `http://127.0.0.1:8787/mcp`.
    pub url: String,
    /// It is listening now.
    pub listening: bool,
    /// Why it is not listening although it is switched on (the port is taken…).
    pub problem: Option<String>,
    /// The clients holding a token, by name.
    pub clients: Vec<String>,
}

/// A token just issued: shown once, then only its name.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct IssuedToken {
    pub name: String,
    pub token: String,
    /// The door's address, for the client's configuration.
    pub url: String,
}

/// Why the door's settings were not changed.
#[derive(Debug, thiserror::Error)]
pub enum DoorSettingsError {
    #[error("'{0}' is not an address and port (like 127.0.0.1:8787)")]
    NotAnAddress(String),
    #[error("{0}")]
    NotLoopback(String),
    #[error(transparent)]
    Settings(#[from] toolgate_settings::file::FileError),
}

/// Keeps the door's configured port from every confined server of `servers`: a server in
/// network "loopback" that bound it before the door opened would receive the clients' tokens.
pub(crate) fn hold_port(
    servers: &toolgate_mcp::ServerManager,
    settings: &toolgate_settings::Settings,
) -> Option<toolgate_sandbox::Reservation> {
    let port = settings.gateway.door().address.port();
    (port != 0).then(|| servers.reserved_ports().hold(port))
}

/// The address a client is given for a door at `address`.
pub fn door_url(address: &std::net::SocketAddr) -> String {
    format!("http://{address}/mcp")
}

impl Host {
    /// The HTTP door's tokens (one cache for the door and the window's commands).
    pub fn door_tokens(&self) -> &DoorTokens {
        &self.door_tokens
    }

    /// The door's settings: as saved, else off at the default address.
    pub fn door_settings(&self) -> HttpDoorSettings {
        self.settings().gateway.door()
    }

    /// Switches the door on or off at `address` (a loopback address and port) in the settings;
    /// opening or closing it is the front end's.
    pub fn set_door(
        &self,
        enabled: bool,
        address: &str,
    ) -> Result<HttpDoorSettings, DoorSettingsError> {
        let address: std::net::SocketAddr = address
            .trim()
            .parse()
            .map_err(|_| DoorSettingsError::NotAnAddress(address.to_owned()))?;
        if let Some(problem) = door_address_problem(&address) {
            return Err(DoorSettingsError::NotLoopback(problem));
        }
        let door = HttpDoorSettings { enabled, address };
        let saved = door.clone();
        self.update_settings(|s| s.gateway.http = Some(saved))?;
        Ok(door)
    }

    /// The door as the window shows it, given whether it listens and why not.
    pub fn door_view(
        &self,
        listening: bool,
        problem: Option<String>,
    ) -> Result<DoorView, DoorTokenError> {
        let door = self.door_settings();
        Ok(DoorView {
            enabled: door.enabled,
            address: door.address.to_string(),
            url: door_url(&door.address),
            listening,
            problem,
            clients: self.door_tokens.names()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_secrets::MemoryStore;

    #[test]
    fn a_token_is_issued_once_checked_and_revoked() {
        let store: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
        let tokens = DoorTokens::new(store.clone());
        let token = tokens.issue("claude-web").expect("issued");
        assert!(token.starts_with(TOKEN_PREFIX));
        assert_eq!(token.len(), TOKEN_PREFIX.len() + 64);
        assert!(matches!(
            tokens.issue("claude-web"),
            Err(DoorTokenError::Exists(_))
        ));
        let other = tokens.issue("container").expect("issued");
        assert_ne!(token, other);
        assert_eq!(tokens.names().expect("listed"), ["claude-web", "container"]);
        assert_eq!(
            tokens.client_of(&token).expect("checked").as_deref(),
            Some("claude-web")
        );
        assert_eq!(tokens.client_of("tgd_nope").expect("checked"), None);
        assert_eq!(
            tokens
                .client_of(&token[..token.len() - 1])
                .expect("checked"),
            None,
            "a prefix is not the token"
        );
        tokens.revoke("claude-web").expect("revoked");
        assert_eq!(tokens.client_of(&token).expect("checked"), None);
        assert_eq!(
            tokens.client_of(&other).expect("checked").as_deref(),
            Some("container")
        );
        assert!(matches!(
            tokens.revoke("claude-web"),
            Err(DoorTokenError::Unknown(_))
        ));
        tokens.revoke("container").expect("revoked");
        assert_eq!(store.get(INDEX).expect("read"), None, "nothing left behind");
    }

    #[test]
    fn another_process_revoking_is_seen_after_the_reload_time() {
        let store: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
        let door = DoorTokens::new(store.clone());
        let cli = DoorTokens::new(store);
        let token = cli.issue("ci").expect("issued");
        assert!(door.client_of(&token).expect("checked").is_some());
        cli.revoke("ci").expect("revoked");
        // The door's cache still holds it until RELOAD_AFTER passes; simulate that.
        door.forget();
        assert!(door.client_of(&token).expect("checked").is_none());
    }

    #[test]
    fn names_are_plain() {
        for good in ["claude-code", "ci.runner_2", "a"] {
            check_client_name(good).expect(good);
        }
        for bad in ["", "has space", "colon:x", "new\nline", &"x".repeat(65)] {
            assert!(check_client_name(bad).is_err(), "{bad:?}");
        }
    }
}
