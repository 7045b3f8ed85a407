//! An `npx` or `uvx` server run from the exact version Toolgate installed for it
//! (`toolgate-install`), installed at its first start (or when its command line changed) and
//! run from its folder after that, with no registry asked.
//!
//! Only a manager with a data folder pins (the app's, the CLI's): its packages live beside the
//! servers' data folders, in `packages/<server>/<version>/`, out of reach of the server itself
//! (its sandbox may read them, never change them).

use std::path::PathBuf;

use toolgate_install::{Record, Source};
use toolgate_settings::{ServerConfig, Transport};

use super::registry::ServerManager;
use crate::host_env::HostEnv;
use crate::logs::ServerLog;

impl ServerManager {
    /// Where installed packages live, when this manager has a data folder.
    pub(super) fn packages_root(&self) -> Option<PathBuf> {
        let data = self.options.server_data.as_ref()?;
        Some(data.parent().unwrap_or(data).join("packages"))
    }

    /// The installed program for `config`'s npx or uvx command line, installing it first when
    /// there is none for this line. `None`: the server runs as its command line says (not an
    /// npx or uvx line Toolgate pins, or no data folder).
    pub(super) async fn pinned(
        &self,
        config: &ServerConfig,
        host: &HostEnv,
        log: &ServerLog,
    ) -> Result<Option<(Record, Vec<String>)>, String> {
        let Transport::Stdio { command, args, .. } = &config.transport else {
            return Ok(None);
        };
        let (Some(source), Some(root)) = (Source::of(command, args), self.packages_root()) else {
            return Ok(None);
        };
        let folder = toolgate_install::folder_of(&root, &config.id);
        let line = format!("{command}\0{}", args.join("\0"));
        if let Some(record) = Record::load(&folder).filter(|r| r.line == line) {
            return Ok(Some((record, source.args)));
        }
        log.mark(&format!(
            "installing {} for it: an exact version, into Toolgate's folder",
            source.package
        ));
        let path = host.path_var().to_string_lossy().into_owned();
        let said = |line: &str| log.push(&format!("(install) {line}"));
        let record = toolgate_install::install(&source, None, &folder, &line, &path, &said)
            .await
            .map_err(|e| format!("it could not be installed: {e}"))?;
        log.push(&format!(
            "(install) {} {} installed; it runs from {}",
            record.package,
            record.version,
            record.folder.display()
        ));
        Ok(Some((record, source.args)))
    }
}

/// The program and arguments that run an installed server: its program, or on Windows `node`
/// (on the server's PATH) with an npm package's script (see `Record::interpreter`).
pub(super) fn command_of(
    record: &Record,
    rest: &[String],
    host: &HostEnv,
    cwd: Option<&std::path::Path>,
) -> Result<(PathBuf, Vec<String>), String> {
    Ok(match record.interpreter() {
        Some(interpreter) => (
            host.resolve(interpreter, cwd).map_err(|e| e.to_string())?,
            std::iter::once(record.program.to_string_lossy().into_owned())
                .chain(rest.iter().cloned())
                .collect(),
        ),
        None => (record.program.clone(), rest.to_vec()),
    })
}
