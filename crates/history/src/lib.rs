//! Conversation history in one SQLite file.
//!
//! [`History`] keeps conversations (a title, timestamps, token totals) and their messages, in
//! order, and the approval audit log: one [`AuditEntry`] for every request that passed
//! Toolgate's approval gate. The app opens it once at start with [`History::open_or_recover`]
//! and shares it between threads; the CLI can open the same file at the same time.
//!
//! # Design choices
//!
//! - **Messages are opaque JSON.** A [`StoredMessage`] is a role string and a
//!   [`serde_json::Value`] body, so the model-facing message types in `toolgate-llm` can change
//!   without a migration here, and this crate depends on no other workspace crate. The one thing
//!   read out of the body is its top-level `"text"` string, copied to a column for search. Tool
//!   results (`"content"`) are deliberately not searched: they are often long machine output
//!   that would match almost any query.
//! - **One writer thread, group commit.** Every change is queued to a thread of its own
//!   (`writer.rs`), which commits whatever is queued when it wakes in one transaction and only
//!   then answers: [`History::append`] (or an awaited [`History::queue_append`]) returns once the
//!   message is committed. Async callers await a [`Pending`], so no async worker ever waits on
//!   SQLite, and many calls deciding at once share one commit.
//! - **Committed means safe from a crash; on disk within [`SYNC_INTERVAL`].** The file is in
//!   WAL mode with `synchronous = NORMAL`: a commit has reached the operating system when it
//!   returns, so a crash or SIGKILL of the app loses nothing committed. A second thread syncs
//!   the WAL to disk shortly after each commit, off every caller's path, so a power cut or
//!   kernel crash can lose at most the commits of the last [`SYNC_INTERVAL`] (50 ms) and the
//!   sync in progress; SQLite's WAL keeps the file whole either way. (Before, every commit was
//!   `FULL`, an fsync on the caller's path: 0.3–3 ms each on the machines we measure on.)
//! - **The schema is versioned** in `PRAGMA user_version` with an append-only list of
//!   migrations, each in its own transaction (see `schema.rs`). A file from a newer Toolgate is
//!   refused with [`HistoryError::TooNew`] before anything writes to it (not even SQLite's
//!   own fold of a pending `-wal` into the file on close), so a downgrade never damages the
//!   history a newer version will open again.
//! - **Damage is named, and set aside rather than deleted.** A file that is not SQLite, fails
//!   `PRAGMA quick_check` at open, or reports corruption later gives
//!   [`HistoryError::Corrupt`] with its path. [`History::open_or_recover`] renames such a file
//!   (and its `-wal`/`-shm`) to `<name>.corrupt-<UTC time>` and starts an empty history, so the
//!   app always starts and the old data stays on disk for recovery tools.
//! - **Reads on a connection of their own** (a file's; an in-memory database has one, shared
//!   with the writer), behind a mutex. A read first waits for the writes queued before it, so a
//!   caller reads what it wrote. Reads block: async code calls them from `spawn_blocking`.
//!   Other processes are waited for up to five seconds (`busy_timeout`).
//! - **Search is a substring match**, case-insensitive by Unicode lower-casing (not only
//!   ASCII, as SQLite's `LIKE` is), over titles and message text. Message text is stored
//!   lower-cased in its own column at append, so the scan runs in SQLite's C `instr` rather
//!   than calling into Rust per row: about 35 ms instead of 290 ms over 20,000 messages (11 MB
//!   of text) in a release build on a busy two-core machine. A full-text index (FTS5 with the
//!   trigram tokenizer) is the next step if histories grow far beyond that, as a migration.
//! - **Time comes from a [`Clock`]**, unix milliseconds, so tests order conversations exactly.
//!   A conversation's `updated_at` is the time of its last message: renaming it or adding usage
//!   does not move it up the list.
//!
//! # The audit log
//!
//! - **Recorded when decided, completed when the call returns.** [`History::record_audit`]
//!   writes the decision before an allowed call is sent, and [`History::finish_audit`] adds its
//!   duration, result size and error when it returns. On a call's path the agent uses
//!   [`History::journal_audit`]: the decision is appended to this process's audit journal (one
//!   file write, in the operating system when it returns; `journal.rs`) and inserted with the
//!   writer's next batch, and [`History::finish_audit_later`] completes it the same way, so no
//!   database commit is on a call's path. A crash or kill in the middle of a call still leaves
//!   the decision: in the file, or in the journal, which the next [`History::open`] replays. An
//!   allowed entry without a duration is a call still running, or one that never came back.
//! - **Each part is written once.** Nothing changes an entry's decision, arguments or reason
//!   after `record_audit`; `finish_audit` fills in the outcome once, and only for an allowed
//!   entry (nothing else ran). That keeps a bug in the caller from rewriting the log. It is not
//!   tamper-proofing: whoever can write the file can edit it.
//! - **The log outlives conversations.** An entry names its conversation by id as plain text,
//!   with no foreign key: deleting a conversation keeps its entries (still found by that id),
//!   and calls made outside a conversation (the CLI, by hand) have none. Nothing here deletes
//!   entries yet.
//! - **Arguments are kept as they reached the server**, after any edit by the user, and beside
//!   them what the model asked for when the user edited it. Both are stored as JSON text; the
//!   caller's entry time ([`AuditEntry::decided_at`]) is used, not the [`Clock`], as for
//!   messages.
//! - **Filters are exact, except the text.** The text filter is the same case-insensitive
//!   substring match as conversation search, over the strings, numbers and keys of both argument
//!   sets and the reason, stored folded at record time (so arguments are kept about twice). It
//!   does not look at the JSON text, where `C:\Users` is written `C:\\Users`. Indexes on time,
//!   on server and tool, and on conversation (each ending in time) give the common lists newest
//!   first straight from an index, without a sort.
//! - **The export is JSON Lines**: one [`AuditRow`] per line, exactly as serde writes it, so
//!   each line reads back with `serde_json::from_str::<AuditRow>` and `jq` reads the file. It
//!   reads the log in pages of a few hundred entries and lets go of the connection in between,
//!   so the app keeps recording during a long export.
//! - **Streamed to a collector from the committed rows** (`export.rs`): the exporter reads
//!   entries by id after a cursor kept here per destination, so what a collector has not
//!   acknowledged is sent again after any outage or kill.

