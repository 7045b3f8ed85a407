//! The chat: a turn of the conversation on screen, stopping it, and the saved conversations
//! (which one is on screen is the window's; the history is the host's).

use std::sync::Arc;

use tauri::ipc::Channel;
use tauri::State;
use toolgate_agent::{Agent, TurnEvent, TurnOptions};
use toolgate_history::ConversationSummary;
use toolgate_llm::Message;

use crate::error::{CommandError, Result};
use crate::state::AppState;
use crate::state::Conversation;

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
    let options = TurnOptions {
        approval_timeout: state.settings().policy.approval_timeout(),
        ..TurnOptions::default()
    };
    let turn_id = state
        .turns
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    *state.turn.lock().unwrap_or_else(|p| p.into_inner()) = Some((turn_id, options.cancel.clone()));
    let mut tools = state.settings().tools.clone();
    // Servers switched off for this chat offer the model none of their tools.
    for server in servers_off.unwrap_or_default() {
        let entry = tools.servers.entry(server).or_default();
        entry.exclude.push("*".into());
    }
    let (provider, settings) = state.host.provider().await?;
    // The title is the user's own words; the model also gets the attached resources.
    let sent = crate::content::attach(&state, &text, &attachments.unwrap_or_default()).await?;
    let agent = Agent::new(state.servers.clone(), state.gate.clone())
        .with_tools(tools, settings.tool_target())
        .with_offers(state.host.offers.clone());
    let mut conversation = state.conversation.lock().await;
    let history = state.history.clone().ok();
    if let (None, Some(h)) = (&conversation.id, &history) {
        let (h, title) = (h.clone(), toolgate_agent::title_for(&text));
        match blocking(move || h.create(&title)).await {
            Ok(created) => conversation.id = Some(created.id),
            Err(e) => tracing::error!("this conversation will not be saved: {}", e.message),
        }
    }
    // What the chat has read carries over from its earlier turns (see Exposure).
    let mut agent = agent
        .with_policy(state.host.policy())
        .with_exposure(state.host.exposure(conversation.id.as_deref()));
    let mut usage_sink = None;
    if let Some(h) = &history {
        agent = agent.with_audit(h.clone(), conversation.id.clone());
    }
    if let (Some(h), Some(id)) = (history, conversation.id.clone()) {
        agent = agent.with_recorder(Arc::new(toolgate_agent::HistoryRecorder::new(
            h.clone(),
            id.clone(),
        )));
        usage_sink = Some((h, id));
    }
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

/// Runs a history operation off the async runtime: SQLite calls block.
async fn blocking<T: Send + 'static>(
    op: impl FnOnce() -> std::result::Result<T, toolgate_history::HistoryError> + Send + 'static,
) -> Result<T> {
    tauri::async_runtime::spawn_blocking(op)
        .await
        .map_err(CommandError::from)?
        .map_err(CommandError::from)
}

/// Stops the running turn: the model call, the approvals it waits for, its tool calls.
#[tauri::command]
pub async fn stop_turn(state: State<'_, AppState>) -> Result<()> {
    if let Some((_, cancel)) = state.turn.lock().unwrap_or_else(|p| p.into_inner()).take() {
        cancel.cancel();
    }
    Ok(())
}

/// Starts a new conversation; the one on screen stays in the history.
#[tauri::command]
pub async fn reset_conversation(state: State<'_, AppState>) -> Result<()> {
    state.gate.deny_all("the conversation was cleared");
    *state.conversation.lock().await = Conversation::default();
    Ok(())
}

/// The id of the conversation on screen in the history, once it has one.
#[tauri::command]
pub async fn current_conversation(state: State<'_, AppState>) -> Result<Option<String>> {
    Ok(state.conversation.lock().await.id.clone())
}

#[tauri::command]
pub async fn list_conversations(
    state: State<'_, AppState>,
    search: Option<String>,
) -> Result<Vec<ConversationSummary>> {
    Ok(state.conversations(search).await?)
}

/// Makes a stored conversation the one on screen, and returns its messages to show.
#[tauri::command]
pub async fn open_conversation(state: State<'_, AppState>, id: String) -> Result<Vec<Message>> {
    let messages = state.conversation_messages(&id).await?;
    *state.conversation.lock().await = Conversation {
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
    Ok(state.rename_conversation(&id, &title).await?)
}

/// Deletes a saved conversation; the window starts a new one if it was on screen.
#[tauri::command]
pub async fn delete_conversation(state: State<'_, AppState>, id: String) -> Result<()> {
    state.delete_conversation(&id).await?;
    let mut conversation = state.conversation.lock().await;
    if conversation.id.as_deref() == Some(id.as_str()) {
        *conversation = Conversation::default();
    }
    Ok(())
}
