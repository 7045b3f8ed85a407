//! What the app holds while it runs, and where settings are stored.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tauri::{AppHandle, Manager, Runtime};
use toolgate_agent::{Gate, ModelSource, ServerRequestGate};
use toolgate_history::History;
use toolgate_llm::Message;
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_secrets::{Keychain, SecretStore};
use toolgate_settings::file::{FileError, Loaded};
use toolgate_settings::Settings;

use crate::commands::CommandError;

/// The settings file in the app's data folder (read and written by `toolgate_settings::file`).
pub const SETTINGS_FILE: &str = "settings.json";

/// The conversation on screen: its id in the history (none until its first message) and its
/// messages.
#[derive(Default)]
pub struct Conversation {
    pub id: Option<String>,
    pub messages: Vec<Message>,
}

pub struct AppState {
    pub servers: Arc<ServerManager>,
    pub gate: Arc<Gate>,
    pub secrets: Arc<dyn SecretStore>,
    settings: Mutex<Settings>,
    /// Where the settings are saved.
    settings_path: PathBuf,
    /// What the user must be told about this start: files that could not be read and where they
    /// were kept. Shown once as a banner.
    pub notices: Vec<String>,
    /// The conversation on screen; its lock also keeps turns one at a time.
    pub conversation: tokio::sync::Mutex<Conversation>,
    /// Every conversation, in SQLite; or why it could not be opened (chat still works, unsaved).
    pub history: Result<Arc<History>, String>,
    /// Stops the turn that is running, if one is, with that turn's number.
    pub turn: Mutex<Option<(u64, tokio_util::sync::CancellationToken)>>,
    /// Numbers turns, so a finished turn clears only its own stop token.
    pub turns: std::sync::atomic::AtomicU64,
}

/// Where the set-up installs the example server when Toolgate runs from its source folder.
fn local_example_servers() -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-servers");
    dir.is_dir().then_some(dir)
}

