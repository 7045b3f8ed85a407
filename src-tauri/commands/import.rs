//! Servers in and out as `mcpServers` JSON: pasted text, Claude Desktop's file or another app's
//! config read by the host (so their tokens never pass through the window), and the export.

use tauri::State;
use toolgate_host::{ImportSource, ImportSources};
use toolgate_hosts::export::Export;
use toolgate_hosts::import::{ImportChoices, ImportReport};

use crate::error::Result;
use crate::state::AppState;

/// Files the import can offer to read, where they exist.
#[tauri::command]
pub async fn import_sources() -> Result<ImportSources> {
    Ok(toolgate_host::import_sources())
}

/// What importing would add, rename, skip and ask for; changes nothing.
#[tauri::command]
pub async fn preview_import(
    state: State<'_, AppState>,
    source: ImportSource,
) -> Result<ImportReport> {
    Ok(state.import_plan(&source)?.report().clone())
}

/// Imports: the chosen secrets go to the keychain first, then the settings are saved with
/// references to them, then the new servers start.
#[tauri::command]
pub async fn apply_import(
    state: State<'_, AppState>,
    source: ImportSource,
    choices: ImportChoices,
) -> Result<ImportReport> {
    Ok(state.import(&source, &choices).await?)
}

/// The servers in Claude Desktop's `mcpServers` format, secrets left as `${secret:…}`.
#[tauri::command]
pub async fn export_servers(state: State<'_, AppState>) -> Result<Export> {
    Ok(toolgate_hosts::export::export_mcp_servers(
        &state.settings(),
    ))
}
