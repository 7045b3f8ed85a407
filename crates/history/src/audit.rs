//! The approval audit log: one row per request that passed the approval gate.
//!
//! The table is created by migration 2 (`schema.rs`); the design choices are in the crate docs.

use std::io::Write;
use std::sync::atomic::Ordering;

use rusqlite::types::Value as SqlValue;
use rusqlite::{params, params_from_iter, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::entry::{insert_audit, AuditDecision, AuditEntry, DecidedBy};
use crate::error::Failure;
use crate::journal::Line;
use crate::text::fold;
use crate::{History, HistoryError, Pending};

/// An audit entry to complete: by its id ([`History::record_audit`]) or by the key
/// [`History::journal_audit`] gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditRef {
    Id(i64),
    Key(String),
}

/// Completes an allowed entry, by its id or its journal key (see [`History::finish_audit`]).
fn finish_op(
    entry: &AuditRef,
    duration_ms: u64,
    result_bytes: Option<u64>,
    is_error: bool,
    error: Option<&str>,
) -> impl FnOnce(&rusqlite::Connection) -> Result<(), Failure> + Send + 'static {
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let (duration_ms, result_bytes) = (clamp(duration_ms), result_bytes.map(clamp));
    let error = error.map(str::to_owned);
    let entry = entry.clone();
    move |conn: &rusqlite::Connection| {
        // Inside the writer's `BEGIN IMMEDIATE`: the check and the update are one step, even
        // against another process. The common case is one statement: an allowed entry not yet
        // finished is updated; only when nothing was, the entry is read to say why.
        let (by, key) = match &entry {
            AuditRef::Id(id) => ("id", SqlValue::Integer(*id)),
            AuditRef::Key(key) => ("journal_key", SqlValue::Text(key.clone())),
        };
        let updated = conn
            .prepare_cached(&format!(
                "UPDATE audit SET duration_ms = ?2, result_bytes = ?3, is_error = ?4, error = ?5
                 WHERE {by} = ?1 AND decision = 'allowed' AND duration_ms IS NULL"
            ))?
            .execute(params![key, duration_ms, result_bytes, is_error, error])?;
        if updated > 0 {
            return Ok(());
        }
        let state: Option<(i64, String)> = conn
            .prepare_cached(&format!("SELECT id, decision FROM audit WHERE {by} = ?1"))?
            .query_row([&key], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        let (id, reason) = match (state, &entry) {
            (None, AuditRef::Id(id)) => (*id, "there is no such entry"),
            (None, AuditRef::Key(_)) => (0, "there is no such entry"),
            (Some((id, decision)), _) if decision != AuditDecision::Allowed.as_str() => {
                (id, "it was not allowed, so it never ran")
            }
            // A finished entry always has a duration; a second outcome would overwrite the
            // first.
            (Some((id, _)), _) => (id, "it is already finished"),
        };
        Err(HistoryError::AuditNotFinishable { id, reason }.into())
    }
}

/// A stored [`AuditEntry`] with its id; also one line of the JSON Lines export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditRow {
    /// Counts up from 1 and is never reused.
    pub id: i64,
    #[serde(flatten)]
    pub entry: AuditEntry,
}

/// Which entries [`History::audit`] returns. Every field narrows the list; the default is
/// everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(default, rename_all = "camelCase")]
#[ts(optional_fields = nullable)]
pub struct AuditFilter {
    pub server_id: Option<String>,
    pub tool: Option<String>,
    pub decision: Option<AuditDecision>,
    pub conversation_id: Option<String>,
    /// Calls from this connected client only.
    pub client: Option<String>,
    /// Decided at or after this time (unix milliseconds).
    pub since_ms: Option<i64>,
    /// Decided before this time (unix milliseconds): `since_ms..until_ms` is half-open, so
    /// consecutive ranges neither overlap nor leave gaps.
    pub until_ms: Option<i64>,
    /// A substring of the arguments (either set) or the reason, ignoring case. Blank matches
    /// everything.
    pub text: Option<String>,
    /// At most this many entries, the newest.
    pub limit: Option<usize>,
}

/// How many rows an export reads per turn at the connection: small enough that an append or a
/// new audit entry never waits long behind a big export.
const EXPORT_PAGE: usize = 500;

