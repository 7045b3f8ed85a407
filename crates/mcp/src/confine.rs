//! The sandbox each local server runs in: what it may read and write, how far it reaches on
//! the network, built from its settings at every start and applied by `toolgate-sandbox`.
//!
//! Readable: the system, the server's program and runtime (see the private `runtime` module), its
//! own files on its command line, its working folder, and the user's extra folders. Writable: its
//! roots, the folders named on its command line (a filesystem server's folders, a git server's
//! repository), a data folder of its own, a fresh temporary folder (its `TMPDIR`), and the user's
//! extra folders. Nothing else of the home folder: a path in its environment opens nothing to
//! change, and no grant may hold a start-up file, a per-user folder of programs, an autostart
//! folder or a key (see the private `grants` module). The [`SandboxReport`] says what applied, what
//! was refused and what the kernel could not enforce, for the server's card and the doctor.

#[cfg(test)]
mod grant_tests;
mod grants;
mod launcher;
mod runtime;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;
use toolgate_sandbox::{Confinement, Network, Reservation, Reserved, Support};
use toolgate_settings::{NetworkAccess, SandboxSettings, ServerConfig, ServerKind, Transport};

use crate::host_env::HostEnv;
use grants::{Given, Locked};
pub(crate) use launcher::Launcher;
pub(crate) use runtime::Protected;

/// What the kernel offers, asked once.
pub fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(Support::probe)
}

/// What a sandbox with `network` does not enforce here: what the kernel lacks, and Toolgate
/// running as root. Each server's card and Diagnostics both say these, from this one place, so
/// a card never shows "sandboxed" while Diagnostics says it is not enforced.
pub fn gaps(network: Network) -> Vec<String> {
    let mut gaps = support().gaps(network);
    if runs_as_root() {
        gaps.push(
            "Toolgate runs as root, whose capabilities let a confined server read other \
             processes' environments (where secrets are)"
                .to_owned(),
        );
    }
    gaps
}

/// Whether Toolgate runs as root: root's capabilities reach past Landlock's guard on other
/// processes' /proc entries.
pub fn runs_as_root() -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// A server's sandbox as its card shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxReport {
    pub enabled: bool,
    pub network: NetworkAccess,
    /// Folders it may change: roots, folders on its command line, its data folder, the
    /// user's extras.
    pub writable: Vec<PathBuf>,
    /// Folders beyond the system it may read: its program and runtime, its files, the user's
    /// extras.
    pub readable: Vec<PathBuf>,
    pub data_dir: Option<PathBuf>,
    /// What is not confined, in words: a kernel without the support, a sandbox switched off,
    /// a folder that opens the home folder or a place with secrets.
    pub warnings: Vec<String>,
    /// The settings are the defaults for what the server is.
    pub defaults: bool,
    /// How it is confined, in a few words ("Landlock + seccomp").
    pub mechanism: String,
}

/// One start's sandbox, ready to apply.
pub(crate) struct Plan {
    pub confinement: Confinement,
    /// Variables added to the server's environment (its `TMPDIR`, a launcher's cache).
    pub env: BTreeMap<String, String>,
    /// The fetch step's arguments for a launcher whose packages the server cannot fetch itself.
    pub fetch: Option<(Launcher, Vec<String>)>,
    /// A temporary folder removed when the server stops (when it has no data folder).
    pub temp: Option<tempfile::TempDir>,
    pub data_dir: Option<PathBuf>,
    pub report: SandboxReport,
    /// Network "hosts": the proxy it reaches the world through, kept as long as its process.
    pub proxy: Option<std::sync::Arc<toolgate_egress::Proxy>>,
    /// Toolgate's own ports (proxies, the HTTP door): its supervisor refuses them to it.
    pub reserved: Reserved,
    /// Its proxy's port, kept from every other server as long as its process runs.
    pub hold: Option<Reservation>,
}

impl Plan {
    /// Sends the server's connections through `proxy`: its sandbox reaches the proxy's port
    /// and nothing else, and its proxy variables point there (over its own values: any
    /// other way out is closed anyway). The variables carry the proxy's credentials, which
    /// only this process gets: `env` is never logged or reported (the report says "hosts").
    pub(crate) fn through(&mut self, proxy: std::sync::Arc<toolgate_egress::Proxy>) {
        self.confinement.network = Network::Proxy(proxy.port());
        self.hold = Some(self.reserved.hold(proxy.port()));
        let url = proxy.url();
        for name in ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"] {
            self.env.insert(name.to_owned(), url.clone());
            self.env.insert(name.to_ascii_lowercase(), url.clone());
        }
        for name in ["NO_PROXY", "no_proxy"] {
            self.env.insert(name.to_owned(), String::new());
        }
        self.proxy = Some(proxy);
    }
}

