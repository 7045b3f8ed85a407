//! Commands for what servers offer besides tools: a resource template filled and read, a prompt
//! got with its arguments, and the resources attached to a message (read here, so the window
//! names them and never passes their contents back).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tauri::State;

use crate::error::{to_window, Result};
use crate::state::AppState;

/// A template's resource, read: the URI the values made, and the server's answer.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TemplateRead {
    pub uri: String,
    pub result: Value,
}

/// A resource to attach to a message.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub server_id: String,
    pub uri: String,
}

/// Fills one of a server's resource templates and reads the resource.
#[tauri::command]
pub async fn read_resource_template(
    state: State<'_, AppState>,
    server_id: String,
    template: String,
    values: BTreeMap<String, String>,
) -> Result<TemplateRead> {
    let (uri, result) = state
        .servers()
        .read_resource_template(&server_id, &template, &values)
        .await?;
    Ok(TemplateRead {
        uri,
        result: to_window(&result)?,
    })
}

/// One of a server's prompts, filled with `arguments`: its description and messages.
#[tauri::command]
pub async fn get_prompt(
    state: State<'_, AppState>,
    server_id: String,
    name: String,
    arguments: serde_json::Map<String, Value>,
) -> Result<Value> {
    let arguments = (!arguments.is_empty()).then_some(arguments);
    to_window(
        &state
            .servers()
            .get_prompt(&server_id, &name, arguments)
            .await?,
    )
}

/// The message the model gets for `text` with `attachments`: each resource read now from its
/// server (a read that fails fails the send, saying which).
pub async fn attach(state: &AppState, text: &str, attachments: &[Attachment]) -> Result<String> {
    if attachments.is_empty() {
        return Ok(text.to_owned());
    }
    let names: BTreeMap<String, String> = state
        .servers()
        .snapshot()
        .await
        .into_iter()
        .map(|s| (s.id, s.name))
        .collect();
    let mut attached = Vec::new();
    for a in attachments {
        let contents = state.servers().read_resource(&a.server_id, &a.uri).await?;
        attached.push(toolgate_agent::Attached {
            server_name: names
                .get(&a.server_id)
                .cloned()
                .unwrap_or_else(|| a.server_id.clone()),
            uri: a.uri.clone(),
            contents,
        });
    }
    Ok(toolgate_agent::with_attachments(text, &attached))
}
