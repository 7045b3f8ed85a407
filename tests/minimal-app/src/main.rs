//! The smallest Tauri app: one window with a static page, nothing else. `benches/memory.rs`
//! measures Toolgate's app beside it, so the table shows what Toolgate adds to what any Tauri
//! app on WebKitGTK costs. Build it as a production app (the page embedded, not a dev server):
//! `cargo build --release -p toolgate-minimal-app --features tauri/custom-protocol`.

// No console window next to it on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    if let Err(e) = tauri::Builder::default().run(tauri::generate_context!()) {
        eprintln!("the minimal app could not start: {e}");
        std::process::exit(1);
    }
}
