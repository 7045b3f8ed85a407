//! The desktop shell: window, tray, settings storage and IPC. Everything else is in the core
//! crates under `crates/`; the commands here only adapt them to Tauri.

mod apps;
mod autostart;
#[cfg(test)]
mod bindings;
#[cfg(test)]
mod command_names;
mod commands;
mod confinement;
mod connect;
mod content;
mod door;
mod error;
mod events;
mod install_link;
mod notify;
mod shell_commands;
mod sign_in;
mod state;
mod tray;
mod ui_state;

use tauri::{Emitter, Manager, RunEvent, WindowEvent};

pub use connect::connect;
pub use events::{APPROVALS_CHANGED, SERVERS_CHANGED};
pub use state::AppState;

/// The gateway while the app runs: stopped, and its socket removed, when the app exits.
struct GatewayRunning {
    stop: tokio_util::sync::CancellationToken,
    socket: std::path::PathBuf,
}

pub fn run() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,rmcp=warn,toolgate=debug".into()),
        )
        .with_writer(std::io::stderr)
        .init();

    let app = tauri::Builder::default()
        // Registered first, as the plugin asks: a second launch only brings this window forward,
        // handing over an install link it was given.
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            tray::show_window(app);
            for arg in args.iter().skip(1) {
                install_link::received(app, arg);
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
        .register_uri_scheme_protocol(apps::SCHEME, apps::serve)
        .setup(|app| {
            app.manage(apps::Apps::default());
            let state = AppState::load(app.handle())?;
            let servers = state.servers.clone();
            app.manage(state);
            install_link::listen(app);

            // Tell the web-view about every status change, then start the servers.
            let handle = app.handle().clone();
            let mut changes = servers.subscribe();
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

            ui_state::restore_window(app.handle());
            tray::create(app.handle())?;
            if autostart::started_hidden(std::env::args()) {
                if let Some(window) = app.get_webview_window("main") {
                    let _ = window.hide();
                }
            }
            // The tray and the window list the requests waiting for approval, kept current, and
            // a desktop notification announces each new one while the window is hidden.
            let handle = app.handle().clone();
            let gate = app.state::<AppState>().gate.clone();
            let mut changes = gate.subscribe();
            tauri::async_runtime::spawn(async move {
                let mut announcer = toolgate_agent::Announcer::default();
                while changes.changed().await.is_ok() {
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
                    ui_state::remember_window(window)
                }
                _ => {}
            }
        })
        .invoke_handler(tauri::generate_handler![
            commands::chat::send_message,
            commands::chat::reset_conversation,
            commands::chat::stop_turn,
            commands::chat::current_conversation,
            commands::chat::list_conversations,
            commands::chat::open_conversation,
            commands::chat::rename_conversation,
            commands::chat::delete_conversation,
            commands::approvals::answer_approval,
            commands::approvals::pending_approvals,
            commands::approvals::approval_rules,
            commands::approvals::managed_policy,
            commands::servers::registry_search,
            commands::servers::registry_plan,
            commands::servers::add_from_registry,
            commands::servers::inspect_bundle,
            commands::servers::install_bundle,
            commands::approvals::revoke_rule,
            commands::approvals::set_paused,
            commands::approvals::answer_all,
            commands::approvals::audit_log,
            commands::approvals::set_approval_options,
            commands::approvals::export_audit,
            commands::servers::list_servers,
            commands::servers::restart_server,
            commands::servers::package_version,
            commands::servers::update_package,
            commands::servers::call_tool,
            commands::servers::tool_catalog,
            commands::servers::set_server_enabled,
            commands::servers::remove_server,
            commands::servers::server_log,
            commands::servers::set_tool_enabled,
            commands::servers::set_server_roots,
            commands::servers::tool_settings,
            commands::servers::set_tool_settings,
            commands::servers::read_resource,
            commands::servers::server_config,
            commands::servers::update_server,
            commands::provider::get_provider,
            commands::provider::set_provider,
            commands::provider::set_api_key,
            commands::provider::clear_api_key,
            commands::provider::provider_presets,
            commands::provider::list_models,
            commands::provider::list_models_for,
            commands::secrets::list_secrets,
            commands::servers::accept_tool_changes,
            commands::secrets::identity_provider,
            commands::secrets::set_identity_provider,
            commands::secrets::set_secret,
            commands::secrets::clear_secret,
            commands::import::import_sources,
            commands::import::preview_import,
            commands::import::apply_import,
            commands::import::export_servers,
            commands::hosts::list_hosts,
            commands::hosts::preview_host,
            commands::hosts::connect_host,
            commands::hosts::undo_host,
            commands::door::door_status,
            commands::door::set_door,
            commands::door::add_door_token,
            commands::door::revoke_door_token,
            commands::system::startup_notices,
            commands::system::diagnostics,
            commands::system::start_at_login,
            commands::system::set_start_at_login,
            confinement::set_server_sandbox,
            confinement::answer_host,
            commands::chat::reveal_result,
            install_link::pending_install_link,
            confinement::set_server_trust,
            content::read_resource_template,
            content::get_prompt,
            apps::load_app,
            apps::close_app,
            apps::app_call_tool,
            apps::app_read_resource,
            shell_commands::detect_local_models,
            shell_commands::preview_rule,
            shell_commands::save_rule,
            shell_commands::open_log_folder,
            ui_state::ui_state,
            ui_state::set_ui_state,
            sign_in::sign_in_server,
            sign_in::sign_out_server,
        ])
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
