//! Confinement of a local MCP server's process, by the operating system rather than by the
//! server's own good behaviour.
//!
//! A [`Confinement`] says what one server may touch: folders it may read (the system, its
//! runtime, its own program), folders it may also write (its roots and a data folder of its
//! own), and how far it may reach on the network ([`Network`]). Everything else is refused by the
//! kernel with the usual permission error (`EACCES`), whatever the server tries: a `../` path, a
//! symlink out of its roots, a child process it starts.
//!
//! # Linux (verified)
//!
//! Two kernel mechanisms that need no privileges, no helper binary and no namespaces, applied
//! by the server's own process between `fork` and `exec` ([`linux::Prepared::arm`]):
//!
//! - **Landlock** for files: an allow-list of folders, each read-only or read-write. The
//!   ruleset and the folders' file descriptors are prepared in Toolgate before the fork; the
//!   child only calls `landlock_restrict_self`. With Landlock ABI 6, signals and abstract Unix
//!   sockets are scoped too: the server cannot signal Toolgate or connect to an abstract socket
//!   outside its sandbox.
//! - **seccomp** for the network, because Landlock's network rules are TCP *port* rules: they
//!   cannot say "loopback only", and do not cover UDP (so DNS) or Unix sockets (so not the
//!   desktop session's D-Bus, through which the keyring hands out secrets). The filter refuses
//!   `socket()` for the families a mode does not allow; `io_uring` (which would bypass the
//!   filter) and the kernel keyring calls are refused in every mode. For **loopback**, every
//!   `connect` and `bind` is passed to Toolgate ([`linux::loopback`], a seccomp user
//!   notification): Toolgate reads the address, and only for 127.0.0.0/8 or `::1` performs the
//!   `connect`/`bind` itself on a duplicate of the server's socket, with its own copy of the
//!   address, so the server cannot change the address after it was checked. Toolgate's own
//!   ports ([`Reserved`]: the proxies, the HTTP door) are refused there too.
//!
//! What the kernel cannot enforce is reported by [`Support::gaps`], in words for the server's
//! card and the doctor; a server never runs less confined than asked without saying so.
//!
//! # macOS and Windows (written down, not verified here)
//!
//! [`macos::profile`] writes a Seatbelt profile (`sandbox-exec -p`) with the same allow-list;
//! [`windows`] holds the AppContainer design (a profile per server, its roots granted to the
//! container's SID, a Job Object). Neither has run on its platform.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

pub use lifetime::die_with_toolgate;

mod lifetime;
#[cfg(target_os = "linux")]
pub mod linux;
pub mod macos;
#[cfg(windows)]
pub mod windows;

/// How far a confined server reaches on the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Network {
    /// No sockets to anywhere (local pipes and socket pairs still work).
    #[default]
    None,
    /// TCP to this computer only (127.0.0.0/8 and `::1`): a local database or service.
    Loopback,
    /// Anywhere, as an unconfined program. Unix sockets stay closed.
    Any,
    /// TCP to one port of 127.0.0.1 only: Toolgate's proxy, which lets the server reach the
    /// host names it was given (`HTTPS_PROXY` points there). Every other address, loopback
    /// included, is refused.
    Proxy(u16),
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::None => "none",
            Network::Loopback => "loopback",
            Network::Any => "any",
            Network::Proxy(_) => "hosts",
        }
    }

    /// Whether each `connect` and `bind` goes to Toolgate to be checked.
    pub fn supervised(self) -> bool {
        matches!(self, Network::Loopback | Network::Proxy(_))
    }
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Ports of this computer's loopback that Toolgate keeps for itself: each network-"hosts"
/// server's proxy and the HTTP door (its configured port even while it is closed, so no server
/// can take it first and collect the tokens clients send). A confined server (network
/// "loopback" or "hosts") can neither connect to nor bind one of them, on any loopback address;
/// a "hosts" server still reaches its own proxy, which is the one `connect` its mode allows.
///
/// Checked live by each server's supervisor ([`linux::loopback`]) at every `connect` and `bind`,
/// so a port held after a server started is closed to it too. One set per process: the
/// servers of another Toolgate process (the app and the CLI at once) are kept from these
/// proxies by their credentials instead, and from the door by its configured port, which
/// both processes read from the settings.
#[derive(Debug, Clone, Default)]
pub struct Reserved(Arc<Mutex<BTreeMap<u16, usize>>>);

