//! The commands the web-view may call. Each one adapts a core crate; none holds logic of its own.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};
use toolgate_agent::{Decision, PendingCall, TurnEvent};
use toolgate_history::{ConversationSummary, History};
use toolgate_host::Caller;
use toolgate_llm::Message;
use toolgate_mcp::{ServerSnapshot, ToolOutput};
use toolgate_secrets::{KeySource, SecretStore};
use toolgate_settings::{ProviderKind, ProviderSettings};

use crate::state::Conversation;
use crate::AppState;

/// An error the UI can show as it is: what went wrong and what to do.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandError {
    pub kind: &'static str,
    pub message: String,
}

macro_rules! command_error {
    ($($source:ty => $kind:literal),* $(,)?) => {$(
        impl From<$source> for CommandError {
            fn from(e: $source) -> Self {
                Self { kind: $kind, message: e.to_string() }
            }
        }
    )*};
}

command_error! {
    toolgate_settings::SettingsError => "settings",
    toolgate_secrets::SecretError => "keychain",
    toolgate_llm::LlmError => "provider",
    toolgate_mcp::McpError => "server",
    toolgate_agent::GateError => "approval",
    toolgate_agent::AgentError => "turn",
    toolgate_history::HistoryError => "history",
    toolgate_settings::import::ImportError => "import",
    toolgate_host::ApplyImportError => "import",
    toolgate_hosts::HostError => "hosts",
    tauri::Error => "internal",
}

pub(crate) type Result<T> = std::result::Result<T, CommandError>;

/// Runs a keychain operation off the async runtime: Secret Service calls block.
async fn keychain<T: Send + 'static>(
    secrets: Arc<dyn SecretStore>,
    op: impl FnOnce(&dyn SecretStore) -> std::result::Result<T, toolgate_secrets::SecretError>
        + Send
        + 'static,
) -> Result<T> {
    tauri::async_runtime::spawn_blocking(move || op(secrets.as_ref()))
        .await
        .map_err(CommandError::from)?
        .map_err(CommandError::from)
}

#[tauri::command]
pub async fn list_servers(state: State<'_, AppState>) -> Result<Vec<ServerSnapshot>> {
    Ok(state.servers.snapshot().await)
}

#[tauri::command]
pub async fn restart_server(state: State<'_, AppState>, server_id: String) -> Result<()> {
    Ok(state.servers.restart(&server_id).await?)
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
        .servers
        .call_tool(&server_id, &tool, arguments)
        .await?)
}

/// The provider settings and whether a key is set, where it came from and its last 4
/// characters; never the key.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderView {
    #[serde(flatten)]
    pub settings: ProviderSettings,
    pub key_set: bool,
    pub key_source: Option<KeySource>,
    pub key_hint: Option<String>,
    /// The environment variable a key may also come from.
    pub key_env_var: &'static str,
    /// Why the keychain could not be read, if it could not.
    pub key_error: Option<String>,
    /// Whether the provider refuses requests without a key (a local server does not).
    pub key_needed: bool,
}

async fn provider_view(state: &AppState, settings: ProviderSettings) -> ProviderView {
    let (item, var) = (settings.kind.secret_name(), settings.kind.env_var());
    let found = keychain(state.secrets.clone(), move |s| {
        toolgate_secrets::provider_key(s, item, var)
    })
    .await;
    let (found, key_error) = match found {
        Ok(found) => (found, None),
        Err(e) => (None, Some(e.message)),
    };
    ProviderView {
        key_needed: toolgate_host::key_needed(&settings),
        settings,
        key_set: found.is_some(),
        key_source: found.as_ref().map(|k| k.source),
        key_hint: found
            .as_ref()
            .and_then(|k| toolgate_secrets::hint(&k.value)),
        key_env_var: var,
        key_error,
    }
}

#[tauri::command]
pub async fn get_provider(state: State<'_, AppState>) -> Result<ProviderView> {
    let settings = state.settings().provider.clone();
    Ok(provider_view(&state, settings).await)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInput {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
}

#[tauri::command]
pub async fn set_provider<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    provider: ProviderInput,
) -> Result<ProviderView> {
    let saved = state.update_settings(&app, |s| {
        s.provider = ProviderSettings {
            kind: provider.kind,
            base_url: provider.base_url.trim().to_owned(),
            model: provider.model.trim().to_owned(),
        }
    })?;
    Ok(provider_view(&state, saved.provider).await)
}

