//! macOS: the same allow-list as a Seatbelt profile, run by `/usr/bin/sandbox-exec`.
//!
//! **Not verified**: written from Apple's sandbox profile language as Chrome, Codex and Bazel
//! use it, unit-tested here as text only; it has never confined a process on a Mac. The
//! profile is built on every platform (it is plain text) so its tests run on Linux; only
//! [`wrap`]'s use is behind `cfg(target_os = "macos")` in the spawn path.
//!
//! Paths are passed as `-D` parameters, never spliced into the profile, so no folder name can
//! change the profile's meaning. `sandbox-exec` is deprecated but still shipped and used; the
//! alternative (the App Sandbox) confines the whole app, not one child.

use std::ffi::OsString;
use std::path::Path;

use crate::{Confinement, Network};

/// Where macOS keeps the tool that applies a profile to a command.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile text and its parameters (`-D NAME=VALUE`) for `confinement`.
pub fn profile(confinement: &Confinement) -> (String, Vec<(String, String)>) {
    let mut text = String::from(
        "(version 1)\n\
         (deny default)\n\
         (allow process-fork process-exec)\n\
         (allow signal (target same-sandbox))\n\
         (allow sysctl-read)\n\
         (allow file-read-metadata)\n\
         (allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\"))\n\
         (allow file-read* file-write* (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\"))\n\
         (allow file-read* (literal \"/dev/random\") (literal \"/dev/urandom\"))\n",
    );
    let mut params = Vec::new();
    for (kind, paths) in [("READ", &confinement.read), ("WRITE", &confinement.write)] {
        for (i, path) in paths.iter().enumerate() {
            let name = format!("{kind}_{i}");
            let rights = if kind == "READ" {
                "file-read*"
            } else {
                "file-read* file-write*"
            };
            text.push_str(&format!("(allow {rights} (subpath (param \"{name}\")))\n"));
            params.push((name, path.to_string_lossy().into_owned()));
        }
    }
    let proxy;
    text.push_str(match confinement.network {
        Network::None => "",
        Network::Proxy(port) => {
            proxy = format!("(allow network-outbound (remote ip \"localhost:{port}\"))\n");
            &proxy
        }
        Network::Loopback => {
            "(allow network-outbound (remote ip \"localhost:*\"))\n\
             (allow network-bind network-inbound (local ip \"localhost:*\"))\n"
        }
        Network::Any => {
            "(allow network-outbound (remote ip))\n\
             (allow network-bind network-inbound (local ip))\n\
             (allow mach-lookup (global-name \"com.apple.dnssd.service\"))\n"
        }
    });
    (text, params)
}

/// `sandbox-exec`'s arguments to run `program args` under `confinement`.
pub fn wrap(confinement: &Confinement, program: &Path, args: &[String]) -> Vec<OsString> {
    let (text, params) = profile(confinement);
    let mut out: Vec<OsString> = vec!["-p".into(), text.into()];
    for (name, value) in params {
        out.push("-D".into());
        out.push(format!("{name}={value}").into());
    }
    out.push("--".into());
    out.push(program.as_os_str().to_owned());
    out.extend(args.iter().map(OsString::from));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_parameters_and_the_network_follows_the_mode() {
        let mut c = Confinement {
            read: vec!["/usr".into(), "/opt/my \"odd\") (allow default".into()],
            write: vec!["/Users/u/notes".into()],
            network: Network::None,
        };
        let (text, params) = profile(&c);
        assert!(text.starts_with("(version 1)\n(deny default)"));
        assert!(text.contains("(allow file-read* (subpath (param \"READ_1\")))"));
        assert!(text.contains("(allow file-read* file-write* (subpath (param \"WRITE_0\")))"));
        assert!(!text.contains("odd"), "a path never becomes profile text");
        assert_eq!(params[1].1, "/opt/my \"odd\") (allow default");
        assert!(!text.contains("network"));
        c.network = Network::Loopback;
        assert!(profile(&c).0.contains("localhost:*"));
        c.network = Network::Any;
        assert!(profile(&c)
            .0
            .contains("(allow network-outbound (remote ip))"));
        let args = wrap(&c, Path::new("/usr/local/bin/node"), &["server.js".into()]);
        assert_eq!(args[0], "-p");
        assert!(args.iter().any(|a| a == "WRITE_0=/Users/u/notes"));
        assert_eq!(args[args.len() - 2], "/usr/local/bin/node");
    }
}