/// The columns [`raw_from_row`] reads, in its order.
pub(crate) const AUDIT_COLUMNS: &str =
    "id, decided_at, conversation_id, server_id, tool, arguments,
    original_arguments, decision, decided_by, rule_id, reason, duration_ms, result_bytes,
    is_error, error, client";

impl History {
    /// Records a decision of the approval gate and returns the entry's id, for
    /// [`History::finish_audit`].
    ///
    /// Called when the decision is made, before an allowed call is sent: the entry is committed
    /// before this returns, so even a crash during the call leaves it in the log. Async code
    /// awaits [`History::queue_audit`] instead.
    pub fn record_audit(&self, entry: &AuditEntry) -> Result<i64, HistoryError> {
        self.queue_audit(entry).wait()
    }

    /// [`History::record_audit`] without blocking: the entry is queued on the writer thread, and
    /// the [`Pending`] resolves to its id once it is committed (with whatever else was queued
    /// meanwhile: one commit for many calls).
    pub fn queue_audit(&self, entry: &AuditEntry) -> Pending<i64> {
        // Everything but the clone happens on the writer thread, off the caller's path.
        let entry = entry.clone();
        self.writer.write(move |conn| {
            insert_audit(conn, &entry, None, false)?;
            // Only the writer thread inserts on this connection, one write at a time.
            Ok(conn.last_insert_rowid())
        })
    }

    /// Records a decision with no database commit on the caller's path, for an allowed call
    /// about to be sent: the entry is appended to this process's audit journal (one file write;
    /// in the operating system when this returns, so it survives the app being killed) and
    /// queued for the writer thread. An entry a killed process left in its journal is inserted
    /// by the next [`History::open`] (see `journal.rs`). For an in-memory history it is only
    /// queued. Complete it with [`History::queue_finish_audit`] and the returned reference.
    pub fn journal_audit(&self, entry: AuditEntry) -> Result<AuditRef, HistoryError> {
        let (key, slot) = match &self.journal {
            Some(journal) => {
                let key = journal.key();
                let line = Line {
                    key: key.clone(),
                    entry,
                };
                let slot = journal.append(&line).map_err(|source| HistoryError::Io {
                    action: "write the audit journal beside",
                    path: self.path.clone(),
                    source,
                })?;
                self.unsaved.put(&key, line.entry);
                (key, Some((journal.clone(), slot)))
            }
            None => {
                let key = format!(
                    "memory-{}",
                    self.memory_keys.fetch_add(1, Ordering::Relaxed)
                );
                self.unsaved.put(&key, entry);
                (key, None)
            }
        };
        // Not woken for: the entry is safe in the journal, and the writer takes it with the next
        // batch, with its completion if the call has returned by then.
        let (unsaved, written) = (self.unsaved.clone(), key.clone());
        self.writer.write_lazily(
            move |conn| match unsaved.take(&written) {
                Some(entry) => insert_audit(conn, &entry, Some(&written), true).map(|_| ()),
                None => Ok(()),
            },
            move |committed| {
                if let (true, Some((journal, slot))) = (committed, slot) {
                    journal.committed(slot);
                }
            },
        );
        Ok(AuditRef::Key(key))
    }

    /// Records how an allowed call ended: how long it took, the size of its result (if any) and
    /// whether it failed.
    ///
    /// An entry is finished once, and only if it was allowed (nothing else ran); otherwise this
    /// fails with [`HistoryError::AuditNotFinishable`] and changes nothing. Committed before it
    /// returns; [`History::queue_finish_audit`] does not wait.
    pub fn finish_audit(
        &self,
        id: i64,
        duration_ms: u64,
        result_bytes: Option<u64>,
        is_error: bool,
        error: Option<&str>,
    ) -> Result<(), HistoryError> {
        self.queue_finish_audit(
            &AuditRef::Id(id),
            duration_ms,
            result_bytes,
            is_error,
            error,
        )
        .wait()
    }

    /// [`History::finish_audit`] queued on the writer thread, for an entry by its id or its
    /// journal key. Dropping the [`Pending`] is fine: the write still happens, and a failure is
    /// logged.
    pub fn queue_finish_audit(
        &self,
        entry: &AuditRef,
        duration_ms: u64,
        result_bytes: Option<u64>,
        is_error: bool,
        error: Option<&str>,
    ) -> Pending<()> {
        self.writer
            .write(finish_op(entry, duration_ms, result_bytes, is_error, error))
    }

