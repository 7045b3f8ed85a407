//! Memory: the resident memory (`VmRSS` in `/proc/<pid>/status`, which counts the process alone,
//! not its children) of a backend process idle with five servers connected.
//!
//! The process is `toolgate-test-host` (`src/bin/`, built in release by `cargo bench`): the real
//! `ServerManager` running the servers, nothing else. It is read after it reports every server
//! ready and has then sat idle for [`IDLE`]. Compared, in the same run, with the same host running
//! no server, and with node running the official TypeScript SDK's client connected to the same
//! five servers (`ts_idle_host.cjs`). Target: 40 MB or less.
//!
//! Then the whole app (`app.rs`): Toolgate's window app idle with the same five servers, beside
//! the smallest Tauri app, when both release builds exist and there is a display (`scripts/bench.sh`
//! builds them and gives the benchmarks Xvfb and a D-Bus session): the main process's
//! `Pss_Anon` and the whole app's `Pss` (main + WebKit processes). Target (issue 17): 45 MB or
//! less, reported beside the minimal app.
//!
//! And the whole app after a walk through every screen (`walk.rs`, issue 40), beside the smallest
//! Tauri app, both started by `tauri-driver` (when it is on PATH). Targets (issue 40): idle ≤ 1.2×
//! the smallest Tauri app's whole PSS, after the walk ≤ 1.5×.
//!
//! Run: `cargo bench -p toolgate-tests --bench memory`. Prints tables; asserts only that every
//! server became ready.

#[path = "memory/app.rs"]
mod app;
// The walk drives the window through tauri-driver, on Unix desktops only (as the WebDriver suite).
#[cfg(unix)]
#[path = "memory/walk.rs"]
mod walk;
#[cfg(unix)]
#[path = "../tests/common/webdriver.rs"]
mod webdriver;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;
use toolgate_settings::{ServerConfig, Transport};
use toolgate_tests::bench::{summary, Summary};
use toolgate_tests::{
    children_of, everything_server, example_servers_dir, fault_server, filesystem_server, is_alive,
    python_server_bin, temp_dir, wait_until_none,
};

const IDLE: Duration = Duration::from_secs(5);
/// 40 MB, in bytes.
const TARGET: u64 = 40_000_000;
/// 45 MB, in bytes: the whole app's target.
const APP_TARGET: u64 = 45_000_000;

fn servers(root: &Path) -> Vec<ServerConfig> {
    vec![
        everything_server("everything-1"),
        everything_server("everything-2"),
        filesystem_server("files", root),
        ServerConfig::stdio(
            "time",
            python_server_bin("mcp-server-time").to_string_lossy(),
            ["--local-timezone", "UTC"],
        ),
        fault_server("fault", "ok"),
    ]
}

/// A process's resident memory in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kib * 1024
}

