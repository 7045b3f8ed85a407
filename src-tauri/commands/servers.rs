//! The servers and their tools: status, switches, edits, roots, the log, a call or a resource
//! read by hand, and the tool settings (which tools the model sees, under which names). A change
//! to what the model sees is announced with `SERVERS_CHANGED`.

use serde_json::Value;
use tauri::{AppHandle, Emitter, Runtime, State};
use toolgate_catalog::CatalogSettings;
use toolgate_host::ToolCatalogView;
use toolgate_mcp::{ServerSnapshot, ToolOutput};
use toolgate_settings::ServerConfig;

use crate::error::{to_window, Result};
use crate::state::AppState;

#[tauri::command]
pub async fn list_servers(state: State<'_, AppState>) -> Result<Vec<ServerSnapshot>> {
    Ok(state.servers().snapshot().await)
}

/// Accepts the tools of `server_id` held since they changed (`tools`, or all of them): they are
/// offered from now on, and each acceptance is written to the audit log.
#[tauri::command]
pub async fn accept_tool_changes(
    state: State<'_, AppState>,
    server_id: String,
    tools: Option<Vec<String>>,
) -> Result<Vec<toolgate_mcp::ToolChange>> {
    Ok(state
        .accept_tool_changes(&server_id, tools.as_deref())
        .await?)
}

/// The version Toolgate installed for an npx or uvx server and the newest its registry has
/// (asked now: slow, and offline it says so).
#[tauri::command]
pub async fn package_version(
    state: State<'_, AppState>,
    server_id: String,
) -> Result<Option<toolgate_host::PackageView>> {
    Ok(state.host.package(&server_id).await)
}

/// Installs `version` of a server's package beside the one it runs, and restarts it with the
/// new one (its changed tools are then held until accepted).
#[tauri::command]
pub async fn update_package<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
    version: String,
) -> Result<String> {
    let installed = state
        .host
        .update_package(
            &server_id,
            Some(&version),
            &|line: &str| tracing::info!(server = %server_id, "{line}"),
        )
        .await?;
    state.servers().restart(&server_id).await?;
    let _ = app.emit(crate::events::SERVERS_CHANGED, ());
    Ok(installed)
}

#[tauri::command]
pub async fn restart_server(state: State<'_, AppState>, server_id: String) -> Result<()> {
    Ok(state.servers().restart(&server_id).await?)
}

/// A call the user makes by hand from the window: the user is the one asking, so it needs no
/// approval.
#[tauri::command]
pub async fn call_tool(
    state: State<'_, AppState>,
    server_id: String,
    tool: String,
    arguments: Value,
) -> Result<ToolOutput> {
    Ok(state
        .servers()
        .call_tool(&server_id, &tool, arguments)
        .await?)
}

/// One of a server's resources, for browsing; shown as text in the window.
#[tauri::command]
pub async fn read_resource(
    state: State<'_, AppState>,
    server_id: String,
    uri: String,
) -> Result<Value> {
    to_window(&state.servers().read_resource(&server_id, &uri).await?)
}

/// Switches a server on (it starts) or off (it stops), and saves the choice.
#[tauri::command]
pub async fn set_server_enabled(
    state: State<'_, AppState>,
    server_id: String,
    enabled: bool,
) -> Result<()> {
    Ok(state.set_server_enabled(&server_id, enabled).await?)
}

/// Removes a server with its tool settings and approval rules.
#[tauri::command]
pub async fn remove_server(state: State<'_, AppState>, server_id: String) -> Result<()> {
    Ok(state.remove_server(&server_id).await?)
}

/// The server's recent stderr, oldest first (the window polls it while the log is open).
#[tauri::command]
pub async fn server_log(state: State<'_, AppState>, server_id: String) -> Result<Vec<String>> {
    Ok(state.server_log(&server_id).await)
}

/// The folders a server may work in (its MCP roots). Returns the notice to show when the
/// server was restarted for them.
#[tauri::command]
pub async fn set_server_roots(
    state: State<'_, AppState>,
    server_id: String,
    roots: Vec<std::path::PathBuf>,
) -> Result<Option<String>> {
    let restarted = state.set_server_roots(&server_id, roots).await?;
    Ok(restarted.then(|| format!(
        "{server_id} was restarted: its sandbox is built from its folders, so the new ones apply only to a new start"
    )))
}

