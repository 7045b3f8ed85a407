//! `toolgate-app connect`: the stdio shim other hosts launch (the same as `toolgate connect`),
//! for installs that have the app but not the CLI; and the command line a connected host is
//! given to run it, which is this parser's to define.

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolgate_gateway::shim::ConnectOptions;

const USAGE: &str =
    "usage: toolgate-app connect [--profile NAME] [--data-dir DIR] [--no-start] [--wait SECONDS] [--relay]";

/// `toolgate-app connect [--profile NAME] [--data-dir DIR] [--no-start] [--wait SECONDS] [--relay]`, the
/// same shim as `toolgate connect`; returns the exit code.
pub fn connect(args: &[String]) -> i32 {
    let (mut options, data_dir) = match parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("toolgate-app connect: {e}\n{USAGE}");
            return 2;
        }
    };
    let Some(data_dir) = data_dir.or_else(toolgate_host::default_data_dir) else {
        eprintln!("toolgate-app connect: neither XDG_DATA_HOME nor HOME is set; pass --data-dir");
        return 2;
    };
    options.socket = toolgate_gateway::socket_path(&data_dir);
    match toolgate_gateway::shim::connect(options) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("toolgate-app connect: {e}");
            1
        }
    }
}

/// The shim's options (its socket still to be found) and the data folder, if one was given.
fn parse(args: &[String]) -> Result<(ConnectOptions, Option<PathBuf>), String> {
    let mut options = ConnectOptions {
        socket: PathBuf::new(),
        profile: None,
        app: std::env::current_exe().ok(),
        wait: Duration::from_secs(30),
        relay: false,
    };
    let mut data_dir = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.clone().next()) {
            ("--profile", Some(v)) => options.profile = Some(v.clone()),
            ("--data-dir", Some(v)) => data_dir = Some(PathBuf::from(v)),
            ("--wait", Some(v)) => match v.parse() {
                Ok(s) => options.wait = Duration::from_secs(s),
                Err(_) => return Err("--wait takes a number of seconds".into()),
            },
            ("--no-start", _) => {
                options.app = None;
                continue;
            }
            ("--relay", _) => {
                options.relay = true;
                continue;
            }
            _ => return Err(format!("unexpected {arg:?}")),
        }
        args.next();
    }
    Ok((options, data_dir))
}

/// What a host connected from the window runs: this program's `connect`, on this data folder,
/// with the host's profile (see [`connect`]).
pub fn connect_command(exe: &Path, host: &str, data_dir: &Path) -> toolgate_hosts::ConnectCommand {
    toolgate_hosts::ConnectCommand {
        command: exe.display().to_string(),
        args: vec![
            "connect".into(),
            "--profile".into(),
            host.into(),
            "--data-dir".into(),
            data_dir.display().to_string(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_a_host_is_given_is_one_connect_accepts() {
        let command = connect_command(
            Path::new("/opt/toolgate/toolgate-app"),
            "cursor",
            Path::new("/home/u/.local/share/dev.toolgate.desktop"),
        );
        // `main` runs the shim when the first argument is `connect`.
        assert_eq!(command.args[0], "connect");
        let (options, data_dir) = parse(&command.args[1..]).unwrap();
        assert_eq!(options.profile.as_deref(), Some("cursor"));
        assert_eq!(
            data_dir.as_deref(),
            Some(Path::new("/home/u/.local/share/dev.toolgate.desktop"))
        );
        assert!(
            !options.relay,
            "a connected host's shim hands its pipes over"
        );
        let (relayed, _) = parse(&["--relay".into(), "--no-start".into()]).unwrap();
        assert!(relayed.relay && relayed.app.is_none());
        assert!(parse(&["--wait".into(), "soon".into()]).is_err());
        assert!(parse(&["--nope".into()]).is_err());
    }
}