/// Stores the key of the current provider in the OS keychain; the key goes nowhere else.
#[tauri::command]
pub async fn set_api_key(state: State<'_, AppState>, key: String) -> Result<ProviderView> {
    let key = key.trim().to_owned();
    if key.is_empty() {
        return Err(CommandError {
            kind: "settings",
            message: "the API key is empty; paste the key from your provider's console".into(),
        });
    }
    let settings = state.settings().provider.clone();
    let name = settings.kind.secret_name();
    keychain(state.secrets.clone(), move |s| s.set(name, &key)).await?;
    Ok(provider_view(&state, settings).await)
}

#[tauri::command]
pub async fn clear_api_key(state: State<'_, AppState>) -> Result<ProviderView> {
    let settings = state.settings().provider.clone();
    let name = settings.kind.secret_name();
    keychain(state.secrets.clone(), move |s| s.delete(name)).await?;
    Ok(provider_view(&state, settings).await)
}

/// Runs one turn of the conversation. Progress, approval requests and the answer arrive on
/// `on_event`; the command returns the final answer.
#[tauri::command]
pub async fn send_message(
    state: State<'_, AppState>,
    text: String,
    attachments: Option<Vec<crate::content::Attachment>>,
    on_event: Channel<TurnEvent>,
    servers_off: Option<Vec<String>>,
) -> Result<String> {
    // Armed before anything slow (keychain, database), so an early Stop is never lost.
    let options = state.host.turn_options();
    let turn_id = state
        .turns
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    *state.turn.lock().unwrap_or_else(|p| p.into_inner()) = Some((turn_id, options.cancel.clone()));
    let (provider, settings) = state.host.provider().await?;
    // The title is the user's own words; the model also gets the attached resources.
    let sent = crate::content::attach(&state, &text, &attachments.unwrap_or_default()).await?;
    let mut conversation = state.conversation.lock().await;
    let history = state.history.clone().ok();
    if let (None, Some(h)) = (&conversation.id, &history) {
        let (h, title) = (h.clone(), toolgate_agent::title_for(&text));
        match blocking(move || h.create(&title)).await {
            Ok(created) => {
                state.set_on_screen(Some(created.id.clone()));
                conversation.id = Some(created.id);
            }
            Err(e) => tracing::error!("this conversation will not be saved: {}", e.message),
        }
    }
    let agent = state
        .host
        .agent(Caller::Chat {
            conversation: conversation.id.clone(),
            servers_off: &servers_off.unwrap_or_default(),
        })
        .await;
    let usage_sink = history.zip(conversation.id.clone());
    let emit = move |event: TurnEvent| {
        if let (
            TurnEvent::Usage {
                usage,
                cost_micro_usd,
            },
            Some((h, id)),
        ) = (&event, &usage_sink)
        {
            // Added to the conversation's totals after each model call, so a turn that fails
            // or is stopped still counts what it used. Queued: a failure is logged by the writer.
            drop(h.queue_usage(
                id,
                &toolgate_history::TokenUsage {
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                    cache_read_tokens: usage.cache_read_tokens,
                    cache_write_tokens: usage.cache_write_tokens,
                    cost_micro_usd: *cost_micro_usd,
                },
            ));
        }
        let _ = on_event.send(event);
    };
    // Every message stays in the conversation, whatever happens: it is valid to continue from
    // (a stopped call has its denial as result), and it is what the history holds.
    let result = agent
        .run_turn_with(
            &provider,
            &settings.model,
            &mut conversation.messages,
            &sent,
            &options,
            &emit,
        )
        .await;
    {
        // Only this turn's token: a turn queued behind this one may have armed its own.
        let mut slot = state.turn.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_some_and(|(id, _)| *id == turn_id) {
            *slot = None;
        }
    }
    Ok(result?)
}

/// The approval settings: pause-all, the defaults, and every rule.
#[tauri::command]
pub async fn approval_rules(state: State<'_, AppState>) -> Result<toolgate_policy::PolicySettings> {
    Ok(state.settings().policy.clone())
}

#[tauri::command]
pub async fn revoke_rule<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> Result<toolgate_policy::PolicySettings> {
    let mut found = false;
    let saved = state.update_settings(&app, |s| found = s.policy.revoke(&id).is_ok())?;
    if !found {
        return Err(CommandError {
            kind: "approval",
            message: "no rule with that id; it may already be revoked".into(),
        });
    }
    Ok(saved.policy)
}

