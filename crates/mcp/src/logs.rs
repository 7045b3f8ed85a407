//! A server's output: the last lines in memory (to explain failures and feed the UI's log view),
//! and every line in a size-rotated file in the app's log folder (to read after the fact).

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Lines kept in memory per server.
const MEMORY_LINES: usize = 500;
/// A log file is rotated to `<id>.log.1` when it grows past this size; one old file is kept.
const FILE_LIMIT: u64 = 1024 * 1024;
/// A line longer than this is cut, so one runaway print cannot fill memory.
const LINE_LIMIT: usize = 8 * 1024;

/// One server's output log. Cloning shares it.
#[derive(Clone, Default)]
pub(crate) struct ServerLog {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    lines: VecDeque<String>,
    file: Option<RotatingFile>,
}

struct RotatingFile {
    path: PathBuf,
    file: File,
    size: u64,
}

impl RotatingFile {
    fn open(path: PathBuf) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let size = file.metadata()?.len();
        Ok(Self { path, file, size })
    }

    fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        if self.size + line.len() as u64 + 1 > FILE_LIMIT && self.size > 0 {
            let mut old = self.path.clone().into_os_string();
            old.push(".1");
            std::fs::rename(&self.path, old)?;
            *self = Self::open(self.path.clone())?;
        }
        writeln!(self.file, "{line}")?;
        self.size += line.len() as u64 + 1;
        Ok(())
    }
}

impl ServerLog {
    /// A log kept in memory and, when `dir` is given, in `dir/<server>.log`.
    pub fn new(dir: Option<&Path>, server: &str) -> Self {
        let file = dir.and_then(|dir| {
            let opened = std::fs::create_dir_all(dir)
                .and_then(|()| RotatingFile::open(dir.join(format!("{server}.log"))));
            match opened {
                Ok(f) => Some(f),
                Err(e) => {
                    tracing::warn!(
                        server,
                        "cannot write the server's log file in {}: {e}",
                        dir.display()
                    );
                    None
                }
            }
        });
        Self {
            inner: Arc::new(Mutex::new(Inner {
                lines: VecDeque::new(),
                file,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn push(&self, line: &str) {
        let line = truncate(line);
        let mut inner = self.lock();
        if let Some(file) = inner.file.as_mut() {
            if let Err(e) = file.write_line(&line) {
                tracing::warn!(
                    "cannot write {}: {e}; keeping the log in memory only",
                    file.path.display()
                );
                inner.file = None;
            }
        }
        if inner.lines.len() == MEMORY_LINES {
            inner.lines.pop_front();
        }
        inner.lines.push_back(line);
    }

    /// Marks a new process in the file, so one run's lines are not mistaken for another's.
    pub fn mark(&self, what: &str) {
        let mut inner = self.lock();
        if let Some(file) = inner.file.as_mut() {
            let _ = file.write_line(&format!("---- {what} ----"));
        }
    }

    pub fn tail(&self, n: usize) -> Vec<String> {
        let inner = self.lock();
        inner
            .lines
            .iter()
            .skip(inner.lines.len().saturating_sub(n))
            .cloned()
            .collect()
    }

    /// Forgets the lines in memory (the file keeps them), at the start of a new process.
    pub fn clear(&self) {
        self.lock().lines.clear();
    }
}

fn truncate(line: &str) -> String {
    if line.len() <= LINE_LIMIT {
        return line.to_owned();
    }
    let mut end = LINE_LIMIT;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes cut)", &line[..end], line.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_and_rotates_the_file() {
        let dir = std::env::temp_dir().join(format!("tg-logs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = ServerLog::new(Some(&dir), "srv");
        let line = "x".repeat(1000);
        for _ in 0..1100 {
            log.push(&line);
        }
        assert_eq!(log.tail(1000).len(), MEMORY_LINES);
        let current = std::fs::metadata(dir.join("srv.log")).unwrap().len();
        let old = std::fs::metadata(dir.join("srv.log.1")).unwrap().len();
        assert!(
            current <= FILE_LIMIT && old <= FILE_LIMIT,
            "{current} {old}"
        );
        assert_eq!(
            current + old,
            1100 * 1001,
            "nothing lost across one rotation"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn cuts_runaway_lines() {
        let log = ServerLog::new(None, "srv");
        log.push(&"é".repeat(10_000));
        let kept = &log.tail(1)[0];
        assert!(
            kept.len() < LINE_LIMIT + 40 && kept.ends_with("bytes cut)"),
            "{}",
            kept.len()
        );
    }
}
