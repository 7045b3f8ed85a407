//! `toolgate connect`: the stdio server another host launches. After one line naming the
//! profile, the host's messages reach the gateway and come back byte for byte: on Unix the shim
//! hands the host's stdin and stdout to the gateway and waits, elsewhere (or with `--relay`) it
//! copies them. When no gateway answers, it starts the app hidden in the tray and waits for it.
//! How the bytes travel is the platform's transport's ([`crate::local`]).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::local::{self, Ended, Local, Transport};
use crate::Hello;

/// How to reach the gateway.
pub struct ConnectOptions {
    pub socket: PathBuf,
    pub profile: Option<String>,
    /// The app to start when no gateway answers; `None`: do not start anything.
    pub app: Option<PathBuf>,
    /// How long to wait for a started app's gateway.
    pub wait: Duration,
    /// Copy every message through this process, never hand stdin and stdout to the gateway.
    pub relay: bool,
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

/// The app to start: `TOOLGATE_APP`, else `toolgate-app` (`toolgate-app.exe` on Windows)
/// beside this program, else on PATH.
pub fn find_app() -> Option<PathBuf> {
    if let Some(app) = std::env::var_os("TOOLGATE_APP").map(PathBuf::from) {
        return Some(app);
    }
    let name = local::app_file_name();
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(&name)))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(&name))
                .find(|p| p.is_file())
        })
    })
}

fn reach(options: &ConnectOptions) -> Result<<Local as Transport>::Client, ShimError> {
    let first = match Local::dial(&options.socket) {
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
    let mut command = std::process::Command::new(&app);
    command
        .arg("--hidden")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    local::detach(&mut command);
    command.spawn().map_err(|source| ShimError::Start {
        app: app.clone(),
        source,
    })?;
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if let Ok(stream) = Local::dial(&options.socket) {
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

/// Runs the shim until the host closes stdin (`Ok`) or the gateway goes away (`Err(Closed)`).
/// Blocking: call it from a thread of its own (or `main`).
pub fn connect(options: ConnectOptions) -> Result<(), ShimError> {
    let client = reach(&options)?;
    let hello = Hello {
        profile: options.profile.clone(),
        handover: false,
    };
    match Local::relay(client, &hello, options.relay)? {
        Ended::Host => Ok(()),
        Ended::Gateway => Err(ShimError::Closed),
    }
}
