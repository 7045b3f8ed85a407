//! A child that cannot outlive Toolgate: a killed Toolgate (SIGKILL, a crash) leaves no server
//! and no package install running behind it.

/// Linux: the kernel sends SIGKILL to the child when the thread that spawned it exits, so a
/// killed Toolgate cannot leave it running. Tokio's worker threads live as long as the runtime;
/// children are spawned from async tasks, never from `spawn_blocking` threads that come and go.
/// Elsewhere this does nothing (Windows: the guard's Job Object does it).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn die_with_toolgate(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec. It only makes the system
    // calls prctl and getppid, both async-signal-safe, and allocates nothing (the error is
    // made from the raw OS error code).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Toolgate may have died before the signal was armed.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn die_with_toolgate(_command: &mut std::process::Command) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// A child started by a thread that then ends is killed with it.
    #[test]
    fn a_child_dies_with_the_thread_that_started_it() {
        let pid = std::thread::spawn(|| {
            let mut command = Command::new("sleep");
            command.arg("30").stdin(Stdio::null());
            super::die_with_toolgate(&mut command);
            let child = command.spawn().expect("sleep starts");
            let pid = child.id();
            // Not waited for here: the thread ends and the child must go with it.
            std::mem::forget(child);
            pid
        })
        .join()
        .expect("the thread ends");
        let deadline = Instant::now() + Duration::from_secs(10);
        // Killed, it stays a zombie of this test process until the process ends.
        let gone = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.split_whitespace().nth(2) == Some("Z"))
                .unwrap_or(true)
        };
        while !gone() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(), "sleep {pid} outlived the thread that started it");
    }
}
