//! Commands for a server's sandbox and what the gate should know of it; each adapts one call
//! of the host.

use tauri::{AppHandle, Runtime, State};

use crate::error::Result;
use crate::state::AppState;

/// Saves a local server's sandbox (`null`: the defaults for what it is); the server starts
/// again with it. Returns the notice to show when it was restarted.
#[tauri::command]
pub async fn set_server_sandbox<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
    sandbox: Option<toolgate_settings::SandboxSettings>,
) -> Result<Option<String>> {
    let restarted = state.host.set_sandbox(&server_id, sandbox).await?;
    let _ = tauri::Emitter::emit(&app, crate::events::SERVERS_CHANGED, ());
    Ok(restarted.then(|| format!("{server_id} was restarted: a sandbox applies from a start")))
}

/// The user's answer to "SERVER wants to reach HOST" on its card (network "hosts").
#[tauri::command]
pub async fn answer_host<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
    host: String,
    answer: toolgate_mcp::HostAnswer,
) -> Result<()> {
    state.host.answer_host(&server_id, &host, answer).await?;
    let _ = tauri::Emitter::emit(&app, crate::events::SERVERS_CHANGED, ());
    Ok(())
}

/// Saves what the gate should know of a server: untrusted output, a way out, results to
/// review. Applies from the next call.
#[tauri::command]
pub async fn set_server_trust<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
    trust: toolgate_settings::TrustMarks,
) -> Result<()> {
    state.host.set_trust(&server_id, trust).await?;
    let _ = tauri::Emitter::emit(&app, crate::events::SERVERS_CHANGED, ());
    Ok(())
}
