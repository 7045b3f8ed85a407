//! The app itself: what this start must tell the user, the diagnostics a bug report needs, and
//! starting at login (`tauri-plugin-autostart`), and opening the log folder.

use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_autostart::ManagerExt;

use crate::error::{CommandError, Result};
use crate::state::AppState;

/// What the user must be told about this start (a settings or history file that could not be
/// read, and where it was kept).
#[tauri::command]
pub async fn startup_notices(state: State<'_, AppState>) -> Result<Vec<String>> {
    Ok(state.notices().to_vec())
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
    pub versions: Vec<Version>,
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
        versions: versions(),
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

/// Opens the folder of Toolgate's logs (the servers' logs are in it) in the file manager.
/// The folder is the app's own: the window names none.
#[tauri::command]
pub async fn open_log_folder<R: Runtime>(app: AppHandle<R>) -> Result<String> {
    use tauri_plugin_opener::OpenerExt;
    let dir = app.path().app_log_dir().map_err(CommandError::from)?;
    std::fs::create_dir_all(&dir).map_err(|e| CommandError {
        kind: "internal",
        message: format!("could not create {}: {e}", dir.display()),
    })?;
    let shown = dir.display().to_string();
    app.opener()
        .open_path(shown.clone(), None::<&str>)
        .map_err(|e| CommandError {
            kind: "internal",
            message: format!("could not open {shown}: {e}"),
        })?;
    Ok(shown)
}

/// One component's version, for the diagnostics.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct Version {
    pub name: &'static str,
    pub version: String,
}

/// The versions a bug report needs: Toolgate's, Tauri's, the web view's and the system's.
pub fn versions() -> Vec<Version> {
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    vec![
        Version {
            name: "Toolgate",
            version: env!("CARGO_PKG_VERSION").to_owned(),
        },
        Version {
            name: "Tauri",
            version: tauri::VERSION.to_owned(),
        },
        Version {
            name: "Web view",
            version: tauri::webview_version().unwrap_or_else(|e| format!("unknown ({e})")),
        },
        Version {
            name: "System",
            version: format!("{os} ({})", std::env::consts::ARCH),
        },
    ]
}
