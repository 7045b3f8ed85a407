//! What the app holds while it runs, and where settings are stored.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_store::StoreExt;
use toolgate_agent::{Gate, ModelSource, ServerRequestGate};
use toolgate_history::History;
use toolgate_llm::Message;
use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_secrets::{Keychain, SecretStore};
use toolgate_settings::{Settings, SettingsError};

/// The file `tauri-plugin-store` keeps in the app's data folder.
pub const STORE_FILE: &str = "settings.json";
const SETTINGS_KEY: &str = "settings";

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
        let settings = match read_settings(app) {
            Ok(Some(settings)) => settings,
            Ok(None) => first_run(app)?,
            Err(e) => {
                // Keep the unreadable file for the user, and start from the defaults.
                let backup = back_up_store(app);
                tracing::error!(error = %e, backup = ?backup, "settings unreadable; defaults loaded");
                first_run(app)?
            }
        };
        let paths = app.path();
        let history = open_history(app);
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
            conversation: tokio::sync::Mutex::new(Conversation::default()),
            turn: Mutex::new(None),
            turns: std::sync::atomic::AtomicU64::new(0),
        })
    }

    pub fn settings(&self) -> MutexGuard<'_, Settings> {
        self.settings.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies a change, validates it, stores it; on any failure nothing changes.
    pub fn update_settings<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        change: impl FnOnce(&mut Settings),
    ) -> Result<Settings, crate::commands::CommandError> {
        let mut current = self.settings();
        let mut next = current.clone();
        change(&mut next);
        next.validate()?;
        write_settings(app, &next)?;
        *current = next.clone();
        Ok(next)
    }
}

/// Opens `history.sqlite3` in the app's data folder. A damaged file is moved aside (and the user
/// told where) and a new one started; any other failure leaves the app working without history.
fn open_history<R: Runtime>(app: &AppHandle<R>) -> Result<Arc<History>, String> {
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
            }
            Ok(Arc::new(history))
        }
        Err(e) => {
            tracing::error!("conversations will not be saved: {e}");
            Err(e.to_string())
        }
    }
}

/// Writes and returns the settings of a first run.
fn first_run<R: Runtime>(app: &AppHandle<R>) -> Result<Settings, SettingsError> {
    let defaults = Settings::first_run(toolgate_settings::example_server(
        local_example_servers().as_deref(),
    ));
    write_settings(app, &defaults)?;
    Ok(defaults)
}

fn read_settings<R: Runtime>(app: &AppHandle<R>) -> anyhow::Result<Option<Settings>> {
    let store = app.store(STORE_FILE)?;
    match store.get(SETTINGS_KEY) {
        None => Ok(None),
        Some(value) => Ok(Some(Settings::from_json(value)?)),
    }
}

fn write_settings<R: Runtime>(
    app: &AppHandle<R>,
    settings: &Settings,
) -> Result<(), SettingsError> {
    let store = app
        .store(STORE_FILE)
        .map_err(|e| SettingsError::Malformed(e.to_string()))?;
    let value: Value =
        serde_json::to_value(settings).map_err(|e| SettingsError::Malformed(e.to_string()))?;
    store.set(SETTINGS_KEY, value);
    store.save().map_err(|e| SettingsError::Invalid {
        field: STORE_FILE.to_owned(),
        reason: format!("could not be saved: {e}"),
    })
}

fn back_up_store<R: Runtime>(app: &AppHandle<R>) -> Option<std::path::PathBuf> {
    let path = app.path().app_data_dir().ok()?.join(STORE_FILE);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let backup = path.with_extension(format!("unreadable-{stamp}.json"));
    std::fs::copy(&path, &backup).ok()?;
    if let Ok(store) = app.store(STORE_FILE) {
        store.delete(SETTINGS_KEY);
    }
    Some(backup)
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
