//! Other AI apps connected to Toolgate's gateway: listed, previewed, connected as previewed, and
//! put back. The plan shown is kept here until the user says yes to it.

use tauri::State;
use toolgate_host::{HostPreview, HostView};
use toolgate_hosts::import::ImportChoices;

use crate::error::{CommandError, Result};
use crate::state::AppState;

#[tauri::command]
pub async fn list_hosts(state: State<'_, AppState>) -> Result<Vec<HostView>> {
    Ok(state.other_hosts())
}

/// What connecting a host would change; nothing is written until `connect_host`. The host
/// will run this program's `connect` (see `crate::connect`).
#[tauri::command]
pub async fn preview_host(state: State<'_, AppState>, host: String) -> Result<HostPreview> {
    let exe = std::env::current_exe().map_err(|e| {
        CommandError::new(
            "hosts",
            format!("cannot tell where Toolgate is installed: {e}"),
        )
    })?;
    let command = crate::connect::connect_command(&exe, &host, state.data_dir());
    let (preview, plan) = state.preview_connection(&host, &command)?;
    *state.host_plan.lock().unwrap_or_else(|p| p.into_inner()) = Some(plan);
    Ok(preview)
}

/// Connects the host last previewed: imports its servers (secrets to the keychain as chosen),
/// starts them, then rewrites the host's config, only if it is unchanged since the preview.
#[tauri::command]
pub async fn connect_host(
    state: State<'_, AppState>,
    host: String,
    choices: ImportChoices,
) -> Result<()> {
    let previewed = state
        .host_plan
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    Ok(state.connect_host(&host, previewed, &choices).await?)
}

/// Gives the host its own config back (its later writes kept); returns where.
#[tauri::command]
pub async fn undo_host(state: State<'_, AppState>, host: String) -> Result<String> {
    Ok(state.undo_host(&host)?.display().to_string())
}
