use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use rusqlite::Connection;
use serde_json::json;

use super::*;
use crate::schema::{migrate, Migration, MIGRATIONS};

/// A clock that moves only when told to.
#[derive(Clone, Default)]
struct FakeClock(Arc<AtomicI64>);

impl FakeClock {
    fn at(ms: i64) -> Self {
        FakeClock(Arc::new(AtomicI64::new(ms)))
    }
    fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn memory() -> (History, FakeClock) {
    let clock = FakeClock::at(1_000);
    let history = History::open_in_memory()
        .expect("open in memory")
        .with_clock(clock.clone());
    (history, clock)
}

fn user(text: &str) -> StoredMessage {
    StoredMessage {
        role: "user".into(),
        body: json!({ "role": "user", "text": text }),
        created_at: 7,
    }
}

fn titles(list: &[ConversationSummary]) -> Vec<&str> {
    list.iter().map(|c| c.title.as_str()).collect()
}

fn assert_not_found(result: Result<impl std::fmt::Debug, HistoryError>, id: &str) {
    match result {
        Err(HistoryError::NotFound { id: got }) => assert_eq!(got, id),
        other => panic!("expected NotFound for {id}, got {other:?}"),
    }
}

fn version_of(path: &Path) -> u32 {
    let conn = Connection::open(path).expect("open raw");
    schema::user_version(&conn).expect("user_version")
}

// ---- conversations ----

#[test]
fn create_gives_a_uuid_v4_and_empty_totals() {
    let (history, _) = memory();
    let created = history.create("First").expect("create");
    let id = uuid::Uuid::parse_str(&created.id).expect("a uuid");
    assert_eq!(id.get_version_num(), 4);
    assert_eq!(created.id, id.hyphenated().to_string());
    assert_eq!(
        created,
        ConversationSummary {
            id: created.id.clone(),
            title: "First".into(),
            created_at: 1_000,
            updated_at: 1_000,
            message_count: 0,
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_micro_usd: 0,
            unpriced_calls: 0,
        }
    );
    assert_ne!(history.create("Second").expect("create").id, created.id);
}

#[test]
fn get_returns_what_create_made_and_not_found_for_others() {
    let (history, _) = memory();
    let created = history.create("Plans").expect("create");
    assert_eq!(history.get(&created.id).expect("get"), created);
    assert_not_found(history.get("no-such-id"), "no-such-id");
}

#[test]
fn list_is_newest_first_by_last_message() {
    let (history, clock) = memory();
    let a = history.create("a").expect("create");
    clock.set(2_000);
    let b = history.create("b").expect("create");
    // Same millisecond: the later one still comes first.
    let c = history.create("c").expect("create");
    assert_eq!(titles(&history.list(None).expect("list")), ["c", "b", "a"]);

    clock.set(3_000);
    history.append(&a.id, &user("back to a")).expect("append");
    let list = history.list(None).expect("list");
    assert_eq!(titles(&list), ["a", "c", "b"]);
    assert_eq!(list[0].updated_at, 3_000);
    assert_eq!(list[0].message_count, 1);

    // A clock stepped back does not move a conversation down.
    clock.set(500);
    history.append(&a.id, &user("again")).expect("append");
    assert_eq!(history.get(&a.id).expect("get").updated_at, 3_000);
    let _ = (b, c);
}

#[test]
fn search_matches_title_and_message_text_ignoring_case() {
    let (history, _) = memory();
    let travel = history.create("Trip to ZÜRICH").expect("create");
    let code = history.create("Rust help").expect("create");
    let tools = history.create("Tools").expect("create");
    history
        .append(&code.id, &user("How do I use a Mutex?"))
        .expect("append");
    history
        .append(
            &tools.id,
            &StoredMessage {
                role: "toolResult".into(),
                body: json!({ "role": "toolResult", "content": "mutex mutex mutex" }),
                created_at: 1,
            },
        )
        .expect("append");

    let search = |q: &str| titles(&history.list(Some(q)).expect("search")).join(",");
    assert_eq!(search("zürich"), "Trip to ZÜRICH", "non-ASCII title");
    assert_eq!(
        search("MUTEX"),
        "Rust help",
        "message text, not tool output"
    );
    assert_eq!(search("rust"), "Rust help");
    assert_eq!(search("o"), "Tools,Rust help,Trip to ZÜRICH");
    assert_eq!(search("nothing like this"), "");
    assert_eq!(search("%"), "", "no LIKE wildcards");
    assert_eq!(
        search("   "),
        "Tools,Rust help,Trip to ZÜRICH",
        "blank lists all"
    );
    assert_eq!(search("  help "), "Rust help", "trimmed");
    let _ = travel;
}

#[test]
fn folding_ignores_context() {
    assert_eq!(fold("ΟΔΟΣ"), "οδοσ");
    assert_eq!(fold("İ"), "i\u{307}");
}

#[test]
fn rename_changes_the_title_but_not_the_order() {
    let (history, clock) = memory();
    let old = history.create("old").expect("create");
    clock.set(2_000);
    history.create("new").expect("create");
    history.rename(&old.id, "renamed").expect("rename");
    assert_eq!(
        titles(&history.list(None).expect("list")),
        ["new", "renamed"]
    );
    assert_eq!(history.get(&old.id).expect("get").updated_at, 1_000);
    assert_not_found(history.rename("gone", "x"), "gone");
}

#[test]
fn delete_takes_the_messages_with_it() {
    let (history, _) = memory();
    let doomed = history.create("doomed").expect("create");
    let kept = history.create("kept").expect("create");
    history.append(&doomed.id, &user("one")).expect("append");
    history.append(&doomed.id, &user("two")).expect("append");
    history.append(&kept.id, &user("three")).expect("append");

    history.delete(&doomed.id).expect("delete");
    assert_not_found(history.get(&doomed.id), &doomed.id);
    assert_not_found(history.messages(&doomed.id), &doomed.id);
    let orphans: i64 = history.with_raw(|conn| {
        conn.query_row(
            "SELECT count(*) FROM messages WHERE conversation_id = ?1",
            [&doomed.id],
            |r| r.get(0),
        )
        .expect("count")
    });
    assert_eq!(orphans, 0);
    assert_eq!(history.messages(&kept.id).expect("messages").len(), 1);
    assert_not_found(history.delete(&doomed.id), &doomed.id);
}

#[test]
fn append_numbers_messages_per_conversation() {
    let (history, _) = memory();
    let a = history.create("a").expect("create");
    let b = history.create("b").expect("create");
    assert_eq!(history.append(&a.id, &user("1")).expect("append"), 1);
    assert_eq!(history.append(&a.id, &user("2")).expect("append"), 2);
    assert_eq!(history.append(&b.id, &user("1")).expect("append"), 1);
    assert_eq!(history.append(&a.id, &user("3")).expect("append"), 3);
    assert_eq!(history.get(&a.id).expect("get").message_count, 3);
    assert_eq!(history.get(&b.id).expect("get").message_count, 1);
}

#[test]
fn append_to_an_unknown_conversation_stores_nothing() {
    let (history, _) = memory();
    assert_not_found(history.append("missing", &user("lost")), "missing");
    let rows: i64 = history.with_raw(|conn| {
        conn.query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .expect("count")
    });
    assert_eq!(rows, 0);
}

#[test]
fn messages_come_back_in_order_and_unchanged() {
    let (history, _) = memory();
    let conv = history.create("c").expect("create");
    assert!(history.messages(&conv.id).expect("messages").is_empty());
    let sent = vec![
        user("hello"),
        StoredMessage {
            role: "assistant".into(),
            body: json!({
                "role": "assistant",
                "text": "",
                "toolCalls": [{ "id": "t1", "name": "fs__read", "arguments": { "path": "/é", "n": 1.5 } }]
            }),
            created_at: 8,
        },
        StoredMessage {
            role: "toolResult".into(),
            body: json!({ "role": "toolResult", "callId": "t1", "content": "x", "isError": false }),
            created_at: 9,
        },
        StoredMessage::new("note", json!("a bare string body")),
    ];
    for message in &sent {
        history.append(&conv.id, message).expect("append");
    }
    assert_eq!(history.messages(&conv.id).expect("messages"), sent);
    assert_not_found(history.messages("nope"), "nope");
}

#[test]
fn message_text_is_the_top_level_text_string() {
    assert_eq!(user("hi").text(), Some("hi"));
    assert_eq!(StoredMessage::new("x", json!({ "text": 3 })).text(), None);
    assert_eq!(StoredMessage::new("x", json!(["text"])).text(), None);
}

#[test]
fn usage_adds_up_and_saturates() {
    let (history, _) = memory();
    let conv = history.create("c").expect("create");
    let usage = |input, output, read, write, cost| TokenUsage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
        cost_micro_usd: cost,
    };
    history
        .add_usage(&conv.id, &usage(100, 20, 1_000, 300, Some(7)))
        .expect("usage");
    history
        .add_usage(&conv.id, &usage(50, 5, 2_000, 0, Some(3)))
        .expect("usage");
    history
        .add_usage(&conv.id, &usage(1, 1, 0, 0, None))
        .expect("usage");
    let got = history.get(&conv.id).expect("get");
    assert_eq!(
        (
            got.input_tokens,
            got.output_tokens,
            got.cache_read_tokens,
            got.cache_write_tokens
        ),
        (151, 26, 3_000, 300)
    );
    assert_eq!(
        (got.cost_micro_usd, got.unpriced_calls),
        (10, 1),
        "the cost sums the priced calls and counts the others"
    );

