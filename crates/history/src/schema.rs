//! The schema and its migrations.
//!
//! The schema version lives in SQLite's own header field `PRAGMA user_version` (0 in a new
//! file), so it needs no table of its own and any `sqlite3` shell can show it. Each migration
//! runs in its own `BEGIN IMMEDIATE` transaction together with the version bump, so a crash or a
//! failing migration leaves the file at the previous version, whole, and the next start tries
//! again. `IMMEDIATE` takes the write lock before the version is re-read, so two processes
//! opening one new file at once (the app and the CLI) cannot both apply migration 1.
//!
//! **A migration, once released, is never edited:** a database already at its version never runs
//! it again. Change the schema by appending a migration. `tests::v1_database_made_by_hand_opens`
//! holds a copy of version 1 as it was written to users' disks, to catch an edit in place; when
//! version 2 ships, its SQL gets such a frozen copy too.
//!
//! A new value in a text column that Rust reads as an enum (the audit log's `decision` and
//! `decided_by`) also needs a migration, even an empty one: only a version bump makes an older
//! Toolgate refuse the file ([`HistoryError::TooNew`]) instead of failing on the first such row.

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Failure, HistoryError};

/// One step of the schema: the SQL that takes a database from `version - 1` to `version`.
pub(crate) struct Migration {
    pub(crate) version: u32,
    pub(crate) sql: &'static str,
}

