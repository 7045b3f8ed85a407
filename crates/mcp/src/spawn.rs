//! A local server's process: spawned in its own session and group, confined by its plan, its
//! stderr copied to the log, and stopped for sure. Its stdin and stdout are handed to the
//! client's stdio transport (`toolgate_mcp_client::stdio`), which knows no process.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::broadcast;

use crate::confine::Plan;
use crate::host_env::HostEnv;
use crate::logs::ServerLog;
use crate::orphans::{signal_group, signal_leftovers, ProcessId, Signal, MARKER};
use toolgate_mcp_client::ServerEvent;

pub(crate) struct StdioSpec<'a> {
    pub server: &'a str,
    /// The command, found on the PATH servers get.
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: &'a BTreeMap<String, String>,
    pub cwd: Option<&'a Path>,
}

/// A running server process and the two pipes the client's transport talks through.
pub(crate) struct Spawned {
    pub process: StdioProcess,
    pub stdout: ChildStdout,
    pub stdin: ChildStdin,
}

pub(crate) struct StdioProcess {
    child: Child,
    pub leader: ProcessId,
    /// The task copying stderr to the log: awaited (briefly) on stop, so a server that died at
    /// start has its last words in the log before the failure reason quotes them.
    stderr: Option<tokio::task::JoinHandle<()>>,
    /// What lives as long as the process: the loopback guard of its sandbox, and a temporary
    /// folder of its own, removed once the whole group is gone.
    sandbox: Option<Running>,
}

/// The parts of a sandbox that outlive the spawn.
struct Running {
    #[cfg(target_os = "linux")]
    _loopback: Option<toolgate_sandbox::linux::loopback::Guard>,
    _temp: Option<tempfile::TempDir>,
    _proxy: Option<std::sync::Arc<toolgate_egress::Proxy>>,
    /// Its proxy's port stays closed to other servers while it runs.
    _hold: Option<toolgate_sandbox::Reservation>,
}

/// A command for `spec` with the environment every server gets, in its own process group, to
/// die with Toolgate; and with its sandbox armed when `plan` is given.
fn command_for(
    spec: &StdioSpec<'_>,
    host: &HostEnv,
    plan: Option<&mut Plan>,
) -> Result<(tokio::process::Command, Option<Armed>), String> {
    let mut command = tokio::process::Command::new(spec.program);
    command
        .args(spec.args)
        .env("PATH", host.path_var())
        .envs(spec.env)
        // A last resort should this handle be dropped without `stop`.
        .kill_on_drop(true);
    // Set after the configured variables, so that a setting cannot claim another run's.
    if let Some(host) = ProcessId::current() {
        command.env(MARKER, host.marker());
    }
    if let Some(cwd) = spec.cwd {
        command.current_dir(cwd);
    }
    // Its own session, and so its own group (stopping it stops whatever it started: npx starts
    // node, uvx python), with no controlling terminal: a server cannot open `/dev/tty` and draw
    // on the screen where the CLI asks its questions. On Windows, its Job Object is the group
    // (`toolgate_guard`), and it gets no console window.
    #[cfg(unix)]
    new_session(&mut command);
    #[cfg(windows)]
    command.creation_flags(windows_sys::Win32::System::Threading::CREATE_NO_WINDOW);
    // Killed with Toolgate, however Toolgate ends.
    toolgate_sandbox::die_with_toolgate(command.as_std_mut());
    let armed = match plan {
        Some(plan) => {
            command.envs(&plan.env);
            Some(arm(plan, &mut command)?)
        }
        None => None,
    };
    Ok((command, armed))
}

#[cfg(target_os = "linux")]
type Armed = toolgate_sandbox::linux::Armed;
#[cfg(not(target_os = "linux"))]
type Armed = ();

/// Arms the command with the plan's sandbox (after the parent-death signal, so both apply).
#[cfg(target_os = "linux")]
fn arm(plan: &Plan, command: &mut tokio::process::Command) -> Result<Armed, String> {
    let prepared = toolgate_sandbox::linux::prepare(&plan.confinement, &crate::confine::support())
        .map_err(|e| e.to_string())?;
    prepared
        .arm(command.as_std_mut())
        .map_err(|e| e.to_string())
}

