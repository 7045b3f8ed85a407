//! When a server that crashed is started again: a state machine over its crashes in a row, with
//! no clock or runtime inside, so that every case is a row in a table.
//!
//! Waiting and starting are the supervisor's; this only decides. A stop while a restart waits is
//! not an event here: the stop takes a new generation, which the waiting restart then finds is
//! not its own, and the count is left as it was.

use std::time::Duration;

/// A server that crashes this many times in a row, each within [`STABLE_AFTER`] of starting,
/// stays failed until the user restarts it.
pub(super) const MAX_RESTARTS: u32 = 5;
/// A server up this long has recovered: its next crash starts the backoff afresh.
pub(super) const STABLE_AFTER: Duration = Duration::from_secs(60);

/// What happened to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event {
    /// Its connection ended on its own after being up this long.
    Crashed { uptime: Duration },
    /// A start failed, for any reason but a sign-in (which waits for the user instead).
    StartFailed,
}

/// What to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    /// Start it again after `delay`: restart number `attempt` in a row.
    Restart { attempt: u32, delay: Duration },
    /// Leave it failed: it does not restart on its own, or it failed to start with no crash
    /// before (a restart would fail the same way).
    Fail,
    /// Leave it failed: [`MAX_RESTARTS`] restarts in a row did not hold.
    GiveUp,
}

/// A server's restart settings, passed with each event rather than kept, so they are read
/// where they live (its settings, the manager's options).
#[derive(Debug, Clone, Copy)]
pub(super) struct Policy {
    pub auto_restart: bool,
    /// The wait before the first restart; doubled for each crash in a row.
    pub first_delay: Duration,
}

/// One server's crashes in a row.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Backoff {
    crashes: u32,
}

impl Backoff {
    pub(super) fn next(&mut self, event: Event, policy: Policy) -> Action {
        match event {
            Event::Crashed { uptime } if uptime >= STABLE_AFTER => self.crashes = 0,
            Event::Crashed { .. } => {}
            Event::StartFailed if self.crashes == 0 => return Action::Fail,
            // A restart after a crash that fails (a port still taken, a fetch that failed)
            // counts as another crash and keeps backing off.
            Event::StartFailed => {}
        }
        self.crashes += 1;
        if !policy.auto_restart {
            Action::Fail
        } else if self.crashes <= MAX_RESTARTS {
            Action::Restart {
                attempt: self.crashes,
                delay: policy.first_delay * 2u32.pow(self.crashes - 1),
            }
        } else {
            Action::GiveUp
        }
    }

