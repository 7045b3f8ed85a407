//! Windows: one Job Object that ends its processes when its last handle closes.
//!
//! Toolgate holds the only handle. When Toolgate exits for any reason, including being ended
//! from the Task Manager, Windows closes the handle and, because of
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, terminates every process in the job. A server is assigned
//! right after it is spawned; the processes it starts afterwards are in the job from birth (job
//! membership is inherited). What it started in the instant between spawn and assignment is not,
//! a gap that creating it suspended would close (std's `Command` cannot do that yet).
//!
//! NOT VERIFIED: this type-checks for `x86_64-pc-windows-gnu` but has never run on Windows.

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
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
    pub fn watch(&mut self, pid: u32) {
        // SAFETY: the process handle is checked before use and closed after it; the job handle
        // is valid for as long as `self` lives.
        let assigned = unsafe {
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
        };
        if let Err(e) = assigned {
            tracing::warn!(
                pid,
                "could not tie a server to Toolgate's lifetime ({e}); it may outlive a crash"
            );
        }
    }

    /// Nothing to do: a process leaves the job when it exits.
    pub fn forget(&mut self, _pid: u32) {}
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
