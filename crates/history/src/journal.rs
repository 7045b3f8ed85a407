//! The audit journal: a decision is in the operating system before its call goes out, with no
//! database commit on the call's path.
//!
//! [`History::journal_audit`](crate::History::journal_audit) appends the decision as one JSON
//! line to a plain file of this process (one `write` of a few hundred bytes, a few microseconds)
//! and queues the same entry for the writer thread, which inserts it with whatever else is queued.
//! Once it is committed, the line is no longer needed. A process killed in between leaves its
//! lines behind; the next [`History::open`](crate::History::open) of the database inserts them
//! (each entry carries a key of its own, unique in the table, so a line whose entry was already
//! committed is skipped) and deletes the file. So every call that reached a server has its
//! decision in the log, whatever happens to the process, at the cost of a file write.
//!
//! Each process writes its own files, `<database>-audit-<nonce>-<n>.journal`, and holds an
//! exclusive lock on them while it lives: the files of a live process (the app, while the CLI
//! opens the same database) are never touched, and a dead process's locks are gone. Two files
//! take turns: once the active one passes [`ROTATE_AT`], appends go to the other, and a file is
//! emptied when nothing in it waits for a commit any more, so the files stay small under any
//! load.
//!
//! The syncer thread syncs the journal with the WAL (see `writer.rs`): a power cut loses what a
//! kill does not, the last ~50 ms.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::entry::{insert_audit, AuditDecision, AuditEntry};
use crate::error::Failure;

/// A file past this size hands the appends to the other, once the other is empty.
const ROTATE_AT: u64 = 4 * 1024 * 1024;
/// A file with nothing waiting is cut back once past this size: not after every entry, which
/// would cost a truncation per call. Committed lines left in it are skipped by a replay.
const CUT_AT: u64 = 64 * 1024;

/// One line of a journal file.
#[derive(Serialize, Deserialize)]
pub(crate) struct Line {
    pub key: String,
    pub entry: AuditEntry,
}

struct Files {
    files: [File; 2],
    /// Lines of each file whose entry is not yet committed.
    pending: [u64; 2],
    sizes: [u64; 2],
    active: usize,
}

/// This process's journal of one database.
pub(crate) struct Journal {
    state: Mutex<Files>,
    paths: [PathBuf; 2],
    /// Unique to this process and database: keys are `<nonce>-<n>`.
    nonce: String,
    next: AtomicU64,
}

/// Where one line went, to say when its entry is committed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot(usize);

/// Journaled entries the writer has not taken yet, by key: a completion that comes first is
/// written into the entry rather than as an update of its own.
#[derive(Default, Clone)]
pub(crate) struct Unsaved(
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, AuditEntry>>>,
);

impl Unsaved {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, AuditEntry>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn put(&self, key: &str, entry: AuditEntry) {
        self.lock().insert(key.to_owned(), entry);
    }

    pub(crate) fn take(&self, key: &str) -> Option<AuditEntry> {
        self.lock().remove(key)
    }

    /// Completes a queued entry that is allowed and not yet finished; false when there is
    /// none (the writer has taken it: the completion is then an update).
    pub(crate) fn complete(&self, key: &str, finish: impl FnOnce(&mut AuditEntry)) -> bool {
        match self.lock().get_mut(key) {
            Some(e) if e.decision == AuditDecision::Allowed && e.duration_ms.is_none() => {
                finish(e);
                true
            }
            _ => false,
        }
    }
}

fn prefix(db: &Path) -> String {
    let name = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}-audit-")
}

impl Journal {
    /// Creates this process's files beside `db` and locks them.
    pub(crate) fn create(db: &Path) -> std::io::Result<Journal> {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let dir = db.parent().unwrap_or(Path::new("."));
        let paths = [0, 1].map(|n| dir.join(format!("{}{nonce}-{n}.journal", prefix(db))));
        let open = |path: &Path| -> std::io::Result<File> {
            let mut options = OpenOptions::new();
            options.create(true).append(true);
            // Arguments of tool calls: readable by the user alone, like the settings file.
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let file = options.open(path)?;
            // Held for the life of the process: the lock says the file is a live process's.
            file.try_lock().map_err(std::io::Error::other)?;
            Ok(file)
        };
        let files = [open(&paths[0])?, open(&paths[1])?];
        Ok(Journal {
            state: Mutex::new(Files {
                files,
                pending: [0, 0],
                sizes: [0, 0],
                active: 0,
            }),
            paths,
            nonce,
            next: AtomicU64::new(1),
        })
    }

