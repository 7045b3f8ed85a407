//! Starting at login (`tauri-plugin-autostart`): what Toolgate registers, as plain values so they
//! are tested on every platform.
//!
//! On macOS the plugin's launch agent (auto-launch) writes `~/Library/LaunchAgents/<NAME>.plist`
//! with the label [`NAME`], `RunAtLoad`, and `ProgramArguments`: the executable inside the app
//! bundle, then [`ARGS`]. It splices them into the XML unescaped. Not run on a Mac.

use tauri::plugin::TauriPlugin;
use tauri::Runtime;
use tauri_plugin_autostart::MacosLauncher;

/// The login item's name: the launch agent's label and file name on macOS, the `Run` value on
/// Windows, the `.desktop` file on Linux.
pub const NAME: &str = "Toolgate";
/// Started at login, Toolgate opens in the tray only.
pub const HIDDEN: &str = "--hidden";
pub const ARGS: [&str; 1] = [HIDDEN];
/// macOS: a launch agent, which passes [`ARGS`] to the executable. An AppleScript login item
/// would start the bundle with no arguments (only hiding the app's windows for `--hidden`).
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub const MACOS_LAUNCHER: MacosLauncher = MacosLauncher::LaunchAgent;

/// The plugin, as Toolgate configures it.
pub fn plugin<R: Runtime>() -> TauriPlugin<R> {
    let builder = tauri_plugin_autostart::Builder::new()
        .app_name(NAME)
        .args(ARGS);
    #[cfg(target_os = "macos")]
    let builder = builder.macos_launcher(MACOS_LAUNCHER);
    builder.build()
}

/// Whether this launch is the one at login (`args` as `std::env::args()` gives them): the
/// window then stays hidden.
pub fn started_hidden<S: AsRef<str>>(args: impl IntoIterator<Item = S>) -> bool {
    args.into_iter().any(|a| a.as_ref() == HIDDEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macos_starts_the_executable_with_the_hidden_flag_by_a_launch_agent() {
        assert!(matches!(MACOS_LAUNCHER, MacosLauncher::LaunchAgent));
        // What the launch agent runs: the executable in the bundle, then the arguments.
        let at_login: Vec<&str> = ["/Applications/Toolgate.app/Contents/MacOS/toolgate-app"]
            .into_iter()
            .chain(ARGS)
            .collect();
        assert!(started_hidden(&at_login));
        assert!(!started_hidden([
            "/Applications/Toolgate.app/Contents/MacOS/toolgate-app"
        ]));
        assert!(!started_hidden([
            "/Applications/Toolgate.app/Contents/MacOS/toolgate-app",
            "toolgate://install?name=x",
        ]));
    }

    #[test]
    fn the_name_and_arguments_fit_a_launch_agents_plist_and_file_name() {
        // auto-launch writes them into the XML as they are, and the name into the file's name.
        for text in std::iter::once(NAME).chain(ARGS) {
            assert!(!text.is_empty());
            assert!(
                !text.contains(['<', '>', '&', '"', '\'']),
                "{text} would break the plist"
            );
        }
        assert!(!NAME.contains(['/', ':']), "{NAME} is a file name");
        assert_eq!(
            NAME, "Toolgate",
            "another name leaves the old login item behind"
        );
    }
}
