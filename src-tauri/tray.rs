//! The tray icon: Toolgate keeps running there when its window is closed, and the tool calls
//! waiting for approval can be answered from its menu without opening the window.

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};
use toolgate_agent::{Decision, PendingCall, RequestKind};

use crate::AppState;

const TRAY_ID: &str = "main";

/// The menu: the waiting calls (each with Approve and Deny), then Open and Quit.
fn menu<R: Runtime>(app: &AppHandle<R>, waiting: &[PendingCall]) -> tauri::Result<Menu<R>> {
    let menu = Menu::new(app)?;
    let header = match waiting.len() {
        0 => "Nothing waiting for approval".to_owned(),
        1 => "1 request waiting for approval".to_owned(),
        n => format!("{n} requests waiting for approval"),
    };
    menu.append(&MenuItem::with_id(
        app,
        "header",
        header,
        false,
        None::<&str>,
    )?)?;
    for call in waiting {
        // A server's question needs typed answers: those are given in the window.
        let approve = if call.request == RequestKind::Elicitation {
            MenuItem::with_id(app, "open", "Answer in the window…", true, None::<&str>)?
        } else {
            MenuItem::with_id(
                app,
                format!("approve:{}", call.id),
                "Approve",
                true,
                None::<&str>,
            )?
        };
        let deny = MenuItem::with_id(app, format!("deny:{}", call.id), "Deny", true, None::<&str>)?;
        menu.append(&Submenu::with_items(
            app,
            call.summary(),
            true,
            &[&approve, &deny],
        )?)?;
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    menu.append(&MenuItem::with_id(
        app,
        "open",
        "Open Toolgate",
        true,
        None::<&str>,
    )?)?;
    menu.append(&MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?)?;
    Ok(menu)
}

pub fn create<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let mut tray = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("Toolgate")
        .menu(&menu(app, &[])?)
        .show_menu_on_left_click(false)
        .on_menu_event(|app, event| {
            let id = event.id().as_ref();
            if let Some(call) = id.strip_prefix("approve:") {
                answer(app, call, Decision::Approve);
            } else if let Some(call) = id.strip_prefix("deny:") {
                let reason = Some("denied from the tray".to_owned());
                answer(app, call, Decision::Deny { reason });
            } else if id == "open" {
                show_window(app);
            } else if id == "quit" {
                // Exiting runs the Exit handler in lib.rs, which stops every server first.
                app.exit(0);
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
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

fn answer<R: Runtime>(app: &AppHandle<R>, id: &str, decision: Decision) {
    // Already answered elsewhere (the window) is fine: the first answer won.
    if let Err(e) = app.state::<AppState>().gate.answer(id, decision) {
        tracing::info!("tray answer not taken: {e}");
    }
}

/// Shows the calls waiting now; called whenever the gate's set of waiting calls changes.
pub fn refresh<R: Runtime>(app: &AppHandle<R>, waiting: &[PendingCall]) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    match menu(app, waiting) {
        Ok(menu) => {
            let _ = tray.set_menu(Some(menu));
        }
        Err(e) => tracing::warn!("could not update the tray menu: {e}"),
    }
    let tooltip = match waiting.len() {
        0 => "Toolgate".to_owned(),
        n => format!("Toolgate: {n} waiting for approval"),
    };
    let _ = tray.set_tooltip(Some(tooltip));
}

pub fn show_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}
