//! The gateway's HTTP door while the app runs: opened at start when its switch is on, opened
//! and closed by the switch, closed when the app exits. The door itself is
//! `toolgate_gateway::HttpDoor`; its tokens and settings are the host's.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;
use toolgate_host::{DoorView, Host};

#[derive(Default)]
struct Open {
    /// Where it listens and what closes it, while it is open.
    running: Option<(SocketAddr, CancellationToken)>,
    /// Why it is not open although its switch is on.
    problem: Option<String>,
}

/// The door's state in the app.
#[derive(Default)]
pub struct DoorControl(Mutex<Open>);

impl DoorControl {
    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens or closes the door as the host's settings say (closing it first when it moves).
    pub fn apply(&self, host: &Arc<Host>) {
        let door = host.door_settings();
        let mut open = self.lock();
        let same = open
            .running
            .as_ref()
            .is_some_and(|(address, _)| door.enabled && *address == door.address);
        if same {
            return;
        }
        if let Some((_, stop)) = open.running.take() {
            stop.cancel();
        }
        open.problem = None;
        if !door.enabled {
            return;
        }
        match toolgate_gateway::HttpDoor::bind(host.clone(), door.address) {
            Ok(http) => {
                open.running = Some((http.address(), http.stopper()));
                tauri::async_runtime::spawn(async move {
                    if let Err(e) = http.serve().await {
                        tracing::error!("the HTTP door stopped: {e}");
                    }
                });
            }
            Err(e) => {
                tracing::error!("the HTTP door could not open: {e}");
                open.problem = Some(e.to_string());
            }
        }
    }

    /// Closes the door, when the app exits.
    pub fn close(&self) {
        if let Some((_, stop)) = self.lock().running.take() {
            stop.cancel();
        }
    }

    /// The door as the window shows it.
    pub fn view(&self, host: &Host) -> Result<DoorView, toolgate_host::DoorTokenError> {
        let (listening, problem) = {
            let open = self.lock();
            (open.running.is_some(), open.problem.clone())
        };
        host.door_view(listening, problem)
    }
}
