//! Makes the window's command surface from `src-tauri/commands/` (see `command_list.rs`): the
//! handler list `lib.rs` includes, a permission per command, and the main window's capability
//! allowing exactly those, read by `tauri-build` from `OUT_DIR`.

#[path = "command_list.rs"]
#[allow(dead_code)]
mod command_list;

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let dir = manifest.join("src-tauri/commands");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=src-tauri/command_list.rs");
    let commands = match command_list::read(&dir) {
        Ok(commands) => commands,
        Err(e) => {
            eprintln!("the window's commands cannot be read: {e}");
            std::process::exit(1);
        }
    };
    write(&out.join("handlers.rs"), &command_list::handlers(&commands));
    let capabilities = out.join("capabilities");
    write(
        &capabilities.join("main-window.json"),
        &command_list::capability(&commands),
    );
    let names: Vec<&'static str> = commands
        .iter()
        .map(|c| &*Box::leak(c.name.clone().into_boxed_str()))
        .collect();
    let pattern: &'static str =
        Box::leak(format!("{}/*.json", capabilities.display()).into_boxed_str());
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern(pattern)
        .app_manifest(
            tauri_build::AppManifest::new().commands(Box::leak(names.into_boxed_slice())),
        );
    if let Err(e) = tauri_build::try_build(attributes) {
        eprintln!("tauri-build failed: {e:#}");
        std::process::exit(1);
    }
}

/// Writes `text` to `path` only when it differs, so an unchanged file keeps its time.
fn write(path: &std::path::Path, text: &str) {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("OUT_DIR is writable");
    }
    std::fs::write(path, text).expect("OUT_DIR is writable");
}