mod audit;
mod clock;
mod entry;
mod error;
mod export;
mod journal;
mod recover;
mod schema;
#[cfg(test)]
mod tests;
mod text;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::functions::FunctionFlags;
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::audit::{AuditFilter, AuditRef, AuditRow};
pub use crate::clock::{Clock, SystemClock};
pub use crate::entry::{AuditDecision, AuditEntry, DecidedBy};
use crate::error::Failure;
pub use crate::error::HistoryError;
pub use crate::export::{ExportBacklog, ExportRow, OPEN_LIMIT};
pub use crate::schema::SCHEMA_VERSION;
use crate::text::fold;
use crate::writer::Writer;
pub use crate::writer::{Pending, LAZY_DELAY, SYNC_INTERVAL};

/// A conversation as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    /// A UUID v4, lower-case and hyphenated.
    pub id: String,
    pub title: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds of the last appended message, or of creation.
    pub updated_at: i64,
    pub message_count: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache (billed at a fraction).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache (billed at a premium, by Anthropic).
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// The estimated cost of the model calls whose price is known, in millionths of a dollar.
    #[serde(default)]
    pub cost_micro_usd: u64,
    /// Model calls whose price is not known (a local or unlisted model): the cost leaves them
    /// out.
    #[serde(default)]
    pub unpriced_calls: u64,
}

/// One model call's tokens (or a turn's, summed), as [`History::add_usage`] adds them up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Input tokens not served from a cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The estimated cost in millionths of a dollar; `None` when the price is not known.
    pub cost_micro_usd: Option<u64>,
}

/// One message of a conversation, stored as the caller gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    /// `user`, `assistant`, `toolResult`, …: whatever the caller's message types use.
    pub role: String,
    /// The whole message. A top-level `"text"` string in it is what search looks at.
    pub body: Value,
    /// Unix milliseconds.
    pub created_at: i64,
}

impl StoredMessage {
    /// A message created now, by the system clock.
    pub fn new(role: impl Into<String>, body: Value) -> Self {
        StoredMessage {
            role: role.into(),
            body,
            created_at: SystemClock.now_ms(),
        }
    }