/// The variables [`Plan::through`] sets, which a step run without the server's proxy (the
/// fetch step) must not get: they hold the proxy's credentials.
pub(crate) const PROXY_VARIABLES: [&str; 8] = [
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
    "no_proxy",
];

fn network_of(access: NetworkAccess) -> Network {
    match access {
        NetworkAccess::None => Network::None,
        NetworkAccess::Loopback => Network::Loopback,
        NetworkAccess::Any => Network::Any,
        // The port is the start's own; what the kernel can enforce does not depend on it.
        NetworkAccess::Hosts => Network::Proxy(0),
    }
}

fn mechanism() -> String {
    if cfg!(target_os = "linux") {
        "Landlock and seccomp".to_owned()
    } else if cfg!(target_os = "macos") {
        "a sandbox-exec profile (not verified)".to_owned()
    } else {
        "none on this platform yet".to_owned()
    }
}

/// The folders a server was given to change, and by whom: its roots, the folders on its
/// command line, the user's extras.
fn given(
    config: &ServerConfig,
    settings: &SandboxSettings,
    command_line: Vec<PathBuf>,
) -> Vec<(Given, PathBuf)> {
    let roots = config.roots.iter().map(|r| (Given::Root, r.clone()));
    let args = command_line.into_iter().map(|a| (Given::CommandLine, a));
    let extra = settings.write.iter().map(|w| (Given::Setting, w.clone()));
    roots.chain(args).chain(extra).collect()
}

/// The warnings for folders the user's choices open: the home folder, `~/.ssh`…
fn opened_warnings(protected: &Protected, paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter_map(|path| {
            let opened = protected.opened_by(path);
            (!opened.is_empty()).then(|| {
                let shown: Vec<String> = opened
                    .iter()
                    .take(3)
                    .map(|p| p.display().to_string())
                    .collect();
                format!(
                    "{} is open to it, and with it {}",
                    path.display(),
                    shown.join(", ")
                )
            })
        })
        .collect()
}

/// The warnings for folders the user (or a bundle's install) opened for reading: Toolgate's own
/// folders of installed code are no warning.
fn read_warnings(protected: &Protected, paths: &[PathBuf]) -> Vec<String> {
    let outside: Vec<PathBuf> = paths
        .iter()
        .filter(|p| !protected.opened_for_reading(p).is_empty())
        .cloned()
        .collect();
    opened_warnings(protected, &outside)
}

/// The report for a server not started since its settings changed: what its settings say.
pub(crate) fn report_of(config: &ServerConfig, protected: &Protected) -> Option<SandboxReport> {
    let settings = config.sandbox_settings()?;
    // Without a start there is no resolved command line or login PATH: the roots and the
    // settings' folders, checked against the app's own PATH.
    let locked = Locked::new(protected, HostEnv::inherited().dirs());
    let writes = grants::writes(
        &given(config, &settings, Vec::new()),
        None,
        std::iter::empty(),
        &locked,
        protected,
    );
    let writable = writes.writable;
    let mut warnings = if settings.enabled {
        gaps(network_of(settings.network))
    } else {
        vec![off_warning()]
    };
    if settings.enabled {
        warnings.extend(writes.warnings);
        warnings.extend(opened_warnings(protected, &writable));
        warnings.extend(read_warnings(protected, &settings.read));
    }
    Some(SandboxReport {
        enabled: settings.enabled,
        network: settings.network,
        writable,
        readable: settings.read.clone(),
        data_dir: None,
        warnings,
        defaults: config.sandbox.is_none(),
        mechanism: mechanism(),
    })
}

fn off_warning() -> String {
    "the sandbox is off: it can read and change everything your account can, and reach any \
     network"
        .to_owned()
}

/// Where one server keeps its data, and the start's temporary folder.
pub(crate) struct Folders {
    pub data: Option<PathBuf>,
    pub temp: PathBuf,
    pub owned_temp: Option<tempfile::TempDir>,
}