/// Pauses every tool (waiting calls are denied at once) or lifts the pause.
#[tauri::command]
pub async fn set_paused<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    paused: bool,
) -> Result<toolgate_policy::PolicySettings> {
    state.set_paused(&app, paused)
}

/// The approval options: read-only tools allowed without asking, and how long a call waits.
#[tauri::command]
pub async fn set_approval_options<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    auto_allow_read_only: bool,
    approval_timeout_secs: u64,
) -> Result<toolgate_policy::PolicySettings> {
    let saved = state.update_settings(&app, |s| {
        s.policy.auto_allow_read_only = auto_allow_read_only;
        s.policy.approval_timeout_secs = Some(approval_timeout_secs.clamp(5, 86_400));
    })?;
    Ok(saved.policy)
}

/// Writes the audit log (filtered) as JSON Lines into the app's data folder; returns the file.
#[tauri::command]
pub async fn export_audit<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    filter: toolgate_history::AuditFilter,
) -> Result<String> {
    use tauri::Manager;
    let h = history(&state)?;
    let dir = app.path().app_data_dir().map_err(CommandError::from)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = dir.join(format!("audit-{stamp}.jsonl"));
    let target = path.clone();
    blocking(move || {
        let file = std::fs::File::create(&target)
            .map_err(|source| toolgate_history::HistoryError::Export { source })?;
        let mut out = std::io::BufWriter::new(file);
        h.export_audit_jsonl(&filter, &mut out)?;
        std::io::Write::flush(&mut out)
            .map_err(|source| toolgate_history::HistoryError::Export { source })
    })
    .await?;
    Ok(path.display().to_string())
}

/// Answers every waiting call the same way (approve all / deny all); returns how many.
#[tauri::command]
pub async fn answer_all(state: State<'_, AppState>, decision: Decision) -> Result<usize> {
    Ok(state.gate.answer_all(&decision))
}

/// The approval audit log, newest first, filtered.
#[tauri::command]
pub async fn audit_log(
    state: State<'_, AppState>,
    filter: toolgate_history::AuditFilter,
) -> Result<Vec<toolgate_history::AuditRow>> {
    let h = history(&state)?;
    blocking(move || h.audit(&filter)).await
}

/// Stops the running turn: the model call, the approvals it waits for, its tool calls.
#[tauri::command]
pub async fn stop_turn(state: State<'_, AppState>) -> Result<()> {
    if let Some((_, cancel)) = state.turn.lock().unwrap_or_else(|p| p.into_inner()).take() {
        cancel.cancel();
    }
    Ok(())
}

/// The id of the conversation on screen in the history, once it has one.
#[tauri::command]
pub async fn current_conversation(state: State<'_, AppState>) -> Result<Option<String>> {
    Ok(state.conversation.lock().await.id.clone())
}

/// Every tool of the ready servers: the name the model sees, or why it is hidden; and how much of
/// the current provider's allowance the visible ones use.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCatalogView {
    tools: Vec<toolgate_catalog::ListedTool>,
    budget: Option<toolgate_catalog::Budget>,
    /// Why no tool list can be sent as the settings stand, if so.
    problem: Option<String>,
}

#[tauri::command]
pub async fn tool_catalog(state: State<'_, AppState>) -> Result<ToolCatalogView> {
    let (tools, target) = {
        let all = state.settings();
        (all.tools.clone(), all.provider.tool_target())
    };
    let view = match toolgate_agent::catalog_of(&state.servers.snapshot().await, &tools) {
        Ok(catalog) => ToolCatalogView {
            tools: catalog.listing().to_vec(),
            budget: Some(catalog.budget(target)),
            problem: catalog.check(target).err().map(|e| e.to_string()),
        },
        Err(e) => ToolCatalogView {
            tools: Vec::new(),
            budget: None,
            problem: Some(e.to_string()),
        },
    };
    Ok(view)
}

#[tauri::command]
pub async fn answer_approval(
    state: State<'_, AppState>,
    id: String,
    decision: Decision,
) -> Result<()> {
    Ok(state.gate.answer(&id, decision)?)
}

#[tauri::command]
pub async fn pending_approvals(state: State<'_, AppState>) -> Result<Vec<PendingCall>> {
    Ok(state.gate.waiting())
}

