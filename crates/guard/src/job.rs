//! Windows: a Job Object per server, that ends its processes when its last handle closes.
//!
//! Toolgate holds the only handle of each. When Toolgate exits for any reason, including being
//! ended from the Task Manager, Windows closes the handles and, because of
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, terminates every process in them. A server is assigned
//! right after it is spawned; the processes it starts afterwards are in its job from birth (job
//! membership is inherited). What it started in the instant between spawn and assignment is not,
//! a gap that creating it suspended would close (std's `Command` cannot do that yet).
//!
//! One job per server is also Windows' process group: [`end_tree`] ends a server and whatever
//! it started (`npx.cmd` → `node`), as a signal to a Unix process group does.
//!
//! Run under Wine in the test command (`tests/tests/portable.rs`); not on Windows itself.

use std::collections::BTreeMap;
use std::sync::Mutex;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE};

pub(crate) struct Job {
    handle: HANDLE,
}

// SAFETY: a job handle is a kernel object reference, usable from any thread.
#[allow(unsafe_code)]
unsafe impl Send for Job {}

impl Job {
    /// An anonymous job that kills its processes when closed.
    #[allow(unsafe_code)]
    pub fn create() -> std::io::Result<Self> {
        // SAFETY: plain Win32 calls with valid arguments: no security attributes and no name,
        // then a zeroed limit structure (valid for this type) with one flag set, passed with its
        // exact size. The handle is closed on every path that does not keep it.
        unsafe {
            let handle = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if handle.is_null() {
                return Err(std::io::Error::last_os_error());
            }
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            let size = u32::try_from(std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>())
                .unwrap_or(u32::MAX);
            let set = SetInformationJobObject(
                handle,
                JobObjectExtendedLimitInformation,
                std::ptr::from_ref(&limits).cast(),
                size,
            );
            if set == 0 {
                let error = std::io::Error::last_os_error();
                CloseHandle(handle);
                return Err(error);
            }
            Ok(Self { handle })
        }
    }

    /// Puts the process with this id in the job.
    #[allow(unsafe_code)]
    fn assign(&self, pid: u32) -> std::io::Result<()> {
        // SAFETY: the process handle is checked before use and closed after it; the job handle
        // is valid for as long as `self` lives.
        unsafe {
            let process = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid);
            if process.is_null() {
                Err(std::io::Error::last_os_error())
            } else {
                let ok = AssignProcessToJobObject(self.handle, process);
                let error = std::io::Error::last_os_error();
                CloseHandle(process);
                if ok == 0 {
                    Err(error)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Ends every process in the job.
    #[allow(unsafe_code)]
    fn terminate(&self) -> bool {
        // SAFETY: the job handle is valid for as long as `self` lives.
        unsafe { TerminateJobObject(self.handle, 1) != 0 }
    }
}

/// Each watched server's job, by the server's pid. Process-wide, since a server is stopped
/// (`end_tree`) by code that does not hold the guard.
static JOBS: Mutex<BTreeMap<u32, Job>> = Mutex::new(BTreeMap::new());

fn jobs() -> std::sync::MutexGuard<'static, BTreeMap<u32, Job>> {
    JOBS.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The guard's Windows side: the jobs live in [`JOBS`], so there is nothing to hold.
pub(crate) struct Jobs;

impl Jobs {
    pub fn create() -> std::io::Result<Self> {
        Ok(Self)
    }

    /// Gives the server with this pid a job of its own.
    pub fn watch(&mut self, pid: u32) {
        match Job::create().and_then(|job| job.assign(pid).map(|()| job)) {
            Ok(job) => {
                jobs().insert(pid, job);
            }
            Err(e) => tracing::warn!(
                pid,
                "could not tie a server to Toolgate's lifetime ({e}); it may outlive a crash"
            ),
        }
    }

    /// Closes the server's job, ending whatever of it is still running.
    pub fn forget(&mut self, pid: u32) {
        let job = jobs().remove(&pid);
        drop(job);
    }
}

/// Ends the server with this pid and every process it started (its job). `false` when it has
/// no job (never watched, or already forgotten).
pub fn end_tree(pid: u32) -> bool {
    jobs().get(&pid).is_some_and(Job::terminate)
}

impl Drop for Job {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the handle was opened by `create` and is closed exactly once, here. Closing
        // the last handle ends whatever is still in the job, as the process's exit would.
        unsafe {
            CloseHandle(self.handle);
        }
    }
}
