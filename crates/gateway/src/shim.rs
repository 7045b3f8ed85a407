//! `toolgate connect`: the stdio server another host launches. It forwards the host's stdin to
//! the gateway's socket and the socket to its stdout, byte for byte, after one line naming the
//! profile. When no gateway answers, it starts the app hidden in the tray and waits for it.
//!
//! Plain threads and blocking I/O: every message of the host passes here twice, and a thread
//! blocked on a read wakes sooner than a runtime's task would.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::Hello;

/// How to reach the gateway.
pub struct ConnectOptions {
    pub socket: PathBuf,
    pub profile: Option<String>,
    /// The app to start when no gateway answers; `None`: do not start anything.
    pub app: Option<PathBuf>,
    /// How long to wait for a started app's gateway.
    pub wait: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum ShimError {
    #[error("Toolgate is not running and no app was found to start (looked for toolgate-app beside this program and on PATH). Start Toolgate, or run `toolgate serve` in a terminal.")]
    NoApp,
    #[error("could not start Toolgate ({}): {source}", app.display())]
    Start {
        app: PathBuf,
        source: std::io::Error,
    },
    #[error("Toolgate was started but its gateway did not open within {} s (waiting for {}). Check that the app runs, or run `toolgate serve`.", waited.as_secs(), socket.display())]
    NoGateway { socket: PathBuf, waited: Duration },
    #[error("could not reach Toolgate's gateway at {}: {source}", socket.display())]
    Connect {
        socket: PathBuf,
        source: std::io::Error,
    },
    #[error("Toolgate closed the connection (the app quit or its gateway stopped); its tools are unavailable until it runs again")]
    Closed,
    #[error("the connection to Toolgate failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The app to start: `TOOLGATE_APP`, else `toolgate-app` beside this program, else on PATH.
pub fn find_app() -> Option<PathBuf> {
    if let Some(app) = std::env::var_os("TOOLGATE_APP").map(PathBuf::from) {
        return Some(app);
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("toolgate-app")))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("toolgate-app"))
                .find(|p| p.is_file())
        })
    })
}

fn reach(options: &ConnectOptions) -> Result<UnixStream, ShimError> {
    let first = match UnixStream::connect(&options.socket) {
        Ok(stream) => return Ok(stream),
        Err(e) => e,
    };
    use std::io::ErrorKind::{ConnectionRefused, NotFound};
    if !matches!(first.kind(), NotFound | ConnectionRefused) {
        return Err(ShimError::Connect {
            socket: options.socket.clone(),
            source: first,
        });
    }
    let app = options.app.clone().ok_or(ShimError::NoApp)?;
    eprintln!("toolgate connect: starting Toolgate in the tray…");
    // Its own process group: the host that launched this shim may stop it, never the app.
    use std::os::unix::process::CommandExt;
    std::process::Command::new(&app)
        .arg("--hidden")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|source| ShimError::Start {
            app: app.clone(),
            source,
        })?;
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if let Ok(stream) = UnixStream::connect(&options.socket) {
            return Ok(stream);
        }
        if started.elapsed() >= options.wait {
            return Err(ShimError::NoGateway {
                socket: options.socket.clone(),
                waited: options.wait,
            });
        }
    }
}

/// Copies what `from` sends to `to` as it arrives, flushing each piece.
fn pump(mut from: impl Read, mut to: impl Write) -> std::io::Result<()> {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buffer[..n])?;
        to.flush()?;
    }
}

/// Runs the shim until the host closes stdin (`Ok`) or the gateway goes away (`Err(Closed)`).
/// Blocking: call it from a thread of its own (or `main`).
pub fn connect(options: ConnectOptions) -> Result<(), ShimError> {
    let mut stream = reach(&options)?;
    let hello = Hello {
        profile: options.profile.clone(),
    };
    stream.write_all(hello.line().as_bytes())?;
    let to_gateway = stream.try_clone()?;
    let (done, ended) = std::sync::mpsc::channel();
    let host_side = done.clone();
    std::thread::spawn(move || {
        let sent = pump(std::io::stdin().lock(), &to_gateway);
        // Said before the gateway can see the end: its answer (closing the connection) must
        // not be taken for the gateway going away.
        let _ = host_side.send(("host", sent));
        // The host is done: the gateway sees the end, and answers what is still running.
        let _ = to_gateway.shutdown(std::net::Shutdown::Write);
    });
    std::thread::spawn(move || {
        let received = pump(&stream, std::io::stdout().lock());
        let _ = done.send(("gateway", received));
    });
    match ended.recv() {
        Ok(("host", sent)) => {
            sent?;
            // Let the last answers out, briefly.
            let _ = ended.recv_timeout(Duration::from_secs(5));
            Ok(())
        }
        Ok((_, received)) => {
            received?;
            Err(ShimError::Closed)
        }
        Err(_) => Err(ShimError::Closed),
    }
}
