//! No server process outlives Toolgate, however Toolgate ends: the per-platform mechanism that
//! kills what is left of the servers the moment Toolgate's process is gone, behind one [`Guard`].
//!
//! - **Unix (Linux, macOS, the BSDs):** the reaper (`reaper.rs`), a `/bin/sh` of built-ins that
//!   holds a pipe from Toolgate and kills every process group still listed when the pipe closes.
//!   On Linux the supervisor also arms a parent-death signal for each server (in
//!   `toolgate-mcp`'s `spawn.rs`); macOS has no such signal, so there the reaper is the guard.
//! - **Windows:** a Job Object per server created with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`
//!   (`job.rs`). Each server process is assigned to its own as it starts, and the processes it
//!   starts later join it by inheritance; when Toolgate exits or is killed, the system closes
//!   its handles and ends every process in them. [`end_tree`] ends one server's whole tree.
//!
//! A guard that cannot be set up is reported, never fatal: the servers still run, and on Linux
//! the parent-death signal and the sweep at the next start remain.
//!
//! Verified here: Linux (the tests run) and Windows under Wine (the test command's Wine step).
//! macOS: the code type-checks for `x86_64-apple-darwin`, but has not run (see ARCHITECTURE.md,
//! "Platforms").

#[cfg(windows)]
mod job;
#[cfg(unix)]
mod reaper;

#[cfg(windows)]
pub use job::end_tree;
#[cfg(unix)]
pub use reaper::REAPER_NAME;

/// Kills the processes it watches when Toolgate's process ends, or when it is dropped.
pub struct Guard {
    #[cfg(unix)]
    inner: reaper::Reaper,
    #[cfg(windows)]
    inner: job::Jobs,
}

impl Guard {
    /// Sets the guard up, or says why it could not be.
    pub fn start() -> std::io::Result<Self> {
        #[cfg(unix)]
        let inner = reaper::Reaper::start()?;
        #[cfg(windows)]
        let inner = job::Jobs::create()?;
        Ok(Self { inner })
    }

    /// Watches a server that has just started: on Unix its process group (led by `pid`), on
    /// Windows its process and whatever it starts from now on. `start` is the leader's start
    /// time (field 22 of `/proc/<pid>/stat`) as read when it was started: on Linux the reaper
    /// kills the group only while its leader is still that process. Elsewhere it is unused (on
    /// Windows the job holds the process itself, not its number).
    pub fn watch(&mut self, pid: u32, start: u64) {
        #[cfg(unix)]
        self.inner.watch(pid, start);
        #[cfg(windows)]
        {
            let _ = start;
            self.inner.watch(pid);
        }
    }

    /// Stops watching a server that was stopped and waited for.
    pub fn forget(&mut self, pid: u32) {
        self.inner.forget(pid);
    }
}

#[cfg(not(any(unix, windows)))]
compile_error!("toolgate-guard has no way to stop servers with Toolgate on this platform");
