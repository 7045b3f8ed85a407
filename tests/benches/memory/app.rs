//! The whole app's memory: Toolgate's window app idle with five servers, beside the smallest
//! Tauri app (`tests/minimal-app`), both release builds with their pages embedded, both under
//! the display and session the benchmark runs in (`scripts/bench.sh` gives it Xvfb, a D-Bus
//! session and an unlocked keyring, as the test command does).
//!
//! Measured from `/proc/<pid>/smaps_rollup`, after [`SETTLE`] idle: the main process's
//! `Pss_Anon` (its own heap and stacks, shared pages split among their users) and the whole
//! app's `Pss`: the main process plus its WebKit processes (`WebKitWebProcess`,
//! `WebKitNetworkProcess`, …), the MCP servers left out (they are not the app's, and the table
//! of the backend shows them apart).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use toolgate_settings::{ServerConfig, Settings};
use toolgate_tests::{children_of, is_alive, repo_root, wait_until_none};

/// Idle time after start-up before measuring: the servers are ready and the page has settled.
pub const SETTLE: Duration = Duration::from_secs(15);

/// One app's figures, in bytes.
pub struct AppMemory {
    pub main_pss_anon: u64,
    pub main_pss: u64,
    pub webkit_pss: u64,
    pub webkit_processes: usize,
    /// `WEBKIT_SKIA_GPU_PAINTING_THREADS` as the web process got it (`src-tauri/painter.rs`
    /// sets it to 0 for Toolgate's window), if it got one.
    pub gpu_painting_threads: Option<String>,
}

impl AppMemory {
    pub fn whole(&self) -> u64 {
        self.main_pss + self.webkit_pss
    }
}

/// The release binaries, if built (see `scripts/bench.sh`).
pub fn binaries() -> Option<(PathBuf, PathBuf)> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    let app = target.join("release/toolgate-app");
    let minimal = target.join("release/toolgate-minimal-app");
    (app.is_file() && minimal.is_file()).then_some((app, minimal))
}

/// A field of `/proc/<pid>/smaps_rollup`, in bytes.
fn rollup(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// A variable of `pid`'s environment.
fn env_of(pid: u32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ.split(|b| *b == 0).find_map(|entry| {
        let entry = String::from_utf8_lossy(entry);
        Some(entry.strip_prefix(name)?.strip_prefix('=')?.to_owned())
    })
}

fn name_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim().to_owned())
        .unwrap_or_default()
}

/// Every live descendant of `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        for child in children_of(parent) {
            all.push(child);
            next.push(child);
        }
    }
    all
}

/// The app whose main process is `pid`, as it is now: its own PSS and its WebKit processes'.
pub fn snapshot(pid: u32) -> AppMemory {
    let webkit: Vec<u32> = descendants(pid)
        .into_iter()
        .filter(|p| name_of(*p).starts_with("WebKit"))
        .collect();
    AppMemory {
        main_pss_anon: rollup(pid, "Pss_Anon"),
        main_pss: rollup(pid, "Pss"),
        webkit_pss: webkit.iter().map(|p| rollup(*p, "Pss")).sum(),
        webkit_processes: webkit.len(),
        gpu_painting_threads: webkit
            .iter()
            .find(|p| name_of(**p).starts_with("WebKitWeb"))
            .and_then(|p| env_of(*p, PAINTER)),
    }
}

/// How many of `pid`'s descendants are not WebKit's: the servers it started.
pub fn servers_of(pid: u32) -> usize {
    descendants(pid)
        .into_iter()
        .filter(|p| !name_of(*p).starts_with("WebKit"))
        .count()
}

async fn measure(mut process: Child, wait_for_servers: usize) -> AppMemory {
    let pid = process.id();
    // The servers start with the app; wait for them (their processes), then idle.
    for _ in 0..300 {
        if servers_of(pid) >= wait_for_servers {
            break;
        }
        if matches!(process.try_wait(), Ok(Some(_))) {
            panic!("the app exited while starting");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(SETTLE).await;
    assert!(
        matches!(process.try_wait(), Ok(None)),
        "the app exited while idle"
    );
    let memory = snapshot(pid);
    assert!(
        memory.webkit_processes > 0,
        "no WebKit process: is there a display?"
    );
    let everything = descendants(pid);
    let _ = Command::new("kill").arg(pid.to_string()).status();
    for _ in 0..100 {
        if matches!(process.try_wait(), Ok(Some(_))) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = process.kill();
    let _ = process.wait();
    let left = wait_until_none(10, || {
        everything
            .iter()
            .copied()
            .filter(|p| is_alive(*p))
            .collect()
    })
    .await;
    assert!(left.is_empty(), "processes outlived the app: {left:?}");
    memory
}

/// A fresh data folder in `dir` (`dir/data`, as `XDG_DATA_HOME`) whose settings hold `servers`.
pub fn data_folder(dir: &Path, servers: Vec<ServerConfig>) -> PathBuf {
    let data = dir.join("data");
    let app_dir = data.join("dev.toolgate.desktop");
    std::fs::create_dir_all(&app_dir).expect("data folder");
    let mut settings = Settings::first_run(servers[0].clone());
    settings.servers = servers;
    toolgate_settings::file::save(&app_dir.join("settings.json"), &settings).expect("settings");
    data
}

/// Toolgate's app on a fresh data folder in `dir` with `servers` configured.
pub async fn toolgate(binary: &Path, dir: &Path, servers: Vec<ServerConfig>) -> AppMemory {
    let count = servers.len();
    let data = data_folder(dir, servers);
    let process = Command::new(binary)
        .env("XDG_DATA_HOME", &data)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the app");
    measure(process, count).await
}

/// WebKit's variable that Toolgate's app sets to 0 to paint its tiles on the CPU
/// (`src-tauri/painter.rs`).
pub const PAINTER: &str = "WEBKIT_SKIA_GPU_PAINTING_THREADS";

/// The smallest Tauri app, with `envs` added to its environment.
pub async fn minimal(binary: &Path, dir: &Path, envs: &[(&str, &str)]) -> AppMemory {
    let process = Command::new(binary)
        .envs(envs.iter().copied())
        .env("XDG_DATA_HOME", dir.join("minimal-data"))
        .env("XDG_CONFIG_HOME", dir.join("minimal-config"))
        .env("XDG_CACHE_HOME", dir.join("minimal-cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the minimal app");
    measure(process, 0).await
}
