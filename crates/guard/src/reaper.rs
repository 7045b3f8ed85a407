//! The reaper: a tiny process that outlives Toolgate just long enough to kill its servers' groups.
//!
//! The parent-death signal (see `spawn.rs`) reaches only a server's own process. What the server
//! started in its group (`sh -c 'helper & exec server'`, a launcher's child) would be left running
//! when Toolgate is killed, until the next start sweeps the records (`orphans.rs`). The reaper
//! closes that gap at the moment Toolgate dies.
//!
//! It is `/bin/sh` running a short script of shell built-ins, in a process group of its own (so a
//! Ctrl-C at the terminal, meant for Toolgate, does not stop it) with every catchable signal
//! ignored. Toolgate holds the write end of the reaper's stdin and tells it each group as it
//! starts (`+ <pgid> <start>`, the leader's start time) and ends (`- <pgid>`). When Toolgate
//! exits for any reason, SIGKILL included, the kernel closes that pipe; the reaper reads
//! end-of-file, sends SIGKILL to every group still listed that is still ours, and exits. A
//! normal stop removes each group first, so then it kills nothing.
//!
//! "Still ours" (Linux): the group's leader is still the process Toolgate started, that is
//! `/proc/<pgid>/stat` exists and its start time (field 22, clock ticks since boot) is the one
//! Toolgate recorded. A group number cannot be handed to a new group while its leader is unreaped
//! (a zombie still has its stat and its start time), so then the number names our group. A
//! number whose leader has gone is never signalled: the group may have emptied and the number
//! been taken by someone else's group (a pid wraps quickly on a busy machine with `pid_max`
//! 32768, and a listed group can be stale for a moment after its leader was reaped). What such a
//! group leaves, the next start sweeps by each process's own identity (`orphans.rs` in
//! `toolgate-mcp`). Killed at once by the parent-death signal, a leader is still unreaped (and
//! so checkable) when the reaper reads end-of-file: the kernel sends that signal on the same exit
//! that closes the pipe, and the leader's new parent reaps it only after it has died.
//!
//! Other Unix (macOS, the BSDs) has no `/proc` to read a start time from with built-ins: there
//! the reaper kills the listed numbers as before, which is sound only while the pid counter does
//! not wrap between a leader's end and its `-` line (or Toolgate's death and the kill).
//!
//! Why a shell and not our own binary: the app, the CLI and every test host would each have to
//! recognise a "be the reaper" argument before doing anything else, and a binary that forgot
//! would start a second Toolgate. Why not a forked copy of this process: it would inherit every
//! open descriptor (sockets, the database), keeping connections open after Toolgate closed them.
//! `std::process::Command` opens everything close-on-exec, so the shell holds only its pipe.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};

/// Reads `+ pgid start` / `- pgid` lines; at end of input kills the listed groups whose leader
/// still has the recorded start time. Built-ins only, so it needs nothing on PATH. `$0` names
/// it in `ps`.
///
/// The stat line is cut after its last `)`: the command name before it may hold spaces and
/// parentheses. A name holding a newline ends the line `read` takes early, with too few fields
/// after it to pass (a name has at most 15 bytes, the 20 fields need more), so it kills nothing.
#[cfg(target_os = "linux")]
const SCRIPT: &str = r#"
trap '' HUP INT QUIT TERM PIPE USR1 USR2
set -f
groups=' '
while read -r op pgid start; do
  case $pgid in ''|*[!0-9]*|0|1) continue ;; esac
  case $op in
    +) case $start in ''|*[!0-9]*) continue ;; esac
       groups="$groups$pgid:$start " ;;
    -) kept=' '
       for g in $groups; do [ "${g%%:*}" = "$pgid" ] || kept="$kept$g "; done
       groups=$kept ;;
  esac