/// How long a temporary folder a killed Toolgate left in a data folder is kept.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Makes the server's data folder (`<root>/<id>`) and a fresh temporary folder for this start
/// in it (`tmp/run-…`, removed when the server stops; the app and the CLI may run the same
/// server at once, so each start has its own), or a temporary folder of its own when there is
/// no data root.
pub(crate) fn folders(root: Option<&Path>, id: &str) -> Result<Folders, String> {
    match root {
        Some(root) => {
            let data = root.join(id);
            let temps = data.join("tmp");
            std::fs::create_dir_all(&temps)
                .map_err(|e| format!("could not make its data folder {}: {e}", data.display()))?;
            sweep_stale(&temps);
            let owned = tempfile::Builder::new()
                .prefix("run-")
                .tempdir_in(&temps)
                .map_err(|e| format!("could not make a temporary folder for it: {e}"))?;
            Ok(Folders {
                data: Some(data),
                temp: owned.path().to_path_buf(),
                owned_temp: Some(owned),
            })
        }
        None => {
            let owned = tempfile::Builder::new()
                .prefix("toolgate-server-")
                .tempdir()
                .map_err(|e| format!("could not make a temporary folder for it: {e}"))?;
            Ok(Folders {
                data: None,
                temp: owned.path().to_path_buf(),
                owned_temp: Some(owned),
            })
        }
    }
}