    history
        .add_usage(&conv.id, &usage(u64::MAX, 0, 0, 0, None))
        .expect("usage");
    history
        .add_usage(&conv.id, &usage(1, 0, 0, 0, None))
        .expect("usage");
    assert_eq!(
        history.get(&conv.id).expect("get").input_tokens,
        i64::MAX as u64
    );
    assert_not_found(history.add_usage("nope", &usage(1, 1, 0, 0, None)), "nope");
}

#[test]
fn summaries_and_messages_serialize_in_camel_case() {
    let (history, _) = memory();
    let conv = history.create("c").expect("create");
    let value = serde_json::to_value(&conv).expect("json");
    for key in [
        "id",
        "title",
        "createdAt",
        "updatedAt",
        "messageCount",
        "inputTokens",
        "outputTokens",
    ] {
        assert!(value.get(key).is_some(), "{key} in {value}");
    }
    let message = serde_json::to_value(user("x")).expect("json");
    assert_eq!(message["createdAt"], 7);
}

#[test]
fn history_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<History>();

    let (history, _) = memory();
    let history = Arc::new(history);
    let conv = history.create("c").expect("create");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let history = Arc::clone(&history);
            let id = conv.id.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    history.append(&id, &user("t")).expect("append");
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("thread");
    }
    assert_eq!(history.get(&conv.id).expect("get").message_count, 100);
}

// ---- files, schema and migrations ----

#[test]
fn a_new_file_is_created_with_its_folder_at_the_current_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("nested/folder/history.db");
    let history = History::open(&path).expect("open");
    assert_eq!(history.path(), path);
    let (mode, sync, fk): (String, i64, i64) = history.with_raw(|conn| {
        let text = |name| conn.pragma_query_value(None, name, |r| r.get(0));
        let int = |name| conn.pragma_query_value(None, name, |r| r.get(0));
        (
            text("journal_mode").expect("journal_mode"),
            int("synchronous").expect("synchronous"),
            int("foreign_keys").expect("foreign_keys"),
        )
    });
    assert_eq!(
        (mode.as_str(), sync, fk),
        ("wal", 1, 1),
        "WAL, NORMAL (the writer's syncer puts commits on disk), foreign keys"
    );
    drop(history);
    assert_eq!(version_of(&path), SCHEMA_VERSION);
}

#[test]
fn data_survives_closing_and_reopening() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let history = History::open(&path).expect("open");
    let conv = history.create("kept").expect("create");
    history
        .append(&conv.id, &user("still here"))
        .expect("append");
    history
        .add_usage(
            &conv.id,
            &TokenUsage {
                input_tokens: 3,
                output_tokens: 4,
                ..TokenUsage::default()
            },
        )
        .expect("usage");
    drop(history);

    let history = History::open(&path).expect("reopen");
    let got = history.get(&conv.id).expect("get");
    assert_eq!((got.message_count, got.input_tokens), (1, 3));
    assert_eq!(
        history.messages(&conv.id).expect("messages"),
        [user("still here")]
    );
}

#[test]
fn two_handles_on_one_file_share_the_numbering() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let app = History::open(&path).expect("open app");
    let cli = History::open(&path).expect("open cli");
    let conv = app.create("shared").expect("create");
    assert_eq!(app.append(&conv.id, &user("a")).expect("append"), 1);
    assert_eq!(cli.append(&conv.id, &user("b")).expect("append"), 2);
    assert_eq!(app.append(&conv.id, &user("c")).expect("append"), 3);
    assert_eq!(cli.messages(&conv.id).expect("messages").len(), 3);
}

#[test]
fn migrations_count_up_from_one() {
    for (i, migration) in MIGRATIONS.iter().enumerate() {
        assert_eq!(migration.version as usize, i + 1);
    }
    assert_eq!(SCHEMA_VERSION as usize, MIGRATIONS.len());
}