    /// The user restarted the server by hand: its past crashes no longer count.
    pub(super) fn reset(&mut self) {
        self.crashes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    enum Step {
        /// A crash after this many seconds up.
        Crash(u64),
        FailStart,
        ByHand,
    }
    use Step::{ByHand, Crash, FailStart};

    fn restart(attempt: u32, seconds: u64) -> Option<Action> {
        Some(Action::Restart {
            attempt,
            delay: Duration::from_secs(seconds),
        })
    }
    /// What is done, step by step, and what each step should get (none for a restart by hand).
    type Steps = Vec<(Step, Option<Action>)>;
    const FAIL: Option<Action> = Some(Action::Fail);
    const GIVE_UP: Option<Action> = Some(Action::GiveUp);

    #[test]
    fn each_case_does_what_the_table_says() {
        let on = Policy {
            auto_restart: true,
            first_delay: Duration::from_secs(1),
        };
        let off = Policy {
            auto_restart: false,
            ..on
        };
        #[rustfmt::skip]
        let table: Vec<(&str, Policy, Steps)> = vec![
            ("a first crash restarts after the first delay", on,
                vec![(Crash(3), restart(1, 1))]),
            ("crashes in a row double the delay, then give up after five", on,
                vec![(Crash(3), restart(1, 1)), (Crash(3), restart(2, 2)), (Crash(3), restart(3, 4)),
                     (Crash(3), restart(4, 8)), (Crash(3), restart(5, 16)), (Crash(3), GIVE_UP),
                     (Crash(3), GIVE_UP)]),
            ("a run of a minute or more resets the count", on,
                vec![(Crash(3), restart(1, 1)), (Crash(3), restart(2, 2)), (Crash(60), restart(1, 1))]),
            ("a run just short of a minute does not", on,
                vec![(Crash(3), restart(1, 1)), (Crash(59), restart(2, 2))]),
            ("a long run after giving up starts afresh", on,
                vec![(Crash(0), restart(1, 1)), (Crash(0), restart(2, 2)), (Crash(0), restart(3, 4)),
                     (Crash(0), restart(4, 8)), (Crash(0), restart(5, 16)), (Crash(0), GIVE_UP),
                     (Crash(600), restart(1, 1))]),
            ("a start that fails with no crash before fails, and counts nothing", on,
                vec![(FailStart, FAIL), (FailStart, FAIL), (Crash(3), restart(1, 1))]),
            ("a restart that fails counts as a crash", on,
                vec![(Crash(3), restart(1, 1)), (FailStart, restart(2, 2)), (FailStart, restart(3, 4))]),
            ("restarts that keep failing give up too", on,
                vec![(Crash(3), restart(1, 1)), (FailStart, restart(2, 2)), (FailStart, restart(3, 4)),
                     (FailStart, restart(4, 8)), (FailStart, restart(5, 16)), (FailStart, GIVE_UP)]),
            // The stop is not seen here; switched on again (a start, not a restart by hand),
            // a failed start still counts as a crash in a row.
            ("a stop while a restart waits leaves the count", on,
                vec![(Crash(3), restart(1, 1)), (FailStart, restart(2, 2))]),
            ("a restart by hand forgives every crash", on,
                vec![(Crash(3), restart(1, 1)), (Crash(3), restart(2, 2)), (ByHand, None),
                     (Crash(3), restart(1, 1)), (ByHand, None), (FailStart, FAIL)]),
            ("after giving up, a restart by hand starts afresh", on,
                vec![(Crash(0), restart(1, 1)), (Crash(0), restart(2, 2)), (Crash(0), restart(3, 4)),
                     (Crash(0), restart(4, 8)), (Crash(0), restart(5, 16)), (Crash(0), GIVE_UP),
                     (ByHand, None), (Crash(0), restart(1, 1))]),
            ("without auto-restart every crash fails", off,
                vec![(Crash(3), FAIL), (Crash(3), FAIL), (Crash(600), FAIL)]),
            ("without auto-restart a failed start after a crash fails too", off,
                vec![(Crash(3), FAIL), (FailStart, FAIL)]),
        ];
        for (case, policy, steps) in table {
            let mut backoff = Backoff::default();
            for (i, (step, expected)) in steps.into_iter().enumerate() {
                let got = match step {
                    Crash(seconds) => Some(backoff.next(
                        Event::Crashed {
                            uptime: Duration::from_secs(seconds),
                        },
                        policy,
                    )),
                    FailStart => Some(backoff.next(Event::StartFailed, policy)),
                    ByHand => {
                        backoff.reset();
                        None
                    }
                };
                assert_eq!(got, expected, "{case}, step {}", i + 1);
            }
        }
    }

    #[test]
    fn the_delay_scales_with_the_configured_first_delay() {
        let policy = Policy {
            auto_restart: true,
            first_delay: Duration::from_millis(200),
        };
        let mut backoff = Backoff::default();
        let delays: Vec<_> = (0..MAX_RESTARTS)
            .map(|_| {
                match backoff.next(
                    Event::Crashed {
                        uptime: Duration::ZERO,
                    },
                    policy,
                ) {
                    Action::Restart { delay, .. } => delay.as_millis(),
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        assert_eq!(delays, [200, 400, 800, 1600, 3200]);
    }
}
