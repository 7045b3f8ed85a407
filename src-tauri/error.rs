//! The one error every command returns: a kind the UI can tell apart and a message it shows as
//! it is. Each core error maps to one kind here, so the commands only use `?`.

use serde::Serialize;

/// An error the UI can show as it is: what went wrong and what to do.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct CommandError {
    pub kind: &'static str,
    pub message: String,
}

pub(crate) type Result<T> = std::result::Result<T, CommandError>;

impl CommandError {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// A turn's end: "stopped" when the user stopped it (the window says so as their choice, not as
/// a failure), "turn" for anything else.
impl From<toolgate_agent::AgentError> for CommandError {
    fn from(e: toolgate_agent::AgentError) -> Self {
        let kind = match e {
            toolgate_agent::AgentError::Cancelled => "stopped",
            _ => "turn",
        };
        Self::new(kind, e.to_string())
    }
}

/// Errors of one kind whatever went wrong.
macro_rules! command_error {
    ($($source:ty => $kind:literal),* $(,)?) => {$(
        impl From<$source> for CommandError {
            fn from(e: $source) -> Self {
                Self::new($kind, e.to_string())
            }
        }
    )*};
}

command_error! {
    toolgate_settings::SettingsError => "settings",
    toolgate_settings::file::FileError => "settings",
    toolgate_secrets::SecretError => "keychain",
    toolgate_llm::LlmError => "provider",
    toolgate_mcp::McpError => "server",
    toolgate_agent::GateError => "approval",
    toolgate_history::HistoryError => "history",
    toolgate_hosts::import::ImportError => "import",
    toolgate_host::ApplyImportError => "import",
    toolgate_host::RuleEditError => "approval",
    toolgate_hosts::HostError => "hosts",
    toolgate_registry::RegistryError => "registry",
    toolgate_host::RegistryAddError => "registry",
    toolgate_host::PackageError => "servers",
    toolgate_host::BundleError => "bundle",
    toolgate_host::BundleInstallError => "bundle",
    toolgate_host::ServerSignInError => "signIn",
    toolgate_agent::apps::AppError => "app",
    tauri::Error => "internal",
    tokio::task::JoinError => "internal",
    serde_json::Error => "internal",
}

/// A server's typed answer as the JSON the window reads: the one place MCP results become JSON
/// on their way to the web-view.
pub fn to_window(value: &impl serde::Serialize) -> Result<serde_json::Value> {
    Ok(serde_json::to_value(value)?)
}

/// Errors whose kind depends on what went wrong.
macro_rules! command_error_by_variant {
    ($($source:ty => |$e:ident| $kind:expr),* $(,)?) => {$(
        impl From<$source> for CommandError {
            fn from($e: $source) -> Self {
                let kind = $kind;
                Self::new(kind, $e.to_string())
            }
        }
    )*};
}

command_error_by_variant! {
    toolgate_host::ProviderError => |e| match e {
        toolgate_host::ProviderError::Keychain(_) => "keychain",
        _ => "provider",
    },
    toolgate_host::ServerChangeError => |e| match e {
        toolgate_host::ServerChangeError::Settings(_) => "settings",
        _ => "servers",
    },
    toolgate_host::ServerEditError => |e| match e {
        toolgate_host::ServerEditError::Server(_) => "server",
        _ => "settings",
    },
    toolgate_host::SecretChangeError => |e| match e {
        toolgate_host::SecretChangeError::Keychain(_) => "keychain",
        _ => "settings",
    },
    toolgate_host::HistoryAccessError => |e| match e {
        toolgate_host::HistoryAccessError::Task(_) => "internal",
        _ => "history",
    },
    toolgate_host::RevokeError => |e| match e {
        toolgate_host::RevokeError::Settings(_) => "settings",
        _ => "approval",
    },
    toolgate_host::ImportSourceError => |e| match e {
        toolgate_host::ImportSourceError::UnknownHost(_)
        | toolgate_host::ImportSourceError::Hosts(_) => "hosts",
        _ => "import",
    },
    toolgate_host::HostConnectError => |e| match e {
        toolgate_host::HostConnectError::Import(_) => "import",
        _ => "hosts",
    },
    toolgate_host::DoorTokenError => |e| match e {
        toolgate_host::DoorTokenError::Keychain(_) => "keychain",
        _ => "door",
    },
    toolgate_host::DoorSettingsError => |e| match e {
        toolgate_host::DoorSettingsError::Settings(_) => "settings",
        _ => "door",
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_turn_is_told_apart_from_a_failed_one() {
        let stopped = CommandError::from(toolgate_agent::AgentError::Cancelled);
        assert_eq!(
            (stopped.kind, stopped.message.as_str()),
            ("stopped", "stopped")
        );
        let failed = CommandError::from(toolgate_agent::AgentError::TooManyRounds(3));
        assert_eq!(failed.kind, "turn");
    }
}