/// Version 1 exactly as it was released, written without this crate's code: an edit of
/// migration 1 in place (instead of a new migration) breaks this test.
const V1_AS_RELEASED: &str = "
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
    INSERT INTO conversations VALUES ('11111111-1111-4111-8111-111111111111', 'From v1', 10, 20, 5, 6);
    INSERT INTO messages VALUES ('11111111-1111-4111-8111-111111111111', 1, 'user',
        '{\"role\":\"user\",\"text\":\"Written by v1\"}', 'written by v1', 15);
    PRAGMA user_version = 1;
";

#[test]
fn v1_database_made_by_hand_opens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    Connection::open(&path)
        .expect("create raw")
        .execute_batch(V1_AS_RELEASED)
        .expect("write v1");

    let history = History::open(&path).expect("open v1");
    let id = "11111111-1111-4111-8111-111111111111";
    let conv = history.get(id).expect("get");
    assert_eq!(
        (conv.title.as_str(), conv.created_at, conv.updated_at),
        ("From v1", 10, 20)
    );
    assert_eq!(
        (conv.message_count, conv.input_tokens, conv.output_tokens),
        (1, 5, 6)
    );
    assert_eq!(
        history.messages(id).expect("messages"),
        [StoredMessage {
            role: "user".into(),
            body: json!({ "role": "user", "text": "Written by v1" }),
            created_at: 15,
        }]
    );
    assert_eq!(
        titles(&history.list(Some("WRITTEN BY")).expect("search")),
        ["From v1"]
    );
    history.append(id, &user("written now")).expect("append");
    drop(history);
    assert_eq!(version_of(&path), SCHEMA_VERSION);
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let newer = SCHEMA_VERSION + 1;
    Connection::open(&path)
        .expect("create raw")
        .execute_batch(&format!(
            "CREATE TABLE from_the_future (x); PRAGMA user_version = {newer};"
        ))
        .expect("write");
    let before = std::fs::read(&path).expect("read");

    let err = History::open(&path).expect_err("must refuse");
    match &err {
        HistoryError::TooNew {
            path: p,
            found,
            known,
        } => {
            assert_eq!((p, *found, *known), (&path, newer, SCHEMA_VERSION));
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    let message = err.to_string();
    assert!(message.contains("newer version of Toolgate"), "{message}");
    assert!(message.contains("update Toolgate"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");

    assert_eq!(std::fs::read(&path).expect("read"), before);
    assert!(!Path::new(&format!("{}-wal", path.display())).exists());
    // Not "recovered" either: the file belongs to the newer version.
    assert!(matches!(
        History::open_or_recover(&path),
        Err(HistoryError::TooNew { .. })
    ));
    assert_eq!(std::fs::read(&path).expect("read"), before);
}

#[test]
fn a_newer_schema_with_a_pending_wal_is_left_untouched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let wal = dir.path().join("history.db-wal");
    let newer = SCHEMA_VERSION + 1;
    let conn = Connection::open(&path).expect("create raw");
    conn.pragma_update(None, "journal_mode", "WAL")
        .expect("wal");
    conn.execute_batch(&format!(
        "CREATE TABLE from_the_future (x); INSERT INTO from_the_future VALUES (1);
         PRAGMA user_version = {newer};"
    ))
    .expect("write");
    // Leave the writes in the `-wal`, as a newer Toolgate killed mid-session would.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .expect("no checkpoint");
    drop(conn);
    let before = (
        std::fs::read(&path).expect("db"),
        std::fs::read(&wal).expect("wal"),
    );
    assert!(!before.1.is_empty(), "the test needs a pending -wal");

    assert!(matches!(
        History::open(&path),
        Err(HistoryError::TooNew { found, .. }) if found == newer
    ));
    let after = (
        std::fs::read(&path).expect("db"),
        std::fs::read(&wal).expect("wal"),
    );
    assert!(before == after, "database or -wal changed");
}

const NEXT: Migration = Migration {
    version: 2,
    sql: "CREATE TABLE second (x INTEGER);",
};

#[test]
fn migrations_apply_in_order_and_only_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let mut conn = Connection::open(&path).expect("open");
    migrate(&mut conn, &MIGRATIONS[..1], &path).expect("to v1");
    assert_eq!(schema::user_version(&conn).expect("version"), 1);

    let two = [
        Migration {
            version: 1,
            sql: MIGRATIONS[0].sql,
        },
        NEXT,
    ];
    migrate(&mut conn, &two, &path).expect("to v2");
    assert_eq!(schema::user_version(&conn).expect("version"), 2);
    // Again: nothing left to do, and migration 2 is not run twice (it would fail).
    migrate(&mut conn, &two, &path).expect("nothing to do");

    // Code that knows only v1 must now refuse this file.
    assert!(matches!(
        migrate(&mut conn, &MIGRATIONS[..1], &path).map_err(|e| e.into_public(&path)),
        Err(HistoryError::TooNew {
            found: 2,
            known: 1,
            ..
        })
    ));
}

#[test]
fn a_failing_migration_leaves_the_previous_version_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let mut conn = Connection::open(&path).expect("open");
    let broken = [
        Migration {
            version: 1,
            sql: MIGRATIONS[0].sql,
        },
        Migration {
            version: 2,
            sql: "CREATE TABLE half_done (x); SELECT * FROM no_such_table;",
        },
    ];
    assert!(migrate(&mut conn, &broken, &path).is_err());
    assert_eq!(schema::user_version(&conn).expect("version"), 1);
    let half_done: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(half_done, 0, "migration 2 rolled back whole");
    drop(conn);
    History::open(&path).expect("v1 still opens");
}

// ---- damage and recovery ----

fn assert_corrupt(result: Result<History, HistoryError>, path: &Path) -> String {
    match result {
        Err(err @ HistoryError::Corrupt { .. }) => {
            let message = err.to_string();
            assert!(message.contains(&path.display().to_string()), "{message}");
            assert!(message.contains("start a new"), "{message}");
            message
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn a_file_that_is_not_sqlite_is_corrupt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    std::fs::write(&path, "these are my notes, not a database\n".repeat(200)).expect("write");
    let before = std::fs::read(&path).expect("read");
    assert_corrupt(History::open(&path), &path);
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "left as it was"
    );
}

#[test]
fn damaged_pages_are_corrupt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let history = History::open(&path).expect("open");
    let conv = history.create("soon damaged").expect("create");
    for i in 0..50 {
        history
            .append(&conv.id, &user(&format!("message {i} {}", "x".repeat(500))))
            .expect("append");
    }
    drop(history); // the last connection checkpoints the WAL into the main file

    let mut bytes = std::fs::read(&path).expect("read");
    assert!(bytes.len() > 3 * 4096, "several pages");
    // Keep page 1 (header and schema); scribble over everything after it.
    for byte in &mut bytes[4096..] {
        *byte = 0xA5;
    }
    std::fs::write(&path, bytes).expect("write");
    assert_corrupt(History::open(&path), &path);
}

