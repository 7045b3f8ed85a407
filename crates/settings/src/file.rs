//! The settings file: the one place the app (and the CLI) read and write [`Settings`].
//!
//! The file holds `{"settings": {…}}`, pretty-printed: the shape `tauri-plugin-store` wrote, so
//! the files of earlier versions read unchanged (and [`Settings::from_json`] migrates them).
//!
//! **Never a partial file.** [`save`] validates, then writes a temporary file in the same folder
//! (`.settings.json.tmp-<pid>-<n>`, permissions 0600 on Unix), flushes it to the disk, renames it
//! over the settings file and flushes the folder. A rename within one folder is atomic: a reader,
//! or a writer killed at any moment, finds the old file or the new one, never a mix. A writer
//! killed before its rename may leave its temporary file behind; nothing reads it, and [`load`]
//! deletes those that are more than an hour old. A symbolic link at the settings path is
//! followed: the file it points to is replaced and the link stays.
//!
//! **Several writers.** The app and the CLI may save at the same moment. Each writer has its own
//! temporary file (its process id and a counter, created exclusively), so their bytes never mix.
//! There is no lock and no merge: the last rename wins, and the other writer's change is lost
//! whole (the file is still one writer's complete version).
//!
//! **A file that cannot be used** (not JSON, rejected by validation, from a newer Toolgate, or
//! not readable at all) is never deleted or overwritten: [`load`] moves it aside to
//! `settings.unreadable-<unix seconds>.json` (`…-2.json`, `…-3.json` when that name is taken),
//! and says why and where. The caller then uses its defaults and saves them.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::{Settings, SettingsError, SCHEMA_VERSION};

/// The settings' key in the file: `{"settings": {…}}`.
const KEY: &str = "settings";

/// Temporary files older than this belong to a writer that was killed; [`load`] removes them.
const STALE_TEMP_AGE: Duration = Duration::from_secs(60 * 60);

/// What [`load`] found.
// Made once per read of the file and matched at once: boxing the settings would cost every
// caller a `*` for no measurable gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Loaded {
    /// There is no settings file (or it holds no settings yet): a first run. Save the defaults.
    Missing,
    Found(Settings),
    /// The file could not be used. It was moved to `backup`; use the defaults, and save them.
    Unreadable {
        problem: Problem,
        backup: PathBuf,
    },
}

impl Loaded {
    /// What to tell the user when the file could not be used; `None` otherwise.
    pub fn notice(&self) -> Option<String> {
        match self {
            Loaded::Unreadable { problem, backup } => Some(format!(
                "Your settings file could not be read ({problem}). It was kept as {} and the \
                 defaults were loaded.",
                backup.display()
            )),
            Loaded::Missing | Loaded::Found(_) => None,
        }
    }
}

/// Why a settings file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// Not JSON: where and what, as serde reports it.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON, but not a settings file's shape.
    #[error("{0}")]
    Shape(&'static str),
    /// Settings that fail validation (naming the field and why), or from a newer Toolgate.
    #[error(transparent)]
    Settings(SettingsError),
    /// The file exists but could not be read.
    #[error("it could not be opened: {0}")]
    Read(io::Error),
}

/// Why [`load`] or [`save`] failed.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The settings were rejected; nothing was written.
    #[error(transparent)]
    Invalid(#[from] SettingsError),
    /// The file system refused; the settings file is as it was.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The change would loosen what the organisation's managed policy sets; nothing was
    /// written. Each item names the settings key and what the organisation set.
    #[error("not changed: {}", .0.join("; "))]
    Managed(Vec<String>),
    /// The file could not be used, and could not be moved aside either (so it was left alone).
    #[error(
        "your settings file {} could not be read ({problem}), and could not be set aside: {source}",
        path.display()
    )]
    Backup {
        path: PathBuf,
        problem: Problem,
        #[source]
        source: io::Error,
    },
}

#[derive(Serialize)]
struct Stored<'a> {
    settings: &'a Settings,
}

