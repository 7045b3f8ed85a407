//! Setting a damaged database aside.
//!
//! The damaged file is renamed, never deleted: it may hold the only copy of conversations a
//! user wants back, and a tool such as `sqlite3 .recover` can often save most of it. SQLite's
//! side files move with it, under the same new name plus `-wal` / `-shm`, because SQLite finds
//! them by name: a stale `-wal` left beside the new, empty database would be replayed into it,
//! and the backup stays openable as a set.

use std::path::{Path, PathBuf};

use crate::HistoryError;

/// The side files SQLite keeps next to a database, by suffix.
const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Moves `path` and its side files to `<name>.corrupt-<UTC time>[-n]`; returns the new path.
pub(crate) fn move_aside(path: &Path, now_ms: i64) -> Result<PathBuf, HistoryError> {
    let backup = free_backup_name(path, now_ms);
    rename(path, &backup)?;
    for suffix in SIDE_FILES {
        let side = with_suffix(path, suffix);
        if side.exists() {
            rename(&side, &with_suffix(&backup, suffix))?;
        }
    }
    Ok(backup)
}

fn rename(from: &Path, to: &Path) -> Result<(), HistoryError> {
    std::fs::rename(from, to).map_err(|source| HistoryError::Io {
        action: "move aside the damaged history database",
        path: from.to_owned(),
        source,
    })
}

/// The first of `<name>.corrupt-<stamp>`, `…-2`, `…-3`, … that is not taken, so a second
/// recovery within the same second never overwrites the first backup.
fn free_backup_name(path: &Path, now_ms: i64) -> PathBuf {
    let base = with_suffix(path, &format!(".corrupt-{}", utc_stamp(now_ms)));
    let taken = |p: &Path| SIDE_FILES.iter().any(|s| with_suffix(p, s).exists()) || p.exists();
    if !taken(&base) {
        return base;
    }
    (2u32..)
        .map(|n| with_suffix(&base, &format!("-{n}")))
        .find(|p| !taken(p))
        .unwrap_or(base)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `20240131T235959Z`: sortable, readable, and without the `:` that Windows forbids in names.
pub(crate) fn utc_stamp(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar; Howard
/// Hinnant's `civil_from_days`, to spare a date crate for one file name.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(951_782_400_000), "20000229T000000Z");
        assert_eq!(utc_stamp(1_706_745_599_999), "20240131T235959Z");
        assert_eq!(utc_stamp(-1000), "19691231T235959Z");
    }

    #[test]
    fn backups_never_overwrite_each_other() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("history.db");
        std::fs::write(&db, "first").expect("write");
        let first = move_aside(&db, 0).expect("first move");
        std::fs::write(&db, "second").expect("write");
        std::fs::write(with_suffix(&db, "-wal"), "second wal").expect("write");
        let second = move_aside(&db, 0).expect("second move");

        assert_eq!(
            first,
            dir.path().join("history.db.corrupt-19700101T000000Z")
        );
        assert_eq!(
            second,
            dir.path().join("history.db.corrupt-19700101T000000Z-2")
        );
        assert_eq!(std::fs::read_to_string(&first).expect("read"), "first");
        assert_eq!(std::fs::read_to_string(&second).expect("read"), "second");
        assert_eq!(
            std::fs::read_to_string(with_suffix(&second, "-wal")).expect("read"),
            "second wal"
        );
        assert!(!db.exists() && !with_suffix(&db, "-wal").exists());
    }
}
