//! The tray icon: Toolgate keeps running there when its window is closed. Its menu and state
//! come from `toolgate_agent::tray` (tested there); this file only renders them and does each
//! action through the same calls the window's commands use.

use tauri::image::Image;
use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};
use toolgate_agent::tray::{self, Action, Item, ServerLine, TrayState};
use toolgate_agent::{Asking, Decision, PendingCall};
use toolgate_mcp::ServerStatus;

use crate::state::AppState;

const TRAY_ID: &str = "main";

/// The menu the tray shows now.
static SHOWN: std::sync::Mutex<Vec<Item>> = std::sync::Mutex::new(Vec::new());

fn entry<R: Runtime>(app: &AppHandle<R>, item: &Item) -> tauri::Result<Box<dyn IsMenuItem<R>>> {
    Ok(match item {
        Item::Label(text) => Box::new(MenuItem::new(app, text, false, None::<&str>)?),
        Item::Action { id, label } => {
            Box::new(MenuItem::with_id(app, id, label, true, None::<&str>)?)
        }
        Item::Submenu { label, items } => {
            let children = items
                .iter()
                .map(|i| entry(app, i))
                .collect::<tauri::Result<Vec<_>>>()?;
            let refs: Vec<&dyn IsMenuItem<R>> = children.iter().map(|c| c.as_ref()).collect();
            Box::new(Submenu::with_items(app, label, true, &refs)?)
        }
        Item::Separator => Box::new(PredefinedMenuItem::separator(app)?),
    })
}

fn render<R: Runtime>(app: &AppHandle<R>, items: &[Item]) -> tauri::Result<Menu<R>> {
    let menu = Menu::new(app)?;
    for item in items {
        menu.append(entry(app, item)?.as_ref())?;
    }
    Ok(menu)
}

pub fn create<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let mut icon = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("Toolgate")
        .menu(&render(
            app,
            &tray::menu(&[], &[], false, Asking::default()),
        )?)
        .show_menu_on_left_click(false)
        .on_menu_event(|app, event| {
            if let Some(action) = Action::parse(event.id().as_ref()) {
                act(app, action);
            }
        })
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                show_window(tray.app_handle());
            }
        });
    if let Some(image) = app.default_window_icon() {
        icon = icon.icon(image.clone());
    }
    icon.build(app)?;
    Ok(())
}

fn act<R: Runtime>(app: &AppHandle<R>, action: Action) {
    let state = app.state::<AppState>();
    match action {
        Action::Approve(id) => answer(&state, &id, Decision::Approve),
        Action::Deny(id) => answer(
            &state,
            &id,
            Decision::Deny {
                reason: Some("denied from the tray".to_owned()),
            },
        ),
        Action::Open => show_window(app),
        Action::SignIn(server) => {
            // The browser does the rest; the server's card and this menu follow its status.
            let host = state.host.clone();
            tauri::async_runtime::spawn(async move {
                let result = host
                    .sign_in(
                        &server,
                        Vec::new(),
                        None,
                        toolgate_host::SIGN_IN_WAIT,
                        &|_| {},
                        &toolgate_oauth::open_in_browser,
                    )
                    .await;
                if let Err(e) = result {
                    tracing::warn!(%server, "sign-in from the tray failed: {e}");
                }
            });
        }
        Action::SetPaused(paused) => {
            if let Err(e) = state.set_paused(paused) {
                tracing::error!("could not change the pause from the tray: {e}");
            }
            let app = app.clone();
            tauri::async_runtime::spawn(async move { refresh(&app).await });
        }
        // Exiting runs the Exit handler in lib.rs, which stops every server first.
        Action::Quit => app.exit(0),
    }
}

fn answer(state: &AppState, id: &str, decision: Decision) {
    // Already answered elsewhere (the window) is fine: the first answer won.
    if let Err(e) = state.approvals().answer(id, decision) {
        tracing::info!("tray answer not taken: {e}");
    }
}

fn server_lines(snapshot: &[toolgate_mcp::ServerSnapshot]) -> Vec<ServerLine> {
    snapshot
        .iter()
        .filter(|s| s.enabled)
        .map(|s| ServerLine {
            name: s.name.clone(),
            status: match &s.status {
                ServerStatus::Ready => "ready".into(),
                ServerStatus::Starting => "starting".into(),
                ServerStatus::Stopped => "stopped".into(),
                ServerStatus::Restarting { attempt, .. } => {
                    format!("restarting (attempt {attempt})")
                }
                ServerStatus::Failed { reason } => {
                    let short: String = reason.chars().take(60).collect();
                    format!("failed: {short}")
                }
                ServerStatus::SignIn { again: false, .. } => "sign in required".into(),
                ServerStatus::SignIn { again: true, .. } => "sign in again".into(),
            },
            failed: matches!(s.status, ServerStatus::Failed { .. }),
            sign_in: matches!(s.status, ServerStatus::SignIn { .. }).then(|| s.id.clone()),
        })
        .collect()
}

/// The icon with a dot in its corner: amber while a request waits, red when a server failed,
/// grey when tools are paused.
fn badged(base: &Image<'_>, state: TrayState) -> Option<Image<'static>> {
    let color = match state {
        TrayState::Waiting => [0xd9, 0x8a, 0x00],
        TrayState::ServerFailed => [0xcf, 0x22, 0x2e],
        TrayState::Paused => [0x6e, 0x77, 0x81],
        TrayState::Idle => return None,
    };
    let (width, height) = (base.width(), base.height());
    let mut rgba = base.rgba().to_vec();
    let radius = f64::from(width.min(height)) * 0.22;
    let (cx, cy) = (f64::from(width) - radius, f64::from(height) - radius);
    for y in 0..height {
        for x in 0..width {
            let (dx, dy) = (f64::from(x) + 0.5 - cx, f64::from(y) + 0.5 - cy);
            if dx * dx + dy * dy <= radius * radius {
                let i = ((y * width + x) * 4) as usize;
                rgba[i..i + 3].copy_from_slice(&color);
                rgba[i + 3] = 0xff;
            }
        }
    }
    Some(Image::new_owned(rgba, width, height))
}

/// Rebuilds the menu, tooltip and icon from the waiting requests, the servers and the pause;
/// called whenever one of them changes.
pub async fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let Some(icon) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    let state = app.state::<AppState>();
    let waiting: Vec<PendingCall> = state.approvals().waiting();
    let servers = server_lines(&state.servers().snapshot().await);
    let (paused, model) = {
        let settings = state.settings();
        (settings.policy.paused, settings.provider.model.clone())
    };
    let items = tray::menu(&waiting, &servers, paused, Asking::now(Some(&model)));
    // Set only when it changed: a menu set anew closes one the user has open.
    let mut shown = SHOWN.lock().unwrap_or_else(|p| p.into_inner());
    if *shown != items {
        match render(app, &items) {
            Ok(menu) => {
                let _ = icon.set_menu(Some(menu));
                *shown = items;
            }
            Err(e) => tracing::warn!("could not update the tray menu: {e}"),
        }
    }
    drop(shown);
    let _ = icon.set_tooltip(Some(tray::tooltip(&waiting, &servers, paused)));
    if let Some(base) = app.default_window_icon() {
        let image = badged(base, tray::state(&waiting, &servers, paused))
            .unwrap_or_else(|| base.clone().to_owned());
        let _ = icon.set_icon(Some(image));
    }
}

pub fn show_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}
