//! What every command shares with the app: the data folder, the settings file, the keychain,
//! the history database and the server manager, set up exactly as the app sets them up.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use toolgate_host::{Host, HostOptions, Servers};
use toolgate_llm::HttpProvider;
use toolgate_mcp::HostEnv;
use toolgate_settings::Settings;

use crate::approve;

/// The folder the app keeps its settings, history and logs in.
pub fn default_data_dir() -> Result<PathBuf> {
    toolgate_host::default_data_dir()
        .ok_or_else(|| anyhow!("your data folder could not be found (Linux: XDG_DATA_HOME or HOME; macOS: HOME; Windows: the Roaming AppData folder); pass --data-dir"))
}

pub struct Context {
    /// The running Toolgate without a window, set up as the app sets it up (`toolgate-host`).
    pub host: Arc<Host>,
    /// The settings as this command read or last saved them.
    pub settings: Settings,
    /// Answers the gate at the terminal, when there is one.
    _answerer: Option<tokio::task::JoinHandle<()>>,
}

impl Context {
    /// Opens the host on the app's data folder. A missing settings file means the defaults
    /// (nothing is written until a command changes something); an unreadable one is set aside,
    /// as the app does, and the user is told where. Without a terminal nobody can answer the
    /// gate: what the rules leave open is refused, and logged as unattended. Must be called
    /// inside the runtime (the terminal's answerer is a task). `runs_servers`: the command starts
    /// servers or turns, so it needs the history and audit log, which the others never open.
    pub fn load(data_dir: PathBuf, runs_servers: bool) -> Result<Self> {
        let interactive = approve::interactive();
        let host = Host::open(HostOptions {
            // A terminal already has the user's PATH.
            env: Some(HostEnv::inherited()),
            unattended: (!interactive).then(|| approve::NO_TERMINAL.to_owned()),
            open_history: runs_servers,
            ..HostOptions::new(data_dir)
        })?;
        for notice in host.notices() {
            eprintln!("toolgate: {notice}");
        }
        if let (true, Some(e)) = (runs_servers, host.history_unsaved()) {
            eprintln!("toolgate: this run will not be recorded in the history: {e}");
        }
        let settings = host.settings().clone();
        let answerer = interactive.then(|| approve::spawn(host.approvals().clone()));
        Ok(Self {
            settings,
            host,
            _answerer: answerer,
        })
    }

    pub fn settings_path(&self) -> PathBuf {
        self.host.settings_path().to_owned()
    }

    /// Changes the settings as they are in the file now and saves them (validated, atomically).
    pub fn update(&mut self, change: impl FnOnce(&mut Settings)) -> Result<()> {
        self.settings = self.host.update_settings(change)?;
        Ok(())
    }

    pub fn log_dir(&self) -> PathBuf {
        self.host.log_dir().to_owned()
    }

    /// The host's servers: the app's logs and orphan records (instances never stop each
    /// other's servers), secrets from the keychain, servers' requests through the gate.
    pub fn servers(&self) -> &Servers {
        self.host.servers()
    }

    /// The user's provider with its key (keychain first, then the environment variable).
    pub async fn provider(&self) -> Result<(HttpProvider, String)> {
        let (provider, settings) = self.host.provider().await?;
        Ok((provider, settings.model))
    }
}
