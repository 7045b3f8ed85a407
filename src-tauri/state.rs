//! What the app holds while it runs: the [`Host`] (settings, keychain, servers, gate, history),
//! and the conversation on screen.

use std::sync::{Arc, Mutex};

use tauri::{AppHandle, Manager, Runtime};
use toolgate_host::{Host, HostOptions};
use toolgate_llm::Message;

/// The conversation on screen: its id in the history (none until its first message) and its
/// messages.
#[derive(Default)]
pub struct Conversation {
    pub id: Option<String>,
    pub messages: Vec<Message>,
}

pub struct AppState {
    /// The running Toolgate without a window, which the CLI builds on too.
    pub host: Arc<Host>,
    /// The conversation on screen; its lock also keeps turns one at a time.
    pub conversation: tokio::sync::Mutex<Conversation>,
    /// Stops the turn that is running, if one is, with that turn's number.
    pub turn: Mutex<Option<(u64, tokio_util::sync::CancellationToken)>>,
    /// Numbers turns, so a finished turn clears only its own stop token.
    pub turns: std::sync::atomic::AtomicU64,
    /// The last host connection shown to the user, applied only if they say yes to it.
    pub host_plan: Mutex<Option<toolgate_hosts::Plan>>,
    /// The id of the conversation on screen, readable while a turn holds `conversation`: an
    /// MCP App shown in it shares what it has read.
    on_screen: Mutex<Option<String>>,
}

/// The host's servers, gate, keychain, history and settings, reached as the state's own.
impl std::ops::Deref for AppState {
    type Target = Host;
    fn deref(&self) -> &Host {
        &self.host
    }
}

/// Where the set-up installs the example server when Toolgate runs from its source folder.
fn local_example_servers() -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-servers");
    dir.is_dir().then_some(dir)
}

impl AppState {
    /// Opens the host on the app's folders, writing the first-run defaults when there are none.
    pub fn load<R: Runtime>(app: &AppHandle<R>) -> anyhow::Result<Self> {
        let paths = app.path();
        let data_dir = paths.app_data_dir()?;
        let log_dir = paths
            .app_log_dir()
            .map(|d| d.join("servers"))
            .unwrap_or_else(|_| data_dir.join("logs").join("servers"));
        let host = Host::open(HostOptions {
            log_dir,
            example_servers: local_example_servers(),
            save_first_run: true,
            ..HostOptions::new(data_dir)
        })?;
        Ok(Self {
            host,
            conversation: tokio::sync::Mutex::new(Conversation::default()),
            turn: Mutex::new(None),
            turns: std::sync::atomic::AtomicU64::new(0),
            host_plan: Mutex::new(None),
            on_screen: Mutex::new(None),
        })
    }
}

impl AppState {
    /// Notes which conversation is on screen (call wherever `conversation.id` changes).
    pub fn set_on_screen(&self, id: Option<String>) {
        *self.on_screen.lock().unwrap_or_else(|p| p.into_inner()) = id;
    }

    /// The conversation on screen, without waiting for a running turn.
    pub fn on_screen(&self) -> Option<String> {
        self.on_screen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
