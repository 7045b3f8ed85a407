//! The desktop shell: window, tray, settings storage and IPC. Everything else is in the core
//! crates under `crates/`; the commands here only adapt them to Tauri.

mod apps;
mod commands;
mod confinement;
mod content;
mod notify;
mod shell_commands;
mod sign_in;
mod state;
mod tray;
mod ui_state;

use tauri::{Emitter, Manager, RunEvent, WindowEvent};

pub use state::AppState;

/// Event sent to the web-view whenever a server's status or tools change.
pub const SERVERS_CHANGED: &str = "servers-changed";
/// Event sent to the web-view whenever a request starts or stops waiting at the gate.
pub const APPROVALS_CHANGED: &str = "approvals-changed";

/// The gateway while the app runs: stopped, and its socket removed, when the app exits.
struct GatewayRunning {
    stop: tokio_util::sync::CancellationToken,
    socket: std::path::PathBuf,
}

/// `toolgate-app connect [--profile NAME] [--data-dir DIR] [--no-start] [--wait SECONDS]`, the
/// same shim as `toolgate connect`; returns the exit code.
pub fn connect(args: &[String]) -> i32 {
    let usage = "usage: toolgate-app connect [--profile NAME] [--data-dir DIR] [--no-start] [--wait SECONDS]";
    let mut options = toolgate_gateway::shim::ConnectOptions {
        socket: std::path::PathBuf::new(),
        profile: None,
        app: std::env::current_exe().ok(),
        wait: std::time::Duration::from_secs(30),
    };
    let mut data_dir = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.clone().next()) {
            ("--profile", Some(v)) => options.profile = Some(v.clone()),
            ("--data-dir", Some(v)) => data_dir = Some(std::path::PathBuf::from(v)),
            ("--wait", Some(v)) => match v.parse() {
                Ok(s) => options.wait = std::time::Duration::from_secs(s),
                Err(_) => {
                    eprintln!("toolgate-app connect: --wait takes a number of seconds\n{usage}");
                    return 2;
                }
            },
            ("--no-start", _) => {
                options.app = None;
                continue;
            }
            _ => {
                eprintln!("toolgate-app connect: unexpected {arg:?}\n{usage}");
                return 2;
            }
        }
        args.next();
    }
    let Some(data_dir) = data_dir.or_else(toolgate_host::default_data_dir) else {
        eprintln!("toolgate-app connect: neither XDG_DATA_HOME nor HOME is set; pass --data-dir");
        return 2;
    };
    options.socket = toolgate_gateway::socket_path(&data_dir);
    match toolgate_gateway::shim::connect(options) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("toolgate-app connect: {e}");
            1
        }
    }
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
        // Registered first, as the plugin asks: a second launch only brings this window forward.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            tray::show_window(app)
        }))
        .plugin(tauri_plugin_notification::init())
        // The window's remembered state (`ui_state.rs`); the web-view has no store permission.
        .plugin(tauri_plugin_store::Builder::new().build())
        // Opens the log folder for the user; the web-view has no opener permission.
        .plugin(tauri_plugin_opener::init())
        // Started at login, Toolgate opens in the tray only (`--hidden`).
        .plugin(
            tauri_plugin_autostart::Builder::new()
                .app_name("Toolgate")
                .args(["--hidden"])
                .build(),
        )
        .register_uri_scheme_protocol(apps::SCHEME, apps::serve)
        .setup(|app| {
            app.manage(apps::Apps::default());
            let state = AppState::load(app.handle())?;
            let servers = state.servers.clone();
            app.manage(state);

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

            ui_state::restore_window(app.handle());
            tray::create(app.handle())?;
            if std::env::args().any(|a| a == "--hidden") {
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
            commands::list_servers,
            commands::restart_server,
            commands::call_tool,
            commands::get_provider,
            commands::set_provider,
            commands::set_api_key,
            commands::clear_api_key,
            commands::send_message,
            commands::answer_approval,
            commands::pending_approvals,
            commands::reset_conversation,
            commands::tool_catalog,
            commands::stop_turn,
            commands::approval_rules,
            commands::revoke_rule,
            commands::set_paused,
            commands::answer_all,
            commands::audit_log,
            commands::set_approval_options,
            commands::export_audit,
            commands::current_conversation,
            commands::list_conversations,
            commands::open_conversation,
            commands::rename_conversation,
            commands::delete_conversation,
            commands::list_secrets,
            commands::set_secret,
            commands::clear_secret,
            commands::startup_notices,
            commands::import_sources,
            commands::preview_import,
            commands::apply_import,
            commands::export_servers,
            commands::set_server_enabled,
            commands::remove_server,
            commands::server_log,
            commands::set_tool_enabled,
            commands::set_server_roots,
            commands::provider_presets,
            commands::list_models,
            commands::diagnostics,
            commands::tool_settings,
            commands::set_tool_settings,
            commands::read_resource,
            commands::start_at_login,
            commands::set_start_at_login,
            commands::server_config,
            commands::update_server,
            commands::list_hosts,
            commands::preview_host,
            commands::connect_host,
            commands::undo_host,
            confinement::set_server_sandbox,
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
            if let Some(state) = handle.try_state::<AppState>() {
                // Waiting requests refused, servers stopped, the history's queue committed.
                tauri::async_runtime::block_on(state.host.shutdown("Toolgate is quitting"));
            }
        }
    });
}