/// Every migration, in order; versions count up from 1 without gaps.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        // STRICT: a wrong type from a future bug fails loudly instead of being stored as text.
        // Timestamps are unix milliseconds. `search_text` is the body's "text", lower-cased by
        // `fold`, so that search needs neither to parse JSON nor to fold per row.
        sql: "
        CREATE TABLE conversations (
            id            TEXT    NOT NULL PRIMARY KEY,
            title         TEXT    NOT NULL,
            created_at    INTEGER NOT NULL,
            updated_at    INTEGER NOT NULL,
            input_tokens  INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        CREATE INDEX conversations_by_updated ON conversations (updated_at);
        CREATE TABLE messages (
            conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            seq             INTEGER NOT NULL,
            role            TEXT    NOT NULL,
            body            TEXT    NOT NULL,
            search_text     TEXT    NOT NULL,
            created_at      INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, seq)
        ) STRICT;
    ",
    },
    Migration {
        version: 2,
        // The approval audit log (see `audit.rs`). Only new objects: a version-1 file is
        // upgraded in place, its conversations untouched.
        //
        // `conversation_id` has no foreign key on purpose: the log outlives a deleted
        // conversation, and calls made outside one (the CLI, by hand) have none.
        // AUTOINCREMENT: an id, once shown or exported, never names another entry, even after
        // entries are deleted (by hand, or by a retention rule some day). `decision` and
        // `decided_by` have no CHECK: a new value then needs only a version bump (see above),
        // not a rebuild of what may be a large table. `search_text` is the folded strings,
        // numbers and keys of both argument sets and the reason (`audit_search_text`). The
        // indexes end in `decided_at` (and, implicitly, `id`), so that a filtered list comes
        // out of the index newest first, without a sort, and stops at its limit.
        sql: "
            CREATE TABLE audit (
                id                 INTEGER PRIMARY KEY AUTOINCREMENT,
                decided_at         INTEGER NOT NULL,
                conversation_id    TEXT,
                server_id          TEXT    NOT NULL,
                tool               TEXT    NOT NULL,
                arguments          TEXT    NOT NULL,
                original_arguments TEXT,
                decision           TEXT    NOT NULL,
                decided_by         TEXT    NOT NULL,
                rule_id            TEXT,
                reason             TEXT,
                duration_ms        INTEGER,
                result_bytes       INTEGER,
                is_error           INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
                error              TEXT,
                search_text        TEXT    NOT NULL
            ) STRICT;
            CREATE INDEX audit_by_time ON audit (decided_at);
            CREATE INDEX audit_by_tool ON audit (server_id, tool, decided_at);
            CREATE INDEX audit_by_conversation ON audit (conversation_id, decided_at);
        ",
    },
    Migration {
        version: 3,
        // No change to the tables: `decided_by` gained two values, `toolgate` (a call refused
        // before it reached the gate: an unknown tool, arguments that are not an object) and
        // `unattended` (nobody could be asked: no terminal). The bump makes an older Toolgate
        // refuse the file instead of failing on the first such row (see the module docs).
        sql: "",
    },
    Migration {
        version: 4,
        // Which connected client (Claude Code, Cursor…) made a call through the gateway; NULL
        // for Toolgate's own chat and the CLI. Added in place: old rows keep NULL.
        sql: "
            ALTER TABLE audit ADD COLUMN client TEXT;
            CREATE INDEX audit_by_client ON audit (client, decided_at);
        ",
    },
    Migration {
        version: 5,
        // Prompt caching and cost: the tokens read from and written to the provider's prompt
        // cache, the estimated cost of the model calls whose price is known (millionths of a
        // dollar), and how many calls had no known price. Added in place: old rows keep 0.
        sql: "
            ALTER TABLE conversations ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE conversations ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE conversations ADD COLUMN cost_micro_usd INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE conversations ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;
        ",
    },
    Migration {
        version: 6,
        // The audit journal's key (`journal.rs`): an entry written to a process's journal
        // before its call went out carries it, so the journal of a killed process can be
        // replayed without inserting an entry twice. NULL for entries written otherwise; the
        // index holds only the keyed ones.
        sql: "
            ALTER TABLE audit ADD COLUMN journal_key TEXT;
            CREATE UNIQUE INDEX audit_by_journal_key ON audit (journal_key)
                WHERE journal_key IS NOT NULL;
        ",
    },
    Migration {
        version: 7,
        // Streaming the audit log to an OpenTelemetry collector (`export.rs`). Each destination
        // keeps how far its collector has acknowledged (every entry up to `acknowledged` was
        // received) and which process sends to it now (`holder`: its journal nonce), so two
        // processes on one file do not both send. `history_identity` is one random id made
        // here, so an entry's id (`<identity>-<audit id>`) stays the same wherever it is sent
        // and a receiver can tell two computers' entry 17 apart.
        sql: "
            CREATE TABLE export_cursors (
                destination  TEXT    NOT NULL PRIMARY KEY,
                acknowledged INTEGER NOT NULL,
                holder       TEXT,
                updated_at   INTEGER NOT NULL
            ) STRICT;
            CREATE TABLE history_identity (id TEXT NOT NULL) STRICT;
            INSERT INTO history_identity (id) VALUES (lower(hex(randomblob(16))));
        ",
    },
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Refuses a file from a newer schema before anything writes to it.
pub(crate) fn check_not_too_new(
    found: u32,
    known: u32,
    path: &std::path::Path,
) -> Result<(), HistoryError> {
    if found > known {
        return Err(HistoryError::TooNew {
            path: path.to_owned(),
            found,
            known,
        });
    }
    Ok(())
}

/// Applies, in order, every migration the database has not had yet.
pub(crate) fn migrate(
    conn: &mut Connection,
    migrations: &[Migration],
    path: &std::path::Path,
) -> Result<(), Failure> {
    let known = migrations.last().map_or(0, |m| m.version);
    for migration in migrations {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Read again under the write lock: another process may have migrated meanwhile.
        let found = user_version(&tx)?;
        check_not_too_new(found, known, path)?;
        if found >= migration.version {
            continue;
        }
        if found == 0 && migration.version == 1 {
            refuse_foreign_tables(&tx, path)?;
        }
        tx.execute_batch(migration.sql)?;
        tx.pragma_update(None, "user_version", migration.version)?;
        tx.commit()?;
    }
    Ok(())
}

/// A version-0 file with tables in it was made by some other program: creating ours beside
/// them would hide that the path is wrong.
fn refuse_foreign_tables(conn: &Connection, path: &std::path::Path) -> Result<(), Failure> {
    let objects: i64 =
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))?;
    if objects > 0 {
        return Err(HistoryError::Corrupt {
            path: path.to_owned(),
            reason: "it is an SQLite database of some other program".to_owned(),
        }
        .into());
    }
    Ok(())
}
