//! The gateway's HTTP door: its switch and address, and its clients' tokens (issued, shown once,
//! revoked). The door's state in the app is `crate::door::DoorControl`.

use tauri::State;
use toolgate_host::{DoorView, IssuedToken};

use crate::door::DoorControl;
use crate::error::Result;
use crate::state::AppState;

/// The door: switched on or not, where, whether it listens, and its clients by name.
#[tauri::command]
pub async fn door_status(
    state: State<'_, AppState>,
    door: State<'_, DoorControl>,
) -> Result<DoorView> {
    Ok(door.view(&state)?)
}

/// Switches the door on or off at `address` (loopback only), saved in the settings, and opens
/// or closes it now.
#[tauri::command]
pub async fn set_door(
    state: State<'_, AppState>,
    door: State<'_, DoorControl>,
    enabled: bool,
    address: String,
) -> Result<DoorView> {
    state.set_door(enabled, &address)?;
    door.apply(&state.host);
    Ok(door.view(&state)?)
}

/// Issues a token for the client `name`: returned this once to be shown, never again.
#[tauri::command]
pub async fn add_door_token(state: State<'_, AppState>, name: String) -> Result<IssuedToken> {
    let token = state.door_tokens().issue(&name)?;
    let url = toolgate_host::door_url(&state.door_settings().address);
    Ok(IssuedToken { name, token, url })
}

/// Revokes `name`'s token: the door refuses it from its next request on.
#[tauri::command]
pub async fn revoke_door_token(
    state: State<'_, AppState>,
    door: State<'_, DoorControl>,
    name: String,
) -> Result<DoorView> {
    state.door_tokens().revoke(&name)?;
    Ok(door.view(&state)?)
}
