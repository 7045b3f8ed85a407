//! The reaper: a tiny process that outlives Toolgate just long enough to kill its servers' groups.
//!
//! The parent-death signal (see `stdio.rs`) reaches only a server's own process. What the server
//! started in its group (`sh -c 'helper & exec server'`, a launcher's child) would be left running
//! when Toolgate is killed, until the next start sweeps the records (`orphans.rs`). The reaper
//! closes that gap at the moment Toolgate dies.
//!
//! It is `/bin/sh` running a short script of shell built-ins, in a process group of its own (so a
//! Ctrl-C at the terminal, meant for Toolgate, does not stop it) with every catchable signal
//! ignored. Toolgate holds the write end of the reaper's stdin and tells it each group as it
//! starts (`+ <pgid>`) and ends (`- <pgid>`). When Toolgate exits for any reason, SIGKILL
//! included, the kernel closes that pipe; the reaper reads end-of-file, sends SIGKILL to every
//! group still listed, and exits. A normal stop removes each group first, so then it kills
//! nothing.
//!
//! Why a shell and not our own binary: the app, the CLI and every test host would each have to
//! recognise a "be the reaper" argument before doing anything else, and a binary that forgot
//! would start a second Toolgate. Why not a forked copy of this process: it would inherit every
//! open descriptor (sockets, the database), keeping connections open after Toolgate closed them.
//! `std::process::Command` opens everything close-on-exec, so the shell holds only its pipe.
//!
//! A group id cannot be handed to a new process while any member of the group lives, so a kill
//! at end-of-file reaches only our servers' leftovers; a group that emptied in the milliseconds
//! between Toolgate's death and the kill could only be confused with a new one after the pid
//! counter wrapped around in those milliseconds.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};

/// Reads `+ pgid` / `- pgid` lines; at end of input kills what is left. Built-ins only, so it
/// needs nothing on PATH. `$0` names it in `ps`.
const SCRIPT: &str = r#"
trap '' HUP INT QUIT TERM PIPE USR1 USR2
groups=' '
while read -r op pgid; do
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

    /// Lists a group to kill should Toolgate die.
    pub fn watch(&mut self, pgid: u32) {
        self.tell('+', pgid);
    }

    /// Unlists a group that was stopped (or whose leader exited and was reaped).
    pub fn forget(&mut self, pgid: u32) {
        self.tell('-', pgid);
    }

    fn tell(&mut self, op: char, pgid: u32) {
        if pgid <= 1 {
            return;
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return;
        };
        // A short line into a pipe with room: this never blocks in practice.
        if let Err(e) = writeln!(stdin, "{op} {pgid}") {
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
        reaper.watch(listed_pgid);
        reaper.watch(kept_pgid);
        reaper.forget(kept_pgid);
        // Junk and dangerous numbers are ignored.
        reaper.tell('+', 1);
        if let Some(stdin) = reaper.stdin.as_mut() {
            writeln!(stdin, "+ 12x\n+ -5\nnonsense").unwrap();
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