#[test]
fn another_programs_database_is_not_taken_over() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    Connection::open(&path)
        .expect("create raw")
        .execute_batch("CREATE TABLE photos (name TEXT);")
        .expect("write");
    let message = assert_corrupt(History::open(&path), &path);
    assert!(message.contains("some other program"), "{message}");
}

#[test]
fn open_or_recover_sets_a_damaged_file_aside() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let junk = b"not sqlite at all".repeat(100);
    std::fs::write(&path, &junk).expect("write");
    std::fs::write(dir.path().join("history.db-wal"), b"stale wal").expect("write");

    let (history, backup) = History::open_or_recover(&path).expect("recover");
    let backup = backup.expect("a backup");
    let name = backup
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("history.db.corrupt-"), "{name}");
    assert_eq!(backup.parent(), Some(dir.path()));
    assert_eq!(std::fs::read(&backup).expect("read backup"), junk);
    assert_eq!(
        std::fs::read(format!("{}-wal", backup.display())).expect("read wal"),
        b"stale wal"
    );
    assert!(history.list(None).expect("list").is_empty());
    history.create("fresh start").expect("create");
    drop(history);

    // A sound file is opened as it is.
    let (history, backup) = History::open_or_recover(&path).expect("reopen");
    assert_eq!(backup, None);
    assert_eq!(titles(&history.list(None).expect("list")), ["fresh start"]);
}

// ---- audit log ----

fn entry(server: &str, tool: &str, arguments: Value, decided_at: i64) -> AuditEntry {
    AuditEntry {
        decided_at,
        ..AuditEntry::new(
            server,
            tool,
            arguments,
            AuditDecision::Allowed,
            DecidedBy::User,
        )
    }
}

/// No ids, typed: `[]` alone is ambiguous next to serde_json's `PartialEq<Value> for i64`.
const NO_IDS: [i64; 0] = [];

fn ids(rows: &[AuditRow]) -> Vec<i64> {
    rows.iter().map(|r| r.id).collect()
}

/// Four entries, ids 1 to 4, decided at 100, 200, 300, 400.
fn audit_sample(history: &History, conversation: &str) {
    let read = AuditEntry {
        conversation_id: Some(conversation.to_owned()),
        ..entry(
            "fs",
            "read_file",
            json!({ "path": "/home/ana/Notes.md" }),
            100,
        )
    };
    let write = AuditEntry {
        conversation_id: Some(conversation.to_owned()),
        arguments: json!({ "path": "/tmp/safe.txt", "content": "hello" }),
        original_arguments: Some(json!({ "path": "/etc/passwd", "content": "hello" })),
        ..entry("fs", "write_file", Value::Null, 200)
    };
    let denied = AuditEntry {
        decision: AuditDecision::Denied,
        decided_by: DecidedBy::Rule,
        rule_id: Some("no-network".into()),
        reason: Some("Blocked by the network RULE".into()),
        ..entry(
            "web",
            "fetch",
            json!({ "url": "https://example.com", "retries": 3 }),
            300,
        )
    };
    let timed_out = AuditEntry {
        decision: AuditDecision::TimedOut,
        decided_by: DecidedBy::Timeout,
        ..entry(
            "fs",
            "read_file",
            json!({ "path": "C:\\Users\\Zoë\\a \"b\".txt" }),
            400,
        )
    };
    for (i, e) in [read, write, denied, timed_out].iter().enumerate() {
        assert_eq!(history.record_audit(e).expect("record"), i as i64 + 1);
    }
}

#[test]
fn an_audit_entry_is_recorded_then_finished() {
    let (history, _) = memory();
    let sent = AuditEntry {
        conversation_id: Some("c1".into()),
        original_arguments: Some(json!({ "path": "/" })),
        reason: Some("looks fine".into()),
        ..entry(
            "fs",
            "list",
            json!({ "path": "/home", "depth": 1.5 }),
            1_234,
        )
    };
    let id = history.record_audit(&sent).expect("record");
    let rows = history.audit(&AuditFilter::default()).expect("audit");
    assert_eq!(
        rows,
        [AuditRow {
            id,
            entry: sent.clone()
        }]
    );

    history
        .finish_audit(id, 250, Some(4_096), true, Some("server said no"))
        .expect("finish");
    let finished = &history.audit(&AuditFilter::default()).expect("audit")[0];
    assert_eq!(
        finished.entry,
        AuditEntry {
            duration_ms: Some(250),
            result_bytes: Some(4_096),
            is_error: true,
            error: Some("server said no".into()),
            ..sent
        }
    );
}

#[test]
fn finish_audit_refuses_what_has_no_outcome_and_changes_nothing() {
    let (history, _) = memory();
    let allowed = history
        .record_audit(&entry("s", "t", json!({}), 1))
        .expect("record");
    let denied = history
        .record_audit(&AuditEntry {
            decision: AuditDecision::Denied,
            ..entry("s", "t", json!({}), 2)
        })
        .expect("record");
    history
        .finish_audit(allowed, 10, None, false, None)
        .expect("finish");
    let before = history.audit(&AuditFilter::default()).expect("audit");

    for (id, why) in [
        (99, "there is no such entry"),
        (denied, "it was not allowed, so it never ran"),
        (allowed, "it is already finished"),
    ] {
        let err = history
            .finish_audit(id, 20, Some(1), true, Some("late"))
            .expect_err("must refuse");
        match &err {
            HistoryError::AuditNotFinishable { id: got, reason } => {
                assert_eq!((*got, *reason), (id, why));
            }
            other => panic!("expected AuditNotFinishable for {id}, got {other:?}"),
        }
        assert_eq!(
            err.to_string(),
            format!("audit entry {id} cannot be finished: {why}")
        );
    }
    assert_eq!(
        history.audit(&AuditFilter::default()).expect("audit"),
        before
    );
}

#[test]
fn audit_sizes_saturate_at_the_largest_sqlite_integer() {
    let (history, _) = memory();
    let id = history
        .record_audit(&entry("s", "t", json!({}), 1))
        .expect("record");
    history
        .finish_audit(id, u64::MAX, Some(u64::MAX), false, None)
        .expect("finish");
    let row = &history.audit(&AuditFilter::default()).expect("audit")[0];
    let max = Some(i64::MAX as u64);
    assert_eq!((row.entry.duration_ms, row.entry.result_bytes), (max, max));
}