    /// The text search looks at: the body's top-level `"text"` string, if any.
    pub fn text(&self) -> Option<&str> {
        self.body.get("text").and_then(Value::as_str)
    }
}

/// The conversation history: one SQLite file, safe to share between threads.
pub struct History {
    /// Declared first, so it is dropped first: everything queued is committed before the
    /// connections close.
    writer: Writer,
    /// The connection reads use: its own for a file, the writer's for an in-memory database.
    reader: Arc<Mutex<Connection>>,
    /// This process's audit journal, for a file (see `journal.rs`).
    journal: Option<Arc<journal::Journal>>,
    /// Keys for [`History::journal_audit`] in an in-memory history, which has no journal.
    memory_keys: AtomicU64,
    /// Journaled entries not yet taken by the writer.
    unsaved: journal::Unsaved,
    /// Audit entries found in killed processes' journals when this history was opened.
    recovered: usize,
    path: PathBuf,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The columns [`summary_from_row`] reads, in its order.
const SUMMARY_COLUMNS: &str = "c.id, c.title, c.created_at, c.updated_at,
    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id),
    c.input_tokens, c.output_tokens, c.cache_read_tokens, c.cache_write_tokens,
    c.cost_micro_usd, c.unpriced_calls";

impl History {
    /// Opens the history at `path`, creating the file and its folder if needed and bringing
    /// the schema up to date.
    ///
    /// Fails with [`HistoryError::Corrupt`] when the file is not a sound Toolgate history and
    /// with [`HistoryError::TooNew`] when a newer Toolgate wrote it; in both cases the file is
    /// left as it was.
    pub fn open(path: &Path) -> Result<Self, HistoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::Io {
                action: "create the folder",
                path: dir.to_owned(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(|e| Failure::from(e).into_public(path))?;
        Self::set_up(conn, path.to_owned())
    }

    /// A history that lives only as long as the value, for tests and throwaway sessions.
    pub fn open_in_memory() -> Result<Self, HistoryError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|e| Failure::from(e).into_public(&path))?;
        Self::set_up(conn, path)
    }

    /// Opens the history at `path`; if it is damaged, moves it aside and starts a new one.
    ///
    /// Returns the history and, when the old file was moved, where it went:
    /// `<name>.corrupt-<UTC time>` beside it (with its `-wal`/`-shm` files, if any). The app
    /// tells the user about the backup. Only [`HistoryError::Corrupt`] is recovered from this
    /// way: a file from a newer Toolgate ([`HistoryError::TooNew`]) or one that cannot be read
    /// for now (a full disk, missing permissions) is an error and stays where it is.
    pub fn open_or_recover(path: &Path) -> Result<(Self, Option<PathBuf>), HistoryError> {
        match Self::open(path) {
            Ok(history) => Ok((history, None)),
            Err(HistoryError::Corrupt { .. }) => {
                let backup = recover::move_aside(path, SystemClock.now_ms())?;
                Ok((Self::open(path)?, Some(backup)))
            }
            Err(other) => Err(other),
        }
    }

    /// Uses `clock` for every timestamp from now on.
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// How many audit entries the journals of killed processes held that were not yet in the
    /// database, inserted when this history was opened (see [`History::journal_audit`]).
    pub fn recovered_entries(&self) -> usize {
        self.recovered
    }

    /// The file this history lives in (`:memory:` for [`History::open_in_memory`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn set_up(conn: Connection, path: PathBuf) -> Result<Self, HistoryError> {
        let conn = prepare(conn, &path).map_err(|e| e.into_public(&path))?;
        let file = path != Path::new(":memory:");
        let mut recovered = 0;
        let journal = if file {
            // What killed processes left in their journals goes in first.
            recovered = journal::recover(&conn, &path).map_err(|e| e.into_public(&path))?;
            if recovered > 0 {
                tracing::warn!(
                    entries = recovered,
                    "audit entries a stopped Toolgate had not yet saved were recovered"
                );
            }
            let journal = journal::Journal::create(&path).map_err(|source| HistoryError::Io {
                action: "create the audit journal beside",
                path: path.clone(),
                source,
            })?;
            Some(Arc::new(journal))
        } else {
            None
        };
        let writes = Arc::new(Mutex::new(conn));
        let reader = if file {
            // Reads get a connection of their own: in WAL mode they never wait for a write.
            let conn = Connection::open(&path).map_err(|e| Failure::from(e).into_public(&path))?;
            Arc::new(Mutex::new(
                configure(conn).map_err(|e| Failure::from(e).into_public(&path))?,
            ))
        } else {
            writes.clone()
        };
        Ok(History {
            writer: Writer::start(writes, &path, file, journal.clone()),
            reader,
            journal,
            memory_keys: AtomicU64::new(1),
            unsaved: journal::Unsaved::default(),
            recovered,
            path,
            clock: Arc::new(SystemClock),
        })
    }

    /// Starts a new, empty conversation.
    pub fn create(&self, title: &str) -> Result<ConversationSummary, HistoryError> {
        let now = self.clock.now_ms();
        let summary = ConversationSummary {
            id: uuid::Uuid::new_v4().to_string(),
            title: title.to_owned(),
            created_at: now,
            updated_at: now,
            message_count: 0,
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_micro_usd: 0,
            unpriced_calls: 0,
        };
        let (id, title) = (summary.id.clone(), summary.title.clone());
        self.writer
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO conversations (id, title, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?3)",
                    params![id, title, now],
                )?;
                Ok(())
            })
            .wait()?;
        Ok(summary)
    }

    /// Conversations, the most recently updated first; with `search`, only those whose title
    /// or any message text contains it, ignoring case. A blank search lists everything.
    pub fn list(&self, search: Option<&str>) -> Result<Vec<ConversationSummary>, HistoryError> {
        let needle = search.map(str::trim).filter(|s| !s.is_empty()).map(fold);
        self.run(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM conversations c
                 WHERE ?1 IS NULL
                    OR toolgate_contains(c.title, ?1)
                    OR EXISTS (SELECT 1 FROM messages m
                               WHERE m.conversation_id = c.id AND instr(m.search_text, ?1) > 0)
                 ORDER BY c.updated_at DESC, c.rowid DESC"
            ))?;
            let rows = stmt.query_map([needle], summary_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// One conversation's summary.
    pub fn get(&self, id: &str) -> Result<ConversationSummary, HistoryError> {
        self.run(|conn| summary(conn, id))
    }

    /// Gives a conversation a new title. It keeps its place in the list.
    pub fn rename(&self, id: &str, title: &str) -> Result<(), HistoryError> {
        let (id, title) = (id.to_owned(), title.to_owned());
        self.writer
            .write(move |conn| {
                let changed = conn.execute(
                    "UPDATE conversations SET title = ?2 WHERE id = ?1",
                    params![id, title],
                )?;
                found(changed, &id)
            })
            .wait()
    }

    /// Deletes a conversation and all its messages.
    pub fn delete(&self, id: &str) -> Result<(), HistoryError> {
        let id = id.to_owned();
        self.writer
            .write(move |conn| {
                // Messages go by `ON DELETE CASCADE`, in the same statement.
                let changed = conn.execute("DELETE FROM conversations WHERE id = ?1", [&id])?;
                found(changed, &id)
            })
            .wait()
    }

    /// Adds a message at the end of a conversation and returns its sequence number (1, 2, …).
    ///
    /// The message is committed before this returns (see [`History::queue_append`]).
    pub fn append(&self, id: &str, message: &StoredMessage) -> Result<i64, HistoryError> {
        self.queue_append(id, message).wait()
    }

    /// [`History::append`] without blocking: the message is queued on the writer thread, and the
    /// returned [`Pending`] resolves to its sequence number once it is committed.
    pub fn queue_append(&self, id: &str, message: &StoredMessage) -> Pending<i64> {
        let body = message.body.to_string();
        let search_text = fold(message.text().unwrap_or_default());
        let now = self.clock.now_ms();
        let (id, role, created_at) = (id.to_owned(), message.role.clone(), message.created_at);
        self.writer.write(move |conn| {
            // Inside the writer's `BEGIN IMMEDIATE`: the write lock is held before the last
            // seq is read, so two processes appending to one conversation cannot pick the same
            // number.
            // `max`: a clock stepped back must not move a conversation down the list.
            let changed = conn
                .prepare_cached(
                    "UPDATE conversations SET updated_at = max(updated_at, ?2) WHERE id = ?1",
                )?
                .execute(params![id, now])?;
            found(changed, &id)?;
            let seq: i64 = conn
                .prepare_cached(
                    "SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE conversation_id = ?1",
                )?
                .query_row([&id], |row| row.get(0))?;
            conn.prepare_cached(
                "INSERT INTO messages (conversation_id, seq, role, body, search_text, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![id, seq, role, body, search_text, created_at])?;
            Ok(seq)
        })
    }

    /// A conversation's messages, in the order they were appended.
    pub fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, HistoryError> {
        self.run(|conn| {
            // One read transaction, so a concurrent delete cannot fall between check and read.
            let tx = conn.transaction()?;
            summary(&tx, id)?;
            let mut stmt = tx.prepare_cached(
                "SELECT seq, role, body, created_at FROM messages
                 WHERE conversation_id = ?1 ORDER BY seq",
            )?;
            let rows = stmt.query_map([id], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    StoredMessage {
                        role: row.get(1)?,
                        body: Value::Null,
                        created_at: row.get(3)?,
                    },
                    row.get::<_, String>(2)?,
                ))
            })?;
            let mut messages = Vec::new();
            for row in rows {
                let (seq, mut message, body) = row?;
                message.body = serde_json::from_str(&body).map_err(|e| HistoryError::Corrupt {
                    path: self.path.clone(),
                    reason: format!("message {seq} of conversation {id} is not JSON: {e}"),
                })?;
                messages.push(message);
            }
            Ok(messages)
        })
    }

    /// Adds one model call's token usage to a conversation's totals.
    pub fn add_usage(&self, id: &str, usage: &TokenUsage) -> Result<(), HistoryError> {
        self.queue_usage(id, usage).wait()
    }

    /// [`History::add_usage`] without blocking; the [`Pending`] resolves once it is committed.
    pub fn queue_usage(&self, id: &str, usage: &TokenUsage) -> Pending<()> {
        // SQLite integers are i64. `min`: a sum past i64::MAX turns into a float in SQL, which
        // the STRICT column would refuse; saturating is kinder than failing the turn.
        let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let (id, usage) = (id.to_owned(), *usage);
        self.writer.write(move |conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE conversations
                     SET input_tokens = min(input_tokens + ?2, 9223372036854775807),
                         output_tokens = min(output_tokens + ?3, 9223372036854775807),
                         cache_read_tokens = min(cache_read_tokens + ?4, 9223372036854775807),
                         cache_write_tokens = min(cache_write_tokens + ?5, 9223372036854775807),
                         cost_micro_usd = min(cost_micro_usd + ?6, 9223372036854775807),
                         unpriced_calls = unpriced_calls + ?7
                     WHERE id = ?1",
                )?
                .execute(params![
                    id,
                    clamp(usage.input_tokens),
                    clamp(usage.output_tokens),
                    clamp(usage.cache_read_tokens),
                    clamp(usage.cache_write_tokens),
                    clamp(usage.cost_micro_usd.unwrap_or(0)),
                    i64::from(usage.cost_micro_usd.is_none()),
                ])?;
            found(changed, &id)
        })
    }

    /// Runs one read on the reads' connection, after every write queued before it, and names
    /// any failure with this file's path.
    fn run<T>(
        &self,
        op: impl FnOnce(&mut Connection) -> Result<T, Failure>,
    ) -> Result<T, HistoryError> {
        self.writer.settle();
        // A panic inside an operation dropped its transaction, which rolled it back, so the
        // connection behind a poisoned lock is as good as any.
        let mut conn = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        op(&mut conn).map_err(|e| e.into_public(&self.path))
    }

    /// Waits until every write queued so far is committed.
    pub fn flush(&self) {
        self.writer.settle();
    }

    #[cfg(test)]
    fn with_raw<T>(&self, op: impl FnOnce(&Connection) -> T) -> T {
        self.flush();
        op(&self.reader.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Checks, configures and migrates a freshly opened connection, in the order that keeps a
/// refused file untouched: only reads happen before the version and integrity checks pass.
fn prepare(conn: Connection, path: &Path) -> Result<Connection, Failure> {
    conn.busy_timeout(Duration::from_secs(5))?;
    // Closing the last connection folds the `-wal` file into the database and deletes it. For
    // a file we are about to refuse, that would rewrite a newer version's database, or throw
    // away a damaged file's `-wal` that a recovery tool could still use; so not until accepted.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    // The first read of the file: "not a database" shows up here.
    let found = schema::user_version(&conn)?;
    schema::check_not_too_new(found, SCHEMA_VERSION, path)?;
    check_integrity(&conn, path)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, false)?;

    // Where WAL is impossible (some network file systems) SQLite keeps its rollback journal;
    // that is no error, only slower.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let mut conn = configure(conn)?;
    schema::migrate(&mut conn, schema::MIGRATIONS, path)?;
    Ok(conn)
}

/// What every connection to the file needs, the first one and the reads' one alike.
fn configure(conn: Connection) -> rusqlite::Result<Connection> {
    conn.busy_timeout(Duration::from_secs(5))?;
    // NORMAL in WAL mode: a commit has reached the OS when it returns, so a crash or kill of
    // the app loses nothing committed; the writer's syncer puts it on the disk within
    // `writer::SYNC_INTERVAL` (see `writer.rs` and ARCHITECTURE.md for what a power cut may
    // lose). FULL would fsync inside every commit, on the caller's path.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // Half a megabyte of page cache, not SQLite's default two: the history is appended to and
    // read a conversation at a time, the OS caches the file anyway, and a tray app that runs all
    // day should not grow by the cache as the file does (the soak test measures it).
    conn.pragma_update(None, "cache_size", -512)?;
    conn.create_scalar_function(
        "toolgate_contains",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let haystack = ctx.get_raw(0).as_str_or_null()?.unwrap_or_default();
            let needle = ctx.get_raw(1).as_str_or_null()?.unwrap_or_default();
            Ok(fold(haystack).contains(needle))
        },
    )?;
    Ok(conn)
}

