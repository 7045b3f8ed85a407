//! What the window remembers between runs, which is not a setting: the window's size and
//! place, the last screen, panel sizes, dismissed notices, unsent drafts, each chat's choice
//! of servers and the light or dark look chosen. Kept by `tauri-plugin-store` in `ui-state.json` in the data folder; the
//! settings stay in their own atomically written file.
//!
//! The web-view is given none of the store plugin's permissions: its commands take any path
//! (resolved against the data folder, where `settings.json` lives too), so a web-view allowed
//! them could rewrite the approval rules. It reads and writes this state only through
//! [`ui_state`] and [`set_ui_state`], which know one file and a fixed list of keys.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tauri::{AppHandle, Manager, PhysicalPosition, PhysicalSize, Runtime, Window};
use tauri_plugin_store::{Store, StoreExt};

use crate::error::CommandError;

/// The file, in the data folder.
pub const FILE: &str = "ui-state.json";

/// The keys the web-view may read and write. The window's geometry (`window`) is the backend's
/// own: the web-view may read it, never write it.
const WEB_VIEW_KEYS: &[&str] = &[
    "screen",
    "settingsSection",
    "panels",
    "dismissed",
    "drafts",
    "chatServers",
    "theme",
];

/// The largest value the web-view may store under one key (drafts are the big ones).
const MAX_VALUE_BYTES: usize = 512 * 1024;

/// The window's size and place, in physical pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Geometry {
    pub width: u32,
    pub height: u32,
    pub x: i32,
    pub y: i32,
    #[serde(default)]
    pub maximized: bool,
}

/// The store; a file that cannot be read is set aside (the state is only remembered
/// convenience) and a new one started.
fn open<R: Runtime>(app: &AppHandle<R>) -> Result<Arc<Store<R>>, CommandError> {
    match app.store(FILE) {
        Ok(store) => Ok(store),
        Err(first) => {
            tracing::warn!("{FILE} could not be read ({first}); starting it afresh");
            if let Ok(dir) = app.path().app_data_dir() {
                let _ = std::fs::rename(dir.join(FILE), dir.join("ui-state.unreadable.json"));
            }
            app.store(FILE).map_err(|e| CommandError {
                kind: "internal",
                message: format!("the window's remembered state cannot be kept: {e}"),
            })
        }
    }
}

/// Everything remembered, for the web-view at start.
#[tauri::command]
pub async fn ui_state<R: Runtime>(app: AppHandle<R>) -> Result<Map<String, Value>, CommandError> {
    let store = open(&app)?;
    Ok(store
        .entries()
        .into_iter()
        .filter(|(key, _)| WEB_VIEW_KEYS.contains(&key.as_str()) || key == "window")
        .collect())
}

/// Whether the web-view may keep `value` under `key`: one of its keys, not too large.
fn allowed(key: &str, value: &Value) -> Result<(), CommandError> {
    if !WEB_VIEW_KEYS.contains(&key) {
        return Err(CommandError {
            kind: "internal",
            message: format!("the window does not keep “{key}”"),
        });
    }
    if value.to_string().len() > MAX_VALUE_BYTES {
        return Err(CommandError {
            kind: "internal",
            message: format!(
                "“{key}” is too large to remember (over {} KiB)",
                MAX_VALUE_BYTES / 1024
            ),
        });
    }
    Ok(())
}

/// Remembers one value (`null` forgets it). Saved shortly after, and at exit.
#[tauri::command]
pub async fn set_ui_state<R: Runtime>(
    app: AppHandle<R>,
    key: String,
    value: Value,
) -> Result<(), CommandError> {
    allowed(&key, &value)?;
    let store = open(&app)?;
    if value.is_null() {
        store.delete(&key);
    } else {
        store.set(key, value);
    }
    Ok(())
}

/// Puts the window where it was last time: its size, and its place when that is still on a
/// monitor (a monitor may have been unplugged since).
pub fn restore_window<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window("main") else {
        return;
    };
    let Some(saved) = open(app)
        .ok()
        .and_then(|store| store.get("window"))
        .and_then(|v| serde_json::from_value::<Geometry>(v).ok())
    else {
        return;
    };
    if saved.width < 200 || saved.height < 200 {
        return;
    }
    let monitors = window.available_monitors().unwrap_or_default();
    // A size larger than every monitor now attached (a bigger screen was unplugged) is not
    // restored: the window would open partly out of reach.
    let fits = monitors.is_empty()
        || monitors
            .iter()
            .any(|m| saved.width <= m.size().width && saved.height <= m.size().height);
    if fits {
        let _ = window.set_size(PhysicalSize::new(saved.width, saved.height));
    }
    let on_screen = {
        monitors.iter().any(|m| {
            let (at, size) = (m.position(), m.size());
            let right =
                at.x.saturating_add(i32::try_from(size.width).unwrap_or(i32::MAX));
            let bottom =
                at.y.saturating_add(i32::try_from(size.height).unwrap_or(i32::MAX));
            saved.x >= at.x && saved.x < right && saved.y >= at.y && saved.y < bottom
        })
    };
    if on_screen {
        let _ = window.set_position(PhysicalPosition::new(saved.x, saved.y));
    }
    if saved.maximized {
        let _ = window.maximize();
    }
}

/// Remembers the window's size and place after it moved or was resized. A maximized window
/// keeps the size it had before, to return to it.
pub fn remember_window<R: Runtime>(window: &Window<R>) {
    let app = window.app_handle();
    let Ok(store) = open(app) else { return };
    let maximized = window.is_maximized().unwrap_or(false);
    if window.is_minimized().unwrap_or(false) {
        return;
    }
    let previous = store
        .get("window")
        .and_then(|v| serde_json::from_value::<Geometry>(v).ok());
    let geometry = match (maximized, previous) {
        (true, Some(previous)) => Geometry {
            maximized,
            ..previous
        },
        _ => {
            let (Ok(size), Ok(at)) = (window.inner_size(), window.outer_position()) else {
                return;
            };
            Geometry {
                width: size.width,
                height: size.height,
                x: at.x,
                y: at.y,
                maximized,
            }
        }
    };
    if previous != Some(geometry) {
        if let Ok(value) = serde_json::to_value(geometry) {
            store.set("window", value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_web_view_keeps_only_its_own_keys_and_small_values() {
        assert!(allowed("screen", &json!("activity")).is_ok());
        assert!(allowed("drafts", &json!({"new": "half a thought"})).is_ok());
        // The window's geometry is the backend's; settings are never kept here.
        for key in ["window", "settings", "policy", "../settings.json"] {
            let err = allowed(key, &json!({})).unwrap_err();
            assert!(err.message.contains("does not keep"), "{}", err.message);
        }
        let huge = json!({"new": "x".repeat(MAX_VALUE_BYTES)});
        assert!(allowed("drafts", &huge)
            .unwrap_err()
            .message
            .contains("too large"));
    }
}
