//! Reading a line the user types at the terminal, for `toolgate chat`'s prompt and the gate's
//! questions, only for as long as the reader still wants one.
//!
//! A question withdrawn while it waits (the user stopped the turn with Ctrl-C) or a prompt left
//! (Ctrl-C at the prompt) stops reading, so the next line typed goes to whoever asks next. A
//! thread blocked in a read cannot be stopped: before, such a question kept reading and took the
//! user's next message as its answer. Nothing reads ahead either: an editor opened to edit a
//! call's arguments has the terminal to itself.

use std::io::{BufRead, IsTerminal};
use std::time::Duration;

/// How often a waiting reader asks whether it still wants a line.
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// The next line typed, without its line ending; `None` at the end of input, on a read error, or
/// once `still_wanted` says no (asked about every 100 ms while nothing is typed, and once more
/// just before the line is taken).
///
/// Input that is not a terminal (a file or a pipe given to `toolgate chat`) is read as it comes,
/// without the checks: lines read ahead there sit in the process's buffer, where polling the
/// input would not see them.
pub fn read_line(still_wanted: impl Fn() -> bool) -> Option<String> {
    let at_terminal = std::io::stdin().is_terminal();
    loop {
        if !still_wanted() {
            return None;
        }
        if !at_terminal || line_waiting(CHECK_EVERY) {
            break;
        }
    }
    if !still_wanted() {
        return None;
    }
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
    }
}

/// Whether stdin, a terminal, has something to read within `wait`: a whole line, since a
/// terminal hands lines over once Enter is pressed, one per read.
#[cfg(unix)]
fn line_waiting(wait: Duration) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    let fd = stdin.as_fd();
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let timeout = Timespec::try_from(wait).ok();
    match poll(&mut fds, timeout.as_ref()) {
        Ok(ready) => ready > 0,
        // Interrupted (Ctrl-C's signal): nothing typed yet; the caller asks again.
        Err(rustix::io::Errno::INTR) => false,
        // Any other failure: let the read report it.
        Err(_) => true,
    }
}

/// On Windows the console is read as before: a read that has begun runs to its line.
#[cfg(not(unix))]
fn line_waiting(_wait: Duration) -> bool {
    true
}