    /// [`History::queue_finish_audit`] without waking the writer: committed with its next batch,
    /// at the latest [`LAZY_DELAY`](crate::LAZY_DELAY) later (a failure is logged). For a call's
    /// path, which should not pay a thread's wake-up for its completion.
    pub fn finish_audit_later(
        &self,
        entry: &AuditRef,
        duration_ms: u64,
        result_bytes: Option<u64>,
        is_error: bool,
        error: Option<&str>,
    ) {
        // Still queued (the common case: the writer takes a batch every few milliseconds): the
        // completion goes into the entry, which is inserted whole, one statement instead of two.
        if let AuditRef::Key(key) = entry {
            // The insert saturates the sizes as an update would.
            let completed = self.unsaved.complete(key, |e| {
                e.duration_ms = Some(duration_ms);
                e.result_bytes = result_bytes;
                e.is_error = is_error;
                e.error = error.map(str::to_owned);
            });
            if completed {
                return;
            }
        }
        self.writer.write_lazily(
            finish_op(entry, duration_ms, result_bytes, is_error, error),
            |_| {},
        );
    }

    /// The entries that pass `filter`, newest first (by decision time, then by id).
    pub fn audit(&self, filter: &AuditFilter) -> Result<Vec<AuditRow>, HistoryError> {
        self.audit_page(filter, None, filter.limit)
    }

    /// Writes the entries that pass `filter` to `out` as JSON Lines, newest first: one
    /// [`AuditRow`] per line, as serde writes it. Returns how many were written.
    ///
    /// The log is read in pages with the connection free in between, so recording goes on
    /// during a long export; entries recorded meanwhile may or may not be in it. serde writes in
    /// small pieces, so give it a `BufWriter` for a file; `out` is flushed at the end. On an
    /// error, what was already written stays written.
    pub fn export_audit_jsonl(
        &self,
        filter: &AuditFilter,
        out: &mut dyn Write,
    ) -> Result<usize, HistoryError> {
        let export = |e: std::io::Error| HistoryError::Export { source: e };
        let mut written = 0;
        let mut before = None;
        loop {
            let remaining = filter
                .limit
                .map_or(usize::MAX, |l| l.saturating_sub(written));
            let want = EXPORT_PAGE.min(remaining);
            if want == 0 {
                break;
            }
            let page = self.audit_page(filter, before, Some(want))?;
            for row in &page {
                serde_json::to_writer(&mut *out, row).map_err(|e| export(e.into()))?;
                out.write_all(b"\n").map_err(export)?;
            }
            written += page.len();
            match page.last() {
                Some(last) if page.len() == want => before = Some((last.entry.decided_at, last.id)),
                _ => break,
            }
        }
        out.flush().map_err(export)?;
        Ok(written)
    }

