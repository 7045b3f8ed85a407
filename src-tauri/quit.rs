//! Quitting when the system asks ([`toolgate_host::stop_requested`]: SIGTERM as the session
//! ends, SIGINT for Ctrl+C in the terminal that started Toolgate; on Windows the user logging off
//! or the machine shutting down): the app quits as the tray's Quit does, so its exit steps run
//! (`lib.rs`: waiting requests refused, servers stopped, the history's queue committed, the
//! gateway's socket removed) rather than the process ending between two writes. A second
//! request, while those steps run, ends the process at once.

use tauri::AppHandle;

/// Watches for the system's stop requests for as long as the app runs.
pub fn on_signal(handle: AppHandle) {
    tauri::async_runtime::spawn(async move {
        match toolgate_host::stop_requested().await {
            Ok(why) => tracing::info!("{why} received: quitting"),
            Err(e) => {
                tracing::error!("Toolgate cannot watch for the system's stop requests: {e}");
                return;
            }
        }
        handle.exit(0);
        if toolgate_host::stop_requested().await.is_ok() {
            tracing::warn!("asked again while quitting: ending now");
            std::process::exit(1);
        }
    });
}
