//! MCP Apps in the window: the `mcpapp:` scheme that serves an app's document with the policy
//! `toolgate_agent::apps` built for it, and the commands its frame's bridge uses. The window
//! frames the document sandboxed (scripts only: an opaque origin, no top navigation, no
//! pop-ups); everything the app asks goes through these commands, each bound to the app's own
//! server by the id the backend gave it, never by what the window says.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::{json, Value};
use tauri::http::{header, Response, StatusCode};
use tauri::{Manager, Runtime, State, UriSchemeContext};
use toolgate_agent::apps::AppDocument;
use toolgate_agent::CallOutcome;
use toolgate_host::Caller;

use crate::error::{to_window, CommandError, Result};
use crate::state::AppState;

/// The scheme app documents are served on.
pub const SCHEME: &str = "mcpapp";

/// The documents of the apps on screen, by an id only the backend makes.
#[derive(Default)]
pub struct Apps(Mutex<HashMap<String, OpenApp>>);

/// An app on screen: its document, and the chat it is shown in (whose exposure its calls share).
#[derive(Clone)]
struct OpenApp {
    document: AppDocument,
    conversation: Option<String>,
}

impl Apps {
    fn get(&self, id: &str) -> Option<OpenApp> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }
}

/// Serves `mcpapp://localhost/<id>` (or `http://mcpapp.localhost/<id>` where the platform says
/// so): the document, with its policy, never cached; anything else is not found.
pub fn serve<R: Runtime>(
    ctx: UriSchemeContext<'_, R>,
    request: tauri::http::Request<Vec<u8>>,
) -> Response<Vec<u8>> {
    let id = request.uri().path().trim_start_matches('/');
    let found = ctx
        .app_handle()
        .try_state::<Apps>()
        .and_then(|apps| apps.get(id));
    match found.map(|app| app.document) {
        Some(document) => Response::builder()
            .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
            .header("Content-Security-Policy", document.csp)
            .header(header::CACHE_CONTROL, "no-store")
            .header("X-Content-Type-Options", "nosniff")
            .header("Referrer-Policy", "no-referrer")
            .body(document.html.into_bytes()),
        None => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(b"no such app".to_vec()),
    }
    .unwrap_or_else(|_| Response::new(Vec::new()))
}

/// An app ready to frame.
#[derive(Debug, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AppView {
    pub id: String,
    /// The id, on the scheme this platform serves it at (the window makes the URL).
    pub prefers_border: bool,
}

fn app_error(message: String) -> CommandError {
    CommandError {
        kind: "app",
        message,
    }
}

/// Reads a tool's app document from its server and registers it to be served.
#[tauri::command]
pub async fn load_app(
    state: State<'_, AppState>,
    apps_state: State<'_, Apps>,
    server_id: String,
    uri: String,
) -> Result<AppView> {
    let document = state.servers().load_app(&server_id, &uri).await?;
    let id = uuid::Uuid::new_v4().to_string();
    let view = AppView {
        id: id.clone(),
        prefers_border: document.prefers_border,
    };
    apps_state
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(
            id,
            OpenApp {
                document,
                // Loaded as its result is shown, in the chat on screen.
                conversation: state.on_screen(),
            },
        );
    Ok(view)
}

/// Forgets an app the window no longer shows.
#[tauri::command]
pub async fn close_app(apps_state: State<'_, Apps>, id: String) -> Result<()> {
    apps_state
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&id);
    Ok(())
}

fn document(apps_state: &Apps, id: &str) -> Result<OpenApp> {
    apps_state
        .get(id)
        .ok_or_else(|| app_error("that app is no longer open".to_owned()))
}

/// A `tools/call` the app makes: its own server's tool, through the gate, rules and audit as a
/// model's call would be, the card naming the app. A refusal is an error result, as MCP has it.
#[tauri::command]
pub async fn app_call_tool(
    state: State<'_, AppState>,
    apps_state: State<'_, Apps>,
    id: String,
    name: String,
    arguments: Value,
) -> Result<Value> {
    let OpenApp {
        document,
        conversation,
    } = document(&apps_state, &id)?;
    // The app is shown in a chat: its calls are judged by what that chat has read.
    let agent = state
        .host
        .agent(Caller::App {
            server: &document.server_id,
            conversation,
        })
        .await;
    let options = state.host.turn_options();
    let outcome = agent
        .call_for_app(&document.server_id, &name, arguments, &options, &|_| {})
        .await?;
    Ok(match outcome {
        CallOutcome::Ran(Ok(output)) => to_window(&output.result)?,
        CallOutcome::Ran(Err(e)) => error_result(&e.to_string()),
        CallOutcome::Refused(told) => error_result(&told),
    })
}

fn error_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// A `resources/read` the app makes: its own server's resources only.
#[tauri::command]
pub async fn app_read_resource(
    state: State<'_, AppState>,
    apps_state: State<'_, Apps>,
    id: String,
    uri: String,
) -> Result<Value> {
    let document = document(&apps_state, &id)?.document;
    to_window(
        &state
            .servers()
            .read_resource(&document.server_id, &uri)
            .await?,
    )
}