done
for g in $groups; do
  pgid=${g%%:*}
  start=${g#*:}
  stat=
  { read -r stat < "/proc/$pgid/stat"; } 2>/dev/null
  set -- ${stat##*)}
  [ "$#" -ge 20 ] || continue
  shift 19
  [ "$1" = "$start" ] && kill -s KILL -- "-$pgid" 2>/dev/null
done
"#;

/// Without `/proc`, the listed numbers as they are (see the module docs for the gap).
#[cfg(not(target_os = "linux"))]
const SCRIPT: &str = r#"
trap '' HUP INT QUIT TERM PIPE USR1 USR2
groups=' '
while read -r op pgid start; do
  case $pgid in ''|*[!0-9]*|0|1) continue ;; esac
  case $op in
    +) groups="$groups$pgid " ;;
    -) kept=' '
       for g in $groups; do [ "$g" = "$pgid" ] || kept="$kept$g "; done
       groups=$kept ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
"#;

/// The name the reaper shows in `ps` (its `$0`).
pub const REAPER_NAME: &str = "toolgate-reaper";

/// A running reaper. Dropping it ends the reaper, which then kills whatever is still listed.
pub(crate) struct Reaper {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Reaper {
    /// Starts a reaper, or says why it could not (the servers still have the parent-death signal
    /// and the sweep at the next start).
    pub fn start() -> std::io::Result<Self> {
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", SCRIPT, REAPER_NAME])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env_clear()
            .current_dir("/");
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let mut child = command.spawn()?;
        let stdin = child.stdin.take();
        Ok(Self { child, stdin })
    }

    /// The reaper's pid, for tests.
    #[cfg(test)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Lists a group to kill should Toolgate die, with its leader's start time (field 22 of
    /// `/proc/<pgid>/stat`), so that only this leader's group is ever killed.
    pub fn watch(&mut self, pgid: u32, start: u64) {
        self.tell('+', pgid, start);
    }

    /// Unlists a group that was stopped (or whose leader exited and was reaped).
    pub fn forget(&mut self, pgid: u32) {
        self.tell('-', pgid, 0);
    }

