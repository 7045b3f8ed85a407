//! Quitting when the system asks: SIGTERM (the session ending, `kill`, a service manager) and
//! SIGINT (Ctrl+C in the terminal that started Toolgate) quit as the tray's Quit does, so the
//! app's exit steps run (`lib.rs`: waiting requests refused, servers stopped, the history's queue
//! committed, the gateway's socket removed) rather than the process ending between two writes.
//! A second signal, while those steps run, ends the process at once.

use tauri::AppHandle;
use tokio::signal::unix::{signal, SignalKind};

/// Watches for SIGTERM and SIGINT for as long as the app runs.
pub fn on_signal(handle: AppHandle) {
    tauri::async_runtime::spawn(async move {
        let (mut term, mut int) = match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(term), Ok(int)) => (term, int),
            (Err(e), _) | (_, Err(e)) => {
                tracing::error!("Toolgate cannot watch for SIGTERM and SIGINT: {e}");
                return;
            }
        };
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        tracing::info!("{name} received: quitting");
        handle.exit(0);
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        tracing::warn!("a second signal while quitting: ending now");
        std::process::exit(1);
    });
}
