//! No server outlives Toolgate, even when Toolgate itself is killed.
//!
//! Three layers, because each alone has a gap:
//! 1. Every stdio server is a process-group leader, stopped as a group (see `stdio.rs`), so a
//!    launcher such as `npx` cannot leave the real server behind.
//! 2. On Linux each server gets a parent-death signal: if Toolgate dies, even by SIGKILL, the
//!    kernel kills the server. It covers the direct child only, so
//! 3. a reaper process (`toolgate-guard`) is told every running group and kills what is left of them
//!    the moment Toolgate dies, so a server's helpers die with it; and since the reaper itself
//!    can be killed too,
//! 4. each running group is recorded in a file (pid plus its start time, so a pid the system has
//!    since reused is never touched), and the next start sweeps up what a killed run left.
//!
//! The records of a Toolgate process that is still running are left alone, so two instances
//! never stop each other's servers. Records of an earlier boot are dropped without killing
//! anything: nothing survives a reboot, and pids and start times repeat across boots.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use toolgate_guard::Guard;

/// A process, identified so that a reused pid never matches: the pid and its start time in
/// clock ticks since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    pub start: u64,
}

impl ProcessId {
    /// This process.
    pub fn current() -> Option<Self> {
        Self::of(std::process::id())
    }

    /// The process with this pid, if it is running.
    pub fn of(pid: u32) -> Option<Self> {
        proc_stat(pid).map(|s| Self {
            pid,
            start: s.start,
        })
    }