#[test]
fn audit_is_newest_first_and_limited() {
    let (history, _) = memory();
    audit_sample(&history, "c1");
    // Same millisecond as entry 4: the later one still comes first.
    history
        .record_audit(&entry("fs", "read_file", json!({}), 400))
        .expect("record");
    // Recorded last but decided earliest (a slow caller): it sorts by its decision time.
    history
        .record_audit(&entry("fs", "read_file", json!({}), 50))
        .expect("record");

    let all = AuditFilter::default();
    assert_eq!(
        ids(&history.audit(&all).expect("audit")),
        [5, 4, 3, 2, 1, 6]
    );
    let limited = |limit| AuditFilter {
        limit: Some(limit),
        ..AuditFilter::default()
    };
    assert_eq!(ids(&history.audit(&limited(2)).expect("audit")), [5, 4]);
    assert_eq!(history.audit(&limited(0)).expect("audit"), []);
    assert_eq!(history.audit(&limited(100)).expect("audit").len(), 6);
}

#[test]
fn audit_filters_by_each_field() {
    let (history, _) = memory();
    audit_sample(&history, "c1");
    let find = |filter: AuditFilter| ids(&history.audit(&filter).expect("audit"));
    let none = AuditFilter::default;

    assert_eq!(find(none()), [4, 3, 2, 1]);
    let by_server = |s: &str| AuditFilter {
        server_id: Some(s.into()),
        ..none()
    };
    assert_eq!(find(by_server("fs")), [4, 2, 1]);
    assert_eq!(find(by_server("FS")), NO_IDS, "exact, not folded");
    assert_eq!(
        find(AuditFilter {
            tool: Some("read_file".into()),
            ..none()
        }),
        [4, 1]
    );
    assert_eq!(
        find(AuditFilter {
            tool: Some("read_file".into()),
            ..by_server("web")
        }),
        NO_IDS,
        "conditions combine"
    );
    for (decision, expected) in [
        (AuditDecision::Allowed, vec![2, 1]),
        (AuditDecision::Denied, vec![3]),
        (AuditDecision::TimedOut, vec![4]),
        (AuditDecision::Cancelled, NO_IDS.to_vec()),
    ] {
        let filter = AuditFilter {
            decision: Some(decision),
            ..none()
        };
        assert_eq!(find(filter), expected, "{decision:?}");
    }
    assert_eq!(
        find(AuditFilter {
            conversation_id: Some("c1".into()),
            ..none()
        }),
        [2, 1]
    );
    let between = |since, until| AuditFilter {
        since_ms: since,
        until_ms: until,
        ..none()
    };
    assert_eq!(
        find(between(Some(200), None)),
        [4, 3, 2],
        "since is inclusive"
    );
    assert_eq!(find(between(None, Some(300))), [2, 1], "until is exclusive");
    assert_eq!(find(between(Some(200), Some(400))), [3, 2]);
    assert_eq!(
        find(AuditFilter {
            limit: Some(1),
            ..by_server("fs")
        }),
        [4]
    );
}

#[test]
fn a_connected_clients_calls_are_recorded_with_its_name_and_found_by_it() {
    let (history, _) = memory();
    audit_sample(&history, "c1");
    let id = history
        .record_audit(&AuditEntry {
            client: Some("claude-code".into()),
            ..entry("fs", "write_file", json!({"path": "/tmp/x"}), 500)
        })
        .expect("record");
    let found = history
        .audit(&AuditFilter {
            client: Some("claude-code".into()),
            ..AuditFilter::default()
        })
        .expect("audit");
    assert_eq!(ids(&found), [id]);
    assert_eq!(found[0].entry.client.as_deref(), Some("claude-code"));
    let chat = history.audit(&AuditFilter::default()).expect("audit");
    assert!(chat
        .iter()
        .filter(|r| r.id != id)
        .all(|r| r.entry.client.is_none()));
}

#[test]
fn audit_text_search_looks_at_argument_values_and_the_reason() {
    let (history, _) = memory();
    audit_sample(&history, "c1");
    let search = |text: &str| {
        ids(&history
            .audit(&AuditFilter {
                text: Some(text.into()),
                ..AuditFilter::default()
            })
            .expect("audit"))
    };
    assert_eq!(search("notes.MD"), [1], "ignoring case");
    assert_eq!(search("zoË"), [4], "non-ASCII");
    assert_eq!(
        search("C:\\Users\\"),
        [4],
        "a backslash as typed, not as JSON escapes it"
    );
    assert_eq!(search("a \"b\""), [4], "a quote as typed");
    assert_eq!(
        search("/etc/passwd"),
        [2],
        "what the model asked for before the edit"
    );
    assert_eq!(search("network rule"), [3], "the reason");
    assert_eq!(search("retries"), [3], "keys");
    assert_eq!(search("3"), [3], "numbers");
    assert_eq!(search("path"), [4, 2, 1]);
    assert_eq!(search("example.com\n3"), NO_IDS, "within one value");
    assert_eq!(search("\"path\""), NO_IDS, "not the JSON text");
    assert_eq!(search("%"), NO_IDS, "no LIKE wildcards");
    assert_eq!(search(" hello "), [2], "trimmed");
    assert_eq!(search("   "), [4, 3, 2, 1], "blank matches all");
    assert_eq!(search("read_file"), NO_IDS, "the tool has its own filter");
}

#[test]
fn audit_entries_outlive_their_conversation() {
    let (history, _) = memory();
    let conv = history.create("soon gone").expect("create");
    audit_sample(&history, &conv.id);
    history.delete(&conv.id).expect("delete");
    let of_conversation = AuditFilter {
        conversation_id: Some(conv.id.clone()),
        ..AuditFilter::default()
    };
    assert_eq!(
        ids(&history.audit(&of_conversation).expect("audit")),
        [2, 1]
    );
    // Nor does an entry need its conversation to exist, then or now.
    history
        .record_audit(&AuditEntry {
            conversation_id: Some("never-existed".into()),
            ..entry("s", "t", json!({}), 1)
        })
        .expect("record");
}

#[test]
fn audit_ids_are_never_reused() {
    let (history, _) = memory();
    audit_sample(&history, "c1");
    history.with_raw(|conn| conn.execute("DELETE FROM audit", []).expect("delete"));
    assert_eq!(
        history
            .record_audit(&entry("s", "t", json!({}), 1))
            .expect("record"),
        5
    );
}

