//! How WebKitGTK paints the window, chosen before its web process starts (Linux only; macOS
//! and Windows draw with their own web-views).
//!
//! WebKitGTK paints a page's tiles with Skia, by default on a GPU painting thread that keeps its
//! own GL context and Skia's caches, beside a CPU painting thread. Toolgate's window is text and
//! forms, which the CPU paints as well; painting every tile on the CPU (the tiles are still
//! composited on the GPU, and WebKitGTK painted on the CPU alone until 2.46) keeps about 25 MiB
//! out of the web process idle, more after a walk through the screens (BENCHMARKS.md §4).
//! Whoever sets one of WebKit's own `WEBKIT_SKIA_*` variables keeps that choice.

use std::ffi::OsStr;

/// WebKit's variable for its GPU painting threads: `0` paints every tile on the CPU threads.
const GPU_PAINTING_THREADS: &str = "WEBKIT_SKIA_GPU_PAINTING_THREADS";

/// The variable to set and its value, unless the environment (its variables' names) already
/// holds a choice of WebKit's painter.
fn choice<'a>(mut names: impl Iterator<Item = &'a OsStr>) -> Option<(&'static str, &'static str)> {
    let chosen = names.any(|name| name.to_string_lossy().starts_with("WEBKIT_SKIA_"));
    (!chosen).then_some((GPU_PAINTING_THREADS, "0"))
}

/// Sets the painter for the web process to inherit. Called first thing, before any thread
/// starts, so nothing reads the environment while it changes.
pub fn choose() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let names: Vec<_> = std::env::vars_os().map(|(name, _)| name).collect();
    if let Some((name, value)) = choice(names.iter().map(|n| n.as_os_str())) {
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
    fn tiles_are_painted_on_the_cpu_unless_the_user_chose_a_painter() {
        assert_eq!(
            choice(names(&["PATH", "HOME", "WEBKIT_DISABLE_DMABUF_RENDERER"]).into_iter()),
            Some(("WEBKIT_SKIA_GPU_PAINTING_THREADS", "0"))
        );
        for own in [
            "WEBKIT_SKIA_GPU_PAINTING_THREADS",
            "WEBKIT_SKIA_ENABLE_CPU_RENDERING",
            "WEBKIT_SKIA_CPU_PAINTING_THREADS",
        ] {
            assert_eq!(
                choice(names(&["PATH", own]).into_iter()),
                None,
                "{own} is the user's choice"
            );
        }
    }
}