impl Reserved {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps `port` from confined servers until the returned hold is dropped (port 0, "any
    /// port", holds nothing). The same port may be held more than once.
    pub fn hold(&self, port: u16) -> Reservation {
        if port != 0 {
            *self.lock().entry(port).or_default() += 1;
        }
        Reservation {
            reserved: self.clone(),
            port,
        }
    }

    /// Whether `port` is held.
    pub fn contains(&self, port: u16) -> bool {
        port != 0 && self.lock().contains_key(&port)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u16, usize>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One hold of a [`Reserved`] port; releases it when dropped.
#[derive(Debug)]
pub struct Reservation {
    reserved: Reserved,
    port: u16,
}

impl Reservation {
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.port == 0 {
            return;
        }
        let mut held = self.reserved.lock();
        if let Some(count) = held.get_mut(&self.port) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.port);
            }
        }
    }
}

/// What one server's process may touch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confinement {
    /// Folders (or files) it may read and run programs from.
    pub read: Vec<PathBuf>,
    /// Folders (or files) it may also create, change and delete things in.
    pub write: Vec<PathBuf>,
    pub network: Network,
}

impl Confinement {
    /// Whether `path` is inside something this confinement lets the server write.
    pub fn writes(&self, path: &Path) -> bool {
        self.write.iter().any(|w| path.starts_with(w))
    }

    /// Whether `path` is inside something this confinement lets the server read.
    pub fn reads(&self, path: &Path) -> bool {
        self.writes(path) || self.read.iter().any(|r| path.starts_with(r))
    }
}

/// Why a sandbox could not be set up. The server is not started: it never runs unconfined
/// because its sandbox failed.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox could not be prepared: {0}")]
    Prepare(String),
    #[error("the sandbox's network guard could not be started: {0}")]
    Supervisor(String),
}

/// What this computer's kernel can enforce, found once at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Support {
    /// The Landlock ABI version; 0 when Landlock is missing or disabled.
    pub landlock_abi: u32,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// seccomp user notifications and `pidfd_getfd` exist (Linux 5.9+), and Yama lets Toolgate
    /// reach its own servers' memory: "loopback only".
    pub notify: bool,
    /// Linux is the only platform whose sandbox is verified here.
    pub verified: bool,
}

/// The first Landlock ABI with TCP rules (Linux 6.7).
pub const LANDLOCK_NET_ABI: u32 = 4;
/// The first Landlock ABI that scopes signals and abstract Unix sockets (Linux 6.12).
pub const LANDLOCK_SCOPE_ABI: u32 = 6;

impl Support {
    /// What the running kernel offers.
    pub fn probe() -> Self {
        #[cfg(target_os = "linux")]
        {
            linux::probe()
        }
        #[cfg(not(target_os = "linux"))]
        {
            Support {
                landlock_abi: 0,
                seccomp: false,
                notify: false,
                verified: false,
            }
        }
    }

    /// Whether files can be confined at all.
    pub fn files(&self) -> bool {
        self.landlock_abi >= 1
    }

    /// What this kernel cannot enforce of a confinement with `network`, each in words that say
    /// what stays open and what would fix it. Empty: everything asked for is enforced.
    pub fn gaps(&self, network: Network) -> Vec<String> {
        let mut gaps = Vec::new();
        if cfg!(target_os = "macos") {
            gaps.push(
                "the macOS sandbox (a sandbox-exec profile) has not been verified: it may not \
                 confine the server as described"
                    .to_owned(),
            );
            return gaps;
        }
        if !cfg!(target_os = "linux") {
            gaps.push(
                "there is no sandbox on this platform yet: the server runs unconfined".to_owned(),
            );
            return gaps;
        }
        if !self.files() {
            gaps.push(
                "files are not confined: this kernel has no Landlock (Linux 5.13 or later with \
                 Landlock enabled, e.g. lsm=landlock on the kernel command line)"
                    .to_owned(),
            );
        }
        match network {
            Network::Any => {}
            _ if !self.seccomp => gaps.push(format!(
                "the network is not confined (asked: {network}): this kernel does not allow \
                 seccomp filters"
            )),
            Network::Loopback | Network::Proxy(_) if !self.notify => gaps.push(
                "\"loopback only\" and \"hosts\" need seccomp user notifications and pidfd_getfd (Linux \
                 5.9 or later), and a Yama ptrace_scope of 0 or 1: the network is closed \
                 entirely instead"
                    .to_owned(),
            ),
            _ => {}
        }
        if network != Network::Any && !self.seccomp && self.landlock_abi >= LANDLOCK_NET_ABI {
            gaps.push("Landlock still refuses TCP connections and listening".to_owned());
        }
        gaps
    }

