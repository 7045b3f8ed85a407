//! Unpacking a bundle's zip into a fresh folder, refusing what could write outside it or
//! fill the disk: names that are absolute or climb out (`..`), symbolic links, more entries or
//! bytes than [`Limits`] allow (counted as written, not as the zip declares). Every file is
//! read to its end, so the zip crate checks its CRC-32; a mismatch fails the whole unpack.
//! Files keep only their execute bits (`0755` or `0644`), never set-id bits.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::BundleError;

/// What one bundle may hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub entries: usize,
    /// All files unpacked together.
    pub unpacked_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            entries: 100_000,
            unpacked_bytes: 2 << 30,
        }
    }
}

/// Each entry's name inside the folder, checked; refuses the bundle at the first bad one.
pub(crate) fn checked_names(
    archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    limits: Limits,
) -> Result<Vec<PathBuf>, BundleError> {
    if archive.len() > limits.entries {
        return Err(BundleError::TooLarge(format!(
            "it holds {} files, more than {}",
            archive.len(),
            limits.entries
        )));
    }
    let mut names = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(damaged)?;
        let raw = entry.name().map_err(damaged)?.into_owned();
        if entry.is_symlink() {
            return Err(BundleError::Unsafe(format!("{raw} is a symbolic link")));
        }
        if raw.starts_with('/') || raw.starts_with('\\') || raw.contains(':') {
            return Err(BundleError::Unsafe(format!("{raw} is an absolute path")));
        }
        let name = entry
            .enclosed_name()
            .ok_or_else(|| BundleError::Unsafe(format!("{raw} points outside the bundle")))?;
        names.push(name);
    }
    Ok(names)
}

/// Unpacks `content` into `dir`, which must not exist yet.
pub(crate) fn unpack(content: &[u8], dir: &Path, limits: Limits) -> Result<(), BundleError> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(content)).map_err(damaged)?;
    let names = checked_names(&mut archive, limits)?;
    std::fs::create_dir(dir).map_err(|e| io(dir, e))?;
    let mut left = limits.unpacked_bytes;
    for (i, name) in names.iter().enumerate() {
        let mut entry = archive.by_index(i).map_err(damaged)?;
        let path = dir.join(name);
        if entry.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| io(&path, e))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        let executable = entry.unix_mode().is_some_and(|m| m & 0o111 != 0);
        let mut out = create(&path, executable)?;
        let mut limited = (&mut entry).take(left + 1);
        let written = copy(&mut limited, &mut out).map_err(|e| match e {
            Copy::Read(e) => BundleError::Damaged(format!("{}: {e}", name.display())),
            Copy::Write(e) => io(&path, e),
        })?;
        if written > left {
            return Err(BundleError::TooLarge(format!(
                "it unpacks to more than {} MiB",
                limits.unpacked_bytes >> 20
            )));
        }
        left -= written;
        out.flush().map_err(|e| io(&path, e))?;
    }
    Ok(())
}

enum Copy {
    Read(std::io::Error),
    Write(std::io::Error),
}

fn copy(from: &mut impl Read, to: &mut impl Write) -> Result<u64, Copy> {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = from.read(&mut buffer).map_err(Copy::Read)?;
        if n == 0 {
            return Ok(total);
        }
        to.write_all(&buffer[..n]).map_err(Copy::Write)?;
        total += n as u64;
    }
}

/// A new file (two entries of one name are refused, not overwritten).
fn create(path: &Path, executable: bool) -> Result<std::fs::File, BundleError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if executable { 0o755 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = executable;
    options.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            BundleError::Unsafe(format!("{} is in the bundle twice", path.display()))
        } else {
            io(path, e)
        }
    })
}

fn damaged(e: zip::result::ZipError) -> BundleError {
    BundleError::Damaged(e.to_string())
}

fn io(path: &Path, e: std::io::Error) -> BundleError {
    BundleError::Io(format!("{}: {e}", path.display()))
}
