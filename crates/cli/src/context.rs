//! What every command shares with the app: the data folder, the settings file, the keychain,
//! the history database and the server manager, set up exactly as the app sets them up.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, Context as _, Result};
use toolgate_agent::{Gate, ModelSource, PolicyStore, ServerRequestGate};
use toolgate_history::History;
use toolgate_llm::{HttpProvider, Provider, WireFormat};
use toolgate_mcp::{HostEnv, ManagerOptions, ServerManager};
use toolgate_secrets::{Keychain, SecretStore};
use toolgate_settings::file::Loaded;
use toolgate_settings::{ProviderKind, Settings};

/// The app's identifier: its data folder is `$XDG_DATA_HOME/<this>` (Tauri's `app_data_dir`).
const APP_IDENTIFIER: &str = "dev.toolgate.desktop";

/// The folder the app keeps its settings, history and logs in.
pub fn default_data_dir() -> Result<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .ok_or_else(|| anyhow!("neither XDG_DATA_HOME nor HOME is set; pass --data-dir"))?;
    Ok(base.join(APP_IDENTIFIER))
}

pub struct Context {
    pub data_dir: PathBuf,
    pub settings: Settings,
    pub secrets: Arc<dyn SecretStore>,
}

impl Context {
    /// Reads the settings file the app writes. A missing file means the defaults (nothing is
    /// written until a command changes something); an unreadable one is set aside, as the app
    /// does, and the user is told where.
    pub fn load(data_dir: PathBuf) -> Result<Self> {
        let settings = match toolgate_settings::file::load(&settings_path(&data_dir))? {
            Loaded::Found(settings) => settings,
            Loaded::Missing => Settings::first_run(toolgate_settings::example_server(None)),
            unreadable @ Loaded::Unreadable { .. } => {
                if let Some(notice) = unreadable.notice() {
                    eprintln!("toolgate: {notice}");
                }
                Settings::first_run(toolgate_settings::example_server(None))
            }
        };
        Ok(Self {
            data_dir,
            settings,
            secrets: Arc::new(Keychain::default()),
        })
    }

    pub fn settings_path(&self) -> PathBuf {
        settings_path(&self.data_dir)
    }

    /// Changes the settings and saves them at once (validated, atomically).
    pub fn update(&mut self, change: impl FnOnce(&mut Settings)) -> Result<()> {
        let mut next = self.settings.clone();
        change(&mut next);
        toolgate_settings::file::save(&self.settings_path(), &next)?;
        self.settings = next;
        Ok(())
    }

    pub fn log_dir(&self) -> PathBuf {
        self.data_dir.join("logs").join("servers")
    }

    /// The shared history and audit log; `None` (with a warning) if it cannot be opened.
    pub fn history(&self) -> Option<Arc<History>> {
        match History::open_or_recover(&self.data_dir.join("history.sqlite3")) {
            Ok((history, backup)) => {
                if let Some(backup) = backup {
                    eprintln!(
                        "toolgate: the history file was damaged; it was kept as {} and a new one started",
                        backup.display()
                    );
                }
                Some(Arc::new(history))
            }
            Err(e) => {
                eprintln!("toolgate: this run will not be recorded in the history: {e}");
                None
            }
        }
    }

    /// A server manager like the app's: the same logs, the same orphan records (instances never
    /// stop each other's servers), secrets from the keychain, and servers' requests through
    /// `requests`.
    pub fn manager(&self, requests: Option<Arc<ServerRequestGate>>) -> Arc<ServerManager> {
        let mut options = ManagerOptions {
            log_dir: Some(self.log_dir()),
            state_dir: Some(self.data_dir.clone()),
            // A terminal already has the user's PATH.
            env: Some(HostEnv::inherited()),
            secrets: Some(self.secrets.clone()),
            ..ManagerOptions::default()
        };
        if let Some(requests) = &requests {
            options.requests = requests.clone();
        }
        let manager = ServerManager::new(options);
        if let Some(requests) = requests {
            requests.attach(&manager);
        }
        manager
    }

    /// The user's provider with its key (keychain first, then the environment variable).
    pub fn provider(&self) -> Result<(HttpProvider, String)> {
        let settings = &self.settings.provider;
        let key = toolgate_secrets::provider_key(
            self.secrets.as_ref(),
            settings.kind.secret_name(),
            settings.kind.env_var(),
        )?
        .ok_or_else(|| {
            anyhow!(
                "no API key for {}: set one in the app's Provider tab, or set {}",
                settings.base_url,
                settings.kind.env_var()
            )
        })?;
        let format = match settings.kind {
            ProviderKind::Anthropic => WireFormat::Anthropic,
            ProviderKind::Openai => WireFormat::OpenAi,
        };
        let provider = HttpProvider::new(format, &settings.base_url, key.value)
            .context("the provider settings")?;
        Ok((provider, settings.model.clone()))
    }
}

fn settings_path(data_dir: &Path) -> PathBuf {
    data_dir.join("settings.json")
}

/// The user's model for servers' sampling requests, as for chat.
pub struct CliModel {
    pub provider: Arc<HttpProvider>,
    pub model: String,
}

#[async_trait::async_trait]
impl ModelSource for CliModel {
    async fn model(&self) -> std::result::Result<(Box<dyn Provider>, String), String> {
        Ok((
            Box::new(SharedProvider(self.provider.clone())),
            self.model.clone(),
        ))
    }
}

/// A provider shared between the turn and the servers' sampling requests.
struct SharedProvider(Arc<HttpProvider>);

#[async_trait::async_trait]
impl Provider for SharedProvider {
    async fn complete(
        &self,
        request: &toolgate_llm::ChatRequest,
    ) -> std::result::Result<toolgate_llm::Reply, toolgate_llm::LlmError> {
        self.0.complete(request).await
    }

    async fn stream(
        &self,
        request: &toolgate_llm::ChatRequest,
        on_delta: &(dyn Fn(toolgate_llm::StreamDelta) + Send + Sync),
        cancel: &tokio_util::sync::CancellationToken,
    ) -> std::result::Result<toolgate_llm::Reply, toolgate_llm::LlmError> {
        self.0.stream(request, on_delta, cancel).await
    }
}

/// The server-request gate for a run: sampling and elicitation wait at `gate` like tool calls.
pub fn requests(
    gate: &Arc<Gate>,
    policy: Arc<dyn PolicyStore>,
    model: Option<CliModel>,
    history: Option<&Arc<History>>,
) -> Arc<ServerRequestGate> {
    struct NoModel;
    #[async_trait::async_trait]
    impl ModelSource for NoModel {
        async fn model(&self) -> std::result::Result<(Box<dyn Provider>, String), String> {
            Err("no provider is set up for this command".into())
        }
    }
    let models: Arc<dyn ModelSource> = match model {
        Some(model) => Arc::new(model),
        None => Arc::new(NoModel),
    };
    let mut gate = ServerRequestGate::new(gate.clone(), policy, models);
    if let Some(history) = history {
        gate = gate.with_audit(history.clone());
    }
    Arc::new(gate)
}