/// macOS: the command runs under `sandbox-exec` with a profile of the same allow-list. Not
/// verified (see `toolgate_sandbox::macos`).
#[cfg(target_os = "macos")]
fn arm(plan: &Plan, command: &mut tokio::process::Command) -> Result<Armed, String> {
    let inner = command.as_std_mut();
    let program = std::path::PathBuf::from(inner.get_program());
    let args: Vec<String> = inner
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut wrapped = tokio::process::Command::new(toolgate_sandbox::macos::SANDBOX_EXEC);
    wrapped.args(toolgate_sandbox::macos::wrap(
        &plan.confinement,
        &program,
        &args,
    ));
    for (name, value) in inner.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    if let Some(dir) = inner.get_current_dir() {
        wrapped.current_dir(dir);
    }
    new_session(&mut wrapped);
    wrapped.kill_on_drop(true);
    *command = wrapped;
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn arm(_plan: &Plan, _command: &mut tokio::process::Command) -> Result<Armed, String> {
    Ok(())
}

/// Why a spawn failed, in words.
fn spawn_problem(program: &Path, e: &std::io::Error) -> String {
    #[cfg(target_os = "linux")]
    if e.raw_os_error() == Some(toolgate_sandbox::linux::SETUP_FAILED) {
        return format!(
            "could not start '{}': its sandbox could not be applied in the new process (see the doctor)",
            program.display()
        );
    }
    let batch = program
        .extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("cmd") || x.eq_ignore_ascii_case("bat"));
    match e.kind() {
        // Rust refuses arguments `cmd.exe` could read as commands (quotes, `%`, line breaks in
        // some places) rather than risk running them.
        std::io::ErrorKind::InvalidInput if batch => format!(
            "could not start '{}': one of its arguments cannot be passed safely to a .cmd or .bat file (Windows would read part of it as a command); start the program behind it directly (for npx: node and the package's script), or change the argument",
            program.display()
        ),
        std::io::ErrorKind::NotFound => format!(
            "could not start '{}': the program or its interpreter was not found",
            program.display()
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "could not start '{}': permission denied (is it executable, and inside what its sandbox may read?)",
            program.display()
        ),
        _ => format!("could not start '{}': {e}", program.display()),
    }
}

/// The fetch step of a launcher in a sandbox without the network (see `confine::launcher`):
/// the launcher with the network, installing what the command line names and running `true`.
/// Its output goes to the server's log. Skipped when the same command line was fetched before.
pub(crate) async fn fetch(
    spec: &StdioSpec<'_>,
    host: &HostEnv,
    plan: &Plan,
    log: &ServerLog,
    timeout: Duration,
) -> Result<(), String> {
    let Some((_, args)) = &plan.fetch else {
        return Ok(());
    };
    let marker = plan.data_dir.as_ref().map(|d| d.join(".fetched"));
    let line = format!("{}\0{}", spec.program.display(), spec.args.join("\0"));
    if let Some(marker) = &marker {
        if std::fs::read_to_string(marker).is_ok_and(|done| done == line) {
            return Ok(());
        }
    }
    let mut with_network = Plan {
        confinement: toolgate_sandbox::Confinement {
            network: toolgate_sandbox::Network::Any,
            ..plan.confinement.clone()
        },
        env: plan.env.clone(),
        fetch: None,
        temp: None,
        data_dir: None,
        report: plan.report.clone(),
        proxy: None,
        reserved: plan.reserved.clone(),
        hold: None,
    };
    for offline in ["npm_config_offline", "UV_OFFLINE"] {
        with_network.env.remove(offline);
    }
    // It has the network itself: the server's proxy (whose list need not name the package
    // registry) is not its way out, and its credentials are the server's alone.
    for variable in crate::confine::PROXY_VARIABLES {
        with_network.env.remove(variable);
    }
    with_network
        .env
        .insert("npm_config_ignore_scripts".into(), "true".into());
    let fetch_spec = StdioSpec { args, ..*spec };
    let (mut command, armed) = command_for(&fetch_spec, host, Some(&mut with_network))?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    log.mark(&format!(
        "fetching its packages first (the server itself has no network): {} {}",
        spec.program.display(),
        args.join(" ")
    ));
    let child = command
        .spawn()
        .map_err(|e| spawn_problem(spec.program, &e))?;
    #[cfg(target_os = "linux")]
    let _guard = armed
        .map(|a| a.started(spec.server, &plan.reserved))
        .transpose()
        .map_err(|e| e.to_string())?;
    #[cfg(not(target_os = "linux"))]
    let _ = armed;
    let output = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(format!("fetching its packages failed: {e}")),
        Err(_) => {
            return Err(format!(
                "fetching its packages took longer than {} s",
                timeout.as_secs()
            ))
        }
    };
    for line in String::from_utf8_lossy(&output.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&output.stderr).lines())
    {
        log.push(&format!("(fetch) {line}"));
    }
    if !output.status.success() {
        return Err(format!(
            "fetching its packages failed ({})",
            describe_exit(Some(output.status))
        ));
    }
    if let Some(marker) = &marker {
        let _ = std::fs::write(marker, line);
    }
    Ok(())
}

/// Checks the working folder a server is configured with.
pub(crate) fn check_cwd(cwd: Option<&Path>) -> Result<(), String> {
    match cwd {
        Some(cwd) if !cwd.is_dir() => Err(format!(
            "its working folder '{}' does not exist; fix cwd in the server's settings",
            cwd.display()
        )),
        _ => Ok(()),
    }
}