/// Removes the temporary folders of starts more than a day old: only a Toolgate that was
/// killed leaves one behind.
fn sweep_stale(temps: &Path) {
    let Ok(entries) = std::fs::read_dir(temps) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The sandbox for one start of `config`, whose program resolved to `program`. `None` when its
/// sandbox is off (the report then says so). `reserved`: the ports it may not use.
pub(crate) fn plan(
    config: &ServerConfig,
    program: &Path,
    host: &HostEnv,
    data_root: Option<&Path>,
    protected: &Protected,
    installed: Option<&Path>,
    reserved: &Reserved,
) -> Result<Option<Plan>, String> {
    let Transport::Stdio { args, env, cwd, .. } = &config.transport else {
        return Ok(None);
    };
    let Some(settings) = config.sandbox_settings().filter(|s| s.enabled) else {
        return Ok(None);
    };
    let folders = folders(data_root, &config.id)?;
    let mut read: Vec<PathBuf> = runtime::SYSTEM.iter().map(PathBuf::from).collect();
    let mut derived: Vec<PathBuf> = runtime::program_folders(program, host);
    derived.extend(runtime::runtime_folders(host, protected));
    let (arg_folders, arg_files) = runtime::command_line_paths(args);
    derived.extend(arg_files.iter().filter_map(|f| runtime::file_folder(f)));
    if let Some(cwd) = cwd {
        derived.push(cwd.clone());
    }
    if settings.network == NetworkAccess::Any {
        // /etc/resolv.conf often points into /run, which stays closed otherwise.
        if let Some(dir) = std::fs::canonicalize("/etc/resolv.conf")
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
        {
            derived.push(dir);
        }
    }
    let mut readable: Vec<PathBuf> = Vec::new();
    for dir in derived {
        // The grant is made on what the path resolves to, so that is what is checked.
        let Ok(dir) = std::fs::canonicalize(&dir) else {
            continue;
        };
        if protected.allows(&dir)
            && !read.iter().any(|r| dir.starts_with(r))
            && !readable.contains(&dir)
        {
            readable.push(dir);
        }
    }
    // A file named on the command line is readable itself, wherever it is: the user named it
    // (its folder comes along only where that is safe, above).
    for file in &arg_files {
        if !readable
            .iter()
            .chain(read.iter())
            .any(|r| file.starts_with(r))
        {
            readable.push(file.clone());
        }
    }
    readable.extend(settings.read.iter().cloned());
    // The version Toolgate installed for it: inside Toolgate's own folder, so granted here
    // rather than derived, and only to read.
    readable.extend(installed.map(Path::to_path_buf));

    let locked = Locked::new(protected, host.dirs());
    let writes = grants::writes(
        &given(config, &settings, arg_folders),
        folders.data.as_deref(),
        env.iter(),
        &locked,
        protected,
    );
    for place in writes.readable {
        if !readable.contains(&place) {
            readable.push(place);
        }
    }
    read.extend(readable.iter().cloned());
    let mut writable = writes.writable;
    // Before its own data folder joins the list: that one is inside Toolgate's folder on purpose.
    let opened = opened_warnings(protected, &writable);
    let mut write = writable.clone();
    write.extend(runtime::DEVICES.iter().map(PathBuf::from));
    write.push(folders.temp.clone());
    if let Some(data) = &folders.data {
        write.push(data.clone());
        writable.push(data.clone());
    }

    let mut extra: BTreeMap<String, String> = BTreeMap::new();
    extra.insert("TMPDIR".into(), folders.temp.to_string_lossy().into_owned());
    let private = folders.data.clone().unwrap_or_else(|| folders.temp.clone());
    let offline = settings.network != NetworkAccess::Any;
    let launcher = Launcher::of(program);
    if let Some(launcher) = launcher {
        extra.extend(launcher.cache_env(&private, offline, protected.home()));
    }
    if ServerKind::of(config) == ServerKind::Memory {
        // Its default file is inside its own package, which is read-only here.
        extra.insert(
            "MEMORY_FILE_PATH".into(),
            private.join("memory.jsonl").to_string_lossy().into_owned(),
        );
    }
    // The user's own values win over every default above.
    extra.retain(|name, _| !env.keys().any(|k| k.eq_ignore_ascii_case(name)));
    let fetch = launcher
        .filter(|_| offline)
        .and_then(|l| l.fetch_args(args).map(|a| (l, a)));

    let network = network_of(settings.network);
    let mut warnings = gaps(network);
    warnings.extend(opened);
    warnings.extend(read_warnings(protected, &settings.read));
    warnings.extend(opened_warnings(protected, &arg_files));
    warnings.extend(writes.warnings);
    if let Some(cwd) = cwd.as_ref().filter(|c| !protected.allows(c)) {
        warnings.push(format!(
            "its working folder {} would open your home folder's private places, so it is not readable",
            cwd.display()
        ));
    }
    let report = SandboxReport {
        enabled: true,
        network: settings.network,
        writable,
        readable,
        data_dir: folders.data.clone(),
        warnings,
        defaults: config.sandbox.is_none(),
        mechanism: mechanism(),
    };
    Ok(Some(Plan {
        confinement: Confinement {
            read,
            write,
            network,
        },
        env: extra,
        fetch,
        temp: folders.owned_temp,
        data_dir: folders.data,
        report,
        proxy: None,
        reserved: reserved.clone(),
        hold: None,
    }))
}

/// One line for the server's log at each start.
pub(crate) fn describe(report: &SandboxReport) -> String {
    let shown = |paths: &[PathBuf]| {
        if paths.is_empty() {
            "nothing".to_owned()
        } else {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut line = format!(
        "sandbox ({}): network {}; may change {}",
        report.mechanism,
        report.network.as_str(),
        shown(&report.writable)
    );
    for warning in &report.warnings {
        line.push_str(&format!("; WARNING: {warning}"));
    }
    line
}

/// Whether this platform's kernel confines a sandboxed server's network at all.
pub(crate) fn network_enforced() -> bool {
    cfg!(target_os = "linux") && support().seccomp
}

/// The report for a server whose sandbox is off.
pub(crate) fn unconfined_report(config: &ServerConfig) -> Option<SandboxReport> {
    let settings: SandboxSettings = config.sandbox_settings()?;
    Some(SandboxReport {
        enabled: false,
        network: settings.network,
        writable: Vec::new(),
        readable: Vec::new(),
        data_dir: None,
        warnings: vec![off_warning()],
        defaults: config.sandbox.is_none(),
        mechanism: mechanism(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cards_gaps_name_running_as_root_as_diagnostics_does() {
        // One list for both: whatever this machine is, the card says root when Diagnostics does.
        for network in [Network::None, Network::Loopback, Network::Any] {
            let named = gaps(network).iter().any(|g| g.contains("runs as root"));
            assert_eq!(named, runs_as_root(), "{network:?}");
        }
    }

    #[test]
    fn a_plan_confines_to_roots_command_line_folders_and_its_data_folder() {
        let base = tempfile::tempdir().unwrap();
        let home = base.path().join("home");
        let root = home.join("notes");
        let data = base.path().join("toolgate/servers");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        let protected = Protected::new(Some(home.clone()), &[base.path().join("toolgate")]);
        let mut config = ServerConfig::stdio(
            "files",
            "npx",
            [
                "-y",
                "@modelcontextprotocol/server-filesystem",
                root.to_str().unwrap(),
            ],
        );
        config.roots = vec![home.join("docs")];
        let host = HostEnv::from_dirs(vec!["/usr/bin".into()]);
        let first = plan(
            &config,
            Path::new("/usr/bin/npx"),
            &host,
            Some(&data),
            &protected,
            None,
            &Reserved::new(),
        )
        .unwrap()
        .expect("on by default");
        let c = &first.confinement;
        assert!(c.writes(&root) && c.writes(&home.join("docs")));
        assert!(c.writes(&data.join("files/tmp/x")));
        assert!(!c.reads(&home.join(".ssh/id_ed25519")));
        assert!(!c.reads(&home), "the home folder itself");
        assert!(!c.reads(&base.path().join("toolgate/settings.json")));
        assert_eq!(c.network, Network::None);
        assert_eq!(
            Path::new(&first.env["npm_config_cache"]),
            data.join("files/npm-cache")
        );
        assert_eq!(first.env["npm_config_offline"], "true");
        let temp = Path::new(&first.env["TMPDIR"]);
        assert!(
            temp.parent() == Some(&*data.join("files/tmp"))
                && temp
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("run-")),
            "{}",
            first.env["TMPDIR"]
        );
        assert!(first.report.defaults && first.report.enabled);
        assert!(
            first.report.warnings.is_empty() || !gaps(Network::None).is_empty(),
            "its data folder inside Toolgate's is no warning: {:?}",
            first.report.warnings
        );
        let (launcher, args) = first.fetch.expect("a fetch step without the network");
        assert_eq!(launcher, Launcher::Npx);
        assert!(args.contains(&"--package=@modelcontextprotocol/server-filesystem".to_owned()));

        // A file named on the command line is readable, not the protected folder around it.
        let secret_config = home.join(".config/app/config.json");
        std::fs::create_dir_all(secret_config.parent().unwrap()).unwrap();
        std::fs::write(&secret_config, "{}").unwrap();
        let mut with_file = config.clone();
        if let Transport::Stdio { args, .. } = &mut with_file.transport {
            args.push(format!("--config={}", secret_config.display()));
        }
        let named = plan(
            &with_file,
            Path::new("/usr/bin/npx"),
            &host,
            Some(&data),
            &protected,
            None,
            &Reserved::new(),
        )
        .unwrap()
        .expect("on");
        assert!(named.confinement.reads(&secret_config));
        assert!(!named
            .confinement
            .reads(&home.join(".config/app/other.json")));
        assert!(
            named
                .report
                .warnings
                .iter()
                .any(|w| w.contains("config.json")),
            "{:?}",
            named.report.warnings
        );

        // The user opens the whole home folder: refused (it holds the start-up files and
        // keys no server may change), and said.
        config.sandbox = Some(SandboxSettings {
            network: NetworkAccess::Any,
            write: vec![home.clone()],
            ..SandboxSettings::default()
        });
        let second = plan(
            &config,
            Path::new("/usr/bin/npx"),
            &host,
            Some(&data),
            &protected,
            None,
            &Reserved::new(),
        )
        .unwrap()
        .expect("on");
        assert!(second.fetch.is_none(), "with the network it fetches itself");
        assert!(!second.env.contains_key("npm_config_offline"));
        assert!(!second.confinement.writes(&home.join(".bashrc")));
        assert!(
            second.confinement.writes(&home.join("docs/x")),
            "its root still"
        );
        assert!(!second.report.writable.contains(&home));
        assert!(
            second
                .report
                .warnings
                .iter()
                .any(|w| w.contains(".ssh") && w.contains("no server may change")),
            "{:?}",
            second.report.warnings
        );
        config.sandbox = Some(SandboxSettings {
            enabled: false,
            ..SandboxSettings::default()
        });
        assert!(plan_off(&config, &host, &data, &protected));
    }

    fn plan_off(config: &ServerConfig, host: &HostEnv, data: &Path, protected: &Protected) -> bool {
        plan(
            config,
            Path::new("/usr/bin/npx"),
            host,
            Some(data),
            protected,
            None,
            &Reserved::new(),
        )
        .unwrap()
        .is_none()
            && unconfined_report(config).is_some_and(|r| !r.enabled && !r.warnings.is_empty())
    }
}
