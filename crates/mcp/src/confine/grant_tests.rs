//! The sandbox opens to change only what the user saw the server given, and never a locked
//! place: checked on whole plans, with a fake home folder.

use super::runtime::resolved;
use super::*;

/// A fake home folder with the places an attacker aims at, and a root in it.
struct Home {
    _base: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
    notes: PathBuf,
    data: PathBuf,
    protected: Protected,
}

fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let home = base.join("home");
    for d in [
        ".ssh",
        ".local/bin",
        ".config/autostart",
        ".nvm/versions/node/v20/bin",
        "notes",
        "projects",
        "dotfiles",
    ] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519"), "KEY").unwrap();
    std::fs::write(home.join(".profile"), "# profile").unwrap();
    std::fs::write(home.join("dotfiles/bashrc"), "# bashrc").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(home.join("dotfiles/bashrc"), home.join(".bashrc")).unwrap();
    #[cfg(not(unix))]
    std::fs::write(home.join(".bashrc"), "# bashrc").unwrap();
    let protected = Protected::new(Some(home.clone()), &[base.join("toolgate")]);
    Home {
        notes: home.join("notes"),
        data: base.join("toolgate/servers"),
        _base: dir,
        base,
        home,
        protected,
    }
}

impl Home {
    fn host(&self) -> HostEnv {
        HostEnv::from_dirs(vec![
            self.home.join(".local/bin"),
            self.home.join(".nvm/versions/node/v20/bin"),
            "/usr/bin".into(),
        ])
    }

    fn plan(&self, config: &ServerConfig) -> Plan {
        plan(
            config,
            Path::new("/usr/bin/python3"),
            &self.host(),
            Some(&self.data),
            &self.protected,
            None,
            &toolgate_sandbox::Reserved::new(),
        )
        .unwrap()
        .expect("on by default")
    }
}

/// Whether the kernel lets the plan's server change `path`: grants and path both resolved,
/// as Landlock sees them (a grant of a link is a grant of where it points).
fn changes(plan: &Plan, path: &Path) -> bool {
    let at = resolved(path);
    plan.confinement
        .write
        .iter()
        .any(|w| at.starts_with(resolved(w)))
}

fn server(env: &[(&str, PathBuf)]) -> ServerConfig {
    let mut config = ServerConfig::stdio("logger", "python3", ["server.py"]);
    if let Transport::Stdio { env: vars, .. } = &mut config.transport {
        for (name, value) in env {
            vars.insert((*name).into(), value.to_string_lossy().into_owned());
        }
    }
    config
}

fn warned(plan: &Plan, words: &[&str]) -> bool {
    plan.report
        .warnings
        .iter()
        .any(|w| words.iter().all(|word| w.contains(word)))
}

#[test]
fn an_environment_value_opens_nothing_to_change_outside_the_folders_given() {
    let h = home();
    let elsewhere = h.base.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("app.log"), "").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(h.home.join(".bashrc"), h.notes.join("innocent.log")).unwrap();
    let bashrc = h.home.join(".bashrc");
    let bin = h.home.join(".local/bin");
    let mut config = server(&[
        ("LOG_FILE", bashrc.clone()),
        ("PLUGIN_DIR", bin.clone()),
        ("STARTUP", h.home.join(".profile")),
        ("AUTOSTART", h.home.join(".config/autostart/x.desktop")),
        ("MEMORY_FILE_PATH", h.home.join("memory.json")),
        ("KEY_FILE", h.home.join(".ssh/id_ed25519")),
        ("OUT_LOG", elsewhere.join("app.log")),
        ("NOTES_LOG", h.notes.join("server.log")),
        ("LINKED_LOG", h.notes.join("innocent.log")),
        ("PYTHON", "/usr/bin/python3".into()),
    ]);
    config.roots = vec![h.notes.clone()];
    let plan = h.plan(&config);
    for target in [
        bashrc.clone(),
        h.home.join("dotfiles/bashrc"),
        bin.join("git"),
        h.home.join(".profile"),
        h.home.join(".config/autostart/x.desktop"),
        h.home.join("memory.json"),
        h.home.join(".ssh/id_ed25519"),
        elsewhere.join("app.log"),
    ] {
        assert!(!changes(&plan, &target), "{}", target.display());
    }
    for (name, path) in [
        ("LOG_FILE", &bashrc),
        ("PLUGIN_DIR", &bin),
        ("MEMORY_FILE_PATH", &h.home.join("memory.json")),
    ] {
        let named = format!("{name} names {}", path.display());
        assert!(
            warned(
                &plan,
                &[&named, "outside the folders this server was given"]
            ),
            "{name}: {:?}",
            plan.report.warnings
        );
    }
    // Its root is open, so a place in it works; and the report shows no grant from the env.
    assert!(changes(&plan, &h.notes.join("server.log")));
    assert_eq!(
        plan.report.writable,
        vec![h.notes.clone(), h.data.join("logger")]
    );
    assert!(
        !warned(&plan, &["NOTES_LOG"]) && !warned(&plan, &["PYTHON"]),
        "{:?}",
        plan.report.warnings
    );
    // Reading: a harmless place outside is readable, never a key or a start-up file.
    assert!(plan.confinement.reads(&elsewhere.join("app.log")));
    assert!(warned(&plan, &["OUT_LOG", "may read it, not change it"]));
    for secret in [
        h.home.join(".ssh/id_ed25519"),
        bashrc,
        h.home.join(".profile"),
    ] {
        assert!(!plan.confinement.reads(&secret), "{}", secret.display());
    }
}

