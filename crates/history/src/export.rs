//! What streaming the audit log to a collector needs from the history: the entries in the order
//! they were committed, whether each may still change (its call still running), how far each
//! destination has acknowledged, and which process sends to it.
//!
//! The exporter (`toolgate-telemetry`) reads committed rows, never in-memory events, so an entry
//! is sent whatever happened to the process that made it: a collector down for an hour, or a
//! Toolgate killed in the middle of a batch, only delays it. Ids count up in commit order
//! (SQLite assigns them under the write lock, which one process at a time holds), so "every id up
//! to N was acknowledged" is a complete record of what was sent.
//!
//! **One sender per destination.** Several processes may have the file open (the app, a
//! `toolgate run` beside it); each would send every entry. The cursor's row names the process
//! sending now by its journal nonce; another process takes over only when that one is gone,
//! which its journal's lock says at once (`journal::alive`), with no lease to wait out after a
//! kill.

use std::time::Duration;

use rusqlite::{params, OptionalExtension};

use crate::audit::{raw_from_row, AUDIT_COLUMNS};
use crate::entry::AuditDecision;
use crate::error::Failure;
use crate::{journal, AuditRow, History, HistoryError, Pending};

/// An allowed entry with no outcome and no journal key (a server's request, allowed and then
/// completed by its id) counts as running this long after its decision; after that it is sent
/// as it is. Longer than any call or request may take.
pub const OPEN_LIMIT: Duration = Duration::from_secs(15 * 60);

/// The reason a result review's entry starts with (`toolgate-agent`'s `review.rs`): such an
/// entry is complete when written, even when allowed (nothing runs after it).
const REVIEW_PREFIX: &str = "result review:";

/// An audit entry as the exporter reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportRow {
    pub row: AuditRow,
    /// Its call may still end and add its outcome: an allowed call of a live process, not yet
    /// finished. Sent once it is complete (or its process is gone).
    pub running: bool,
}

/// What a destination has been sent, for the doctor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportBacklog {
    /// Every entry up to this id was acknowledged.
    pub acknowledged: i64,
    /// Entries after it, not yet acknowledged.
    pub waiting: u64,
}

impl History {
    /// This history's own id, random and made once with the file: the first part of every
    /// entry's stable id (`<identity>-<audit id>`), the same wherever and however often the
    /// entry is sent.
    pub fn identity(&self) -> Result<String, HistoryError> {
        self.read(|conn| {
            Ok(conn
                .prepare_cached("SELECT id FROM history_identity LIMIT 1")?
                .query_row([], |row| row.get(0))?)
        })
    }