/// Starts a new conversation; the one on screen stays in the history.
#[tauri::command]
pub async fn reset_conversation(state: State<'_, AppState>) -> Result<()> {
    state.gate.deny_all("the conversation was cleared");
    let mut conversation = state.conversation.lock().await;
    state.set_on_screen(None);
    *conversation = Conversation::default();
    Ok(())
}

fn history(state: &AppState) -> Result<Arc<History>> {
    state.history.clone().map_err(|message| CommandError {
        kind: "history",
        message: format!("conversations are not being saved: {message}"),
    })
}

/// Runs a history operation off the async runtime: SQLite calls block.
async fn blocking<T: Send + 'static>(
    op: impl FnOnce() -> std::result::Result<T, toolgate_history::HistoryError> + Send + 'static,
) -> Result<T> {
    tauri::async_runtime::spawn_blocking(op)
        .await
        .map_err(CommandError::from)?
        .map_err(CommandError::from)
}

#[tauri::command]
pub async fn list_conversations(
    state: State<'_, AppState>,
    search: Option<String>,
) -> Result<Vec<ConversationSummary>> {
    let h = history(&state)?;
    blocking(move || h.list(search.as_deref())).await
}

/// Makes a stored conversation the one on screen, and returns its messages to show.
#[tauri::command]
pub async fn open_conversation(state: State<'_, AppState>, id: String) -> Result<Vec<Message>> {
    let h = history(&state)?;
    let key = id.clone();
    let stored = blocking(move || h.messages(&key)).await?;
    let messages = toolgate_agent::restore(&stored);
    let mut conversation = state.conversation.lock().await;
    state.set_on_screen(Some(id.clone()));
    *conversation = Conversation {
        id: Some(id),
        messages: messages.clone(),
    };
    Ok(messages)
}

#[tauri::command]
pub async fn rename_conversation(
    state: State<'_, AppState>,
    id: String,
    title: String,
) -> Result<()> {
    let title = title.trim().to_owned();
    if title.is_empty() {
        return Err(CommandError {
            kind: "history",
            message: "a conversation needs a title".into(),
        });
    }
    let h = history(&state)?;
    blocking(move || h.rename(&id, &title)).await
}

#[tauri::command]
pub async fn delete_conversation(state: State<'_, AppState>, id: String) -> Result<()> {
    let h = history(&state)?;
    let key = id.clone();
    blocking(move || h.delete(&key)).await?;
    let mut conversation = state.conversation.lock().await;
    if conversation.id.as_deref() == Some(id.as_str()) {
        state.set_on_screen(None);
        *conversation = Conversation::default();
    }
    Ok(())
}

/// A secret that a server's env or headers refer to as `${secret:NAME}`: whether it is set and
/// its last 4 characters, never its value.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretView {
    pub name: String,
    /// The servers whose settings refer to it.
    pub used_by: Vec<String>,
    pub set: bool,
    pub hint: Option<String>,
}

/// Every secret the settings refer to, with its state in the keychain.
#[tauri::command]
pub async fn list_secrets(state: State<'_, AppState>) -> Result<Vec<SecretView>> {
    let used = toolgate_settings::secrets_used(&state.settings());
    keychain(state.secrets.clone(), move |s| {
        used.into_iter()
            .map(|(name, used_by)| {
                let value = s.get(&toolgate_settings::secret_item(&name))?;
                Ok(SecretView {
                    hint: value.as_deref().and_then(toolgate_secrets::hint),
                    set: value.is_some_and(|v| !v.is_empty()),
                    name,
                    used_by,
                })
            })
            .collect()
    })
    .await
}

/// Stores a server secret in the keychain, then restarts the servers that use it.
#[tauri::command]
pub async fn set_secret(state: State<'_, AppState>, name: String, value: String) -> Result<()> {
    if !toolgate_settings::reference::valid_name(&name) {
        return Err(CommandError {
            kind: "settings",
            message: format!("'{name}' is not a valid secret name: start with a letter or '_', then letters, digits, '_', '.' or '-'"),
        });
    }
    if value.is_empty() {
        return Err(CommandError {
            kind: "settings",
            message: "the secret is empty; paste its value".into(),
        });
    }
    let item = toolgate_settings::secret_item(&name);
    keychain(state.secrets.clone(), move |s| s.set(&item, &value)).await?;
    restart_users(&state, &name).await;
    Ok(())
}

