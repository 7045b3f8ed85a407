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
         (allow file-read* file-write* (literal \"/dev/null\") (literal \"/dev/zero\"))\n\
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
            params.push((name.clone(), path.to_string_lossy().into_owned()));
            if let Some(real) = private_form(path) {
                let name = format!("{name}_PRIVATE");
                text.push_str(&format!("(allow {rights} (subpath (param \"{name}\")))\n"));
                params.push((name, real.to_string_lossy().into_owned()));
            }
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

/// The name under `/private` of a path in `/tmp`, `/var` or `/etc`, which on macOS are symbolic
/// links there. The sandbox matches the path a file really has, so such a folder (the temporary
/// folder, `$TMPDIR` in `/var/folders`) is allowed under both names. Other symbolic links are not
/// followed here.
pub fn private_form(path: &Path) -> Option<std::path::PathBuf> {
    use std::path::Component;
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return None;
    }
    match components.next() {
        Some(Component::Normal(first)) if ["tmp", "var", "etc"].iter().any(|d| first == *d) => {
            Some(Path::new("/private").join(path.strip_prefix("/").ok()?))
        }
        _ => None,
    }
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

    /// Whether the profile's parentheses balance outside its string literals (a `"` or `)` in a
    /// folder's name, spliced in, would unbalance them) and every literal is closed.
    fn balanced(text: &str) -> bool {
        let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
        for c in text.chars() {
            match (in_string, c) {
                (true, _) if escaped => escaped = false,
                (true, '\\') => escaped = true,
                (true, '"') => in_string = false,
                (true, _) => {}
                (false, '"') => in_string = true,
                (false, '(') => depth += 1,
                (false, ')') => {
                    depth -= 1;
                    if depth < 0 {
                        return false;
                    }
                }
                (false, _) => {}
            }
        }
        depth == 0 && !in_string
    }

    fn odd_folders() -> Vec<std::path::PathBuf> {
        vec![
            "/Users/Jane Doe/Documents/Project Files".into(),
            "/Users/jane/it's \"quoted\"".into(),
            "/Users/jane/(parens) and )) unbalanced ((".into(),
            "/Volumes/Data; (allow default)\n(deny file-read*".into(),
            "/Users/jane/back\\slash and ünïcödé".into(),
        ]
    }

    #[test]
    fn odd_folder_names_stay_whole_parameters_outside_the_profile() {
        let c = Confinement {
            read: odd_folders(),
            write: vec!["/Users/Jane Doe/Library/Application Support/My (App)".into()],
            network: Network::None,
        };
        let (text, params) = profile(&c);
        assert!(balanced(&text), "{text}");
        assert!(
            !text.contains("Jane") && !text.contains("quoted") && !text.contains("allow default")
        );
        let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["READ_0", "READ_1", "READ_2", "READ_3", "READ_4", "WRITE_0"]
        );
        for (i, folder) in c.read.iter().enumerate() {
            assert_eq!(params[i].1, folder.to_str().expect("UTF-8"));
            assert!(text.contains(&format!(
                "(allow file-read* (subpath (param \"READ_{i}\")))\n"
            )));
        }
        assert!(text.contains("(allow file-read* file-write* (subpath (param \"WRITE_0\")))\n"));
        assert_eq!(
            text.matches("file-write*").count(),
            2,
            "only /dev/null's line and the one folder given to write"
        );

        // sandbox-exec is started without a shell: each -D is one argument, spaces, quotes and
        // parentheses as they are, and the server's own arguments come after `--` unchanged.
        let args = wrap(
            &c,
            Path::new("/Applications/My Tools (beta)/node"),
            &[
                "server.js".into(),
                "--root".into(),
                "/Users/Jane Doe/it's here".into(),
            ],
        );
        let expected: Vec<OsString> = [
            "-D",
            "READ_0=/Users/Jane Doe/Documents/Project Files",
            "-D",
            "READ_1=/Users/jane/it's \"quoted\"",
            "-D",
            "READ_2=/Users/jane/(parens) and )) unbalanced ((",
            "-D",
            "READ_3=/Volumes/Data; (allow default)\n(deny file-read*",
            "-D",
            "READ_4=/Users/jane/back\\slash and ünïcödé",
            "-D",
            "WRITE_0=/Users/Jane Doe/Library/Application Support/My (App)",
            "--",
            "/Applications/My Tools (beta)/node",
            "server.js",
            "--root",
            "/Users/Jane Doe/it's here",
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        assert_eq!(args[0], "-p");
        assert_eq!(
            args[1],
            OsString::from(&text),
            "the profile is the second argument"
        );
        assert_eq!(args[2..], expected[..]);
    }

    #[test]
    fn each_network_mode_opens_exactly_its_part() {
        let mut c = Confinement {
            read: vec!["/usr".into()],
            write: Vec::new(),
            network: Network::None,
        };
        let network_lines = |c: &Confinement| -> Vec<String> {
            let (text, _) = profile(c);
            assert!(balanced(&text), "{text}");
            text.lines()
                .filter(|l| l.contains("network") || l.contains("dnssd"))
                .map(str::to_owned)
                .collect()
        };
        assert!(network_lines(&c).is_empty(), "none: no network rule at all");
        assert!(profile(&c).0.starts_with("(version 1)\n(deny default)\n"));

        c.network = Network::Proxy(8123);
        assert_eq!(
            network_lines(&c),
            ["(allow network-outbound (remote ip \"localhost:8123\"))"],
            "hosts: Toolgate's proxy port only, no listening"
        );

        c.network = Network::Loopback;
        assert_eq!(
            network_lines(&c),
            [
                "(allow network-outbound (remote ip \"localhost:*\"))",
                "(allow network-bind network-inbound (local ip \"localhost:*\"))",
            ]
        );

        c.network = Network::Any;
        assert_eq!(
            network_lines(&c),
            [
                "(allow network-outbound (remote ip))",
                "(allow network-bind network-inbound (local ip))",
                "(allow mach-lookup (global-name \"com.apple.dnssd.service\"))",
            ]
        );
    }

    #[test]
    fn nothing_given_means_only_the_devices_every_program_needs() {
        let (text, params) = profile(&Confinement::default());
        assert!(params.is_empty());
        assert!(!text.contains("subpath"));
        assert!(balanced(&text));
        assert_eq!(SANDBOX_EXEC, "/usr/bin/sandbox-exec");
        let args = wrap(&Confinement::default(), Path::new("/bin/echo"), &[]);
        assert_eq!(args, ["-p", text.as_str(), "--", "/bin/echo"]);
        // The checker itself catches what a spliced name would do.
        assert!(!balanced("(allow file-read* (subpath \"/a\"))\n(x\")"));
        assert!(!balanced("(allow (subpath \"/a\")))"));
    }

    // macOS paths are Unix paths: built on Windows they would take its separator.
    #[cfg(unix)]
    #[test]
    fn folders_under_macos_symbolic_links_are_allowed_under_their_real_names_too() {
        assert_eq!(
            private_form(Path::new("/var/folders/zz/abc123/T/toolgate-run-1")),
            Some("/private/var/folders/zz/abc123/T/toolgate-run-1".into())
        );
        assert_eq!(private_form(Path::new("/tmp")), Some("/private/tmp".into()));
        assert_eq!(
            private_form(Path::new("/etc/ssl")),
            Some("/private/etc/ssl".into())
        );
        for not_linked in [
            "/private/tmp/x",
            "/Users/u/tmp",
            "/variable/x",
            "tmp/x",
            "/",
        ] {
            assert_eq!(private_form(Path::new(not_linked)), None, "{not_linked}");
        }
        let c = Confinement {
            read: vec!["/usr".into()],
            write: vec!["/var/folders/zz/abc123/T/toolgate-run-1".into()],
            network: Network::None,
        };
        let (text, params) = profile(&c);
        assert!(balanced(&text));
        assert!(text.contains("(allow file-read* file-write* (subpath (param \"WRITE_0\")))\n"));
        assert!(
            text.contains("(allow file-read* file-write* (subpath (param \"WRITE_0_PRIVATE\")))\n")
        );
        assert_eq!(
            params,
            [
                ("READ_0".to_owned(), "/usr".to_owned()),
                (
                    "WRITE_0".to_owned(),
                    "/var/folders/zz/abc123/T/toolgate-run-1".to_owned()
                ),
                (
                    "WRITE_0_PRIVATE".to_owned(),
                    "/private/var/folders/zz/abc123/T/toolgate-run-1".to_owned()
                ),
            ]
        );
    }
}