/// Starts the server, confined by `plan` when it has one.
pub(crate) fn spawn(
    spec: &StdioSpec<'_>,
    host: &HostEnv,
    mut plan: Option<Plan>,
    log: &ServerLog,
    events: &broadcast::Sender<ServerEvent>,
) -> Result<Spawned, String> {
    check_cwd(spec.cwd)?;
    let program = spec.program;
    let (mut command, armed) = command_for(spec, host, plan.as_mut())?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|e| spawn_problem(program, &e))?;
    #[cfg(target_os = "linux")]
    let reserved = plan
        .as_ref()
        .map(|p| p.reserved.clone())
        .unwrap_or_default();
    #[cfg(target_os = "linux")]
    let loopback = match armed.map(|a| a.started(spec.server, &reserved)).transpose() {
        Ok(guard) => guard.flatten(),
        Err(e) => {
            // It could not be guarded: it must not run.
            let _ = child.start_kill();
            return Err(e.to_string());
        }
    };
    #[cfg(not(target_os = "linux"))]
    let _ = armed;
    let sandbox = plan.map(|plan| Running {
        #[cfg(target_os = "linux")]
        _loopback: loopback,
        _temp: plan.temp,
        _proxy: plan.proxy,
        _hold: plan.hold,
    });
    let pid = child.id().unwrap_or(0);
    let leader = ProcessId::of(pid).unwrap_or(ProcessId { pid, start: 0 });
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("the server's standard streams could not be opened".to_owned());
    };
    log.mark(&format!("started {} (pid {pid})", program.display()));

    let (server, log_err, events_err) = (spec.server.to_owned(), log.clone(), events.clone());
    let stderr_task = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(server = %server, "stderr: {line}");
            log_err.push(&line);
            let _ = events_err.send(ServerEvent::Output {
                server: server.clone(),
                line,
            });
        }
    });

    Ok(Spawned {
        process: StdioProcess {
            child,
            leader,
            stderr: Some(stderr_task),
            sandbox,
        },
        stdout,
        stdin,
    })
}

/// The server starts a session of its own (`setsid`): it leads a new process group (its id is
/// the server's pid, as `process_group(0)` would make it) and has no controlling terminal, so
/// `/dev/tty` cannot be opened and signals from the terminal (Ctrl-C meant for Toolgate) do not
/// reach it.
#[cfg(unix)]
#[allow(unsafe_code)]
fn new_session(command: &mut tokio::process::Command) {
    // SAFETY: the closure runs in the child between fork and exec and only calls setsid, which
    // is async-signal-safe and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
}

impl StdioProcess {
    /// Stops the server after its stdin has been closed: waits `grace` for it to exit, then
    /// sends SIGTERM to its group, waits again, then SIGKILL. Whatever else is left in its group
    /// (a launcher's child) is stopped too. Returns how the server exited.
    pub async fn stop(mut self, grace: Duration) -> Option<ExitStatus> {
        let pgid = self.leader.pid;
        let mut status = tokio::time::timeout(grace, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        // Windows has no SIGTERM to send: straight to the end.
        if status.is_none() && cfg!(unix) {
            signal_group(pgid, Signal::Term);
            status = tokio::time::timeout(grace, self.child.wait())
                .await
                .ok()
                .and_then(Result::ok);
        }
        if status.is_none() {
            signal_group(pgid, Signal::Kill);
            // The leader itself, should its group or job be gone (a Windows server that could
            // not be given a job): a stop never waits forever.
            let _ = self.child.start_kill();
            status = self.child.wait().await.ok();
        }
        // The leader is reaped, so its number alone no longer proves the group is ours: what is
        // left is signalled one checked member at a time.
        if signal_leftovers(self.leader, Signal::Term) {
            tokio::time::sleep(Duration::from_millis(200)).await;
            signal_leftovers(self.leader, Signal::Kill);
        }
        // The group is gone, so stderr is at its end; a moment for the last lines to land.
        if let Some(task) = self.stderr.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
        }
        // Its temporary folder and loopback guard, now that nothing of it runs.
        drop(self.sandbox.take());
        status
    }
}

/// Words for how a process ended.
pub(crate) fn describe_exit(status: Option<ExitStatus>) -> String {
    #[cfg(unix)]
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) if s.code().is_some() => format!("it exited with code {}", s.code().unwrap_or(0)),
        #[cfg(unix)]
        Some(s) => match s.signal() {
            Some(9) => "it was killed (SIGKILL)".to_owned(),
            Some(15) => "it was terminated (SIGTERM)".to_owned(),
            Some(n) => format!("it was killed by signal {n}"),
            None => "it exited".to_owned(),
        },
        #[cfg(not(unix))]
        Some(_) => "it exited".to_owned(),
        None => "it exited".to_owned(),
    }
}
