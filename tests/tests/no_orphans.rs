//! No server outlives its host, even one killed with SIGKILL: a host process runs ten real
//! servers; after `kill -9` none of them is left, checked by pid, and neither is a helper a
//! server started in its group (which the kernel's parent-death signal cannot reach): the
//! host's reaper kills it at once. Should the reaper be killed too, the next host that starts
//! sweeps the helper up.
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use toolgate_mcp::REAPER_NAME;
use toolgate_settings::{ServerConfig, Transport};
use toolgate_tests::{
    children_of, everything_server, fault_server, fault_server_script, is_alive, processes_with,
    wait_until_none, ProcField,
};

fn tagged(mut config: ServerConfig, tag: &str) -> ServerConfig {
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("TOOLGATE_TEST_TAG".into(), tag.to_owned());
    }
    config
}

/// Starts the test host with `configs` and waits until it has started them all.
fn start_host(state_dir: &std::path::Path, configs: &[ServerConfig], name: &str) -> Child {
    let file = state_dir.with_extension(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_vec(configs).expect("json")).expect("config file");
    let mut host = Command::new(env!("CARGO_BIN_EXE_toolgate-test-host"))
        .arg(state_dir)
        .arg(&file)
        .stdout(Stdio::piped())
        .spawn()
        .expect("host starts");
    let stdout = host.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut statuses = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("host output");
        if line == "ready" {
            break;
        }
        statuses.push(line);
    }
    for status in &statuses {
        assert!(
            status.ends_with(" ready"),
            "every server started: {statuses:?}"
        );
    }
    // Keep draining so the host never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    host
}

/// The host's reaper and its servers, told apart among its children.
fn reaper_and_servers(host: u32) -> (Vec<u32>, Vec<u32>) {
    children_of(host).into_iter().partition(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(REAPER_NAME))
    })
}

/// The `sleep` helpers carrying `tag` that are not among `servers`.
fn helpers(tag: &str, servers: &[u32]) -> Vec<u32> {
    processes_with(tag, ProcField::Environ)
        .into_iter()
        .filter(|pid| !servers.contains(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).starts_with("sleep"))
        })
        .collect()
}

/// A launcher that leaves a child of its own, as `npx` and `uvx` do. The child ignores stdin,
/// and the parent-death signal reaches only the launcher.
fn launcher(tag: &str) -> ServerConfig {
    let fault = fault_server_script().to_string_lossy().into_owned();
    tagged(
        ServerConfig::stdio(
            "launcher",
            "sh",
            [
                "-c".to_owned(),
                format!("sleep 3333 & exec python3 {fault} ok"),
            ],
        ),
        tag,
    )
}

fn fresh_state_dir(run: &str) -> std::path::PathBuf {
    let state_dir = std::env::temp_dir().join(run);
    let _ = std::fs::remove_dir_all(&state_dir);
    std::fs::create_dir_all(&state_dir).expect("state dir");
    state_dir
}

fn clean_up(state_dir: &std::path::Path) {
    let _ = std::fs::remove_dir_all(state_dir);
    for name in ["first", "second"] {
        let _ = std::fs::remove_file(state_dir.with_extension(format!("{name}.json")));
    }
}

#[tokio::test]
async fn sigkill_of_a_host_running_ten_servers_leaves_no_server_and_no_helper_behind() {
    let run = format!("orphans-{}", std::process::id());
    let state_dir = fresh_state_dir(&run);

    let mut configs = Vec::new();
    for i in 0..5 {
        configs.push(tagged(everything_server(&format!("everything{i}")), &run));
    }
    // Stubborn servers ignore stdin closing and SIGTERM: only the kernel's parent-death
    // signal stops them when their host is killed.
    for i in 0..4 {
        configs.push(tagged(
            fault_server(&format!("stubborn{i}"), "stubborn"),
            &run,
        ));
    }
    configs.push(launcher(&run));

    let mut host = start_host(&state_dir, &configs, "first");
    let (reaper, servers) = reaper_and_servers(host.id());
    assert_eq!(servers.len(), 10, "one process per server: {servers:?}");
    assert_eq!(reaper.len(), 1, "one reaper: {reaper:?}");
    let helper = helpers(&run, &servers);
    assert_eq!(helper.len(), 1, "the launcher's own child runs");

    host.kill().expect("SIGKILL");
    host.wait().expect("reaped");

    // Without any new start: the kernel kills the servers, the reaper their helpers.
    let left = wait_until_none(10, || {
        servers
            .iter()
            .chain(&helper)
            .chain(&reaper)
            .copied()
            .filter(|p| is_alive(*p))
            .collect()
    })
    .await;
    assert!(
        left.is_empty(),
        "processes outlived their killed host: {left:?}"
    );
    let tagged_left = wait_until_none(5, || processes_with(&run, ProcField::Environ)).await;
    assert!(tagged_left.is_empty(), "{tagged_left:?}");
    clean_up(&state_dir);
}

#[tokio::test]
async fn when_the_reaper_is_killed_too_the_next_start_sweeps_the_helpers() {
    let run = format!("orphans-sweep-{}", std::process::id());
    let state_dir = fresh_state_dir(&run);
    let mut host = start_host(&state_dir, &[launcher(&run)], "first");
    let (reaper, servers) = reaper_and_servers(host.id());
    assert_eq!((reaper.len(), servers.len()), (1, 1));
    let helper = helpers(&run, &servers);
    assert_eq!(helper.len(), 1, "the launcher's own child runs");

    // Killing the reaper first (as `kill -9` of a whole session might): nothing stops the
    // helper when the host dies...
    Command::new("kill")
        .args(["-9", &reaper[0].to_string()])
        .status()
        .expect("kill the reaper");
    host.kill().expect("SIGKILL");
    host.wait().expect("reaped");
    let left = wait_until_none(10, || {
        servers.iter().copied().filter(|p| is_alive(*p)).collect()
    })
    .await;
    assert!(left.is_empty(), "the server dies with its host: {left:?}");
    assert!(
        is_alive(helper[0]),
        "without the reaper the helper survives the kill"
    );

    // ...until the next host, with no servers at all, sweeps up what the killed one left.
    let mut next = start_host(&state_dir, &[], "second");
    let left = wait_until_none(5, || {
        helper.iter().copied().filter(|p| is_alive(*p)).collect()
    })
    .await;
    assert!(left.is_empty(), "left-over process not swept: {left:?}");
    let tagged_left = wait_until_none(5, || processes_with(&run, ProcField::Environ)).await;
    assert!(tagged_left.is_empty(), "{tagged_left:?}");
    next.kill().expect("kill");
    next.wait().expect("reaped");
    std::thread::sleep(Duration::from_millis(10));
    clean_up(&state_dir);
}
