//! The sign-in commands: thin adapters over `Host::sign_in` and `Host::sign_out`. The window
//! gets the authorization URL to show (in case no browser opens) and what the sign-in is (issuer,
//! expiry, scopes); never a token.

use tauri::ipc::Channel;
use tauri::State;
use toolgate_host::{SignedInInfo, SIGN_IN_WAIT};

use crate::error::CommandError;
use crate::state::AppState;

/// Signs in to a remote server in the system browser; `on_url` receives the address opened.
/// `extra_scopes`: more access the user agreed to grant (after a call needed it).
#[tauri::command]
pub async fn sign_in_server(
    state: State<'_, AppState>,
    server_id: String,
    extra_scopes: Vec<String>,
    on_url: Channel<String>,
) -> Result<SignedInInfo, CommandError> {
    let show = move |url: &str| {
        let _ = on_url.send(url.to_owned());
    };
    state
        .host
        .sign_in(
            &server_id,
            extra_scopes,
            None,
            SIGN_IN_WAIT,
            &show,
            &toolgate_oauth::open_in_browser,
        )
        .await
        .map_err(CommandError::from)
}

/// Signs out of a remote server; returns notes (a revocation the server did not confirm).
#[tauri::command]
pub async fn sign_out_server(
    state: State<'_, AppState>,
    server_id: String,
) -> Result<Vec<String>, CommandError> {
    state
        .host
        .sign_out(&server_id)
        .await
        .map_err(CommandError::from)
}
