//! No server outlives Toolgate, even when Toolgate itself is killed.
//!
//! Three layers, because each alone has a gap:
//! 1. Every stdio server is a process-group leader, stopped as a group (see `spawn.rs`), so a
//!    launcher such as `npx` cannot leave the real server behind.
//! 2. On Linux each server gets a parent-death signal: if Toolgate dies, even by SIGKILL, the
//!    kernel kills the server. It covers the direct child only, so
//! 3. a reaper process (`toolgate-guard`) is told every running group and its leader's start
//!    time, and kills what is left of them the moment Toolgate dies (only while the leader is
//!    still that process), so a server's helpers die with it; and since the reaper itself can be
//!    killed too,
//! 4. each running group is recorded in a file (pid plus its start time, so a pid the system has
//!    since reused is never touched), and the next start sweeps up what a killed run left: a
//!    group by its number only while its recorded leader is unreaped, otherwise only the members
//!    that carry the dead run's `MARKER`.
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

    /// Whether the pid still names this process, exited but not yet reaped included: while it
    /// is unreaped, its number (and the group it leads) cannot be handed to another.
    fn is_unreaped(&self) -> bool {
        read_stat(self.pid).is_some_and(|s| s.start == self.start)
    }

    /// The value of [`MARKER`] in the environment of the servers this process starts.
    pub(crate) fn marker(&self) -> String {
        format!("{}.{}", self.pid, self.start)
    }
}

/// Set in every server's environment to the identity of the Toolgate process that started it
/// ([`ProcessId::marker`]), and inherited by what the server starts. When a dead run's group
/// has lost its leader, its number alone proves nothing (the group may have emptied and the
/// number been taken by another program's group); the sweep kills only the members that carry
/// the dead run's own marker. A helper that was started with a cleared environment is spared:
/// missing one of ours is the price of never killing another's.
pub(crate) const MARKER: &str = "TOOLGATE_STARTED_BY";

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
            guard.watch(leader.pid, leader.start);
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
            if kill_group_if_ours(record.host, leader) {
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

/// Kills what is left of the group `leader` led in the dead run `host`, touching nothing that
/// is not provably that run's: the whole group while its leader is unreaped and still the
/// recorded process (the number cannot be reused then), or else each member carrying the run's
/// [`MARKER`], checked again just before its signal.
fn kill_group_if_ours(host: ProcessId, leader: ProcessId) -> bool {
    if leader.pid <= 1 {
        return false;
    }
    if leader.is_unreaped() {
        signal_group(leader.pid, Signal::Kill);
        return true;
    }
    if read_stat(leader.pid).is_some() {
        // The number is another process's now, and so is the group it leads.
        return false;
    }
    let marker = host.marker();
    let mut killed = false;
    for pid in group_members(leader.pid) {
        let Some(member) = ProcessId::of(pid) else {
            continue;
        };
        if member.start < leader.start || !carries_marker(pid, &marker) {
            continue;
        }
        killed |= signal_process_if(member, Signal::Kill);
    }
    killed
}

/// Signals what is left of a group of this process's after its leader was reaped: its number
/// may already lead another program's group, so only the members that carry this process's
/// [`MARKER`] and started after the leader are signalled. Returns whether any was left.
pub(crate) fn signal_leftovers(leader: ProcessId, signal: Signal) -> bool {
    let Some(host) = ProcessId::current() else {
        // No /proc (macOS): by number, as before; sound unless the pid counter wraps between
        // the leader's reaping and here.
        let left = !group_members(leader.pid).is_empty();
        if left {
            signal_group(leader.pid, signal);
        }
        return left;
    };
    let marker = host.marker();
    let mut left = false;
    for pid in group_members(leader.pid) {
        let Some(member) = ProcessId::of(pid) else {
            continue;
        };
        if member.start >= leader.start && carries_marker(pid, &marker) {
            left |= signal_process_if(member, signal);
        }
    }
    left
}

/// Whether the process's environment holds `MARKER=<marker>`.
fn carries_marker(pid: u32, marker: &str) -> bool {
    let wanted = format!("{MARKER}={marker}");
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()))
}

