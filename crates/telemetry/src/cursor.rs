//! How far a destination has acknowledged, and what to send next: a pure state machine over
//! audit ids, kept by the exporter and persisted through the history.
//!
//! Entries are sent in id order once they are complete. A call still running does not hold up
//! the entries after it (a ten-minute call would otherwise stop the stream for ten minutes):
//! they are sent, and it is sent when it ends. So three numbers describe the state:
//!
//! - `acknowledged`: every id up to it was acknowledged. This is what the history keeps, so a
//!   restart sends again at most what came after it (a receiver de-duplicates by the entry's
//!   id);
//! - `scanned`: every id up to it was read by this process;
//! - `running`: the ids up to `scanned` whose calls were still running when read.
//!
//! `acknowledged` is `scanned`, or just below the oldest running call. Nothing changes until a
//! batch is acknowledged: a failed export leaves the state as it was, and the same entries (and
//! perhaps more) go in the next attempt.

use std::collections::BTreeSet;

use toolgate_history::ExportRow;

/// Entries read per batch at most.
pub const BATCH: usize = 512;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    acknowledged: i64,
    scanned: i64,
    running: BTreeSet<i64>,
}

/// What one export sends, and the state once it is acknowledged.
#[derive(Debug)]
pub struct Batch {
    /// Complete entries, oldest first.
    pub send: Vec<ExportRow>,
    scanned: i64,
    running: BTreeSet<i64>,
    /// The read reached [`BATCH`]: more may be waiting.
    pub full: bool,
}

impl Cursor {
    /// Starting where the history says the destination acknowledged.
    pub fn new(acknowledged: i64) -> Self {
        Cursor {
            acknowledged,
            scanned: acknowledged,
            running: BTreeSet::new(),
        }
    }

    pub fn acknowledged(&self) -> i64 {
        self.acknowledged
    }

    /// The ids to read again (running when last read).
    pub fn to_recheck(&self) -> Vec<i64> {
        self.running.iter().copied().collect()
    }

    /// Read entries with ids above this.
    pub fn scanned(&self) -> i64 {
        self.scanned
    }

    /// The batch made of `rechecked` (what [`Self::to_recheck`]'s ids read as now; an id no
    /// longer found is dropped) and `fresh` (read after [`Self::scanned`], oldest first, at most
    /// [`BATCH`]).
    pub fn batch(&self, rechecked: Vec<ExportRow>, fresh: Vec<ExportRow>) -> Batch {
        let full = fresh.len() >= BATCH;
        let scanned = fresh
            .last()
            .map_or(self.scanned, |r| r.row.id.max(self.scanned));
        let mut running = BTreeSet::new();
        let mut send = Vec::with_capacity(rechecked.len() + fresh.len());
        for row in rechecked
            .into_iter()
            .filter(|r| self.running.contains(&r.row.id))
            .chain(fresh.into_iter().filter(|r| r.row.id > self.scanned))
        {
            if row.running {
                running.insert(row.row.id);
            } else {
                send.push(row);
            }
        }
        send.sort_by_key(|r| r.row.id);
        Batch {
            send,
            scanned,
            running,
            full,
        }
    }