/// Reads the settings file at `path`. A missing file is [`Loaded::Missing`]; a file that cannot
/// be used is moved aside ([`Loaded::Unreadable`]). Fails only when such a file cannot be moved.
pub fn load(path: &Path) -> Result<Loaded, FileError> {
    remove_stale_temps(path);
    let problem = match fs::read(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Loaded::Missing),
        Err(e) => Problem::Read(e),
        Ok(bytes) => match read_bytes(&bytes) {
            Ok(Some(settings)) => return Ok(Loaded::Found(settings)),
            Ok(None) => return Ok(Loaded::Missing),
            Err(problem) => problem,
        },
    };
    match set_aside(path) {
        Ok(backup) => Ok(Loaded::Unreadable { problem, backup }),
        Err(source) => Err(FileError::Backup {
            path: path.to_owned(),
            problem,
            source,
        }),
    }
}

/// Validates `settings` and replaces the file at `path` with them, atomically (see the module
/// docs). On any error the file is as it was. Creates the folder if needed.
pub fn save(path: &Path, settings: &Settings) -> Result<(), FileError> {
    if settings.version != SCHEMA_VERSION {
        return Err(SettingsError::Invalid {
            field: "version".to_owned(),
            reason: format!(
                "{} is not the schema version this Toolgate writes ({SCHEMA_VERSION})",
                settings.version
            ),
        }
        .into());
    }
    settings.validate()?;
    let mut bytes = serde_json::to_vec_pretty(&Stored { settings }).map_err(|e| FileError::Io {
        action: "serialize the settings for",
        path: path.to_owned(),
        source: io::Error::other(e),
    })?;
    bytes.push(b'\n');
    write_atomically(&follow_link(path), &bytes)
}

/// The settings in a settings file's bytes; `None` for `{}` (what `tauri-plugin-store` left
/// behind when it dropped unreadable settings). [`load`] is this plus setting an unreadable file
/// aside; public for the fuzz target, which feeds it anything.
pub fn read_bytes(bytes: &[u8]) -> Result<Option<Settings>, Problem> {
    // Editors on Windows (and some elsewhere) start a UTF-8 file with a byte order mark, which
    // JSON does not allow but means nothing: the file is still what the user wrote.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Problem::Shape("the file is empty"));
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        let text = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        Problem::Syntax {
            line: e.line(),
            column: e.column(),
            message: text.strip_suffix(&suffix).unwrap_or(&text).to_owned(),
        }
    })?;
    let serde_json::Value::Object(mut top) = value else {
        return Err(Problem::Shape(
            "it is not a JSON object with a \"settings\" entry",
        ));
    };
    match top.remove(KEY) {
        Some(settings) => Settings::from_json(settings)
            .map(Some)
            .map_err(Problem::Settings),
        None if top.is_empty() => Ok(None),
        None => Err(Problem::Shape("it has no \"settings\" entry")),
    }
}

/// Moves the file at `path` to the first free `<stem>.unreadable-<secs>[-n].<ext>` beside it.
/// The name is claimed by creating it exclusively first, so two processes setting files aside
/// at once never overwrite each other's backup.
fn set_aside(path: &Path) -> io::Result<PathBuf> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for n in 1..=1000 {
        let backup = backup_name(path, secs, n);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&backup)
        {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
        if let Err(e) = fs::rename(path, &backup) {
            let _ = fs::remove_file(&backup);
            return Err(e);
        }
        sync_dir(&folder_of(path));
        return Ok(backup);
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "every backup name for this second is taken",
    ))
}

/// `settings.json` → `settings.unreadable-<secs>.json`, then `settings.unreadable-<secs>-2.json`…
fn backup_name(path: &Path, secs: u64, n: u32) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let mut name = format!("{stem}.unreadable-{secs}");
    if n > 1 {
        name.push_str(&format!("-{n}"));
    }
    if let Some(ext) = path.extension() {
        name.push('.');
        name.push_str(&ext.to_string_lossy());
    }
    path.with_file_name(name)
}

/// Numbers this process's temporary files; with the pid, no two writers share one.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The prefix of every temporary file for the settings file `name`.
fn temp_prefix(path: &Path) -> String {
    format!(
        ".{}.tmp-",
        path.file_name().unwrap_or_default().to_string_lossy()
    )
}