#[tauri::command]
pub async fn clear_secret(state: State<'_, AppState>, name: String) -> Result<()> {
    let item = toolgate_settings::secret_item(&name);
    keychain(state.secrets.clone(), move |s| s.delete(&item)).await?;
    Ok(())
}

/// Restarts, in the background, the servers whose settings use the secret, so they get its new
/// value; their status shows the progress.
async fn restart_users(state: &AppState, name: &str) {
    let users: Vec<String> = {
        let settings = state.settings();
        let used = toolgate_settings::secrets_used(&settings)
            .remove(name)
            .unwrap_or_default();
        used.into_iter()
            .filter(|id| settings.servers.iter().any(|s| &s.id == id && s.enabled))
            .collect()
    };
    let servers = state.servers.clone();
    tauri::async_runtime::spawn(async move {
        for id in users {
            if let Err(e) = servers.restart(&id).await {
                tracing::info!(server = %id, "not restarted after its secret changed: {e}");
            }
        }
    });
}

/// What the user must be told about this start (a settings or history file that could not be
/// read, and where it was kept).
#[tauri::command]
pub async fn startup_notices(state: State<'_, AppState>) -> Result<Vec<String>> {
    Ok(state.notices.clone())
}

/// Where servers to import come from: text the user pasted, or Claude Desktop's own file (read
/// here, so its plain-text tokens never pass through the window).
#[derive(Debug, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ImportSource {
    Text {
        text: String,
        /// The name for a single server pasted alone.
        name: Option<String>,
    },
    ClaudeDesktop,
    /// The servers in another AI app's config (Cursor, VS Code…), copied: its file is only read.
    Host {
        host: String,
    },
}

/// Files the import can offer to read, where they exist.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportSources {
    pub claude_desktop: Option<String>,
}

#[tauri::command]
pub async fn import_sources() -> Result<ImportSources> {
    Ok(ImportSources {
        claude_desktop: toolgate_settings::import::claude_desktop_config_path()
            .filter(|p| p.is_file())
            .map(|p| p.display().to_string()),
    })
}

fn import_plan(
    settings: &toolgate_settings::Settings,
    source: &ImportSource,
) -> Result<toolgate_settings::import::ImportPlan> {
    use toolgate_settings::import::{plan_import, ImportOptions};
    let (text, name) = match source {
        ImportSource::Host { host } => return host_servers(settings, host),
        ImportSource::Text { text, name } => (text.clone(), name.clone()),
        ImportSource::ClaudeDesktop => {
            let path =
                toolgate_settings::import::claude_desktop_config_path().ok_or_else(|| {
                    CommandError {
                        kind: "import",
                        message: "no Claude Desktop configuration folder on this system".into(),
                    }
                })?;
            let text = std::fs::read_to_string(&path).map_err(|e| CommandError {
                kind: "import",
                message: format!("could not read {}: {e}", path.display()),
            })?;
            (text, None)
        }
    };
    let options = ImportOptions {
        name,
        ..ImportOptions::default()
    };
    Ok(plan_import(settings, &text, &options)?)
}

/// The servers another AI app runs, planned as an import; its config is not changed.
fn host_servers(
    settings: &toolgate_settings::Settings,
    id: &str,
) -> Result<toolgate_settings::import::ImportPlan> {
    let host = host_of(id)?;
    let path = toolgate_hosts::config_path_here(host)
        .filter(|p| p.is_file())
        .ok_or_else(|| CommandError {
            kind: "import",
            message: format!("{} has no config on this computer", host.label()),
        })?;
    // The plan of a connection, of which only the import is used: nothing is written.
    let command = toolgate_hosts::ConnectCommand {
        command: "toolgate".into(),
        args: Vec::new(),
    };
    toolgate_hosts::plan(host, &path, settings, &command)?
        .import
        .ok_or_else(|| CommandError {
            kind: "import",
            message: format!("{} runs no server Toolgate can run", host.label()),
        })
}

/// What importing would add, rename, skip and ask for; changes nothing.
#[tauri::command]
pub async fn preview_import(
    state: State<'_, AppState>,
    source: ImportSource,
) -> Result<toolgate_settings::import::ImportReport> {
    let settings = state.settings().clone();
    Ok(import_plan(&settings, &source)?.report().clone())
}