/// Signals one process if its pid still names `process`. The check and the signal are two
/// system calls apart: the pid would have to be freed and the counter go all the way round in
/// between.
fn signal_process_if(process: ProcessId, signal: Signal) -> bool {
    if !process.is_unreaped() {
        return false;
    }
    #[cfg(unix)]
    {
        use nix::sys::signal::{kill, Signal as S};
        let Ok(pid) = i32::try_from(process.pid) else {
            return false;
        };
        let signal = match signal {
            Signal::Term => S::SIGTERM,
            Signal::Kill => S::SIGKILL,
        };
        kill(nix::unistd::Pid::from_raw(pid), signal).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = signal;
        false
    }
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
    zombie: bool,
    pgrp: u32,
    start: u64,
}

/// Fields of `/proc/<pid>/stat`: after the command name (which may hold spaces and parentheses,
/// hence the last `)`), field 3 is the state, 5 the process group, 22 the start time.
fn proc_stat(pid: u32) -> Option<Stat> {
    read_stat(pid).filter(|s| !s.zombie)
}

/// As [`proc_stat`], zombies included: a zombie has exited (only its parent's bookkeeping
/// remains), but it still holds its pid and its group's number.
fn read_stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 of the file.
    Some(Stat {
        zombie: fields.first() == Some(&"Z"),
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

    /// A group whose leader has exited, leaving one `sleep` running; with `marker` in its
    /// environment when given. Returns the sleeper, the group and the leader's start time.
    fn leaderless_group(marker: Option<&str>) -> (u32, u32, u64) {
        use std::io::Write;
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new("sh");
        command
            .args(["-c", "sleep 30 & read x"])
            .stdin(std::process::Stdio::piped())
            .process_group(0);
        if let Some(marker) = marker {
            command.env(MARKER, marker);
        }
        let mut leader = command.spawn().unwrap();
        let pgid = leader.id();
        let start = ProcessId::of(pgid).unwrap().start;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while group_members(pgid).len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        writeln!(leader.stdin.take().unwrap()).unwrap();
        leader.wait().unwrap();
        let members = group_members(pgid);
        assert_eq!(members.len(), 1, "the sleeper outlives its leader");
        (members[0], pgid, start)
    }

    /// A dead run's group whose leader is gone is swept by its members' marker, never by its
    /// number: the number may since lead another program's group (here one without the marker,
    /// recorded as if its number had been ours, which the sweep used to kill).
    #[test]
    fn a_leaderless_group_is_swept_by_the_dead_runs_marker_only() {
        let dir = std::env::temp_dir().join(format!("tg-orphans-marker-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dead = ProcessId { pid: 1, start: 1 };
        let (our_helper, our_group, our_start) = leaderless_group(Some(&dead.marker()));
        let (their_helper, their_group, their_start) = leaderless_group(None);
        // Another run's marker is not this run's either.
        let other = ProcessId { pid: 1, start: 2 };
        let (other_helper, other_group, other_start) = leaderless_group(Some(&other.marker()));
        let record = Record {
            boot: boot_id(),
            host: dead,
            groups: vec![
                (
                    "ours".to_owned(),
                    ProcessId {
                        pid: our_group,
                        start: our_start,
                    },
                ),
                (
                    "theirs".to_owned(),
                    ProcessId {
                        pid: their_group,
                        start: their_start,
                    },
                ),
                (
                    "other".to_owned(),
                    ProcessId {
                        pid: other_group,
                        start: other_start,
                    },
                ),
            ],
        };
        std::fs::write(
            dir.join("running-1.json"),
            serde_json::to_vec(&record).unwrap(),
        )
        .unwrap();

        let killed = sweep(&dir);
        assert_eq!(killed, vec![("ours".to_owned(), our_group)]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while ProcessId::of(our_helper).is_some() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(ProcessId::of(our_helper).is_none(), "our helper is killed");
        assert!(
            ProcessId::of(their_helper).is_some(),
            "another program's group runs on"
        );
        assert!(
            ProcessId::of(other_helper).is_some(),
            "another run's helper runs on"
        );
        for pid in [their_helper, other_helper] {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        std::fs::remove_dir_all(&dir).ok();
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