    pub fn is_alive(&self) -> bool {
        Self::of(self.pid).is_some_and(|now| now == *self)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record {
    /// `/proc/sys/kernel/random/boot_id` when the record was written.
    boot: String,
    host: ProcessId,
    /// Each server process group: the server's id and the group's leader. A server restarted
    /// while its old process is still being stopped briefly has two.
    groups: Vec<(String, ProcessId)>,
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// The running groups of this process, written to `<dir>/running-<pid>.json` on every change.
pub(crate) struct Registry {
    file: Option<PathBuf>,
    record: Option<Record>,
    /// The reaper (Unix) or job (Windows) that ends the servers with us; started with the first
    /// server, so a host that runs none starts no process.
    guard: Option<Guard>,
}

impl Registry {
    pub fn new(dir: Option<&Path>) -> Self {
        let host = ProcessId::current();
        let file = dir.zip(host).and_then(|(dir, host)| {
            std::fs::create_dir_all(dir)
                .map_err(|e| {
                    tracing::warn!("cannot record server processes in {}: {e}", dir.display())
                })
                .ok()?;
            Some(dir.join(format!("running-{}.json", host.pid)))
        });
        Self {
            file,
            record: host.map(|host| Record {
                boot: boot_id(),
                host,
                groups: Vec::new(),
            }),
            guard: None,
        }
    }

    pub fn insert(&mut self, server: &str, leader: ProcessId) {
        if let Some(r) = self.record.as_mut() {
            r.groups.push((server.to_owned(), leader));
        }
        self.save();
        if self.guard.is_none() {
            self.guard = Guard::start()
                .map_err(|e| {
                    tracing::warn!(
                        "could not start the reaper that stops servers' helpers if Toolgate is \
                         killed ({e}); they will be stopped at the next start instead"
                    )
                })
                .ok();
        }
        if let Some(guard) = self.guard.as_mut() {
            guard.watch(leader.pid);
        }
    }

    pub fn remove(&mut self, server: &str, leader: ProcessId) {
        if let Some(r) = self.record.as_mut() {
            r.groups.retain(|(s, l)| !(s == server && *l == leader));
        }
        self.save();
        if let Some(guard) = self.guard.as_mut() {
            guard.forget(leader.pid);
        }
    }

    fn save(&self) {
        let (Some(file), Some(record)) = (&self.file, &self.record) else {
            return;
        };
        if record.groups.is_empty() {
            let _ = std::fs::remove_file(file);
            return;
        }
        let tmp = file.with_extension("json.tmp");
        let written = serde_json::to_vec(record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::write(&tmp, bytes))
            .and_then(|()| std::fs::rename(&tmp, file));
        if let Err(e) = written {
            tracing::warn!("cannot record server processes in {}: {e}", file.display());
        }
    }
}

/// Kills the server groups recorded by Toolgate processes that are no longer running, and
/// removes their records. Returns the groups killed, as (server id, leader pid).
pub fn sweep(dir: &Path) -> Vec<(String, u32)> {
    let mut killed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return killed;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("running-") && name.ends_with(".json")) {
            continue;
        }
        let record = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok());
        let Some(record) = record else {
            let _ = std::fs::remove_file(&path);
            continue;
        };
        if record.boot != boot_id() {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        if record.host.is_alive() {
            continue;
        }
        for (server, leader) in record.groups {
            if kill_group_if_ours(leader) {
                tracing::warn!(
                    server,
                    pid = leader.pid,
                    "stopped a server left by a previous run"
                );
                killed.push((server, leader.pid));
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    killed
}

/// Kills the group `leader` led, if it still exists and is still the same group.
fn kill_group_if_ours(leader: ProcessId) -> bool {
    if leader.pid <= 1 {
        return false;
    }
    let ours = match ProcessId::of(leader.pid) {
        // The leader runs: it is ours only if it started when ours did.
        Some(now) => now == leader,
        // The leader is gone. While a member of its group lives, the kernel does not hand the
        // number to a new process, so a live member is ours, unless the group emptied and a new
        // group took the number. Members of ours started no earlier than our leader; members of
        // a group that predates it cannot be ours.
        None => {
            let members = group_members(leader.pid);
            !members.is_empty()
                && members
                    .iter()
                    .all(|pid| ProcessId::of(*pid).is_some_and(|p| p.start >= leader.start))
        }
    };
    if ours {
        signal_group(leader.pid, Signal::Kill);
    }
    ours
}

#[derive(Debug, Clone, Copy)]
#[cfg_attr(windows, allow(dead_code))]
pub(crate) enum Signal {
    Term,
    Kill,
}

/// Sends a signal to every process in a group. A group that no longer exists is not an error.
pub(crate) fn signal_group(pgid: u32, signal: Signal) {
    // 0 would signal our own group, 1 is init.
    if pgid <= 1 {
        return;
    }
    #[cfg(unix)]
    {
        use nix::sys::signal::{killpg, Signal as S};
        let Ok(pgid) = i32::try_from(pgid) else {
            return;
        };
        let signal = match signal {
            Signal::Term => S::SIGTERM,
            Signal::Kill => S::SIGKILL,
        };
        let _ = killpg(nix::unistd::Pid::from_raw(pgid), signal);
    }
    // Windows has no signals: closing stdin was the request to stop; the end is the server's
    // Job Object terminated, itself and everything it started.
    #[cfg(windows)]
    if matches!(signal, Signal::Kill) {
        toolgate_guard::end_tree(pgid);
    }
}

struct Stat {
    pgrp: u32,
    start: u64,
}

/// Fields of `/proc/<pid>/stat`: after the command name (which may hold spaces and parentheses,
/// hence the last `)`), field 3 is the state, 5 the process group, 22 the start time.
fn proc_stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 of the file.
    if fields.first() == Some(&"Z") {
        return None; // a zombie has exited; only its parent's bookkeeping remains
    }
    Some(Stat {
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Pids of the live processes in a group.
pub fn group_members(pgid: u32) -> Vec<u32> {
    if pgid <= 1 {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| proc_stat(*pid).is_some_and(|s| s.pgrp == pgid))
        .collect()
}

// Process groups and `/proc`: Unix (Linux) only.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    fn spawn_group() -> std::process::Child {
        use std::os::unix::process::CommandExt;
        std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap()
    }

    #[test]
    fn sweeps_groups_of_dead_hosts_only() {
        let dir = std::env::temp_dir().join(format!("tg-orphans-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut left_over = spawn_group();
        let mut live_hosts = spawn_group();
        let leader = ProcessId::of(left_over.id()).unwrap();
        // A host that has exited (pid 1's start time never matches a made-up one) ...
        let dead = Record {
            boot: boot_id(),
            host: ProcessId { pid: 1, start: 1 },
            groups: vec![("s".to_owned(), leader)],
        };
        std::fs::write(
            dir.join("running-1.json"),
            serde_json::to_vec(&dead).unwrap(),
        )
        .unwrap();
        // ... and one that still runs (this test), whose servers must be left alone.
        let mut mine = Registry::new(Some(&dir));
        mine.insert("t", ProcessId::of(live_hosts.id()).unwrap());
        // A record naming a pid whose start time differs: a reused pid, never killed.
        let reused = Record {
            boot: boot_id(),
            host: ProcessId { pid: 1, start: 2 },
            groups: vec![(
                "r".to_owned(),
                ProcessId {
                    pid: live_hosts.id(),
                    start: leader.start + 999_999,
                },
            )],
        };
        std::fs::write(
            dir.join("running-2.json"),
            serde_json::to_vec(&reused).unwrap(),
        )
        .unwrap();

        // A record of an earlier boot: dropped, never acted on.
        let old_boot = Record {
            boot: "an-earlier-boot".to_owned(),
            host: ProcessId { pid: 1, start: 3 },
            groups: vec![("o".to_owned(), ProcessId::of(live_hosts.id()).unwrap())],
        };
        std::fs::write(
            dir.join("running-3.json"),
            serde_json::to_vec(&old_boot).unwrap(),
        )
        .unwrap();

        let killed = sweep(&dir);
        assert_eq!(killed, vec![("s".to_owned(), left_over.id())]);
        assert!(
            left_over.wait().unwrap().code().is_none(),
            "killed by a signal"
        );
        assert!(
            live_hosts.try_wait().unwrap().is_none(),
            "a live host's server is untouched"
        );
        assert!(dir
            .join(format!("running-{}.json", std::process::id()))
            .exists());
        assert!(!dir.join("running-1.json").exists());
        assert!(!dir.join("running-3.json").exists());

        mine.remove("t", ProcessId::of(live_hosts.id()).unwrap());
        assert!(!dir
            .join(format!("running-{}.json", std::process::id()))
            .exists());
        live_hosts.kill().unwrap();
        live_hosts.wait().unwrap();
        std::fs::remove_dir_all(&dir).ok();
    }
}
