//! The chat: a turn of the conversation on screen, stopping it, and the saved conversations
//! (which one is on screen is the window's; the history is the host's).

use tauri::ipc::Channel;
use tauri::State;
use toolgate_agent::TurnEvent;
use toolgate_history::ConversationSummary;
use toolgate_llm::Message;

use crate::error::Result;
use crate::state::AppState;
use crate::state::Conversation;

/// Runs one turn of the conversation. Progress, approval requests and the answer arrive on
/// `on_event`; the command returns the final answer.
#[tauri::command]
pub async fn send_message(
    state: State<'_, AppState>,
    text: String,
    attachments: Option<Vec<crate::commands::content::Attachment>>,
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
    let sent =
        crate::commands::content::attach(&state, &text, &attachments.unwrap_or_default()).await?;
    let mut conversation = state.conversation.lock().await;
    let chat = state
        .host
        .chat(
            conversation.id.clone(),
            &text,
            &servers_off.unwrap_or_default(),
            |e| tracing::error!("this conversation will not be saved: {e}"),
        )
        .await;
    if conversation.id.is_none() && chat.conversation.is_some() {
        state.set_on_screen(chat.conversation.clone());
        conversation.id = chat.conversation.clone();
    }
    let emit = |event: TurnEvent| {
        chat.count(&event);
        let _ = on_event.send(event);
    };
    // Every message stays in the conversation, whatever happens: it is valid to continue from
    // (a stopped call has its denial as result), and it is what the history holds.
    let result = chat
        .agent
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

/// Stops the running turn: the model call, the approvals it waits for, its tool calls.
/// A result's text before its secrets were removed, for the user who clicked *Reveal*.
#[tauri::command]
pub fn reveal_result(state: State<'_, AppState>, call_id: String) -> Option<String> {
    state.host.reveal_result(&call_id)
}

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
    state.approvals().deny_all("the conversation was cleared");
    let mut conversation = state.conversation.lock().await;
    state.set_on_screen(None);
    *conversation = Conversation::default();
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
    Ok(state.rename_conversation(&id, &title).await?)
}

/// Deletes a saved conversation; the window starts a new one if it was on screen.
#[tauri::command]
pub async fn delete_conversation(state: State<'_, AppState>, id: String) -> Result<()> {
    state.delete_conversation(&id).await?;
    let mut conversation = state.conversation.lock().await;
    if conversation.id.as_deref() == Some(id.as_str()) {
        state.set_on_screen(None);
        *conversation = Conversation::default();
    }
    Ok(())
}