    /// The batch was acknowledged (or had nothing to send): returns the new `acknowledged`
    /// when it moved, to be kept in the history.
    pub fn commit(&mut self, batch: Batch) -> Option<i64> {
        self.scanned = batch.scanned;
        self.running = batch.running;
        let acknowledged = match self.running.first() {
            Some(oldest) => oldest - 1,
            None => self.scanned,
        }
        .max(self.acknowledged);
        let moved = acknowledged != self.acknowledged;
        self.acknowledged = acknowledged;
        moved.then_some(acknowledged)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolgate_history::{AuditDecision, AuditEntry, AuditRow, DecidedBy};

    use super::*;

    fn row(id: i64, running: bool) -> ExportRow {
        ExportRow {
            row: AuditRow {
                id,
                entry: AuditEntry::new(
                    "s",
                    "t",
                    json!({}),
                    AuditDecision::Allowed,
                    DecidedBy::Rule,
                ),
            },
            running,
        }
    }

    fn ids(batch: &Batch) -> Vec<i64> {
        batch.send.iter().map(|r| r.row.id).collect()
    }

    #[test]
    fn complete_entries_go_in_order_and_move_the_cursor() {
        let mut cursor = Cursor::new(10);
        let batch = cursor.batch(vec![], vec![row(11, false), row(12, false), row(14, false)]);
        assert_eq!(ids(&batch), vec![11, 12, 14]);
        assert_eq!(cursor.commit(batch), Some(14));
        assert_eq!(cursor.scanned(), 14);
        // Nothing new: nothing to send, nothing moves.
        let batch = cursor.batch(vec![], vec![]);
        assert!(batch.send.is_empty());
        assert_eq!(cursor.commit(batch), None);
    }

    #[test]
    fn a_failed_export_changes_nothing_so_the_same_entries_go_again() {
        let cursor = Cursor::new(0);
        let first = cursor.batch(vec![], vec![row(1, false), row(2, false)]);
        drop(first); // not acknowledged: never committed
        let again = cursor.batch(vec![], vec![row(1, false), row(2, false), row(3, false)]);
        assert_eq!(ids(&again), vec![1, 2, 3]);
        assert_eq!(cursor, Cursor::new(0));
    }

    #[test]
    fn a_running_call_does_not_hold_up_later_entries_and_holds_the_cursor_below_it() {
        let mut cursor = Cursor::new(0);
        let batch = cursor.batch(vec![], vec![row(1, false), row(2, true), row(3, false)]);
        assert_eq!(ids(&batch), vec![1, 3]);
        assert_eq!(cursor.commit(batch), Some(1), "2 is not sent yet");
        assert_eq!(cursor.to_recheck(), vec![2]);
        assert_eq!(cursor.scanned(), 3);
        // Still running; a new entry after it goes.
        let batch = cursor.batch(vec![row(2, true)], vec![row(4, false)]);
        assert_eq!(ids(&batch), vec![4]);
        assert_eq!(cursor.commit(batch), None);
        // It ended: sent, and the cursor catches up with what was scanned.
        let batch = cursor.batch(vec![row(2, false)], vec![]);
        assert_eq!(ids(&batch), vec![2]);
        assert_eq!(cursor.commit(batch), Some(4));
        assert!(cursor.to_recheck().is_empty());
    }

    #[test]
    fn a_restart_sends_again_from_the_kept_cursor_so_nothing_is_lost() {
        let mut cursor = Cursor::new(0);
        let batch = cursor.batch(vec![], vec![row(1, false), row(2, true), row(3, false)]);
        let kept = cursor.commit(batch).unwrap_or(0);
        // Killed here. The next start reads from what the history kept: 3 is sent again (same
        // id, de-duplicated by the receiver), 2 once it is complete (its process is gone).
        let restarted = Cursor::new(kept);
        let batch = restarted.batch(vec![], vec![row(2, false), row(3, false)]);
        assert_eq!(ids(&batch), vec![2, 3]);
    }

    #[test]
    fn rows_already_sent_or_no_longer_found_are_not_sent_twice_by_one_process() {
        let mut cursor = Cursor::new(0);
        let batch = cursor.batch(vec![], vec![row(1, true), row(2, false)]);
        cursor.commit(batch);
        // A stale read that still has 2 in it, and 1 gone from the table (deleted by hand).
        let batch = cursor.batch(vec![], vec![row(2, false), row(3, false)]);
        assert_eq!(ids(&batch), vec![3]);
        assert_eq!(cursor.commit(batch), Some(3));
    }

    #[test]
    fn a_full_read_says_more_may_wait() {
        let cursor = Cursor::new(0);
        let rows = (1..=BATCH as i64).map(|id| row(id, false)).collect();
        assert!(cursor.batch(vec![], rows).full);
    }
}
