//! The model provider: its settings, its key in the keychain (never sent to the window), the
//! presets the window offers, and the models it lists.

use serde::Deserialize;
use tauri::State;
use toolgate_host::{PresetView, ProviderView};
use toolgate_llm::local::LocalServer;
use toolgate_settings::ProviderKind;

use crate::error::Result;
use crate::state::AppState;

#[tauri::command]
pub async fn get_provider(state: State<'_, AppState>) -> Result<ProviderView> {
    Ok(state.provider_view().await)
}

#[derive(Debug, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInput {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
}

#[tauri::command]
pub async fn set_provider(
    state: State<'_, AppState>,
    provider: ProviderInput,
) -> Result<ProviderView> {
    Ok(state
        .set_provider(provider.kind, &provider.base_url, &provider.model)
        .await?)
}

/// Stores the key of the current provider in the OS keychain; the key goes nowhere else.
#[tauri::command]
pub async fn set_api_key(state: State<'_, AppState>, key: String) -> Result<ProviderView> {
    Ok(state.set_api_key(&key).await?)
}

#[tauri::command]
pub async fn clear_api_key(state: State<'_, AppState>) -> Result<ProviderView> {
    Ok(state.clear_api_key().await?)
}

#[tauri::command]
pub async fn provider_presets() -> Result<Vec<PresetView>> {
    Ok(toolgate_host::provider_presets())
}

/// The models the user's provider offers, for the model picker.
#[tauri::command]
pub async fn list_models(state: State<'_, AppState>) -> Result<Vec<String>> {
    Ok(state.list_models().await?)
}

/// The models the Provider screen's form would get once saved: its format and address, asked
/// before saving (the saved provider may be another one entirely).
#[tauri::command]
pub async fn list_models_for(
    state: State<'_, AppState>,
    provider: ProviderInput,
) -> Result<Vec<String>> {
    Ok(state
        .list_models_for(provider.kind, &provider.base_url)
        .await?)
}

/// Model servers running on this computer (Ollama, LM Studio), with their models.
#[tauri::command]
pub async fn detect_local_models() -> Result<Vec<LocalServer>> {
    Ok(toolgate_llm::local::detect().await)
}
