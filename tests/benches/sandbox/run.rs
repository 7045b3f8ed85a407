//! The body of the sandbox benchmark (`../sandbox.rs`), Linux only.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolgate_mcp::{HostEnv, ManagerOptions, ServerManager, ServerStatus};
use toolgate_sandbox::{Confinement, Network, Support};
use toolgate_settings::{SandboxSettings, ServerConfig};
use toolgate_tests::bench::{median, ms, summary, Summary};
use toolgate_tests::{everything_server, fault_server};

const STARTS: usize = 9;
const CONNECTIONS: usize = 300;

fn unconfined(mut config: ServerConfig) -> ServerConfig {
    config.sandbox = Some(SandboxSettings {
        enabled: false,
        ..SandboxSettings::default()
    });
    config
}

/// Median time to ready for `config`, confined and not, started alternately.
async fn start_up(env: &HostEnv, config: &ServerConfig) -> (Duration, Duration) {
    let (mut confined, mut open) = (Vec::new(), Vec::new());
    for _ in 0..STARTS {
        for (times, config) in [
            (&mut confined, config.clone()),
            (&mut open, unconfined(config.clone())),
        ] {
            let servers = ServerManager::new(ManagerOptions {
                env: Some(env.clone()),
                ..ManagerOptions::default()
            });
            let started = Instant::now();
            servers.start_all(std::slice::from_ref(&config)).await;
            let elapsed = started.elapsed();
            let status = servers.snapshot().await[0].status.clone();
            assert_eq!(status, ServerStatus::Ready, "{}", config.id);
            servers.stop_all().await;
            times.push(elapsed);
        }
    }
    (median(confined), median(open))
}

/// Seconds a confined python3 takes for [`CONNECTIONS`] connections to `port` in `network`.
fn connections(network: Network, port: u16) -> Duration {
    let script = format!(
        "import socket, time\nt = time.perf_counter()\nfor _ in range({CONNECTIONS}):\n    \
         s = socket.create_connection(('127.0.0.1', {port}))\n    s.close()\n\
         print(time.perf_counter() - t)"
    );
    let confinement = Confinement {
        read: [
            "/usr",
            "/bin",
            "/lib",
            "/lib64",
            "/etc",
            "/proc",
            "/dev/null",
        ]
        .iter()
        .map(Into::into)
        .collect(),
        write: Vec::new(),
        network,
    };
    let prepared =
        toolgate_sandbox::linux::prepare(&confinement, &Support::probe()).expect("prepared");
    let mut command = Command::new("/usr/bin/python3");
    command
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let armed = prepared.arm(&mut command).expect("armed");
    let child = command.spawn().expect("python3 starts");
    let guard = armed
        .started("bench", &toolgate_sandbox::Reserved::new())
        .expect("guarded");
    let out = child.wait_with_output().expect("ran");
    drop(guard);
    let seconds: f64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("every connection was made");
    Duration::from_secs_f64(seconds)
}

pub async fn main() {
    let env = HostEnv::detect().await;
    let servers = [
        ("fault_server.py ok (python)", fault_server("f", "ok")),
        ("server-everything (node)", everything_server("e")),
    ];
    println!("\nStart-up until ready, confined vs unconfined (median of {STARTS} each)\n");
    println!("| server | confined | unconfined | ratio |");
    println!("|---|---:|---:|---:|");
    let mut worst: f64 = 0.0;
    let mut headline = (Duration::ZERO, Duration::ZERO);
    for (name, config) in &servers {
        let (confined, open) = start_up(&env, config).await;
        let ratio = confined.as_secs_f64() / open.as_secs_f64();
        if ratio > worst {
            worst = ratio;
            headline = (confined, open);
        }
        println!(
            "| {name} | {:.0} ms | {:.0} ms | {ratio:.2}x |",
            ms(confined),
            ms(open)
        );
    }

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            drop(stream);
        }
    });
    let checked = connections(Network::Loopback, port);
    let free = connections(Network::Any, port);
    let per = |d: Duration| d.as_secs_f64() * 1e6 / CONNECTIONS as f64;
    println!(
        "\n{CONNECTIONS} TCP connections to 127.0.0.1 from a confined python3: {:.0} µs each in \
         network \"loopback\" (checked and made by Toolgate's supervisor), {:.0} µs each in \
         network \"any\": {:.2}x, {:.0} µs more per connection.",
        per(checked),
        per(free),
        checked.as_secs_f64() / free.as_secs_f64(),
        per(checked) - per(free),
    );
    let met = worst <= 1.1;
    println!(
        "\nTarget: a confined start within 1.1x an unconfined one: worst {worst:.2}x, {}",
        if met { "met" } else { "missed" }
    );
    summary(Summary {
        benchmark: "Sandbox: start-up, confined vs unconfined",
        result: format!("{:.0} ms confined", ms(headline.0)),
        compared_with: format!("unconfined {:.0} ms", ms(headline.1)),
        ratio: format!("{worst:.2}x"),
        target: "≤ 1.1x",
        met,
    });
}