    /// One line for the doctor.
    pub fn summary(&self) -> String {
        if cfg!(windows) {
            return "none on Windows yet (the AppContainer is not wired into the start): local \
                    servers run unconfined"
                .to_owned();
        }
        if !cfg!(target_os = "linux") {
            return "not verified on this platform: local servers run unconfined".to_owned();
        }
        let files = if self.files() {
            format!("Landlock ABI {} (files)", self.landlock_abi)
        } else {
            "no Landlock: files are not confined".to_owned()
        };
        let network = match (self.seccomp, self.notify) {
            (true, true) => "seccomp with user notifications (network none, loopback, hosts, any)",
            (true, false) => {
                "seccomp without user notifications (loopback and hosts are treated as none)"
            }
            (false, _) => "no seccomp: the network is not confined",
        };
        format!("{files}; {network}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows has no sandbox yet, and says so wherever a server's confinement is shown.
    #[cfg(windows)]
    #[test]
    fn windows_says_its_servers_run_unconfined() {
        let support = Support::probe();
        assert!(
            support.summary().contains("run unconfined"),
            "{}",
            support.summary()
        );
        let gaps = support.gaps(Network::None);
        assert!(gaps.iter().any(|g| g.contains("unconfined")), "{gaps:?}");
    }

    #[test]
    fn gaps_say_what_stays_open_and_never_hide_a_missing_mechanism() {
        let full = Support {
            landlock_abi: 7,
            seccomp: true,
            notify: true,
            verified: true,
        };
        if cfg!(target_os = "linux") {
            for network in [Network::None, Network::Loopback, Network::Any] {
                assert!(full.gaps(network).is_empty(), "{network}");
            }
            let none = Support {
                landlock_abi: 0,
                seccomp: false,
                notify: false,
                verified: true,
            };
            let gaps = none.gaps(Network::None);
            assert!(gaps[0].contains("files are not confined"), "{gaps:?}");
            assert!(gaps[1].contains("network is not confined"), "{gaps:?}");
            assert_eq!(none.gaps(Network::Any).len(), 1);
            let old = Support {
                notify: false,
                ..full
            };
            assert!(old.gaps(Network::Loopback)[0].contains("closed entirely"));
            assert!(old.gaps(Network::None).is_empty());
        } else {
            assert!(!full.gaps(Network::Any).is_empty());
        }
    }

    #[test]
    fn a_reserved_port_is_held_until_its_last_hold_is_dropped() {
        let reserved = Reserved::new();
        let door = reserved.hold(8787);
        let again = reserved.clone().hold(8787);
        assert!(reserved.contains(8787) && !reserved.contains(8788));
        drop(door);
        assert!(reserved.contains(8787), "held twice, released once");
        drop(again);
        assert!(!reserved.contains(8787));
        let any = reserved.hold(0);
        assert!(!reserved.contains(0) && any.port() == 0);
    }

    #[test]
    fn a_confinement_reads_what_it_writes() {
        let c = Confinement {
            read: vec!["/usr".into()],
            write: vec!["/home/u/notes".into()],
            network: Network::None,
        };
        assert!(c.reads(Path::new("/usr/lib/x")));
        assert!(c.reads(Path::new("/home/u/notes/a.md")));
        assert!(c.writes(Path::new("/home/u/notes/a.md")));
        assert!(!c.writes(Path::new("/usr/lib")));
        assert!(!c.reads(Path::new("/home/u/.ssh/id_ed25519")));
        assert!(
            !c.reads(Path::new("/home/u/notes2")),
            "by component, not by text"
        );
    }
}
