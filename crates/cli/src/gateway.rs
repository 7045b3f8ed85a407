//! `toolgate serve` and `toolgate connect`: the gateway without the app (and its HTTP door), and
//! the stdio shim other hosts launch to reach it.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use toolgate_gateway::shim::{self, ConnectOptions};
use toolgate_gateway::{Gateway, HttpDoor};

use crate::context::Context;

/// Serves the gateway on this data folder until Ctrl-C or SIGTERM, with the folder's servers
/// started, and the HTTP door at `http` (else where the settings say, when their switch is on).
/// A second Ctrl-C or SIGTERM while it stops (a server slow to end) ends it at once.
/// What the rules leave to the user is asked at this terminal, if there is one.
pub async fn serve(ctx: Context, http: Option<std::net::SocketAddr>) -> Result<u8> {
    // From the start: a request while the servers start still stops the gateway in order.
    let mut stops = toolgate_host::StopRequests::listen()?;
    let host = ctx.host.clone();
    let gateway = Gateway::bind(host.clone(), toolgate_gateway::socket_path(host.data_dir()))?;
    let stop = gateway.stopper();
    let settings = host.door_settings();
    let door = match http.or(settings.enabled.then_some(settings.address)) {
        Some(address) => Some(HttpDoor::bind(host.clone(), address)?),
        None => None,
    };
    eprintln!(
        "toolgate serve: the gateway is listening at {}.\nConnect a host with the command `toolgate connect` (see `toolgate connect --help`). Ctrl-C stops it.",
        gateway.path().display()
    );
    let door = door.map(|door| {
        // Printed on stdout too, alone, so a script that asked for port 0 can read it.
        println!("{}", door.url());
        eprintln!(
            "toolgate serve: the HTTP door is open at {}; each client needs a token (`toolgate door token add NAME`).",
            door.url()
        );
        let closer = door.stopper();
        (closer, tokio::spawn(door.serve()))
    });
    if let Some(why) = host.approvals().nobody_to_ask() {
        eprintln!("toolgate serve: calls your rules do not allow are refused ({why}).");
    }
    let serving = tokio::spawn(gateway.serve());
    let starting = host.run();
    let why = stops.next().await;
    eprintln!("toolgate serve: {why} received, stopping (again to stop at once)");
    stops.end_at_once_on_next(|why| {
        eprintln!("toolgate serve: {why} again while stopping: ending now");
    });
    stop.cancel();
    starting.abort();
    let _ = serving.await;
    if let Some((closer, door)) = door {
        closer.cancel();
        let _ = door.await;
    }
    host.shutdown("Toolgate is stopping").await;
    Ok(0)
}

/// Connects stdin and stdout to the gateway of the Toolgate on `data_dir` (handed over, or
/// copied when `relay`); exits the process when done (stdin may be read on a thread that would
/// otherwise keep it alive).
pub fn connect(data_dir: &Path, profile: Option<String>, wait: u64, start: bool, relay: bool) -> ! {
    let options = ConnectOptions {
        socket: toolgate_gateway::socket_path(data_dir),
        profile,
        app: if start { shim::find_app() } else { None },
        wait: Duration::from_secs(wait),
        relay,
    };
    let code = match shim::connect(options) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("toolgate connect: {e}");
            1
        }
    };
    std::process::exit(code)
}
