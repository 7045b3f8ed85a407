//! Desktop notifications for requests that wait while the window is hidden, so an approval is
//! not missed when Toolgate lives in the tray.

use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_notification::NotificationExt;
use toolgate_agent::{Announcer, Asking, PendingCall};

fn window_hidden<R: Runtime>(app: &AppHandle<R>) -> bool {
    app.get_webview_window("main")
        .is_none_or(|w| !w.is_visible().unwrap_or(false) || w.is_minimized().unwrap_or(false))
}

/// Announces the requests that just arrived, when the window is hidden or minimized.
pub fn announce<R: Runtime>(
    app: &AppHandle<R>,
    announcer: &mut Announcer,
    waiting: &[PendingCall],
) {
    let fresh = announcer.fresh(waiting);
    if fresh.is_empty() || !window_hidden(app) {
        return;
    }
    // The same facts as the card and the tray's submenu, in plain text.
    let model = app
        .try_state::<crate::state::AppState>()
        .map(|state| state.settings().provider.model.clone());
    for call in fresh {
        let (title, body) = call.notification(Asking::now(model.as_deref()));
        if let Err(e) = app.notification().builder().title(title).body(body).show() {
            // No notification service (a bare session): the tray still shows the request.
            tracing::info!("could not show a desktop notification: {e}");
        }
    }
}