#[test]
fn audit_values_serialize_as_they_are_stored() {
    for decision in AuditDecision::ALL {
        assert_eq!(
            serde_json::to_value(decision).expect("json"),
            decision.as_str()
        );
    }
    for decided_by in DecidedBy::ALL {
        assert_eq!(
            serde_json::to_value(decided_by).expect("json"),
            decided_by.as_str()
        );
    }
    let row = AuditRow {
        id: 7,
        entry: AuditEntry {
            decision: AuditDecision::TimedOut,
            ..entry("s", "t", json!({ "a": 1 }), 5)
        },
    };
    let value = serde_json::to_value(&row).expect("json");
    assert_eq!(
        value,
        json!({
            "id": 7, "decidedAt": 5, "conversationId": null, "client": null, "serverId": "s",
            "tool": "t",
            "arguments": { "a": 1 }, "originalArguments": null, "decision": "timed_out",
            "decidedBy": "user", "ruleId": null, "reason": null, "durationMs": null,
            "resultBytes": null, "isError": false, "error": null
        })
    );
    let filter: AuditFilter =
        serde_json::from_value(json!({ "serverId": "s", "decision": "denied" })).expect("filter");
    assert_eq!(
        filter,
        AuditFilter {
            server_id: Some("s".into()),
            decision: Some(AuditDecision::Denied),
            ..AuditFilter::default()
        }
    );
}

fn export(history: &History, filter: &AuditFilter) -> (usize, String) {
    let mut out = Vec::new();
    let count = history
        .export_audit_jsonl(filter, &mut out)
        .expect("export");
    (count, String::from_utf8(out).expect("utf-8"))
}

fn parse_lines(text: &str) -> Vec<AuditRow> {
    text.lines()
        .map(|line| serde_json::from_str(line).expect("a row per line"))
        .collect()
}

#[test]
fn the_export_reads_back_as_the_same_rows() {
    let (history, _) = memory();
    audit_sample(&history, "c1");
    history
        .finish_audit(1, 12, Some(34), false, None)
        .expect("finish");
    history
        .finish_audit(2, 56, None, true, Some("line one\nline two"))
        .expect("finish");

    let all = AuditFilter::default();
    let (count, text) = export(&history, &all);
    assert_eq!(count, 4);
    assert_eq!(text.lines().count(), 4, "one line per row: {text}");
    assert!(text.ends_with('\n'));
    assert_eq!(parse_lines(&text), history.audit(&all).expect("audit"));

    let filtered = AuditFilter {
        server_id: Some("fs".into()),
        limit: Some(2),
        ..AuditFilter::default()
    };
    let (count, text) = export(&history, &filtered);
    assert_eq!(count, 2);
    assert_eq!(ids(&parse_lines(&text)), [4, 2]);

    let (count, text) = export(&memory().0, &all);
    assert_eq!((count, text.as_str()), (0, ""));
}

#[test]
fn the_export_pages_through_a_long_log_in_order() {
    let (history, _) = memory();
    // Three entries per millisecond, so pages end in the middle of a tie.
    for i in 0..1_234 {
        history
            .record_audit(&entry("s", "t", json!({ "i": i }), i / 3))
            .expect("record");
    }
    for limit in [None, Some(1_001), Some(500), Some(3)] {
        let filter = AuditFilter {
            limit,
            ..AuditFilter::default()
        };
        let (count, text) = export(&history, &filter);
        let expected = history.audit(&filter).expect("audit");
        assert_eq!(count, expected.len(), "{limit:?}");
        assert_eq!(parse_lines(&text), expected, "{limit:?}");
    }
}

#[test]
fn a_failing_export_writer_is_an_export_error() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let (history, _) = memory();
    audit_sample(&history, "c1");
    match history.export_audit_jsonl(&AuditFilter::default(), &mut Full) {
        Err(err @ HistoryError::Export { .. }) => {
            assert!(err.to_string().contains("disk full"), "{err}");
        }
        other => panic!("expected Export, got {other:?}"),
    }
}

#[test]
fn audit_entries_are_on_disk_and_shared_between_handles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let app = History::open(&path).expect("open app");
    let cli = History::open(&path).expect("open cli");
    audit_sample(&app, "c1");
    assert_eq!(
        cli.record_audit(&entry("s", "t", json!({}), 500))
            .expect("record"),
        5
    );
    cli.finish_audit(1, 7, None, false, None).expect("finish");
    let seen = app.audit(&AuditFilter::default()).expect("audit");
    drop((app, cli));

    let reopened = History::open(&path).expect("reopen");
    assert_eq!(
        reopened.audit(&AuditFilter::default()).expect("audit"),
        seen
    );
    assert_eq!(seen[4].entry.duration_ms, Some(7));
}

