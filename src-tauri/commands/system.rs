//! The app itself: what this start must tell the user, the diagnostics a bug report needs, and
//! starting at login (`tauri-plugin-autostart`).

use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_autostart::ManagerExt;

use crate::error::{CommandError, Result};
use crate::state::AppState;

/// What the user must be told about this start (a settings or history file that could not be
/// read, and where it was kept).
#[tauri::command]
pub async fn startup_notices(state: State<'_, AppState>) -> Result<Vec<String>> {
    Ok(state.notices.clone())
}

/// Versions, folders, and what servers need to start.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostics {
    pub version: &'static str,
    pub settings_file: String,
    pub data_dir: Option<String>,
    pub log_dir: Option<String>,
    pub checks: Vec<toolgate_mcp::doctor::Check>,
    pub versions: Vec<crate::shell_commands::Version>,
}

#[tauri::command]
pub async fn diagnostics<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<Diagnostics> {
    let paths = app.path();
    Ok(Diagnostics {
        version: env!("CARGO_PKG_VERSION"),
        settings_file: state.settings_path().display().to_string(),
        data_dir: paths.app_data_dir().ok().map(|d| d.display().to_string()),
        log_dir: paths.app_log_dir().ok().map(|d| d.display().to_string()),
        checks: state.doctor().await?,
        versions: crate::shell_commands::versions(),
    })
}

fn autostart_error(e: tauri_plugin_autostart::Error) -> CommandError {
    CommandError::new(
        "settings",
        format!("could not change the start at login: {e}"),
    )
}

/// Whether Toolgate starts (in the tray) when the user logs in.
#[tauri::command]
pub async fn start_at_login<R: Runtime>(app: AppHandle<R>) -> Result<bool> {
    app.autolaunch().is_enabled().map_err(autostart_error)
}

#[tauri::command]
pub async fn set_start_at_login<R: Runtime>(app: AppHandle<R>, enabled: bool) -> Result<bool> {
    let launcher = app.autolaunch();
    if enabled {
        launcher.enable()
    } else {
        launcher.disable()
    }
    .map_err(autostart_error)?;
    launcher.is_enabled().map_err(autostart_error)
}