/// Replaces the file at `path` with `bytes` whole or not at all (a new copy, synced, then
/// renamed over it), readable by the user only. Used for the settings, and for other hosts'
/// configs when Toolgate rewrites them.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let io_error = |action, source| FileError::Io {
        action,
        path: path.to_owned(),
        source,
    };
    if path.file_name().is_none() {
        return Err(io_error(
            "save the settings to",
            io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"),
        ));
    }
    let folder = folder_of(path);
    fs::create_dir_all(&folder).map_err(|e| io_error("create the folder of", e))?;
    let (temp, file) =
        create_temp(path, &folder).map_err(|e| io_error("write a new copy of", e))?;
    let written = write_and_sync(file, bytes)
        .map_err(|e| io_error("write a new copy of", e))
        .and_then(|()| fs::rename(&temp, path).map_err(|e| io_error("replace", e)));
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    // The new file is in place. Flushing the folder makes the rename itself durable; if that
    // fails there is nothing to undo, and the change must not be reported as failed.
    sync_dir(&folder);
    Ok(())
}

fn write_and_sync(mut file: File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()
}

/// Creates this writer's own temporary file beside `path`: `.<name>.tmp-<pid>-<n>`, exclusively
/// (a leftover of a dead process with the same pid is skipped), readable by the user only.
fn create_temp(path: &Path, folder: &Path) -> io::Result<(PathBuf, File)> {
    let prefix = temp_prefix(path);
    let pid = std::process::id();
    for _ in 0..1000 {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = folder.join(format!("{prefix}{pid}-{n}"));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&temp) {
            Ok(file) => {
                // Exactly 0600, whatever the umask.
                #[cfg(unix)]
                file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
                return Ok((temp, file));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free temporary file name",
    ))
}

/// Removes temporary files of writers killed long ago; errors are ignored (it is tidying only).
fn remove_stale_temps(path: &Path) {
    let prefix = temp_prefix(path);
    let Ok(entries) = fs::read_dir(folder_of(path)) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > STALE_TEMP_AGE);
        if old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The file a symbolic link at `path` points to (so saving keeps the link), else `path`.
fn follow_link(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
        }
        _ => path.to_owned(),
    }
}

fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Flushes a folder's entries (a rename) to the disk. Best effort: some file systems refuse.
fn sync_dir(folder: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(folder) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{example_server, ServerConfig};

    fn settings() -> Settings {
        Settings::first_run(example_server(None))
    }

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn round_trips_in_the_stored_shape() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        assert!(matches!(load(&path).expect("load"), Loaded::Missing));

        let mut s = settings();
        s.servers
            .push(ServerConfig::http("remote", "https://example.com/mcp"));
        save(&path, &s).expect("save");
        let Loaded::Found(read) = load(&path).expect("load") else {
            panic!("settings expected")
        };
        assert_eq!(read, s);

        let text = fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("{\n  \"settings\": {\n"), "{text}");
        assert!(text.ends_with("}\n"));
        let value: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(value["settings"]["servers"][1]["id"], "remote");
        // Only the file itself: no temporary file is left behind.
        assert_eq!(files_in(dir.path()), ["settings.json"]);
    }

    #[test]
    fn reads_files_written_by_the_store_plugin_and_migrates_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        // Compact, as tauri-plugin-store saved it, and at schema version 1.
        fs::write(
            &path,
            r#"{"settings":{"version":1,"servers":[{"id":"fs","name":"Files","command":"npx","args":["-y","x"]}],"provider":{"kind":"openai","baseUrl":"https://api.openai.com/v1","model":"gpt-4.1"}}}"#,
        )
        .expect("write");
        let Loaded::Found(s) = load(&path).expect("load") else {
            panic!("settings expected")
        };
        assert_eq!(s.version, SCHEMA_VERSION);
        assert_eq!(s.servers[0].id, "fs");

        // `{}`: the store with its settings dropped. A first run, not an error.
        fs::write(&path, "{}").expect("write");
        assert!(matches!(load(&path).expect("load"), Loaded::Missing));
    }

    #[test]
    fn a_file_that_starts_with_a_byte_order_mark_reads_as_without_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        let mut settings = Settings::first_run(crate::example_server(None));
        settings.provider.model = "with-a-bom".into();
        save(&path, &settings).expect("save");
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend(fs::read(&path).expect("read"));
        fs::write(&path, &bytes).expect("write");
        match load(&path).expect("load") {
            Loaded::Found(found) => assert_eq!(found, settings),
            other => panic!("the settings should load, got {other:?}"),
        }
        assert_eq!(
            fs::read(&path).expect("read"),
            bytes,
            "nothing was set aside"
        );
    }

    #[test]
    fn a_file_with_a_bad_version_is_kept_aside_with_the_reason() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        fs::write(&path, r#"{"settings": {"version": -1, "servers": []}}"#).expect("write");
        let Loaded::Unreadable { problem, backup } = load(&path).expect("load") else {
            panic!("a version of -1 must not load");
        };
        assert!(problem.to_string().contains("version"), "{problem}");
        assert!(backup.exists());
    }

    #[test]
    fn a_corrupt_file_is_kept_with_its_bytes_and_the_position_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        let bytes = b"{\n  \"settings\": {\n    \"version\": 2\n    \"servers\": []\n";
        fs::write(&path, bytes).expect("write");

        let loaded = load(&path).expect("load");
        let Loaded::Unreadable { problem, backup } = &loaded else {
            panic!("unreadable expected, got {loaded:?}")
        };
        assert_eq!(problem.to_string(), "line 4, column 5: expected `,` or `}`");
        let name = backup.file_name().expect("name").to_string_lossy();
        assert!(
            name.starts_with("settings.unreadable-") && name.ends_with(".json"),
            "{name}"
        );
        assert_eq!(backup.parent(), Some(dir.path()));
        assert_eq!(fs::read(backup).expect("backup"), bytes);
        assert!(!path.exists(), "the unreadable file was moved aside");
        let notice = loaded.notice().expect("a notice");
        assert!(
            notice.contains("(line 4, column 5: expected `,` or `}`)"),
            "{notice}"
        );
        assert!(notice.contains(&backup.display().to_string()), "{notice}");
        assert!(notice.ends_with("the defaults were loaded."), "{notice}");

        // The caller saves its defaults; the next start reads them.
        save(&path, &settings()).expect("save");
        assert!(matches!(load(&path).expect("load"), Loaded::Found(_)));
    }

    #[test]
    fn backups_never_overwrite_older_ones() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        let mut backups = Vec::new();
        for junk in ["", "not json", "[1, 2]", "{\"other\": true}"] {
            fs::write(&path, junk).expect("write");
            let Loaded::Unreadable { backup, problem } = load(&path).expect("load") else {
                panic!("unreadable expected for {junk:?}")
            };
            assert_eq!(fs::read_to_string(&backup).expect("backup"), junk);
            backups.push((backup, problem.to_string()));
        }
        // All four kept, each under its own name (most likely within the same second).
        let names: std::collections::BTreeSet<_> = backups.iter().map(|(b, _)| b).collect();
        assert_eq!(names.len(), 4);
        assert_eq!(backups[0].1, "the file is empty");
        assert_eq!(backups[1].1, "line 1, column 2: expected ident");
        assert_eq!(
            backups[2].1,
            "it is not a JSON object with a \"settings\" entry"
        );
        assert_eq!(backups[3].1, "it has no \"settings\" entry");
        assert_eq!(
            backup_name(&path, 7, 1),
            dir.path().join("settings.unreadable-7.json")
        );
        assert_eq!(
            backup_name(&path, 7, 3),
            dir.path().join("settings.unreadable-7-3.json")
        );
    }

    #[test]
    fn settings_from_a_newer_version_are_kept_and_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        let text = r#"{"settings": {"version": 99, "servers": [], "future": {"x": 1}}}"#;
        fs::write(&path, text).expect("write");
        let loaded = load(&path).expect("load");
        let Loaded::Unreadable { problem, backup } = &loaded else {
            panic!("unreadable expected, got {loaded:?}")
        };
        assert!(matches!(
            problem,
            Problem::Settings(SettingsError::TooNew { found: 99 })
        ));
        assert_eq!(fs::read_to_string(backup).expect("backup"), text);
        let notice = loaded.notice().expect("notice");
        assert!(notice.contains("schema version 99"), "{notice}");
        assert!(notice.contains("update Toolgate"), "{notice}");
    }

    #[test]
    fn settings_failing_validation_are_kept_and_the_field_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        let mut s = serde_json::to_value(settings()).expect("value");
        s["servers"][0]["callTimeoutSecs"] = 0.into();
        fs::write(&path, serde_json::json!({ "settings": s }).to_string()).expect("write");
        let Loaded::Unreadable { problem, .. } = load(&path).expect("load") else {
            panic!("unreadable expected")
        };
        assert!(
            problem
                .to_string()
                .starts_with("servers[0].callTimeoutSecs: 0 is out of range"),
            "{problem}"
        );
    }

    #[test]
    fn a_rejected_save_leaves_the_file_untouched() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        let good = settings();
        save(&path, &good).expect("save");
        let before = fs::read(&path).expect("read");

        let mut bad = good.clone();
        bad.servers.push(bad.servers[0].clone());
        let err = save(&path, &bad).expect_err("duplicate ids are rejected");
        assert_eq!(
            err.to_string(),
            "servers[1].id: 'everything' is used by another server"
        );
        assert!(matches!(err, FileError::Invalid(_)));

        let mut newer = good.clone();
        newer.version = SCHEMA_VERSION + 1;
        let err = save(&path, &newer).expect_err("only the current version is written");
        assert!(err.to_string().starts_with("version: "), "{err}");

        assert_eq!(fs::read(&path).expect("read"), before);
        assert_eq!(files_in(dir.path()), ["settings.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_readable_by_the_user_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("settings.json");
        // A file the store plugin wrote with the usual 0644 becomes 0600 at the next save.
        fs::write(&path, "{}").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
        save(&path, &settings()).expect("save");
        let mode = fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_followed_and_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let real = dir.path().join("dotfiles").join("toolgate.json");
        fs::create_dir_all(real.parent().expect("parent")).expect("mkdir");
        fs::write(&real, "{}").expect("write");
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        save(&link, &settings()).expect("save");
        assert!(fs::symlink_metadata(&link)
            .expect("meta")
            .file_type()
            .is_symlink());
        assert!(matches!(load(&real).expect("load"), Loaded::Found(_)));
    }

    #[test]
    fn creates_the_folder_and_tidies_only_stale_temporary_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("new").join("settings.json");
        save(&path, &settings()).expect("save into a new folder");

        let folder = path.parent().expect("folder");
        let stale = folder.join(".settings.json.tmp-1-0");
        let fresh = folder.join(".settings.json.tmp-2-0");
        let other = folder.join(".other.json.tmp-1-0");
        for p in [&stale, &fresh, &other] {
            fs::write(p, "{\"settings\": partial").expect("write");
        }
        let long_ago = SystemTime::now() - 2 * STALE_TEMP_AGE;
        for p in [&stale, &other] {
            File::options()
                .write(true)
                .open(p)
                .expect("open")
                .set_modified(long_ago)
                .expect("set mtime");
        }
        assert!(matches!(load(&path).expect("load"), Loaded::Found(_)));
        assert!(
            !stale.exists(),
            "a killed writer's old temp file is removed"
        );
        assert!(fresh.exists(), "a running writer's temp file is left alone");
        assert!(other.exists(), "another file's temp file is left alone");
    }

    #[test]
    fn write_failures_name_the_file_and_change_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        // The settings path is a folder: the rename cannot replace it.
        let path = dir.path().join("settings.json");
        fs::create_dir(&path).expect("mkdir");
        let err = save(&path, &settings()).expect_err("a folder cannot be replaced");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("could not replace {}: ", path.display())),
            "{text}"
        );
        assert!(path.is_dir());
        assert_eq!(files_in(dir.path()), ["settings.json"], "temp file removed");
    }
}
