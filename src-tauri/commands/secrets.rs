//! The secrets servers' settings refer to as `${secret:NAME}`, kept in the keychain; the window
//! sees whether each is set and its last characters, never its value.

use tauri::State;
use toolgate_host::SecretView;
use toolgate_settings::IdentityProvider;

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

/// The identity provider enterprise-managed servers sign in through (the organisation's, when
/// its policy sets one).
#[tauri::command]
pub async fn identity_provider(state: State<'_, AppState>) -> Result<Option<IdentityProvider>> {
    Ok(state.settings().identity_provider.clone())
}

/// Sets or removes the identity provider; refused whole (naming the key) when it is invalid or
/// the organisation's policy sets it.
#[tauri::command]
pub async fn set_identity_provider(
    state: State<'_, AppState>,
    provider: Option<IdentityProvider>,
) -> Result<Option<IdentityProvider>> {
    let saved = state.update_settings(|s| s.identity_provider = provider)?;
    Ok(saved.identity_provider)
}