/// `PRAGMA quick_check` reads every page once (no index cross-checks), so damage is found at
/// open, where the app can still start afresh, rather than in the middle of a conversation.
fn check_integrity(conn: &Connection, path: &Path) -> Result<(), Failure> {
    let verdict: String = conn.query_row("PRAGMA quick_check(1)", [], |row| row.get(0))?;
    if verdict != "ok" {
        return Err(HistoryError::Corrupt {
            path: path.to_owned(),
            reason: format!("integrity check failed: {verdict}"),
        }
        .into());
    }
    Ok(())
}

fn summary(conn: &Connection, id: &str) -> Result<ConversationSummary, Failure> {
    conn.prepare_cached(&format!(
        "SELECT {SUMMARY_COLUMNS} FROM conversations c WHERE c.id = ?1"
    ))?
    .query_row([id], summary_from_row)
    .optional()?
    .ok_or_else(|| not_found(id))
}

fn summary_from_row(row: &Row<'_>) -> rusqlite::Result<ConversationSummary> {
    Ok(ConversationSummary {
        id: row.get(0)?,
        title: row.get(1)?,
        created_at: row.get(2)?,
        updated_at: row.get(3)?,
        message_count: unsigned(row, 4)?,
        input_tokens: unsigned(row, 5)?,
        output_tokens: unsigned(row, 6)?,
        cache_read_tokens: unsigned(row, 7)?,
        cache_write_tokens: unsigned(row, 8)?,
        cost_micro_usd: unsigned(row, 9)?,
        unpriced_calls: unsigned(row, 10)?,
    })
}

/// SQLite has only signed integers; counts and totals are never negative unless the file was
/// edited by hand, which is then reported instead of read as a huge number.
fn unsigned(row: &Row<'_>, idx: usize) -> rusqlite::Result<u64> {
    let value: i64 = row.get(idx)?;
    u64::try_from(value).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(idx, value))
}

fn found(changed_rows: usize, id: &str) -> Result<(), Failure> {
    if changed_rows == 0 {
        return Err(not_found(id));
    }
    Ok(())
}

fn not_found(id: &str) -> Failure {
    HistoryError::NotFound { id: id.to_owned() }.into()
}
