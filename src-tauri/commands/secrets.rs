//! The secrets servers' settings refer to as `${secret:NAME}`, kept in the keychain; the window
//! sees whether each is set and its last characters, never its value.

use tauri::State;
use toolgate_host::SecretView;

use crate::error::Result;
use crate::state::AppState;

/// Every secret the settings refer to, with its state in the keychain.
#[tauri::command]
pub async fn list_secrets(state: State<'_, AppState>) -> Result<Vec<SecretView>> {
    Ok(state.secrets_in_use().await?)
}

/// Stores a server secret in the keychain, then restarts the servers that use it.
#[tauri::command]
pub async fn set_secret(state: State<'_, AppState>, name: String, value: String) -> Result<()> {
    Ok(state.set_secret(&name, &value).await?)
}

#[tauri::command]
pub async fn clear_secret(state: State<'_, AppState>, name: String) -> Result<()> {
    Ok(state.clear_secret(&name).await?)
}
