//! What a front end decides about its host: [`HostOptions`].

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_mcp::HostEnv;
use toolgate_secrets::{Keychain, SecretStore};

use crate::ManagedSource;

/// What a front end decides about its host.
pub struct HostOptions {
    /// The settings, the history and the records of running servers.
    pub data_dir: PathBuf,
    /// Each server's stderr, as `<id>.log`, rotated.
    pub log_dir: PathBuf,
    /// The PATH servers are started with. `None`: the login shell's, read at the first start
    /// (an app launched from a menu); a terminal's own is `Some(HostEnv::inherited())`.
    pub env: Option<HostEnv>,
    pub secrets: Arc<dyn SecretStore>,
    /// Where the example server is installed, for the first-run settings.
    pub example_servers: Option<PathBuf>,
    /// Write the first-run settings when there is no usable file (the app shows and edits
    /// them); otherwise they are only used until something is changed.
    pub save_first_run: bool,
    /// Why nobody can answer the gate, when nobody can (the CLI without a terminal): requests
    /// the rules leave to the user are then refused at once and logged as unattended.
    pub unattended: Option<String>,
    /// Open the history and audit database. Opening checks the whole file, so a front end that
    /// only edits settings (most CLI commands) skips it; servers' requests then go unaudited,
    /// which is why a front end that runs servers must not.
    pub open_history: bool,
    /// Where the organisation's managed policy is read from: this OS's places
    /// ([`ManagedSource::system`]); tests name a folder of their own. Never taken from the
    /// environment or the settings, which the user controls.
    pub managed: ManagedSource,
}

impl HostOptions {
    /// A host on `data_dir` with the OS keychain, logs in `<data_dir>/logs/servers`, the login
    /// shell's PATH, and nothing written until something changes.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let data_dir = data_dir.into();
        Self {
            log_dir: data_dir.join("logs").join("servers"),
            data_dir,
            env: None,
            secrets: Arc::new(Keychain::default()),
            example_servers: None,
            save_first_run: false,
            unattended: None,
            open_history: true,
            managed: ManagedSource::system(),
        }
    }
}