    fn tell(&mut self, op: char, pgid: u32, start: u64) {
        if pgid <= 1 {
            return;
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return;
        };
        // A short line into a pipe with room: this never blocks in practice.
        if let Err(e) = writeln!(stdin, "{op} {pgid} {start}") {
            tracing::warn!(
                "the reaper that stops servers if Toolgate is killed is gone ({e}); \
                 their leftovers will be stopped at the next start instead"
            );
            self.stdin = None;
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        // End of input: the reaper kills what is still listed (nothing, after a clean stop) and
        // exits at once, so waiting here is brief and leaves no zombie.
        self.stdin = None;
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn alive(pid: u32) -> bool {
        // A zombie is dead for our purposes.
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }

    fn group_of_sleepers() -> (Child, u32) {
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 600 & exec sleep 601"]);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().unwrap();
        let pgid = child.id();
        (child, pgid)
    }

    /// The live processes of a process group, from /proc (these tests run on Linux).
    fn members(pgid: u32) -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit(')')
                        .next()
                        .and_then(|rest| rest.split_whitespace().nth(2))
                        .and_then(|g| g.parse::<u32>().ok())
                        == Some(pgid)
                })
            })
            .collect()
    }

    /// Field 22 of `/proc/<pid>/stat`, as Toolgate records it.
    fn start_of(pid: u32) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        rest.split_whitespace().nth(19).unwrap().parse().unwrap()
    }

    fn wait_for(mut done: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        done()
    }

    #[test]
    fn end_of_input_kills_the_listed_groups_and_spares_the_unlisted() {
        let (mut kept, kept_pgid) = group_of_sleepers();
        let (mut listed, listed_pgid) = group_of_sleepers();
        assert!(wait_for(|| members(listed_pgid).len() == 2));
        assert!(wait_for(|| members(kept_pgid).len() == 2));
        let mut reaper = Reaper::start().unwrap();
        reaper.watch(listed_pgid, start_of(listed_pgid));
        reaper.watch(kept_pgid, start_of(kept_pgid));
        reaper.forget(kept_pgid);
        // Junk and dangerous numbers are ignored.
        reaper.tell('+', 1, start_of(1));
        if let Some(stdin) = reaper.stdin.as_mut() {
            writeln!(
                stdin,
                "+ 12x 5\n+ -5 5\nnonsense\n+ {kept_pgid} x{}",
                start_of(kept_pgid)
            )
            .unwrap();
        }
        let pid = reaper.pid();
        drop(reaper);
        assert!(!alive(pid), "the reaper exits at end of input");
        let _ = listed.wait();
        assert!(
            wait_for(|| members(listed_pgid).iter().all(|p| !alive(*p))),
            "the listed group is killed, its helper too: {:?}",
            members(listed_pgid)
        );
        assert_eq!(
            members(kept_pgid).iter().filter(|p| alive(**p)).count(),
            2,
            "the unlisted group runs on"
        );
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{kept_pgid}")])
            .status();
        let _ = kept.wait();
    }

    /// A listed number whose leader is no longer the process Toolgate started (its pid was
    /// reused: here, a live unrelated group recorded with another start time) is not killed at
    /// end of input; the group whose leader is the recorded process still is.
    #[test]
    fn end_of_input_spares_a_number_now_held_by_another_process() {
        let (mut reused, reused_pgid) = group_of_sleepers();
        let (mut ours, ours_pgid) = group_of_sleepers();
        assert!(wait_for(|| members(reused_pgid).len() == 2));
        assert!(wait_for(|| members(ours_pgid).len() == 2));
        let real = start_of(reused_pgid);
        let mut reaper = Reaper::start().unwrap();
        // Earlier and later start times, none, and the right digits spelled otherwise.
        reaper.watch(reused_pgid, real.saturating_sub(1));
        reaper.watch(reused_pgid, real + 1);
        reaper.watch(reused_pgid, 0);
        if let Some(stdin) = reaper.stdin.as_mut() {
            writeln!(
                stdin,
                "+ {reused_pgid} 0{real}\n+ {reused_pgid} {real}0\n+ {reused_pgid}"
            )
            .unwrap();
        }
        reaper.watch(ours_pgid, start_of(ours_pgid));
        drop(reaper);
        let _ = ours.wait();
        assert!(
            wait_for(|| members(ours_pgid).iter().all(|p| !alive(*p))),
            "the group led by the recorded process is killed"
        );
        assert_eq!(
            members(reused_pgid).iter().filter(|p| alive(**p)).count(),
            2,
            "a group whose leader is another process than the one recorded runs on"
        );
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{reused_pgid}")])
            .status();
        let _ = reused.wait();
    }

    /// The start time is read after the command name's last `)`, whatever the name holds.
    #[test]
    fn a_leader_named_to_look_like_stat_fields_is_judged_by_its_real_start() {
        let dir = std::env::temp_dir().join(format!("tg-reaper-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sleep = ["/bin/sleep", "/usr/bin/sleep"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .unwrap();
        let spawn = |name: &str| {
            let link = dir.join(name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(sleep, &link).unwrap();
            let mut command = Command::new(&link);
            command.arg("600");
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            command.spawn().unwrap()
        };
        // The name is cut to 15 bytes in stat: enough for a ')' and a few fake fields.
        let mut spared = spawn("x) R 1 1 1 1 1");
        let mut killed = spawn("y) (z) 0 0 0");
        let (spared_pid, killed_pid) = (spared.id(), killed.id());
        assert!(wait_for(|| alive(spared_pid) && alive(killed_pid)));
        let mut reaper = Reaper::start().unwrap();
        reaper.watch(spared_pid, start_of(spared_pid) + 7);
        reaper.watch(killed_pid, start_of(killed_pid));
        drop(reaper);
        assert!(
            killed.wait().unwrap().code().is_none(),
            "killed by a signal"
        );
        assert!(alive(spared_pid), "a wrong start time spares the group");
        spared.kill().unwrap();
        spared.wait().unwrap();
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_reaper_ignores_the_signals_meant_for_toolgate() {
        let reaper = Reaper::start().unwrap();
        let pid = reaper.pid();
        // Give the shell time to set its traps.
        std::thread::sleep(Duration::from_millis(200));
        for signal in [libc_signal::INT, libc_signal::TERM, libc_signal::HUP] {
            let _ = Command::new("kill")
                .args([format!("-{signal}"), pid.to_string()])
                .status();
        }
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            alive(pid),
            "Ctrl-C, SIGTERM and SIGHUP do not stop the reaper"
        );
        drop(reaper);
        assert!(!alive(pid));
    }

    mod libc_signal {
        pub const HUP: u8 = 1;
        pub const INT: u8 = 2;
        pub const TERM: u8 = 15;
    }
}