/// Imports: the chosen secrets go to the keychain first, then the settings are saved with
/// references to them, then the new servers start.
#[tauri::command]
pub async fn apply_import(
    state: State<'_, AppState>,
    source: ImportSource,
    choices: toolgate_settings::import::ImportChoices,
) -> Result<toolgate_settings::import::ImportReport> {
    let plan = import_plan(&state.settings().clone(), &source)?;
    let imported = state.host.apply_import(&plan, &choices).await?;
    state.servers.add(&imported.added).await;
    Ok(plan.report().clone())
}

/// The servers in Claude Desktop's `mcpServers` format, secrets left as `${secret:…}`.
#[tauri::command]
pub async fn export_servers(
    state: State<'_, AppState>,
) -> Result<toolgate_settings::export::Export> {
    Ok(toolgate_settings::export::export_mcp_servers(
        &state.settings(),
    ))
}

/// Switches a server on (it starts) or off (it stops), and saves the choice.
#[tauri::command]
pub async fn set_server_enabled<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
    enabled: bool,
) -> Result<()> {
    state.update_settings(&app, |s| {
        if let Some(server) = s.servers.iter_mut().find(|server| server.id == server_id) {
            server.enabled = enabled;
        }
    })?;
    Ok(state.servers.set_enabled(&server_id, enabled).await?)
}

/// Removes a server: it stops, and its tool settings and approval rules go with it, so a later
/// server given the same id starts with none of them.
#[tauri::command]
pub async fn remove_server<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
) -> Result<()> {
    state.update_settings(&app, |s| {
        s.servers.retain(|server| server.id != server_id);
        s.tools.servers.remove(&server_id);
        s.policy.rules.retain(|rule| rule.server_id() != server_id);
    })?;
    Ok(state.servers.remove(&server_id).await?)
}

/// The server's recent stderr, oldest first (the window polls it while the log is open).
#[tauri::command]
pub async fn server_log(state: State<'_, AppState>, server_id: String) -> Result<Vec<String>> {
    let lines = state.servers.stderr_tail(&server_id).await;
    Ok(lines[lines.len().saturating_sub(500)..].to_vec())
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
    state.update_settings(&app, |s| {
        s.tools.set_tool_enabled(&server_id, &tool, enabled)
    })?;
    let _ = tauri::Emitter::emit(&app, crate::SERVERS_CHANGED, ());
    Ok(())
}

/// The folders a server may work in (its MCP roots); the server is told at once, or restarted
/// when its sandbox is built from them. Returns the notice to show when it was restarted.
#[tauri::command]
pub async fn set_server_roots<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
    roots: Vec<std::path::PathBuf>,
) -> Result<Option<String>> {
    state.update_settings(&app, |s| {
        if let Some(server) = s.servers.iter_mut().find(|server| server.id == server_id) {
            server.roots = roots.clone();
        }
    })?;
    Ok(match state.servers.set_roots(&server_id, roots).await? {
        toolgate_mcp::RootsChange::Told => None,
        toolgate_mcp::RootsChange::Restarted => Some(format!(
            "{server_id} was restarted: its sandbox is built from its folders, so the new ones apply only to a new start"
        )),
    })
}

/// A provider the window offers as a starting point.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PresetView {
    pub id: &'static str,
    pub name: &'static str,
    pub kind: ProviderKind,
    pub base_url: &'static str,
    pub needs_key: bool,
}

#[tauri::command]
pub async fn provider_presets() -> Result<Vec<PresetView>> {
    let anthropic = PresetView {
        id: "anthropic",
        name: "Anthropic",
        kind: ProviderKind::Anthropic,
        base_url: ProviderKind::Anthropic.default_base_url(),
        needs_key: true,
    };
    Ok(std::iter::once(anthropic)
        .chain(
            toolgate_llm::presets::PRESETS
                .iter()
                .filter(|p| !p.base_url.is_empty())
                .map(|p| PresetView {
                    id: p.id,
                    name: p.name,
                    kind: ProviderKind::Openai,
                    base_url: p.base_url,
                    needs_key: p.needs_key,
                }),
        )
        .collect())
}

/// The models the user's provider offers, for the model picker.
#[tauri::command]
pub async fn list_models(state: State<'_, AppState>) -> Result<Vec<String>> {
    use toolgate_llm::Provider;
    let (provider, _) = state.host.provider().await?;
    let mut models = provider.list_models().await?;
    models.sort();
    Ok(models)
}

