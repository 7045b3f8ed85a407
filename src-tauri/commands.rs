//! The commands the web-view may call, one module per domain. Each adapts a `Host` call (through
//! `AppState`, which derefs to it) and holds no logic of its own beyond window glue: what is on
//! screen, events to the window, Tauri's paths and plugins. Errors are `crate::error::CommandError`.

pub mod approvals;
pub mod apps;
pub mod chat;
pub mod confinement;
pub mod content;
pub mod door;
pub mod hosts;
pub mod import;
pub mod install_link;
pub mod provider;
pub mod secrets;
pub mod servers;
pub mod sign_in;
pub mod system;
pub mod ui_state;
