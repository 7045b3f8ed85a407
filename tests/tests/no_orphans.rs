//! No server outlives its host, even one killed with SIGKILL: a host process runs ten real
//! servers; after `kill -9` none of them is left, checked by pid. A grandchild the kernel's
//! parent-death signal cannot reach is swept up by the next host that starts.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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

#[tokio::test]
async fn sigkill_of_a_host_running_ten_servers_leaves_no_server_behind() {
    let run = format!("orphans-{}", std::process::id());
    let state_dir = std::env::temp_dir().join(&run);
    let _ = std::fs::remove_dir_all(&state_dir);
    std::fs::create_dir_all(&state_dir).expect("state dir");

    let fault = fault_server_script().to_string_lossy().into_owned();
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
    // A launcher that leaves a child of its own, as `npx` and `uvx` do. The child ignores stdin,
    // and the parent-death signal reaches only the launcher.
    configs.push(tagged(
        ServerConfig::stdio(
            "launcher",
            "sh",
            [
                "-c".to_owned(),
                format!("sleep 300 & exec python3 {fault} ok"),
            ],
        ),
        &run,
    ));

    let mut host = start_host(&state_dir, &configs, "first");
    let host_pid = host.id();
    let servers = children_of(host_pid);
    assert_eq!(servers.len(), 10, "one process per server: {servers:?}");
    let grandchild: Vec<u32> = processes_with(&run, ProcField::Environ)
        .into_iter()
        .filter(|pid| !servers.contains(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).starts_with("sleep"))
        })
        .collect();
    assert_eq!(grandchild.len(), 1, "the launcher's own child runs");

    host.kill().expect("SIGKILL");
    host.wait().expect("reaped");

    let left = wait_until_none(10, || {
        servers.iter().copied().filter(|p| is_alive(*p)).collect()
    })
    .await;
    assert!(
        left.is_empty(),
        "servers outlived their killed host: {left:?}"
    );
    assert!(
        is_alive(grandchild[0]),
        "the grandchild survives the kill; the next start must sweep it"
    );

    // The next host, with no servers at all, sweeps up what the killed one left.
    let mut next = start_host(&state_dir, &[], "second");
    let left = wait_until_none(5, || {
        grandchild
            .iter()
            .copied()
            .filter(|p| is_alive(*p))
            .collect()
    })
    .await;
    assert!(left.is_empty(), "left-over process not swept: {left:?}");
    let tagged_left = wait_until_none(5, || processes_with(&run, ProcField::Environ)).await;
    assert!(tagged_left.is_empty(), "{tagged_left:?}");
    next.kill().expect("kill");
    next.wait().expect("reaped");
    std::thread::sleep(Duration::from_millis(10));
    let _ = std::fs::remove_dir_all(&state_dir);
}