/// Versions, folders, and what servers need to start.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostics {
    pub version: &'static str,
    pub settings_file: String,
    pub data_dir: Option<String>,
    pub log_dir: Option<String>,
    pub checks: Vec<toolgate_mcp::doctor::Check>,
    pub versions: Vec<crate::shell_commands::Version>,
}

#[tauri::command]
pub async fn diagnostics<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<Diagnostics> {
    use tauri::Manager;
    let host = state.servers.host_env().await.clone();
    let secrets = state.secrets.clone();
    let checks = tauri::async_runtime::spawn_blocking(move || {
        toolgate_mcp::doctor::doctor(&host, secrets.as_ref())
    })
    .await?;
    let paths = app.path();
    Ok(Diagnostics {
        version: env!("CARGO_PKG_VERSION"),
        settings_file: state.settings_path().display().to_string(),
        data_dir: paths.app_data_dir().ok().map(|d| d.display().to_string()),
        log_dir: paths.app_log_dir().ok().map(|d| d.display().to_string()),
        checks,
        versions: crate::shell_commands::versions(),
    })
}

/// How tools are named and which are shown: the naming mode, per-server prefixes, include and
/// exclude patterns, and the tools switched off.
#[tauri::command]
pub async fn tool_settings(
    state: State<'_, AppState>,
) -> Result<toolgate_catalog::CatalogSettings> {
    Ok(state.settings().tools.clone())
}

/// Saves the tool settings after checking them (a bad pattern or prefix names the field).
#[tauri::command]
pub async fn set_tool_settings<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    tools: toolgate_catalog::CatalogSettings,
) -> Result<toolgate_catalog::CatalogSettings> {
    let saved = state.update_settings(&app, |s| s.tools = tools)?;
    let _ = tauri::Emitter::emit(&app, crate::SERVERS_CHANGED, ());
    Ok(saved.tools)
}

/// One of a server's resources, for browsing; shown as text in the window.
#[tauri::command]
pub async fn read_resource(
    state: State<'_, AppState>,
    server_id: String,
    uri: String,
) -> Result<Value> {
    Ok(state.servers.read_resource(&server_id, &uri).await?)
}

fn autostart_error(e: tauri_plugin_autostart::Error) -> CommandError {
    CommandError {
        kind: "settings",
        message: format!("could not change the start at login: {e}"),
    }
}

/// Whether Toolgate starts (in the tray) when the user logs in.
#[tauri::command]
pub async fn start_at_login<R: Runtime>(app: AppHandle<R>) -> Result<bool> {
    use tauri_plugin_autostart::ManagerExt;
    app.autolaunch().is_enabled().map_err(autostart_error)
}

#[tauri::command]
pub async fn set_start_at_login<R: Runtime>(app: AppHandle<R>, enabled: bool) -> Result<bool> {
    use tauri_plugin_autostart::ManagerExt;
    let launcher = app.autolaunch();
    if enabled {
        launcher.enable()
    } else {
        launcher.disable()
    }
    .map_err(autostart_error)?;
    launcher.is_enabled().map_err(autostart_error)
}

/// A server's settings for the edit form; values that look like secrets are hidden.
#[tauri::command]
pub async fn server_config(
    state: State<'_, AppState>,
    server_id: String,
) -> Result<toolgate_settings::ServerConfig> {
    let settings = state.settings();
    let server = settings
        .servers
        .iter()
        .find(|s| s.id == server_id)
        .ok_or_else(|| toolgate_mcp::McpError::UnknownServer(server_id.clone()))?;
    Ok(toolgate_settings::edit::for_window(server))
}

/// Saves an edited server (its id stays) and restarts it with the new settings.
#[tauri::command]
pub async fn update_server<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    server_id: String,
    server: toolgate_settings::ServerConfig,
) -> Result<()> {
    let old = state
        .settings()
        .servers
        .iter()
        .find(|s| s.id == server_id)
        .cloned()
        .ok_or_else(|| toolgate_mcp::McpError::UnknownServer(server_id.clone()))?;
    let mut next = toolgate_settings::edit::apply(&old, server);
    next.id = server_id.clone();
    if let Some(refused) = next.unsafe_env() {
        return Err(refused.into());
    }
    state.update_settings(&app, |s| {
        if let Some(slot) = s.servers.iter_mut().find(|s| s.id == server_id) {
            *slot = next.clone();
        }
    })?;
    state.servers.remove(&server_id).await?;
    state.servers.add(std::slice::from_ref(&next)).await;
    Ok(())
}

