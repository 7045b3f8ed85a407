//! The desktop shell: window, tray, settings storage and IPC. Everything else is in the core
//! crates under `crates/`; the commands here only adapt them to Tauri.

mod autostart;
#[cfg(test)]
mod bindings;
#[cfg(test)]
mod command_list;
mod commands;
mod connect;
mod door;
mod error;
mod events;
mod notify;
#[cfg(target_os = "linux")]
mod painter;
mod quit;
mod state;
mod tray;

use tauri::{Emitter, Manager, RunEvent, WindowEvent};

pub use connect::connect;
pub use events::{APPROVALS_CHANGED, SERVERS_CHANGED};
pub use state::AppState;

/// How often the tray's menu is checked while a request waits, for its time left (in minutes;
/// the menu is set again only when its text changed).
const TRAY_TICK: std::time::Duration = std::time::Duration::from_secs(20);

/// The gateway while the app runs: stopped, and its socket removed, when the app exits.
struct GatewayRunning {
    stop: tokio_util::sync::CancellationToken,
    socket: std::path::PathBuf,
}

pub fn run() {
    #[cfg(target_os = "linux")]
    painter::choose();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,rmcp=warn,toolgate=debug".into()),
        )
        .with_writer(std::io::stderr)
        // Colours only for a terminal: not in a log file or the session's journal.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();

    let app = tauri::Builder::default()
        // Registered first, as the plugin asks: a second launch only brings this window forward,
        // handing over an install link it was given.
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            tray::show_window(app);
            for arg in args.iter().skip(1) {
                commands::install_link::received(app, arg);
            }
        }))
        // toolgate://install links (install_link.rs); the web-view has no deep-link permission.
        .plugin(tauri_plugin_deep_link::init())
        .plugin(tauri_plugin_notification::init())
        // The window's remembered state (`ui_state.rs`); the web-view has no store permission.
        .plugin(tauri_plugin_store::Builder::new().build())
        // Opens the log folder for the user; the web-view has no opener permission.
        .plugin(tauri_plugin_opener::init())
        // Started at login, Toolgate opens in the tray only (`--hidden`).
        .plugin(autostart::plugin())
        .register_uri_scheme_protocol(commands::apps::SCHEME, commands::apps::serve)
        .setup(|app| {
            app.manage(commands::apps::Apps::default());
            let state = AppState::load(app.handle())?;
            let mut changes = state.servers().changes();
            app.manage(state);
            commands::install_link::listen(app);
            quit::on_signal(app.handle().clone());

            // Tell the web-view about every status change, then start the servers.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                while changes.changed().await.is_ok() {
                    let _ = handle.emit(SERVERS_CHANGED, ());
                    // The tray lists the servers' status and shows a failure on its icon.
                    tray::refresh(&handle).await;
                }
            });
            let host = app.state::<AppState>().host.clone();
            tauri::async_runtime::spawn(async move {
                let _ = host.run().await;
            });

            // Other hosts connect here (`toolgate connect`); their calls wait at the same gate.
            let host = app.state::<AppState>().host.clone();
            let socket = toolgate_gateway::socket_path(host.data_dir());
            match toolgate_gateway::Gateway::bind(host, socket.clone()) {
                Ok(gateway) => {
                    app.manage(GatewayRunning {
                        stop: gateway.stopper(),
                        socket,
                    });
                    tauri::async_runtime::spawn(async move {
                        if let Err(e) = gateway.serve().await {
                            tracing::error!("the gateway stopped: {e}");
                        }
                    });
                }
                Err(e) => tracing::error!("other hosts cannot connect to Toolgate: {e}"),
            }
            // And over HTTP, when the door's switch is on.
            let door = door::DoorControl::default();
            door.apply(&app.state::<AppState>().host);
            app.manage(door);

            commands::ui_state::restore_window(app.handle());
            tray::create(app.handle())?;
            if autostart::started_hidden(std::env::args()) {
                if let Some(window) = app.get_webview_window("main") {
                    let _ = window.hide();
                }
            }
            // The tray and the window list the requests waiting for approval, kept current, and
            // a desktop notification announces each new one while the window is hidden.
            let handle = app.handle().clone();
            let gate = app.state::<AppState>().approvals().clone();
            let mut changes = gate.changes();
            tauri::async_runtime::spawn(async move {
                let mut announcer = toolgate_agent::Announcer::default();
                loop {
                    // While a request waits, the tray's "Denied in … if not answered" is checked
                    // now and then, not only when the set of requests changes.
                    let changed = if gate.waiting().is_empty() {
                        changes.changed().await
                    } else {
                        match tokio::time::timeout(TRAY_TICK, changes.changed()).await {
                            Ok(changed) => changed,
                            Err(_) => {
                                tray::refresh(&handle).await;
                                continue;
                            }
                        }
                    };
                    if changed.is_err() {
                        break;
                    }
                    let waiting = gate.waiting();
                    tray::refresh(&handle).await;
                    notify::announce(&handle, &mut announcer, &waiting);
                    let _ = handle.emit(APPROVALS_CHANGED, ());
                }
            });
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the window keeps Toolgate running in the tray; Quit is in the tray menu.
            match event {
                WindowEvent::CloseRequested { api, .. } => {
                    api.prevent_close();
                    let _ = window.hide();
                }
                WindowEvent::Moved(_) | WindowEvent::Resized(_) => {
                    commands::ui_state::remember_window(window)
                }
                _ => {}
            }
        })
        // Every command in src-tauri/commands/, listed by build.rs (command_list.rs).
        .invoke_handler(include!(concat!(env!("OUT_DIR"), "/handlers.rs")))
        .build(tauri::generate_context!());

    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("Toolgate could not start: {e}");
            std::process::exit(1);
        }
    };
    app.run(|handle, event| {
        if let RunEvent::Exit = event {
            // Last chance to stop every server process before the runtime goes away.
            if let Some(gateway) = handle.try_state::<GatewayRunning>() {
                gateway.stop.cancel();
                let _ = std::fs::remove_file(&gateway.socket);
            }
            if let Some(door) = handle.try_state::<door::DoorControl>() {
                door.close();
            }
            if let Some(state) = handle.try_state::<AppState>() {
                // Waiting requests refused, servers stopped, the history's queue committed.
                tauri::async_runtime::block_on(state.host.shutdown("Toolgate is quitting"));
            }
        }
    });
}
