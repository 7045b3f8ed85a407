//! How WebKitGTK paints the window, chosen before its web process starts (Linux only; macOS
//! and Windows draw with their own web-views).
//!
//! WebKitGTK 2.50 paints a page's tiles with Skia, by default on a GPU painting thread that keeps
//! its own GL context and Skia's caches, beside CPU painting threads. Toolgate's window is text and
//! forms; with the GPU painting threads at 0, 2.50 paints every tile on its CPU threads (the tiles
//! are still composited on the GPU, and WebKitGTK painted on the CPU alone until 2.46). Measured
//! under Xvfb with Mesa's software GL on two cores, that keeps 25 MiB out of the web process idle,
//! more after a walk through the screens (BENCHMARKS.md §4).
//!
//! Only on 2.50, the release measured: in 2.46 and 2.48 the same 0 means GPU painting on the web
//! process's main thread (WebKit's own note, and early 2.48 releases crashed on it), and a later
//! release may change it again. Whoever sets one of WebKit's own `WEBKIT_SKIA_*` variables keeps
//! that choice. The processes Toolgate starts (its servers, the browser it opens) inherit the
//! variable; for a WebKitGTK program among them it means the same CPU painting, nothing else.

use std::ffi::OsStr;

/// WebKit's variable for its GPU painting threads.
const GPU_PAINTING_THREADS: &str = "WEBKIT_SKIA_GPU_PAINTING_THREADS";

/// The WebKitGTK release (major, minor) whose painting was measured.
const MEASURED: (u32, u32) = (2, 50);

/// The variable to set and its value, given the environment's variable names and the WebKitGTK
/// release loaded: none unless it is the measured one and no painter was chosen by the user.
fn choice<'a>(
    mut names: impl Iterator<Item = &'a OsStr>,
    webkit: (u32, u32),
) -> Option<(&'static str, &'static str)> {
    if webkit != MEASURED {
        return None;
    }
    let chosen = names.any(|name| name.to_string_lossy().starts_with("WEBKIT_SKIA_"));
    (!chosen).then_some((GPU_PAINTING_THREADS, "0"))
}

/// The WebKitGTK release the app runs with (the library loaded, not the one it was built with).
#[allow(unsafe_code)]
fn webkit_version() -> (u32, u32) {
    // SAFETY: both functions take no argument and return constants of the loaded library; they
    // need no initialisation and touch no state.
    unsafe {
        (
            webkit2gtk_sys::webkit_get_major_version(),
            webkit2gtk_sys::webkit_get_minor_version(),
        )
    }
}

/// Sets the painter for the web process to inherit. Called first thing, before any thread
/// starts, so nothing reads the environment while it changes.
pub fn choose() {
    let names: Vec<_> = std::env::vars_os().map(|(name, _)| name).collect();
    if let Some((name, value)) = choice(names.iter().map(|n| n.as_os_str()), webkit_version()) {
        std::env::set_var(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&'static str]) -> Vec<&'static OsStr> {
        list.iter().map(|name| OsStr::new(*name)).collect()
    }

    #[test]
    fn on_the_measured_release_tiles_are_painted_on_the_cpu_unless_the_user_chose() {
        let plain = names(&["PATH", "HOME", "WEBKIT_DISABLE_DMABUF_RENDERER"]);
        assert_eq!(
            choice(plain.clone().into_iter(), (2, 50)),
            Some(("WEBKIT_SKIA_GPU_PAINTING_THREADS", "0"))
        );
        for own in [
            "WEBKIT_SKIA_GPU_PAINTING_THREADS",
            "WEBKIT_SKIA_ENABLE_CPU_RENDERING",
            "WEBKIT_SKIA_CPU_PAINTING_THREADS",
        ] {
            assert_eq!(
                choice(names(&["PATH", own]).into_iter(), (2, 50)),
                None,
                "{own} is the user's choice"
            );
        }
        for other in [(2, 46), (2, 48), (2, 52), (3, 0)] {
            assert_eq!(
                choice(plain.clone().into_iter(), other),
                None,
                "{other:?} was not measured"
            );
        }
    }

    #[test]
    fn the_loaded_webkit_is_a_2_x_release() {
        let (major, minor) = webkit_version();
        assert_eq!(major, 2);
        assert!(minor >= 40, "WebKitGTK 2.{minor}");
    }
}