fn host_of(id: &str) -> Result<toolgate_hosts::HostKind> {
    toolgate_hosts::HostKind::parse(id).ok_or_else(|| CommandError {
        kind: "hosts",
        message: format!("Toolgate does not know the host '{id}'"),
    })
}

fn hosts_state(state: &AppState) -> std::path::PathBuf {
    state.data_dir().join("hosts.json")
}

/// Another AI app whose MCP config Toolgate can take over.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostView {
    id: &'static str,
    label: &'static str,
    /// Where its config is (or would be).
    path: Option<String>,
    /// Its config file is there.
    found: bool,
    /// Connected to Toolgate; its original config is kept here.
    backup: Option<String>,
}

#[tauri::command]
pub async fn list_hosts(state: State<'_, AppState>) -> Result<Vec<HostView>> {
    let connected = toolgate_hosts::connected(&hosts_state(&state));
    Ok(toolgate_hosts::HostKind::ALL
        .into_iter()
        .map(|host| {
            let path = toolgate_hosts::config_path_here(host);
            HostView {
                id: host.id(),
                label: host.label(),
                found: path.as_ref().is_some_and(|p| p.is_file()),
                path: path.map(|p| p.display().to_string()),
                backup: connected
                    .get(host.id())
                    .map(|c| c.backup.display().to_string()),
            }
        })
        .collect())
}

/// What connecting a host would change; nothing is written until `connect_host`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostPreview {
    id: &'static str,
    label: &'static str,
    path: String,
    /// The servers that move to Toolgate (`None`: it runs none).
    report: Option<toolgate_settings::import::ImportReport>,
    /// Entries that stay in the host's config, with why.
    kept: Vec<(String, String)>,
    notes: Vec<String>,
    /// What the host will run instead.
    command: String,
}

#[tauri::command]
pub async fn preview_host(state: State<'_, AppState>, host: String) -> Result<HostPreview> {
    let host = host_of(&host)?;
    let path = toolgate_hosts::config_path_here(host).ok_or_else(|| CommandError {
        kind: "hosts",
        message: format!(
            "cannot tell where {} keeps its config on this system",
            host.label()
        ),
    })?;
    let exe = std::env::current_exe().map_err(|e| CommandError {
        kind: "hosts",
        message: format!("cannot tell where Toolgate is installed: {e}"),
    })?;
    let command = toolgate_hosts::ConnectCommand {
        command: exe.display().to_string(),
        args: vec![
            "connect".into(),
            "--profile".into(),
            host.id().into(),
            "--data-dir".into(),
            state.data_dir().display().to_string(),
        ],
    };
    let settings = state.settings().clone();
    let plan = toolgate_hosts::plan(host, &path, &settings, &command)?;
    let preview = HostPreview {
        id: host.id(),
        label: host.label(),
        path: path.display().to_string(),
        report: plan.import.as_ref().map(|i| i.report().clone()),
        kept: plan.kept.clone(),
        notes: plan.notes.clone(),
        command: std::iter::once(command.command.clone())
            .chain(command.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
    };
    *state.host_plan.lock().unwrap_or_else(|p| p.into_inner()) = Some(plan);
    Ok(preview)
}

/// Connects the host last previewed: imports its servers (secrets to the keychain as chosen),
/// starts them, then rewrites the host's config, only if it is unchanged since the preview.
#[tauri::command]
pub async fn connect_host(
    state: State<'_, AppState>,
    host: String,
    choices: toolgate_settings::import::ImportChoices,
) -> Result<()> {
    let host = host_of(&host)?;
    let plan = state
        .host_plan
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .filter(|plan| plan.host == host)
        .ok_or_else(|| CommandError {
            kind: "hosts",
            message: format!("look at what connecting {} changes first", host.label()),
        })?;
    if let Some(import) = &plan.import {
        let imported = state.host.apply_import(import, &choices).await?;
        state.servers.add(&imported.added).await;
    }
    Ok(toolgate_hosts::apply(&plan, &hosts_state(&state))?)
}

/// Puts the host's own config back, byte for byte; returns where.
#[tauri::command]
pub async fn undo_host(state: State<'_, AppState>, host: String) -> Result<String> {
    let host = host_of(&host)?;
    Ok(toolgate_hosts::undo(host, &hosts_state(&state), false)?
        .display()
        .to_string())
}