#[test]
fn an_audit_row_edited_by_hand_is_reported() {
    let (history, _) = memory();
    audit_sample(&history, "c1");
    history.with_raw(|conn| {
        conn.execute("UPDATE audit SET decision = 'maybe' WHERE id = 3", [])
            .expect("edit")
    });
    match history.audit(&AuditFilter::default()) {
        Err(err @ HistoryError::Corrupt { .. }) => {
            assert!(err.to_string().contains("audit entry 3"), "{err}");
            assert!(err.to_string().contains("maybe"), "{err}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

/// What SQLite plans for a filter, one line per step.
fn plan(history: &History, filter: &AuditFilter, before: Option<(i64, i64)>) -> String {
    let (sql, values) = audit::select(filter, before, Some(10));
    history.with_raw(|conn| {
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("explain");
        stmt.query_map(rusqlite::params_from_iter(&values), |r| {
            r.get::<_, String>(3)
        })
        .expect("plan")
        .collect::<Result<Vec<_>, _>>()
        .expect("plan")
        .join("\n")
    })
}

#[test]
fn common_audit_lists_come_from_an_index_without_a_sort() {
    let (history, _) = memory();
    audit_sample(&history, "c1");
    let server_tool = AuditFilter {
        server_id: Some("fs".into()),
        tool: Some("read_file".into()),
        since_ms: Some(1),
        ..AuditFilter::default()
    };
    let conversation = AuditFilter {
        conversation_id: Some("c1".into()),
        ..AuditFilter::default()
    };
    for (filter, before, index) in [
        (AuditFilter::default(), None, "audit_by_time"),
        (AuditFilter::default(), Some((5, 5)), "audit_by_time"),
        (
            AuditFilter {
                until_ms: Some(9),
                ..AuditFilter::default()
            },
            None,
            "audit_by_time",
        ),
        (server_tool.clone(), None, "audit_by_tool"),
        (server_tool, Some((5, 5)), "audit_by_tool"),
        (conversation, None, "audit_by_conversation"),
    ] {
        let plan = plan(&history, &filter, before);
        assert!(plan.contains(index), "{filter:?} {before:?}: {plan}");
        assert!(
            !plan.contains("TEMP B-TREE"),
            "{filter:?} {before:?}: {plan}"
        );
    }
}

// ---- migration 2: the audit log ----

fn has_table(history: &History, name: &str) -> bool {
    history.with_raw(|conn| {
        conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .expect("count")
            == 1
    })
}

#[test]
fn a_v1_file_made_by_hand_is_upgraded_in_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    Connection::open(&path)
        .expect("create raw")
        .execute_batch(V1_AS_RELEASED)
        .expect("write v1");

    let history = History::open(&path).expect("open v1");
    assert!(has_table(&history, "audit"));
    let id = "11111111-1111-4111-8111-111111111111";
    assert_eq!(history.get(id).expect("get").message_count, 1);
    let entry_id = history
        .record_audit(&AuditEntry {
            conversation_id: Some(id.into()),
            ..entry("s", "t", json!({}), 1)
        })
        .expect("record");
    assert_eq!(entry_id, 1);
    drop(history);
    assert_eq!(version_of(&path), SCHEMA_VERSION);
}

#[test]
fn a_v1_file_written_by_v1_code_keeps_its_conversations() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let mut conn = Connection::open(&path).expect("create raw");
    migrate(&mut conn, &MIGRATIONS[..1], &path).expect("to v1");
    conn.execute_batch(
        "INSERT INTO conversations VALUES ('c', 'Old chat', 1, 2, 3, 4);
         INSERT INTO messages VALUES ('c', 1, 'user', '{\"text\":\"Hi\"}', 'hi', 1);",
    )
    .expect("write v1 data");
    drop(conn);
    assert_eq!(version_of(&path), 1);

    let history = History::open(&path).expect("open");
    let conv = history.get("c").expect("get");
    assert_eq!(
        (conv.title.as_str(), conv.message_count, conv.input_tokens),
        ("Old chat", 1, 3)
    );
    assert_eq!(
        titles(&history.list(Some("HI")).expect("search")),
        ["Old chat"]
    );
    assert!(history
        .audit(&AuditFilter::default())
        .expect("audit")
        .is_empty());
    drop(history);
    assert_eq!(version_of(&path), SCHEMA_VERSION);

    // Code that knows only version 1 refuses the upgraded file.
    let mut conn = Connection::open(&path).expect("open raw");
    assert!(matches!(
        migrate(&mut conn, &MIGRATIONS[..1], &path).map_err(|e| e.into_public(&path)),
        Err(HistoryError::TooNew {
            found: SCHEMA_VERSION,
            known: 1,
            ..
        })
    ));
}

// ---- the writer thread ----

#[test]
fn queued_writes_commit_in_order_and_a_failing_one_is_undone_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = History::open(&dir.path().join("history.db")).expect("open");
    let conv = history.create("batch").expect("create").id;
    // Queued without waiting, so they land in as few transactions as the writer can make.
    let mut pending = Vec::new();
    for i in 0..200 {
        pending.push(history.queue_append(&conv, &user(&format!("m{i}"))));
        if i == 100 {
            pending.push(history.queue_append("no-such-conversation", &user("lost")));
        }
    }
    let results: Vec<_> = pending.into_iter().map(Pending::wait).collect();
    assert_eq!(results.iter().filter(|r| r.is_err()).count(), 1);
    assert!(matches!(results[101], Err(HistoryError::NotFound { .. })));
    let seqs: Vec<i64> = results.into_iter().filter_map(Result::ok).collect();
    assert_eq!(
        seqs,
        (1..=200).collect::<Vec<i64>>(),
        "numbered in queue order"
    );
    let texts: Vec<String> = history
        .messages(&conv)
        .expect("messages")
        .iter()
        .map(|m| m.text().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(texts, (0..200).map(|i| format!("m{i}")).collect::<Vec<_>>());
}

#[test]
fn lazy_writes_have_no_savepoint_and_a_failing_one_still_leaves_nothing_and_takes_nothing() {
    // Lazy writes are one statement each and run without a savepoint of their own: SQLite
    // undoes a failed statement by itself, and the rest of the batch commits.
    let dir = tempfile::tempdir().expect("temp dir");
    let history = History::open(&dir.path().join("history.db")).expect("open");
    let committed = Arc::new(AtomicI64::new(0));
    let failed = Arc::new(AtomicI64::new(0));
    for i in 0..101 {
        let (committed, failed) = (committed.clone(), failed.clone());
        history.writer.write_lazily(
            move |conn| {
                // The 51st breaks the table's CHECK on `is_error` after its other columns were
                // bound: the statement fails as a whole.
                let is_error = if i == 50 { 2 } else { 0 };
                conn.execute(
                    "INSERT INTO audit (decided_at, server_id, tool, arguments, decision,
                         decided_by, is_error, search_text)
                     VALUES (?1, 's', 't', '{}', 'allowed', 'rule', ?2, '')",
                    rusqlite::params![i, is_error],
                )?;
                Ok(())
            },
            move |ok| {
                let counter = if ok { committed } else { failed };
                counter.fetch_add(1, Ordering::Relaxed);
            },
        );
    }
    history.flush();
    assert_eq!(committed.load(Ordering::Relaxed), 100);
    assert_eq!(failed.load(Ordering::Relaxed), 1);
    let rows = history.audit(&AuditFilter::default()).expect("audit");
    let mut times: Vec<i64> = rows.iter().map(|r| r.entry.decided_at).collect();
    times.sort_unstable();
    let expected: Vec<i64> = (0..101).filter(|&i| i != 50).collect();
    assert_eq!(
        times, expected,
        "every write but the failing one, each once"
    );
}

/// Inserts an audit entry decided at `i` (a write of one statement, as lazy writes are).
fn insert_row(i: i64) -> impl FnOnce(&Connection) -> Result<(), crate::error::Failure> {
    move |conn| {
        crate::entry::insert_audit(conn, &entry("s", "t", json!({}), i), None, false).map(|_| ())
    }
}

#[test]
fn a_write_nobody_waits_for_reaches_the_file_while_nothing_else_is_written() {
    // The writer is idle, blocked until something arrives, and nothing else is written. The
    // lazy write must still be committed on its own: before, it sat in the queue until the
    // next write someone waited for (or the history was closed).
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let history = History::open(&path).expect("open");
    history.flush();
    // Time for the writer to find nothing more to do and wait for the next job.
    std::thread::sleep(std::time::Duration::from_millis(200));
    history.writer.write_lazily(insert_row(7), |_| {});
    // Read beside the history, as another process would: no settling, no waking.
    let beside = Connection::open(&path).expect("open beside");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let rows: i64 = beside
            .query_row("SELECT count(*) FROM audit", [], |r| r.get(0))
            .expect("count");
        if rows == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the write nobody waited for was not committed within 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(history);
}

#[test]
fn a_read_beside_writes_nobody_waits_for_never_waits_forever() {
    // A read settles (waits for the writes queued before it) while another thread queues lazy
    // writes. A read that counted a lazy write just queued, but did not see it in the lazy
    // list yet, did not wake the writer, and waited forever for a writer that slept.
    let (history, _) = memory();
    let history = Arc::new(history);
    let (done, finished) = std::sync::mpsc::channel();
    let writing = {
        let history = history.clone();
        std::thread::spawn(move || {
            for i in 0..5_000 {
                history.writer.write_lazily(insert_row(i), |_| {});
                // Time for the writer to take what is queued and wait for the next job.
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        })
    };
    {
        let history = history.clone();
        std::thread::spawn(move || {
            let mut reads = 0u64;
            while !writing.is_finished() {
                history.flush();
                reads += 1;
            }
            history.flush();
            let _ = done.send(reads);
        });
    }
    let reads = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("a read waited for 60 s for a writer that slept");
    assert!(reads > 0);
    let rows: i64 = history.with_raw(|c| {
        c.query_row("SELECT count(*) FROM audit", [], |r| r.get(0))
            .expect("count")
    });
    assert_eq!(rows, 5_000);
}

#[test]
fn a_read_sees_every_write_queued_before_it_even_one_nobody_waited_for() {
    let (history, _) = memory();
    let id = history
        .queue_audit(&entry("s", "t", json!({}), 1))
        .wait()
        .expect("record");
    // Dropped: the completion happens on its own.
    drop(history.queue_finish_audit(&AuditRef::Id(id), 12, Some(3), false, None));
    let rows = history.audit(&AuditFilter::default()).expect("audit");
    assert_eq!(rows[0].entry.duration_ms, Some(12));
}

#[test]
fn async_callers_await_the_commit() {
    let (history, _) = memory();
    let conv = history.create("async").expect("create").id;
    let seq =
        futures::executor::block_on(history.queue_append(&conv, &user("hi"))).expect("append");
    assert_eq!(seq, 1);
    let id = futures::executor::block_on(history.queue_audit(&entry("s", "t", json!({}), 1)))
        .expect("record");
    assert_eq!(id, 1);
}

#[test]
fn everything_queued_is_committed_when_the_history_is_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    let history = History::open(&path).expect("open");
    let conv = history.create("kept").expect("create").id;
    for i in 0..50 {
        drop(history.queue_append(&conv, &user(&format!("m{i}"))));
    }
    drop(history);
    let reopened = History::open(&path).expect("reopen");
    assert_eq!(reopened.messages(&conv).expect("messages").len(), 50);
}

// ---- the audit journal ----

#[test]
fn a_journaled_decision_is_in_the_log_and_completed_by_its_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = History::open(&dir.path().join("history.db")).expect("open");
    let first = history
        .journal_audit(entry("s", "t", json!({"n": 1}), 1))
        .expect("journal");
    let second = history
        .journal_audit(entry("s", "t", json!({"n": 2}), 2))
        .expect("journal");
    assert_ne!(first, second);
    history
        .queue_finish_audit(&second, 5, Some(10), false, None)
        .wait()
        .expect("finish by key");
    let err = history
        .queue_finish_audit(&second, 6, None, false, None)
        .wait()
        .expect_err("finished once");
    assert!(
        matches!(err, HistoryError::AuditNotFinishable { .. }),
        "{err}"
    );
    let rows = history.audit(&AuditFilter::default()).expect("audit");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].entry.duration_ms, Some(5));
    assert_eq!(rows[1].entry.duration_ms, None);
    // Closing with everything committed leaves no journal behind.
    drop(history);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".journal"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_dead_process_journal_is_replayed_once_and_a_live_one_left_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.db");
    drop(History::open(&path).expect("create"));
    let line = |key: &str, n: i64| {
        serde_json::to_string(&json!({"key": key, "entry": entry("s", "t", json!({"n": n}), n)}))
            .expect("json")
    };
    // One entry was committed before the kill: it is in the table already.
    {
        let history = History::open(&path).expect("open");
        let committed = entry("s", "t", json!({"n": 1}), 1);
        history.with_raw(|conn| {
            crate::entry::insert_audit(conn, &committed, Some("dead-1"), false).expect("insert");
        });
    }
    // The killed process's journal: that entry, another whole line, and a line cut short,
    // whose call never went out.
    let dead = dir.path().join("history.db-audit-dead-0.journal");
    std::fs::write(
        &dead,
        format!(
            "{}\n{}\n{{\"key\": \"cut",
            line("dead-1", 1),
            line("dead-2", 2)
        ),
    )
    .expect("journal");
    // A live process's journal: its lock is held, so it is not touched.
    let live = dir.path().join("history.db-audit-live-0.journal");
    std::fs::write(&live, format!("{}\n", line("live-1", 9))).expect("journal");
    let held = std::fs::File::open(&live).expect("open");
    held.try_lock().expect("lock");

    let history = History::open(&path).expect("reopen");
    let rows = history.audit(&AuditFilter::default()).expect("audit");
    let ns: Vec<i64> = rows
        .iter()
        .map(|r| r.entry.arguments["n"].as_i64().unwrap_or(0))
        .collect();
    assert_eq!(
        ns,
        [2, 1],
        "each whole line once, the cut one never, the live one not yet"
    );
    assert!(!dead.exists(), "a replayed journal is deleted");
    assert!(live.exists(), "a live process's journal is left alone");
}

#[test]
fn a_completion_before_the_writer_takes_the_entry_goes_in_with_it_and_only_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    for history in [
        memory().0,
        History::open(&dir.path().join("h.db")).expect("open"),
    ] {
        let key = history
            .journal_audit(entry("s", "t", json!({}), 1))
            .expect("journal");
        history.finish_audit_later(&key, 7, Some(3), false, None);
        // A second outcome is refused (logged), never written over the first.
        history.finish_audit_later(&key, 9, None, true, Some("again"));
        let rows = history.audit(&AuditFilter::default()).expect("audit");
        assert_eq!(rows.len(), 1);
        let e = &rows[0].entry;
        assert_eq!(
            (e.duration_ms, e.result_bytes, e.is_error),
            (Some(7), Some(3), false)
        );
        // After the writer took it, a completion is an update of its own.
        let later = history
            .journal_audit(entry("s", "t", json!({}), 2))
            .expect("journal");
        history.flush();
        history.finish_audit_later(&later, 5, None, false, None);
        let rows = history.audit(&AuditFilter::default()).expect("audit");
        assert_eq!(rows[0].entry.duration_ms, Some(5));
    }
}
