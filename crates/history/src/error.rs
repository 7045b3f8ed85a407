use std::path::PathBuf;

/// Why a history operation failed.
///
/// Callers branch on [`NotFound`](Self::NotFound) (the conversation is gone: refresh the list),
/// [`Corrupt`](Self::Corrupt) (set the file aside: [`History::open_or_recover`]) and
/// [`TooNew`](Self::TooNew) (tell the user to update; never touch the file). The rest are shown
/// as they are; [`AuditNotFinishable`](Self::AuditNotFinishable) is a bug in the caller.
///
/// [`History::open_or_recover`]: crate::History::open_or_recover
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(
        "no conversation with id {id}: it may have been deleted in another window; \
         reload the conversation list"
    )]
    NotFound { id: String },

    #[error(
        "the history database {} is damaged or is not a Toolgate history ({reason}); \
         Toolgate can set it aside as a backup and start a new, empty history",
        path.display()
    )]
    Corrupt { path: PathBuf, reason: String },

    #[error(
        "the history database {} was written by a newer version of Toolgate \
         (schema version {found}; this version knows up to {known}); \
         update Toolgate to open it. The file was left unchanged",
        path.display()
    )]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },

    /// [`History::finish_audit`](crate::History::finish_audit) was given an entry that has no
    /// outcome to record. The entry is left as it was.
    #[error("audit entry {id} cannot be finished: {reason}")]
    AuditNotFinishable {
        id: i64,
        /// Why, as a clause: "there is no such entry", "it is already finished", …
        reason: &'static str,
    },

    /// The writer thread is gone (it could not be started, or the history is being closed):
    /// the write was not made.
    #[error("the history's writer has stopped, so this was not saved; restart Toolgate")]
    WriterStopped,

    #[error("could not write the audit export: {source}")]
    Export {
        #[source]
        source: std::io::Error,
    },

    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done, as a verb phrase: "create the folder", "move aside".
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "the history database {} could not be read or written: {source}; \
         if the disk is full or the file is read-only, free some space or fix its \
         permissions and try again",
        path.display()
    )]
    Database {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

/// A failure inside one operation, before it is given the database's path.
///
/// Operations use `?` on rusqlite calls freely; [`crate::History`] turns the result into a
/// [`HistoryError`] in one place, so every SQLite "corrupt" or "not a database" answer becomes
/// [`HistoryError::Corrupt`] wherever it is first met, not only at open.
#[derive(Debug)]
pub(crate) enum Failure {
    Sqlite(rusqlite::Error),
    Public(HistoryError),
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Self {
        Failure::Sqlite(e)
    }
}

impl From<HistoryError> for Failure {
    fn from(e: HistoryError) -> Self {
        Failure::Public(e)
    }
}

impl Failure {
    pub(crate) fn into_public(self, path: &std::path::Path) -> HistoryError {
        match self {
            Failure::Public(e) => e,
            Failure::Sqlite(e) if is_corruption(&e) => HistoryError::Corrupt {
                path: path.to_owned(),
                reason: e.to_string(),
            },
            Failure::Sqlite(source) => HistoryError::Database {
                path: path.to_owned(),
                source,
            },
        }
    }
}

fn is_corruption(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    matches!(
        e.sqlite_error_code(),
        Some(DatabaseCorrupt) | Some(NotADatabase)
    )
}