    /// Committed entries with an id above `after`, oldest first, at most `limit`.
    pub fn audit_after(&self, after: i64, limit: usize) -> Result<Vec<ExportRow>, HistoryError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.export_rows(
            &format!(
                "SELECT {AUDIT_COLUMNS}, journal_key FROM audit WHERE id > ?1 ORDER BY id LIMIT ?2"
            ),
            params![after, limit],
        )
    }

    /// The entries with these ids (those that exist), oldest first.
    pub fn audit_by_ids(&self, ids: &[i64]) -> Result<Vec<ExportRow>, HistoryError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        self.export_rows(
            &format!(
                "SELECT {AUDIT_COLUMNS}, journal_key FROM audit WHERE id IN ({list}) ORDER BY id"
            ),
            [],
        )
    }

    fn export_rows(
        &self,
        sql: &str,
        values: impl rusqlite::Params,
    ) -> Result<Vec<ExportRow>, HistoryError> {
        let raws = self.read(|conn| {
            let mut stmt = conn.prepare_cached(sql)?;
            let rows = stmt
                .query_map(values, |row| {
                    Ok((raw_from_row(row)?, row.get::<_, Option<String>>(16)?))
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })?;
        let own = self.sender_id();
        let now = self.clock.now_ms();
        let mut rows = Vec::with_capacity(raws.len());
        for (raw, key) in raws {
            let row = raw
                .parse(&self.path)
                .map_err(|e| e.into_public(&self.path))?;
            let running = self.may_still_run(&row, key.as_deref(), &own, now);
            rows.push(ExportRow { row, running });
        }
        Ok(rows)
    }

    fn may_still_run(&self, row: &AuditRow, key: Option<&str>, own: &str, now: i64) -> bool {
        let entry = &row.entry;
        let open = entry.decision == AuditDecision::Allowed
            && entry.duration_ms.is_none()
            && !entry
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(REVIEW_PREFIX));
        if !open {
            return false;
        }
        match key.and_then(|k| k.rsplit_once('-')) {
            Some((nonce, _)) => nonce == own || journal::alive(&self.path, nonce),
            None => {
                let limit = i64::try_from(OPEN_LIMIT.as_millis()).unwrap_or(i64::MAX);
                now.saturating_sub(entry.decided_at) < limit
            }
        }
    }

    /// Who this process is to other processes on the file: its journal nonce (`memory` for an
    /// in-memory history, which no other process sees).
    fn sender_id(&self) -> String {
        self.journal
            .as_ref()
            .map_or_else(|| "memory".to_owned(), |j| j.nonce().to_owned())
    }

    /// Makes this process the sender to `destination`, unless a live process already is, and
    /// returns how far the destination has acknowledged; `None` while another process sends.
    /// A destination never seen before starts after the last entry committed now: a new
    /// collector gets what happens from now on, not the whole past.
    pub fn claim_export(&self, destination: &str) -> Pending<Option<i64>> {
        let (destination, me, now) = (
            destination.to_owned(),
            self.sender_id(),
            self.clock.now_ms(),
        );
        let path = self.path.clone();
        self.writer.write(move |conn| {
            // Inside the writer's `BEGIN IMMEDIATE`: read and take over in one step, even
            // against another process.
            let found: Option<(i64, Option<String>)> = conn
                .prepare_cached(
                    "SELECT acknowledged, holder FROM export_cursors WHERE destination = ?1",
                )?
                .query_row([&destination], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()?;
            let acknowledged = match found {
                Some((_, Some(holder))) if holder != me && journal::alive(&path, &holder) => {
                    return Ok(None)
                }
                Some((acknowledged, _)) => acknowledged,
                None => conn
                    .prepare_cached("SELECT coalesce(max(id), 0) FROM audit")?
                    .query_row([], |row| row.get(0))?,
            };
            conn.prepare_cached(
                "INSERT INTO export_cursors (destination, acknowledged, holder, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (destination) DO UPDATE SET holder = ?3, updated_at = ?4",
            )?
            .execute(params![destination, acknowledged, me, now])?;
            Ok(Some(acknowledged))
        })
    }

    /// Records that `destination` acknowledged every entry up to `upto`. Never moves back.
    pub fn acknowledge_export(&self, destination: &str, upto: i64) -> Pending<()> {
        let (destination, now) = (destination.to_owned(), self.clock.now_ms());
        self.writer.write(move |conn| {
            conn.prepare_cached(
                "UPDATE export_cursors SET acknowledged = max(acknowledged, ?2), updated_at = ?3
                 WHERE destination = ?1",
            )?
            .execute(params![destination, upto, now])?;
            Ok(())
        })
    }

    /// Lets another process send to `destination` (this one is stopping).
    pub fn release_export(&self, destination: &str) -> Pending<()> {
        let (destination, me) = (destination.to_owned(), self.sender_id());
        self.writer.write(move |conn| {
            conn.prepare_cached(
                "UPDATE export_cursors SET holder = NULL WHERE destination = ?1 AND holder = ?2",
            )?
            .execute(params![destination, me])?;
            Ok(())
        })
    }

    /// How far `destination` has acknowledged and how many entries wait; `None` for a
    /// destination never sent to.
    pub fn export_backlog(&self, destination: &str) -> Result<Option<ExportBacklog>, HistoryError> {
        self.read(|conn| {
            let acknowledged: Option<i64> = conn
                .prepare_cached("SELECT acknowledged FROM export_cursors WHERE destination = ?1")?
                .query_row([destination], |row| row.get(0))
                .optional()?;
            let Some(acknowledged) = acknowledged else {
                return Ok(None);
            };
            let waiting: i64 = conn
                .prepare_cached("SELECT count(*) FROM audit WHERE id > ?1")?
                .query_row([acknowledged], |row| row.get(0))?;
            Ok(Some(ExportBacklog {
                acknowledged,
                waiting: u64::try_from(waiting).unwrap_or(0),
            }))
        })
    }

    /// A read on the reads' connection without first waiting for queued writes: the exporter
    /// wants what is committed, and must not make the writer commit early (a call's lazy writes
    /// are batched on purpose).
    fn read<T>(
        &self,
        op: impl FnOnce(&rusqlite::Connection) -> Result<T, Failure>,
    ) -> Result<T, HistoryError> {
        let conn = self
            .reader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        op(&conn).map_err(|e| e.into_public(&self.path))
    }
}