/// Waits for the `ready` line, idles, and returns the process's memory and its children's.
async fn idle_rss(mut process: Child, graceful: bool) -> (u64, u64) {
    let stdout = process.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut statuses = Vec::new();
    loop {
        match lines.next() {
            Some(Ok(line)) if line == "ready" => break,
            Some(Ok(line)) => statuses.push(line),
            _ => panic!("the host ended before it was ready: {statuses:?}"),
        }
    }
    for line in &statuses {
        assert!(line.ends_with(" ready"), "a server did not start: {line}");
    }
    tokio::time::sleep(IDLE).await;
    let pid = process.id();
    let own = rss(pid);
    let servers = children_of(pid);
    let children: u64 = servers.iter().copied().map(rss).sum();
    // Closing stdin ends the node host, which closes its clients; the test host has no other
    // way out than a kill, and its servers go with it (the parent-death signal).
    drop(process.stdin.take());
    for _ in 0..100 {
        if !graceful || matches!(process.try_wait(), Ok(Some(_))) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = process.kill();
    let _ = process.wait();
    let left = wait_until_none(10, || {
        servers.iter().copied().filter(|p| is_alive(*p)).collect()
    })
    .await;
    assert!(left.is_empty(), "servers outlived their host: {left:?}");
    (own, children)
}

async fn toolgate_host(configs: &[ServerConfig], dir: &Path) -> (u64, u64) {
    let file = dir.join(format!("servers-{}.json", configs.len()));
    std::fs::write(&file, serde_json::to_vec(configs).expect("json")).expect("servers file");
    let process = Command::new(env!("CARGO_BIN_EXE_toolgate-test-host"))
        .arg(dir.join("state"))
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start toolgate-test-host");
    idle_rss(process, false).await
}

async fn node_host(configs: &[ServerConfig]) -> (u64, u64) {
    let servers: Vec<_> = configs
        .iter()
        .map(|c| match &c.transport {
            Transport::Stdio { command, args, .. } => {
                json!({"id": c.id, "command": command, "args": args})
            }
            Transport::Http { .. } => unreachable!("stdio servers only"),
        })
        .collect();
    let process = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/ts_idle_host.cjs"))
        .arg(example_servers_dir())
        .arg(serde_json::to_string(&servers).expect("json"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start node");
    idle_rss(process, true).await
}

fn mb(bytes: u64) -> String {
    format!(
        "{:.1} MB ({:.1} MiB)",
        bytes as f64 / 1e6,
        bytes as f64 / 1_048_576.0
    )
}

#[tokio::main]
async fn main() {
    let dir = temp_dir("bench-memory");
    let root = dir.join("files");
    std::fs::create_dir_all(&root).expect("files folder");
    let five = servers(&root);
    let (with_five, five_servers) = toolgate_host(&five, &dir).await;
    let (with_none, _) = toolgate_host(&[], &dir).await;
    let (node, _) = node_host(&five).await;
    let apps = match app::binaries() {
        Some(_) if std::env::var_os("DISPLAY").is_none() => {
            println!(
                "\nThe app's memory needs a display (scripts/bench.sh gives it Xvfb); skipped."
            );
            None
        }
        Some((toolgate, minimal)) => {
            let ours = app::toolgate(&toolgate, &dir.join("app"), servers(&root)).await;
            let theirs = app::minimal(&minimal, &dir.join("minimal"), &[]).await;
            // The same app painting its tiles as Toolgate's web process was told to (read back
            // from it): what the choice of painter alone is worth, apart from Toolgate's page.
            let alike = match ours.gpu_painting_threads.as_deref() {
                Some(threads) => Some(
                    app::minimal(
                        &minimal,
                        &dir.join("minimal-alike"),
                        &[(app::PAINTER, threads)],
                    )
                    .await,
                ),
                None => None,
            };
            let walked = walked(&toolgate, &minimal, &dir, &root).await;
            Some((ours, theirs, alike, walked))
        }
        None => {
            println!(
                "\nThe app's memory needs release builds of the app and the minimal Tauri app; \
                 scripts/bench.sh makes them (or: npm run build in ui/, then cargo build \
                 --release -p toolgate -p toolgate-minimal-app --features tauri/custom-protocol)."
            );
            None
        }
    };
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "\nMemory: VmRSS of the host process alone (children excluded), after every server is \
         ready and {} s idle\n",
        IDLE.as_secs()
    );
    println!("| process | VmRSS | vs node + TypeScript SDK |");
    println!("|---|---:|---:|");
    let ratio = |bytes: u64| bytes as f64 / node as f64;
    for (name, bytes) in [
        (
            "Toolgate backend (`toolgate-test-host`, release), 5 servers",
            with_five,
        ),
        ("the same, no servers", with_none),
        ("node + TypeScript SDK clients, the same 5 servers", node),
    ] {
        println!("| {name} | {} | {:.2}x |", mb(bytes), ratio(bytes));
    }
    println!(
        "\nThe five servers themselves (2 server-everything, server-filesystem, mcp-server-time, \
         fault_server.py) use {} between them, in their own processes.",
        mb(five_servers)
    );
    println!(
        "\nTarget: ≤ 40 MB: {}, {}",
        mb(with_five),
        if with_five <= TARGET { "met" } else { "missed" }
    );
    summary(Summary {
        benchmark: "Memory, backend idle with 5 servers (VmRSS)",
        result: mb(with_five),
        compared_with: format!("node + TypeScript SDK {}", mb(node)),
        ratio: format!("{:.2}x", ratio(with_five)),
        target: "≤ 40 MB",
        met: with_five <= TARGET,
    });
    let Some((ours, theirs, alike, walked)) = apps else {
        return;
    };
    println!(
        "\nMemory of the whole app, release builds, idle {} s after start (PSS from \
         /proc/<pid>/smaps_rollup; the MCP servers left out)\n",
        app::SETTLE.as_secs()
    );
    app_table([
        ("Toolgate, 5 servers", &ours),
        ("the smallest Tauri app (one static page)", &theirs),
    ]);
    println!(
        "{} in the web process: Toolgate {}, the smallest app {} (unset: WebKit's default, GPU \
         painting threads)",
        app::PAINTER,
        ours.gpu_painting_threads.as_deref().unwrap_or("unset"),
        theirs.gpu_painting_threads.as_deref().unwrap_or("unset"),
    );
    if let Some(alike) = &alike {
        app_table([(
            "the smallest Tauri app, painting as Toolgate's web process does",
            alike,
        )]);
        println!(
            "With both apps painting alike (read back from the smallest app's web process: \
             {}={}): {:.2}x; the painter alone saves the smallest app {}",
            app::PAINTER,
            alike.gpu_painting_threads.as_deref().unwrap_or("unset"),
            ours.whole() as f64 / alike.whole() as f64,
            mb(theirs.whole().saturating_sub(alike.whole()))
        );
    }
    println!(
        "Target ≤ 45 MB, main process Pss_Anon: {}, {} (the minimal Tauri app: {})",
        mb(ours.main_pss_anon),
        if ours.main_pss_anon <= APP_TARGET {
            "met"
        } else {
            "missed"
        },
        mb(theirs.main_pss_anon)
    );
    summary(Summary {
        benchmark: "Memory, app idle with 5 servers, main process Pss_Anon",
        result: mb(ours.main_pss_anon),
        compared_with: format!("the smallest Tauri app {}", mb(theirs.main_pss_anon)),
        ratio: format!(
            "{:.2}x",
            ours.main_pss_anon as f64 / theirs.main_pss_anon as f64
        ),
        target: "≤ 45 MB",
        met: ours.main_pss_anon <= APP_TARGET,
    });
    whole_app(
        "idle with 5 servers",
        &ours,
        &theirs,
        alike.as_ref(),
        IDLE_RATIO,
    );
    let Some((walked, driven, driven_alike)) = walked else {
        return;
    };
    println!(
        "\nAfter a walk through every screen, then idle {} s; both apps started by tauri-driver\n",
        app::SETTLE.as_secs()
    );
    app_table([
        ("Toolgate, 5 servers, after the walk", &walked),
        ("the smallest Tauri app, idle", &driven),
    ]);
    if let Some(alike) = &driven_alike {
        app_table([("the smallest Tauri app, idle, painting alike", alike)]);
    }
    whole_app(
        "after a walk through every screen",
        &walked,
        &driven,
        driven_alike.as_ref(),
        WALK_RATIO,
    );
}

/// The whole app's figures, one row per app.
fn app_table<const N: usize>(rows: [(&str, &app::AppMemory); N]) {
    println!(
        "| app | main process Pss_Anon | main process Pss | WebKit processes Pss | whole app Pss |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (name, m) in rows {
        println!(
            "| {name} | {} | {} | {} ({}) | {} |",
            mb(m.main_pss_anon),
            mb(m.main_pss),
            mb(m.webkit_pss),
            m.webkit_processes,
            mb(m.whole())
        );
    }
}

/// Issue 40's targets for the whole app (main + WebKit PSS) against the smallest Tauri app.
const IDLE_RATIO: f64 = 1.2;
const WALK_RATIO: f64 = 1.5;

/// The target is judged like for like: against the smallest app painting as Toolgate's web
/// process does (`alike`), when Toolgate's was told how to paint; the ratio against the smallest
/// app as built is printed beside it.
fn whole_app(
    when: &str,
    ours: &app::AppMemory,
    theirs: &app::AppMemory,
    alike: Option<&app::AppMemory>,
    target: f64,
) {
    let as_built = ours.whole() as f64 / theirs.whole() as f64;
    let (reference, how) = match alike {
        Some(alike) => (alike, "painting alike"),
        None => (theirs, "as built"),
    };
    let ratio = ours.whole() as f64 / reference.whole() as f64;
    println!(
        "Target ≤ {target}× the smallest Tauri app, whole app {when}: {} against {} ({how}), \
         {ratio:.2}x, {} (against the smallest app as built: {as_built:.2}x)",
        mb(ours.whole()),
        mb(reference.whole()),
        if ratio <= target { "met" } else { "missed" }
    );
    summary(Summary {
        benchmark: &format!("Memory, whole app PSS (main + WebKit), {when}"),
        result: mb(ours.whole()),
        compared_with: format!("the smallest Tauri app {how} {}", mb(reference.whole())),
        ratio: format!("{ratio:.2}x"),
        target: &format!("≤ {target}x the smallest Tauri app"),
        met: ratio <= target,
    });
}

/// The app after a walk through every screen and the smallest Tauri app, both started by
/// tauri-driver (when it is on PATH).
#[cfg(unix)]
async fn walked(
    toolgate: &Path,
    minimal: &Path,
    dir: &Path,
    root: &Path,
) -> Option<(app::AppMemory, app::AppMemory, Option<app::AppMemory>)> {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join("tauri-driver").is_file()));
    if !on_path {
        println!("\nThe walk needs tauri-driver on PATH (cargo install tauri-driver); skipped.");
        return None;
    }
    let ours = walk::toolgate(toolgate, &dir.join("walk"), servers(root))
        .await
        .expect("the app after a walk");
    let theirs = walk::minimal(minimal, &dir.join("walk-minimal"), &[])
        .await
        .expect("the smallest app under the driver");
    let alike = match ours.gpu_painting_threads.as_deref() {
        Some(threads) => Some(
            walk::minimal(
                minimal,
                &dir.join("walk-minimal-alike"),
                &[(app::PAINTER, threads)],
            )
            .await
            .expect("the smallest app under the driver, painting alike"),
        ),
        None => None,
    };
    Some((ours, theirs, alike))
}

/// No walk where there is no tauri-driver session to drive the window.
#[cfg(not(unix))]
async fn walked(
    _toolgate: &Path,
    _minimal: &Path,
    _dir: &Path,
    _root: &Path,
) -> Option<(app::AppMemory, app::AppMemory, Option<app::AppMemory>)> {
    None
}