#[test]
fn no_grant_holds_a_locked_place_whoever_gave_it() {
    let h = home();
    let bashrc = h.home.join(".bashrc");
    // The user opens the whole home folder: refused, and the card says why.
    let mut config = server(&[]);
    config.sandbox = Some(SandboxSettings {
        write: vec![h.home.clone()],
        ..SandboxSettings::default()
    });
    let plan = h.plan(&config);
    assert!(!changes(&plan, &bashrc) && !changes(&plan, &h.home.join("notes/x")));
    assert!(
        warned(
            &plan,
            &[&h.home.display().to_string(), "sandbox settings", ".bashrc"]
        ),
        "{:?}",
        plan.report.warnings
    );
    let report = report_of(&config, &h.protected).expect("a report");
    assert!(!report.writable.contains(&h.home));
    assert!(report.warnings.iter().any(|w| w.contains(".bashrc")));

    // Other spellings and other givers of the same places.
    #[cfg(unix)]
    std::os::unix::fs::symlink(&h.home, h.base.join("innocent")).unwrap();
    let attempts: Vec<(PathBuf, PathBuf)> = vec![
        (h.home.join(".local/bin"), h.home.join(".local/bin/git")),
        (h.home.join("notes/.."), bashrc.clone()),
        (h.home.join(".config"), h.home.join(".config/autostart/x")),
        (
            h.home.join(".config/autostart"),
            h.home.join(".config/autostart/x"),
        ),
        // `~/.bashrc` is a link into `dotfiles` only where links are made (see `home`).
        #[cfg(unix)]
        (h.home.join("dotfiles"), bashrc.clone()),
        (
            h.home.join(".nvm"),
            h.home.join(".nvm/versions/node/v20/bin/npx"),
        ),
        (h.home.join(".ssh"), h.home.join(".ssh/authorized_keys")),
        (
            h.base.join("toolgate"),
            h.base.join("toolgate/settings.json"),
        ),
        (h.base.clone(), bashrc.clone()),
        #[cfg(unix)]
        (h.base.join("innocent"), bashrc.clone()),
    ];
    for (folder, target) in &attempts {
        std::fs::create_dir_all(folder).unwrap();
        let mut on_command_line = ServerConfig::stdio(
            "files",
            "python3",
            [
                "server.py".to_owned(),
                folder.to_string_lossy().into_owned(),
            ],
        );
        let plan = h.plan(&on_command_line);
        assert!(!changes(&plan, target), "{}", folder.display());
        assert!(
            warned(&plan, &["on its command line", "no server may change"]),
            "{}: {:?}",
            folder.display(),
            plan.report.warnings
        );
        on_command_line.roots = vec![folder.clone()];
        assert!(!changes(&h.plan(&on_command_line), target));
    }

    // A folder that holds none of them is granted as before.
    let mut fine = server(&[]);
    fine.roots = vec![h.home.join("projects")];
    fine.sandbox = Some(SandboxSettings {
        write: vec![h.notes.clone()],
        ..SandboxSettings::default()
    });
    let plan = h.plan(&fine);
    assert!(changes(&plan, &h.home.join("projects/a")) && changes(&plan, &h.notes.join("b")));
    assert!(
        !warned(&plan, &["no server may change"]),
        "{:?}",
        plan.report.warnings
    );
}
