//! When the system asks Toolgate to stop, for every front end that runs until then (the app,
//! `toolgate serve`): each quits the same way on the same requests, and a second request while
//! it quits ends the process at once, as a user pressing Ctrl-C again expects.

/// The system's requests to stop: Ctrl-C, or SIGTERM on Unix; on Windows Ctrl-Break, the console
/// closing, the user logging off or the machine shutting down.
///
/// Listened for from [`StopRequests::listen`] on, for as long as the value lives: one that comes
/// between two [`StopRequests::next`] calls waits for the second, where listening anew after the
/// first would miss it. Once listened for, a request no longer ends the process by itself.
pub struct StopRequests {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(windows)]
    windows: WindowsRequests,
}

#[cfg(windows)]
struct WindowsRequests {
    ctrl_c: tokio::signal::windows::CtrlC,
    brk: tokio::signal::windows::CtrlBreak,
    close: tokio::signal::windows::CtrlClose,
    logoff: tokio::signal::windows::CtrlLogoff,
    shutdown: tokio::signal::windows::CtrlShutdown,
}

impl StopRequests {
    /// Starts listening. Needs a Tokio runtime with its I/O driver.
    pub fn listen() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(StopRequests {
                terminate: signal(SignalKind::terminate())?,
                interrupt: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(windows)]
        {
            use tokio::signal::windows::{
                ctrl_break, ctrl_c, ctrl_close, ctrl_logoff, ctrl_shutdown,
            };
            Ok(StopRequests {
                windows: WindowsRequests {
                    ctrl_c: ctrl_c()?,
                    brk: ctrl_break()?,
                    close: ctrl_close()?,
                    logoff: ctrl_logoff()?,
                    shutdown: ctrl_shutdown()?,
                },
            })
        }
    }

    /// Until the next request; returns which, for the log (`SIGINT` for Ctrl-C on Unix).
    pub async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.terminate.recv() => "SIGTERM",
                _ = self.interrupt.recv() => "SIGINT",
            }
        }
        #[cfg(windows)]
        {
            let w = &mut self.windows;
            tokio::select! {
                _ = w.ctrl_c.recv() => "Ctrl-C",
                _ = w.brk.recv() => "Ctrl-Break",
                _ = w.close.recv() => "the console closing",
                _ = w.logoff.recv() => "the user logging off",
                _ = w.shutdown.recv() => "the machine shutting down",
            }
        }
    }

    /// From now on, while the caller quits: the next request ends the process at once with exit
    /// code 1, after `say` is given which request it was. Spawned on the current Tokio runtime.
    pub fn end_at_once_on_next(mut self, say: impl FnOnce(&'static str) + Send + 'static) {
        tokio::spawn(async move {
            let why = self.next().await;
            say(why);
            std::process::exit(1);
        });
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A second SIGTERM sent before the second `next` is waiting is still seen: one listener
    /// for both, not a new one that would start after it.
    #[tokio::test]
    async fn a_request_between_two_waits_is_not_lost() {
        let mut stops = StopRequests::listen().expect("listening");
        let me = std::process::id().to_string();
        let kill = |sig: &str| {
            std::process::Command::new("kill")
                .args([sig, &me])
                .status()
                .expect("kill")
        };
        assert!(kill("-TERM").success());
        assert_eq!(stops.next().await, "SIGTERM");
        // Nobody waits now, as while a front end logs the first and starts quitting.
        assert!(kill("-INT").success());
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let second = tokio::time::timeout(std::time::Duration::from_secs(10), stops.next())
            .await
            .expect("the request sent while nobody waited");
        assert_eq!(second, "SIGINT");
    }
}
