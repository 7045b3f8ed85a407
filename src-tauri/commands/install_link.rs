//! `toolgate://install?…` links: the OS hands one to Toolgate (a launch with the link, or a
//! second launch forwarded by the single-instance plugin), and the window opens its Add server
//! dialog filled in with the server the link holds, showing the exact command. Nothing is added
//! until the user clicks; a link that cannot be read is shown with what was wrong.
//!
//! The link waits here until the window takes it (`pending_install_link`), so one that arrives
//! before the window listens is not lost.

use std::sync::Mutex;

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, Runtime, State};
use toolgate_hosts::import::{read_install_link, InstallLink};

/// The event a link arrives on.
pub const INSTALL_LINK: &str = "install-link";

/// A link as the window gets it: the server it holds, or why it could not be read.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct LinkOffer {
    pub link: Option<InstallLink>,
    pub problem: Option<String>,
}

/// The last link not yet taken by the window.
#[derive(Default)]
pub struct PendingLink(Mutex<Option<LinkOffer>>);

fn is_link(text: &str) -> bool {
    text.get(..11)
        .is_some_and(|p| p.eq_ignore_ascii_case("toolgate://"))
}

/// Reads `url` and hands it to the window (shown and brought forward).
pub fn received<R: Runtime>(app: &AppHandle<R>, url: &str) {
    if !is_link(url) {
        return;
    }
    let offer = match read_install_link(url) {
        Ok(link) => LinkOffer {
            link: Some(link),
            problem: None,
        },
        Err(e) => LinkOffer {
            link: None,
            problem: Some(e.to_string()),
        },
    };
    tracing::info!(read = offer.link.is_some(), "an install link arrived");
    if let Some(pending) = app.try_state::<PendingLink>() {
        *pending.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(offer.clone());
    }
    crate::tray::show_window(app);
    let _ = app.emit(INSTALL_LINK, offer);
}

/// Listens for links and reads the one this launch was given, if any.
pub fn listen<R: Runtime>(app: &tauri::App<R>) {
    use tauri_plugin_deep_link::DeepLinkExt;
    app.manage(PendingLink::default());
    let handle = app.handle().clone();
    app.deep_link().on_open_url(move |event| {
        for url in event.urls() {
            received(&handle, url.as_str());
        }
    });
    let mut given: Vec<String> = app
        .deep_link()
        .get_current()
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .map(|u| u.to_string())
        .collect();
    // Also the launch's own arguments, where the plugin does not read them (a development run).
    given.extend(std::env::args().skip(1).filter(|a| is_link(a)));
    given.dedup();
    for url in given {
        received(app.handle(), &url);
    }
}

/// The link waiting for the window, taken (so it opens one dialog once).
#[tauri::command]
pub fn pending_install_link(pending: State<'_, PendingLink>) -> Option<LinkOffer> {
    pending.0.lock().unwrap_or_else(|p| p.into_inner()).take()
}
