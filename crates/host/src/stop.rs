//! When the system asks Toolgate to stop, for every front end that runs until then (the app,
//! `toolgate serve`): each quits the same way on the same requests.

/// Until Ctrl-C, or the system asks the process to end: SIGTERM on Unix; on Windows Ctrl-Break,
/// the console closing, the user logging off or the machine shutting down. Returns which, for
/// the log (`SIGINT` for Ctrl-C on Unix).
pub async fn stop_requested() -> std::io::Result<&'static str> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        Ok(tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        })
    }
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_close, ctrl_logoff, ctrl_shutdown};
        let (mut brk, mut close, mut logoff, mut shutdown) = (
            ctrl_break()?,
            ctrl_close()?,
            ctrl_logoff()?,
            ctrl_shutdown()?,
        );
        Ok(tokio::select! {
            r = tokio::signal::ctrl_c() => r.map(|_| "Ctrl-C")?,
            _ = brk.recv() => "Ctrl-Break",
            _ = close.recv() => "the console closing",
            _ = logoff.recv() => "the user logging off",
            _ = shutdown.recv() => "the machine shutting down",
        })
    }
}