    /// The entries that pass `filter` and, with `before`, come after that `(decided_at, id)` in
    /// newest-first order.
    fn audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<(i64, i64)>,
        limit: Option<usize>,
    ) -> Result<Vec<AuditRow>, HistoryError> {
        let (sql, values) = select(filter, before, limit);
        self.run(|conn| {
            let mut stmt = conn.prepare_cached(&sql)?;
            let raws = stmt
                .query_map(params_from_iter(&values), raw_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            let rows = raws
                .into_iter()
                .map(|raw| raw.parse(&self.path))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }
}

/// The query for a filter, with only the conditions it sets: SQLite cannot use an index for a
/// condition written as `(?1 IS NULL OR server_id = ?1)`, so absent ones are left out rather
/// than passed as NULL. There are few combinations, and `prepare_cached` keeps the common ones.
pub(crate) fn select(
    filter: &AuditFilter,
    before: Option<(i64, i64)>,
    limit: Option<usize>,
) -> (String, Vec<SqlValue>) {
    let mut conditions: Vec<&str> = Vec::new();
    let mut values: Vec<SqlValue> = Vec::new();
    let text = |s: &Option<String>| s.clone().map(SqlValue::Text);
    let optional = [
        ("server_id = ?", text(&filter.server_id)),
        ("tool = ?", text(&filter.tool)),
        (
            "decision = ?",
            filter
                .decision
                .map(|d| SqlValue::Text(d.as_str().to_owned())),
        ),
        ("conversation_id = ?", text(&filter.conversation_id)),
        ("client = ?", text(&filter.client)),
        ("decided_at >= ?", filter.since_ms.map(SqlValue::Integer)),
        ("decided_at < ?", filter.until_ms.map(SqlValue::Integer)),
        (
            "instr(search_text, ?) > 0",
            filter
                .text
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| SqlValue::Text(fold(s))),
        ),
    ];
    for (condition, value) in optional {
        if let Some(value) = value {
            conditions.push(condition);
            values.push(value);
        }
    }
    if let Some((decided_at, id)) = before {
        // A row value: SQLite walks the index from this point instead of filtering to it.
        conditions.push("(decided_at, id) < (?, ?)");
        values.extend([SqlValue::Integer(decided_at), SqlValue::Integer(id)]);
    }
    let mut sql = format!("SELECT {AUDIT_COLUMNS} FROM audit");
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    sql.push_str(" ORDER BY decided_at DESC, id DESC");
    if let Some(limit) = limit {
        sql.push_str(" LIMIT ?");
        values.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
    }
    (sql, values)
}

/// A row as SQLite has it; [`RawRow::parse`] turns it into an [`AuditRow`].
pub(crate) struct RawRow {
    id: i64,
    decided_at: i64,
    conversation_id: Option<String>,
    server_id: String,
    tool: String,
    arguments: String,
    original_arguments: Option<String>,
    decision: String,
    decided_by: String,
    rule_id: Option<String>,
    reason: Option<String>,
    duration_ms: Option<u64>,
    result_bytes: Option<u64>,
    is_error: bool,
    error: Option<String>,
    client: Option<String>,
}

pub(crate) fn raw_from_row(row: &Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        id: row.get(0)?,
        decided_at: row.get(1)?,
        conversation_id: row.get(2)?,
        server_id: row.get(3)?,
        tool: row.get(4)?,
        arguments: row.get(5)?,
        original_arguments: row.get(6)?,
        decision: row.get(7)?,
        decided_by: row.get(8)?,
        rule_id: row.get(9)?,
        reason: row.get(10)?,
        duration_ms: unsigned_or_null(row, 11)?,
        result_bytes: unsigned_or_null(row, 12)?,
        is_error: row.get(13)?,
        error: row.get(14)?,
        client: row.get(15)?,
    })
}

/// Like `crate::unsigned`, for a column that may be NULL.
fn unsigned_or_null(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<u64>> {
    let value: Option<i64> = row.get(idx)?;
    value
        .map(|v| u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(idx, v)))
        .transpose()
}

impl RawRow {
    /// Fails with [`HistoryError::Corrupt`] on what this crate never writes: arguments that are
    /// not JSON, or a decision word it does not know (the file was edited by hand).
    pub(crate) fn parse(self, path: &std::path::Path) -> Result<AuditRow, Failure> {
        let id = self.id;
        let corrupt = |what: String| -> Failure {
            HistoryError::Corrupt {
                path: path.to_owned(),
                reason: format!("audit entry {id} {what}"),
            }
            .into()
        };
        let json = |column: &str, text: &str| {
            serde_json::from_str(text)
                .map_err(|e| corrupt(format!("has {column} that are not JSON: {e}")))
        };
        Ok(AuditRow {
            id,
            entry: AuditEntry {
                decided_at: self.decided_at,
                conversation_id: self.conversation_id,
                client: self.client,
                server_id: self.server_id,
                tool: self.tool,
                arguments: json("arguments", &self.arguments)?,
                original_arguments: self
                    .original_arguments
                    .map(|text| json("original arguments", &text))
                    .transpose()?,
                decision: AuditDecision::parse(&self.decision).ok_or_else(|| {
                    corrupt(format!("has an unknown decision {:?}", self.decision))
                })?,
                decided_by: DecidedBy::parse(&self.decided_by).ok_or_else(|| {
                    corrupt(format!("has an unknown decided_by {:?}", self.decided_by))
                })?,
                rule_id: self.rule_id,
                reason: self.reason,
                duration_ms: self.duration_ms,
                result_bytes: self.result_bytes,
                is_error: self.is_error,
                error: self.error,
            },
        })
    }
}
