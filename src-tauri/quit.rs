//! Quitting when the system asks ([`toolgate_host::StopRequests`]: SIGTERM as the session
//! ends, SIGINT for Ctrl+C in the terminal that started Toolgate; on Windows the user logging off
//! or the machine shutting down): the app quits as the tray's Quit does, so its exit steps run
//! (`lib.rs`: waiting requests refused, servers stopped, the history's queue committed, the
//! gateway's socket removed) rather than the process ending between two writes. A second
//! request, while those steps run, ends the process at once.

use tauri::AppHandle;
use toolgate_host::StopRequests;

/// Watches for the system's stop requests for as long as the app runs.
pub fn on_signal(handle: AppHandle) {
    tauri::async_runtime::spawn(async move {
        let mut stops = match StopRequests::listen() {
            Ok(stops) => stops,
            Err(e) => {
                tracing::error!("Toolgate cannot watch for the system's stop requests: {e}");
                return;
            }
        };
        let why = stops.next().await;
        tracing::info!("{why} received: quitting");
        stops.end_at_once_on_next(|why| tracing::warn!("{why} again while quitting: ending now"));
        handle.exit(0);
    });
}
