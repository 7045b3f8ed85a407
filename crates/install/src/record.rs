//! What was installed for a server: kept as `record.json` beside its version folders.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Ecosystem, InstallError};

/// One server's installed version and the program that runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub ecosystem: Ecosystem,
    pub package: String,
    /// What the command line asked for (`None`: the newest at the time).
    pub requested: Option<String>,
    /// The exact version installed.
    pub version: String,
    /// The version's folder.
    pub folder: PathBuf,
    /// The installed program.
    pub program: PathBuf,
    /// The command line this was installed for: another line installs again.
    pub line: String,
}

const FILE: &str = "record.json";

/// A version as a folder name: nothing but what versions are made of.
pub(crate) fn safe_name(version: &str) -> String {
    version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl Record {
    /// The program that runs the installed one, when it is a script: on Windows an npm
    /// package's script is run by `node` (found on the server's PATH).
    pub fn interpreter(&self) -> Option<&'static str> {
        (cfg!(windows) && self.ecosystem == Ecosystem::Npm).then_some("node")
    }

    /// The record in a server's folder, when there is a readable one whose program exists.
    pub fn load(folder: &Path) -> Option<Record> {
        let text = std::fs::read_to_string(folder.join(FILE)).ok()?;
        let record: Record = serde_json::from_str(&text).ok()?;
        record.program.exists().then_some(record)
    }

    /// Writes the record (through a temporary file, so a crash leaves the old one).
    pub fn save(&self, folder: &Path) -> Result<(), InstallError> {
        let fail = |e: std::io::Error| {
            InstallError::Failed(format!(
                "could not record the install in {}: {e}",
                folder.display()
            ))
        };
        let text =
            serde_json::to_string_pretty(self).map_err(|e| InstallError::Failed(e.to_string()))?;
        let temporary = folder.join(format!("{FILE}.new"));
        std::fs::write(&temporary, text).map_err(fail)?;
        std::fs::rename(&temporary, folder.join(FILE)).map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_kept_and_read_back_only_while_its_program_exists() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("1.0/bin/server");
        std::fs::create_dir_all(program.parent().unwrap()).unwrap();
        let record = Record {
            ecosystem: Ecosystem::Npm,
            package: "p".into(),
            requested: None,
            version: "1.0".into(),
            folder: dir.path().join("1.0"),
            program: program.clone(),
            line: "npx\0p".into(),
        };
        record.save(dir.path()).unwrap();
        assert_eq!(Record::load(dir.path()), None, "no program yet");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        assert_eq!(Record::load(dir.path()), Some(record));
        assert_eq!(safe_name("1.0/../x"), "1.0_.._x");
    }
}