/// A server's settings for the edit form; values that look like secrets are hidden.
#[tauri::command]
pub async fn server_config(state: State<'_, AppState>, server_id: String) -> Result<ServerConfig> {
    Ok(state.server_config_for_window(&server_id)?)
}

/// Saves an edited server (its id stays) and restarts it with the new settings.
#[tauri::command]
pub async fn update_server(
    state: State<'_, AppState>,
    server_id: String,
    server: ServerConfig,
) -> Result<()> {
    Ok(state.update_server(&server_id, server).await?)
}

/// Every tool of the ready servers: the name the model sees, or why it is hidden; and how much
/// of the current provider's allowance the visible ones use.
#[tauri::command]
pub async fn tool_catalog(state: State<'_, AppState>) -> Result<ToolCatalogView> {
    Ok(state.tool_catalog().await)
}

/// How tools are named and which are shown: the naming mode, per-server prefixes, include and
/// exclude patterns, and the tools switched off.
#[tauri::command]
pub async fn tool_settings(state: State<'_, AppState>) -> Result<CatalogSettings> {
    Ok(state.settings().tools.clone())
}

/// Saves the tool settings after checking them (a bad pattern or prefix names the field).
#[tauri::command]
pub async fn set_tool_settings<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    tools: CatalogSettings,
) -> Result<CatalogSettings> {
    let saved = state.update_settings(|s| s.tools = tools)?;
    let _ = app.emit(crate::events::SERVERS_CHANGED, ());
    Ok(saved.tools)
}

/// Offers a tool to the model or not; the next turn's tool list follows.
#[tauri::command]
pub async fn set_tool_enabled<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
    tool: String,
    enabled: bool,
) -> Result<()> {
    state.update_settings(|s| s.tools.set_tool_enabled(&server_id, &tool, enabled))?;
    let _ = app.emit(crate::events::SERVERS_CHANGED, ());
    Ok(())
}

/// One page of the MCP registry's servers whose name or description holds `search`.
#[tauri::command]
pub async fn registry_search(
    state: State<'_, AppState>,
    search: String,
    cursor: Option<String>,
) -> Result<toolgate_registry::Page> {
    Ok(state
        .registry_search(&search, cursor.as_deref(), None)
        .await?)
}

/// What adding a registry server would run, and what it asks for.
#[tauri::command]
pub async fn registry_plan(
    state: State<'_, AppState>,
    name: String,
    version: String,
) -> Result<toolgate_registry::Plan> {
    Ok(state.registry_plan(&name, &version).await?)
}

/// Adds a registry server, pinned, its secrets to the keychain, and starts it.
#[tauri::command]
pub async fn add_from_registry(
    state: State<'_, AppState>,
    name: String,
    version: String,
    id: String,
    answers: std::collections::BTreeMap<String, String>,
) -> Result<()> {
    let added = state
        .host
        .add_from_registry(&name, &version, &id, &answers)
        .await?;
    state.servers().add(std::slice::from_ref(&added)).await;
    Ok(())
}

/// What installing the MCP bundle at `path` would install, with what its signature says.
#[tauri::command]
pub async fn inspect_bundle(
    state: State<'_, AppState>,
    path: String,
) -> Result<toolgate_host::BundlePreview> {
    Ok(state.inspect_bundle(std::path::Path::new(&path)).await?)
}

/// Installs the MCP bundle at `path` as server `id` with the user's values (a tampered one is
/// refused; secrets go to the keychain), and starts it.
#[tauri::command]
pub async fn install_bundle(
    state: State<'_, AppState>,
    path: String,
    id: String,
    values: std::collections::BTreeMap<String, Vec<String>>,
) -> Result<toolgate_host::InstalledBundle> {
    let installed = state
        .host
        .install_bundle(std::path::Path::new(&path), &id, &values)
        .await?;
    let added = state
        .settings()
        .servers
        .iter()
        .find(|s| s.id == id)
        .cloned();
    if let Some(added) = added {
        state.servers().add(std::slice::from_ref(&added)).await;
    }
    Ok(installed)
}