    /// This process's part of every key it gives, `<nonce>` of `<nonce>-<n>`.
    pub(crate) fn nonce(&self) -> &str {
        &self.nonce
    }

    /// A key no other entry of any process has.
    pub(crate) fn key(&self) -> String {
        format!(
            "{}-{}",
            self.nonce,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// Appends one line; it is in the operating system when this returns.
    pub(crate) fn append(&self, line: &Line) -> std::io::Result<Slot> {
        let mut bytes = serde_json::to_vec(line).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let other = 1 - state.active;
        if state.sizes[state.active] > ROTATE_AT && state.pending[other] == 0 {
            state.active = other;
        }
        let active = state.active;
        // One write: a file opened to append takes it whole, after whatever is there.
        state.files[active].write_all(&bytes)?;
        state.pending[active] += 1;
        state.sizes[active] += bytes.len() as u64;
        Ok(Slot(active))
    }

    /// The entry of a line in `slot` is committed: an emptied file is cut back to nothing.
    pub(crate) fn committed(&self, slot: Slot) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let n = slot.0;
        state.pending[n] = state.pending[n].saturating_sub(1);
        if state.pending[n] == 0 && state.sizes[n] > CUT_AT {
            // Nothing in it waits: appends (to this file, if it is the active one) wait for
            // the lock, so no line can be lost to the cut.
            if state.files[n].set_len(0).is_ok() {
                state.sizes[n] = 0;
            }
        }
    }

    /// Syncs both files to disk (the syncer thread's call).
    pub(crate) fn sync(&self) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for file in &state.files {
            let _ = file.sync_data();
        }
    }

    /// Removes this process's files, once everything in them is committed (on close).
    pub(crate) fn remove(&self) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.pending == [0, 0] {
            for path in &self.paths {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Whether the process that gave keys starting with `nonce` still has `db` open: its first
/// journal file exists and its lock is held (a dead process's lock is gone with it, and the next
/// open removes its files).
pub(crate) fn alive(db: &Path, nonce: &str) -> bool {
    let dir = db.parent().unwrap_or(Path::new("."));
    let path = dir.join(format!("{}{nonce}-0.journal", prefix(db)));
    match OpenOptions::new().read(true).open(path) {
        // Taken for a moment only: dropping the file lets go of it.
        Ok(file) => file.try_lock().is_err(),
        Err(_) => false,
    }
}

/// Inserts what dead processes' journals beside `db` hold and deletes those files. A file whose
/// lock is held belongs to a live process and is left alone.
pub(crate) fn recover(conn: &Connection, db: &Path) -> Result<usize, Failure> {
    let dir = db.parent().unwrap_or(Path::new("."));
    let prefix = prefix(db);
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return Ok(0);
    };
    let mut inserted = 0;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(&prefix) || !name.ends_with(".journal") {
            continue;
        }
        let path = entry.path();
        let Ok(file) = OpenOptions::new().read(true).write(true).open(&path) else {
            continue;
        };
        if file.try_lock().is_err() {
            continue;
        }
        let tx = conn.unchecked_transaction()?;
        for line in BufReader::new(&file).lines() {
            let Ok(line) = line else { break };
            // A line cut short by the kill was never complete, so its call never went out.
            let Ok(line) = serde_json::from_str::<Line>(&line) else {
                continue;
            };
            inserted += insert_audit(&tx, &line.entry, Some(&line.key), true)?;
        }
        tx.commit()?;
        drop(file);
        let _ = std::fs::remove_file(&path);
    }
    Ok(inserted)
}
