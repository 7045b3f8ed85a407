//! The model provider: which wire format ([`ProviderKind`]), where, and which model. The API
//! key is not here: the keychain holds it under [`ProviderKind::secret_name`].

use serde::{Deserialize, Serialize};

use crate::error::{invalid, SettingsError};

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions, and every endpoint compatible with it.
    Openai,
}

impl ProviderKind {
    /// Name of the keychain item that holds this provider's API key.
    pub fn secret_name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "provider.anthropic.api_key",
            ProviderKind::Openai => "provider.openai.api_key",
        }
    }

    /// The environment variable that holds this provider's key when the keychain has none.
    pub fn env_var(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Openai => "OPENAI_API_KEY",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Openai => "https://api.openai.com/v1",
        }
    }

    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::Openai => "gpt-4.1",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
}

impl ProviderSettings {
    /// The rules the tool list must meet for this provider (tool limit, schema details).
    pub fn tool_target(&self) -> toolgate_catalog::Provider {
        match self.kind {
            ProviderKind::Anthropic => toolgate_catalog::Provider::Anthropic,
            ProviderKind::Openai if self.base_url.contains("://api.openai.com") => {
                toolgate_catalog::Provider::OpenAi
            }
            ProviderKind::Openai => toolgate_catalog::Provider::OpenAiCompatible,
        }
    }

    pub fn defaults_for(kind: ProviderKind) -> Self {
        Self {
            kind,
            base_url: kind.default_base_url().to_owned(),
            model: kind.default_model().to_owned(),
        }
    }

    pub fn validate(&self) -> Result<(), SettingsError> {
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(
                "provider.baseUrl",
                format!("'{url}' must start with http:// or https://"),
            ));
        }
        if self.model.trim().is_empty() {
            return Err(invalid("provider.model", "must name a model"));
        }
        Ok(())
    }
}
