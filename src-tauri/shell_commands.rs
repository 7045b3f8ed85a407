//! Commands of the window's shell: the first run's look for local model servers, the rule
//! editor (preview and save), and opening the log folder. Each adapts one core call.

use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime, State};
use toolgate_host::RulePreview;
use toolgate_llm::local::LocalServer;
use toolgate_policy::{PolicySettings, Rule};

use crate::error::CommandError;
use crate::state::AppState;

/// Model servers running on this computer (Ollama, LM Studio), with their models.
#[tauri::command]
pub async fn detect_local_models() -> Result<Vec<LocalServer>, CommandError> {
    Ok(toolgate_llm::local::detect().await)
}

/// Which of the recent requests in the audit log `rule` would have matched; the rule is
/// checked as saving would check it.
#[tauri::command]
pub async fn preview_rule(
    state: State<'_, AppState>,
    rule: Rule,
) -> Result<RulePreview, CommandError> {
    let host = state.host.clone();
    tauri::async_runtime::spawn_blocking(move || host.preview_rule(&rule))
        .await?
        .map_err(CommandError::from)
}

/// Saves a rule written or edited by hand (replacing the rule with its id); returns the policy.
#[tauri::command]
pub async fn save_rule(
    state: State<'_, AppState>,
    rule: Rule,
) -> Result<PolicySettings, CommandError> {
    Ok(state.host.save_rule(rule).await?)
}

/// Opens the folder of Toolgate's logs (the servers' logs are in it) in the file manager.
/// The folder is the app's own: the window names none.
#[tauri::command]
pub async fn open_log_folder<R: Runtime>(app: AppHandle<R>) -> Result<String, CommandError> {
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