impl AppState {
    /// Loads the settings, or writes the first-run defaults when there are none.
    pub fn load<R: Runtime>(app: &AppHandle<R>) -> anyhow::Result<Self> {
        let paths = app.path();
        let settings_path = paths.app_data_dir()?.join(SETTINGS_FILE);
        let mut notices = Vec::new();
        let settings = match toolgate_settings::file::load(&settings_path)? {
            Loaded::Found(settings) => settings,
            Loaded::Missing => first_run(&settings_path)?,
            unreadable @ Loaded::Unreadable { .. } => {
                // The file was kept as a backup; start from the defaults and tell the user.
                if let Some(notice) = unreadable.notice() {
                    tracing::error!("{notice}");
                    notices.push(notice);
                }
                first_run(&settings_path)?
            }
        };
        let history = open_history(app, &mut notices);
        let gate = Arc::new(Gate::default());
        // Servers' sampling and elicitation requests wait at the same gate as tool calls.
        let mut requests = ServerRequestGate::new(
            gate.clone(),
            Arc::new(SettingsPolicy { app: app.clone() }),
            Arc::new(UserModel { app: app.clone() }),
        );
        if let Ok(history) = &history {
            requests = requests.with_audit(history.clone());
        }
        let requests = Arc::new(requests);
        let secrets: Arc<dyn SecretStore> = Arc::new(Keychain::default());
        let servers = ServerManager::new(ManagerOptions {
            requests: requests.clone(),
            // `${secret:NAME}` in a server's env and headers is read from here at each start.
            secrets: Some(secrets.clone()),
            // Each server's stderr, as <id>.log, rotated.
            log_dir: paths.app_log_dir().ok().map(|d| d.join("servers")),
            // Running server processes, so a killed Toolgate's leftovers are stopped next time.
            state_dir: paths.app_data_dir().ok(),
            ..ManagerOptions::default()
        });
        requests.attach(&servers);
        Ok(Self {
            history,
            servers,
            gate,
            secrets,
            settings: Mutex::new(settings),
            settings_path,
            notices,
            conversation: tokio::sync::Mutex::new(Conversation::default()),
            turn: Mutex::new(None),
            turns: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Pauses every tool (denying what waits now) or lifts the pause; for the window and the tray.
    pub fn set_paused<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        paused: bool,
    ) -> Result<toolgate_policy::PolicySettings, crate::commands::CommandError> {
        let saved = self.update_settings(app, |s| s.policy.paused = paused)?;
        if paused {
            self.gate.deny_all("all tools are paused");
        }
        Ok(saved.policy)
    }

    /// Where the settings file is.
    pub fn settings_path(&self) -> &std::path::Path {
        &self.settings_path
    }

    pub fn settings(&self) -> MutexGuard<'_, Settings> {
        self.settings.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies a change, validates it, saves it; on any failure nothing changes, in memory or
    /// in the file. (The handle is no longer needed, the state knows the file; it stays so that
    /// callers need not change.)
    pub fn update_settings<R: Runtime>(
        &self,
        _app: &AppHandle<R>,
        change: impl FnOnce(&mut Settings),
    ) -> Result<Settings, CommandError> {
        let mut current = self.settings();
        // Start from the file, not memory: the CLI may have changed it since (adding a server,
        // say), and this change must not undo that.
        let mut next = match toolgate_settings::file::load(&self.settings_path) {
            Ok(Loaded::Found(on_disk)) => on_disk,
            Ok(other) => {
                if let Some(notice) = other.notice() {
                    tracing::error!("{notice}");
                }
                current.clone()
            }
            Err(e) => {
                tracing::error!("could not re-read the settings before saving: {e}");
                current.clone()
            }
        };
        change(&mut next);
        // Validates first; the file is replaced whole or not at all.
        toolgate_settings::file::save(&self.settings_path, &next)?;
        *current = next.clone();
        Ok(next)
    }
}

/// Opens `history.sqlite3` in the app's data folder. A damaged file is moved aside (and the user
/// told where, in `notices`) and a new one started; any other failure leaves the app working
/// without history.
fn open_history<R: Runtime>(
    app: &AppHandle<R>,
    notices: &mut Vec<String>,
) -> Result<Arc<History>, String> {
    let dir = app
        .path()
        .app_data_dir()
        .map_err(|e| format!("no data folder for the history: {e}"))?;
    match History::open_or_recover(&dir.join("history.sqlite3")) {
        Ok((history, backup)) => {
            if let Some(backup) = backup {
                tracing::error!(
                    backup = %backup.display(),
                    "the history file was damaged; it was moved aside and a new one started"
                );
                notices.push(format!(
                    "Your conversation history could not be read. It was kept as {} and a new \
                     history was started.",
                    backup.display()
                ));
            }
            Ok(Arc::new(history))
        }
        Err(e) => {
            tracing::error!("conversations will not be saved: {e}");
            Err(e.to_string())
        }
    }
}

/// Saves and returns the settings of a first run.
fn first_run(path: &Path) -> Result<Settings, FileError> {
    let defaults = Settings::first_run(toolgate_settings::example_server(
        local_example_servers().as_deref(),
    ));
    toolgate_settings::file::save(path, &defaults)?;
    Ok(defaults)
}

impl From<FileError> for CommandError {
    fn from(e: FileError) -> Self {
        Self {
            kind: "settings",
            message: e.to_string(),
        }
    }
}

/// The approval rules as the agent sees them: read from the settings at every call, and saved to
/// the settings file when the user answers "always".
pub struct SettingsPolicy<R: Runtime> {
    pub app: AppHandle<R>,
}

impl<R: Runtime> toolgate_agent::PolicyStore for SettingsPolicy<R> {
    fn settings(&self) -> toolgate_policy::PolicySettings {
        // Before the state exists (a server asking during start-up) the defaults apply: ask.
        self.app
            .try_state::<AppState>()
            .map(|state| state.settings().policy.clone())
            .unwrap_or_default()
    }

    fn add_rule(&self, rule: toolgate_policy::Rule) -> Result<(), String> {
        let state = self
            .app
            .try_state::<AppState>()
            .ok_or("Toolgate is still starting; the rule was not saved")?;
        state
            .update_settings(&self.app, |s| s.policy.rules.push(rule))
            .map(|_| ())
            .map_err(|e| e.message)
    }
}

/// The model a server's sampling request runs on: the one the user chose for chat, with its key.
pub struct UserModel<R: Runtime> {
    pub app: AppHandle<R>,
}

#[async_trait::async_trait]
impl<R: Runtime> ModelSource for UserModel<R> {
    async fn model(&self) -> Result<(Box<dyn toolgate_llm::Provider>, String), String> {
        let state = self
            .app
            .try_state::<AppState>()
            .ok_or("Toolgate is still starting")?;
        let (provider, settings) = crate::commands::user_provider(&state)
            .await
            .map_err(|e| e.message)?;
        Ok((Box::new(provider), settings.model))
    }
}
