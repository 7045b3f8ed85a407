// Keeps a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // `toolgate-app connect …`: the stdio shim other hosts launch, for installs that have the
    // app but not the `toolgate` CLI. No window, no Tauri.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("connect") {
        std::process::exit(toolgate_app::connect(&args[1..]));
    }
    toolgate_app::run();
}
