//! The Linux sandbox on real processes: `python3` confined by `prepare` + `arm`, trying to read,
//! write and connect where it may and may not. Each refusal must be the kernel's permission
//! error, seen by the program as `PermissionError`.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use toolgate_sandbox::linux::{prepare, SETUP_FAILED};
use toolgate_sandbox::{Confinement, Network, Reserved, Support};

fn python() -> PathBuf {
    let path = PathBuf::from("/usr/bin/python3");
    assert!(path.is_file(), "these tests need /usr/bin/python3");
    path
}

fn system() -> Vec<PathBuf> {
    [
        "/usr",
        "/bin",
        "/lib",
        "/lib64",
        "/etc",
        "/proc",
        "/dev/null",
        "/dev/urandom",
    ]
    .iter()
    .map(PathBuf::from)
    .collect()
}

/// Runs `code` in a confined python3 with `args`; returns (exit code, stdout, stderr).
fn run(confinement: &Confinement, code: &str, args: &[&str]) -> (i32, String, String) {
    run_reserving(confinement, &Reserved::new(), code, args)
}

/// [`run`], with Toolgate's own ports `reserved`.
fn run_reserving(
    confinement: &Confinement,
    reserved: &Reserved,
    code: &str,
    args: &[&str],
) -> (i32, String, String) {
    let support = Support::probe();
    let prepared = prepare(confinement, &support).expect("prepared");
    let mut command = Command::new(python());
    command
        .arg("-c")
        .arg(code)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let armed = prepared.arm(&mut command).expect("armed");
    let mut child = command.spawn().expect("spawned");
    let guard = armed.started("test", reserved).expect("started");
    let mut out = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read");
    let status = child.wait().expect("waited");
    drop(guard);
    (status.code().unwrap_or(-1), out, err)
}

const READ: &str = "import sys\nprint(open(sys.argv[1]).read())";

fn confined(root: &Path, network: Network) -> Confinement {
    Confinement {
        read: system(),
        write: vec![root.to_path_buf()],
        network,
    }
}

fn supported() -> bool {
    let support = Support::probe();
    if !(support.files() && support.seccomp && support.notify) {
        // CI and the development machines have all three (see platform-notes); a kernel
        // without them is what the warnings are for, checked in the unit tests.
        eprintln!("skipping: this kernel lacks Landlock or seccomp: {support:?}");
        return false;
    }
    true
}

#[test]
fn files_outside_the_allow_list_are_refused_by_the_kernel() {
    if !supported() {
        return;
    }
    let base = tempfile::tempdir().expect("tmp");
    let root = base.path().join("root");
    let home = base.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    std::fs::create_dir_all(&root).expect("mkdir");
    let canary = home.join(".ssh/id_ed25519");
    std::fs::write(&canary, "CANARY-PRIVATE-KEY").expect("canary");
    std::fs::write(root.join("notes.md"), "inside").expect("note");
    std::os::unix::fs::symlink(&canary, root.join("link")).expect("symlink");
    let c = confined(&root, Network::None);

    let (code, out, _) = run(&c, READ, &[root.join("notes.md").to_str().expect("utf-8")]);
    assert_eq!((code, out.trim()), (0, "inside"));

    let escapes = [
        canary.clone(),
        root.join("../home/.ssh/id_ed25519"),
        root.join("link"),
    ];
    for path in escapes {
        let (code, out, err) = run(&c, READ, &[path.to_str().expect("utf-8")]);
        assert_ne!(code, 0, "{}", path.display());
        assert!(!out.contains("CANARY"), "{out}");
        assert!(
            err.contains("PermissionError") && err.contains("Permission denied"),
            "{}: {err}",
            path.display()
        );
    }

    // Writing: inside the root yes; in a folder granted for reading only, no.
    let write = "import sys\nopen(sys.argv[1], 'w').write('x')";
    let (code, _, err) = run(&c, write, &[root.join("new.md").to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let mut read_only = c.clone();
    read_only.read.push(home.clone());
    let (code, out, _) = run(&read_only, READ, &[canary.to_str().expect("utf-8")]);
    assert_eq!(
        (code, out.trim()),
        (0, "CANARY-PRIVATE-KEY"),
        "granted to read"
    );
    let (code, _, err) = run(&read_only, write, &[canary.to_str().expect("utf-8")]);
    assert!(code != 0 && err.contains("PermissionError"), "{err}");
}

const CONNECT: &str = "import socket, sys\n\
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)\n\
s.sendall(b'hello')\nprint('connected')";

fn listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port().to_string();
    (listener, port)
}

#[test]
fn network_none_refuses_every_socket_and_loopback_reaches_only_this_computer() {
    if !supported() {
        return;
    }
    let base = tempfile::tempdir().expect("tmp");
    let (server, port) = listener();

    let none = confined(base.path(), Network::None);
    let (code, _, err) = run(&none, CONNECT, &["127.0.0.1", &port]);
    assert!(code != 0 && err.contains("PermissionError"), "{err}");

    let loopback = confined(base.path(), Network::Loopback);
    let (code, out, err) = run(&loopback, CONNECT, &["127.0.0.1", &port]);
    assert_eq!((code, out.trim()), (0, "connected"), "{err}");
    let (mut accepted, _) = server.accept().expect("the confined server's connection");
    let mut hello = [0u8; 5];
    accepted.read_exact(&mut hello).expect("read");
    assert_eq!(&hello, b"hello");
    accepted.write_all(b"bye").ok();

    // TEST-NET-1: never routed, so only the sandbox can answer this fast with EACCES.
    let (code, _, err) = run(&loopback, CONNECT, &["192.0.2.1", "80"]);
    assert!(code != 0 && err.contains("PermissionError"), "{err}");
    for (what, code_text) in [
        (
            "udp",
            "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        ),
        (
            "unix",
            "import socket\nsocket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
        ),
        (
            "bind every interface",
            "import socket\ns = socket.socket()\ns.bind(('0.0.0.0', 0))",
        ),
    ] {
        let (code, _, err) = run(&loopback, code_text, &[]);
        assert!(
            code != 0 && err.contains("PermissionError"),
            "{what}: {err}"
        );
    }
    let listen = "import socket\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen()\nprint('listening')";
    let (code, out, err) = run(&loopback, listen, &[]);
    assert_eq!((code, out.trim()), (0, "listening"), "{err}");

    let any = confined(base.path(), Network::Any);
    let (code, out, err) = run(&any, CONNECT, &["127.0.0.1", &port]);
    assert_eq!((code, out.trim()), (0, "connected"), "{err}");
    let pair = "import socket\na, b = socket.socketpair()\na.send(b'x')\nprint(b.recv(1))";
    let (code, out, err) = run(&any, pair, &[]);
    assert_eq!(
        (code, out.trim()),
        (0, "b'x'"),
        "socket pairs still work: {err}"
    );
    let (code, _, err) = run(
        &any,
        "import socket\nsocket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
        &[],
    );
    assert!(code != 0 && err.contains("PermissionError"), "{err}");
}

const BIND: &str = "import socket, sys\n\
s = socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)\n\
s.bind((sys.argv[1], int(sys.argv[2])))\ns.listen()\nprint('bound')";

/// Another server's proxy and the HTTP door are Toolgate's: a loopback process reaches the
/// rest of loopback, not them, on any loopback address, and cannot take the door's port
/// before the door opens. A "hosts" process still reaches its own proxy.
#[test]
fn toolgates_own_ports_are_neither_reached_nor_bound_by_a_confined_process() {
    if !supported() {
        return;
    }
    let base = tempfile::tempdir().expect("tmp");
    let (_proxy, proxy_port) = listener();
    // The door's port while the door is closed: free, and held.
    let door_port = {
        let (free, port) = listener();
        drop(free);
        port
    };
    let reserved = Reserved::new();
    let proxy_hold = reserved.hold(proxy_port.parse().expect("port"));
    let door_hold = reserved.hold(door_port.parse().expect("port"));
    let loopback = confined(base.path(), Network::Loopback);
    for host in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
        for port in [&proxy_port, &door_port] {
            let (code, _, err) = run_reserving(&loopback, &reserved, CONNECT, &[host, port]);
            assert!(
                code != 0 && err.contains("PermissionError"),
                "connect {host}:{port}: {err}"
            );
        }
        let (code, _, err) = run_reserving(&loopback, &reserved, BIND, &[host, &door_port]);
        assert!(
            code != 0 && err.contains("PermissionError"),
            "bind {host}:{door_port}: {err}"
        );
    }
    // A "hosts" server: its own proxy (reserved from everyone else) yes, the door's port no.
    let hosts = confined(
        base.path(),
        Network::Proxy(proxy_port.parse().expect("port")),
    );
    let (code, out, err) = run_reserving(&hosts, &reserved, CONNECT, &["127.0.0.1", &proxy_port]);
    assert_eq!((code, out.trim()), (0, "connected"), "{err}");
    let (code, _, err) = run_reserving(&hosts, &reserved, BIND, &["127.0.0.1", &door_port]);
    assert!(code != 0 && err.contains("PermissionError"), "{err}");

    // Released, they are ordinary ports again: the refusals above were the reservation's.
    drop((proxy_hold, door_hold));
    let (code, out, err) =
        run_reserving(&loopback, &reserved, CONNECT, &["127.0.0.1", &proxy_port]);
    assert_eq!((code, out.trim()), (0, "connected"), "{err}");
    let (code, out, err) = run_reserving(&loopback, &reserved, BIND, &["127.0.0.1", &door_port]);
    assert_eq!((code, out.trim()), (0, "bound"), "{err}");
}

#[test]
fn a_confined_process_cannot_signal_outside_its_sandbox_nor_read_the_kernel_keyring() {
    if !supported() {
        return;
    }
    let base = tempfile::tempdir().expect("tmp");
    let c = confined(base.path(), Network::Any);
    let me = std::process::id().to_string();
    let (code, _, err) = run(&c, "import os, sys\nos.kill(int(sys.argv[1]), 0)", &[&me]);
    if Support::probe().landlock_abi >= toolgate_sandbox::LANDLOCK_SCOPE_ABI {
        assert!(code != 0 && err.contains("PermissionError"), "{err}");
    }
    let keyctl = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n\
r = libc.syscall(250, 0, -3)\nprint(r, ctypes.get_errno())"; // keyctl(KEYCTL_GET_KEYRING_ID, session)
    let (code, out, err) = run(&c, keyctl, &[]);
    if cfg!(target_arch = "x86_64") {
        assert_eq!((code, out.trim()), (0, "-1 13"), "EACCES: {err}");
    }
    assert_ne!(SETUP_FAILED, 0);
}

#[test]
fn another_processs_environment_and_memory_are_closed_to_a_confined_process() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    if !supported() {
        return;
    }
    // As a desktop user runs it: the target (standing for Toolgate, or another server with
    // its secrets in its environment) and the confined reader share one unprivileged uid.
    // Run as root (as CI is), both drop to `nobody`: root's capabilities open every process's
    // /proc entries whatever Landlock says, which the docs tell users not to rely on.
    let as_root = std::fs::metadata("/proc/self").map(|m| m.uid()).ok() == Some(0);
    let drop_to_nobody = |command: &mut Command| {
        if as_root {
            command.uid(65534).gid(65534);
        }
    };
    let mut target = Command::new("sleep");
    target
        .arg("30")
        .env("TOOLGATE_TEST_SECRET", "sk-in-the-environment");
    drop_to_nobody(&mut target);
    let mut target = target.spawn().expect("sleep");
    let base = tempfile::tempdir().expect("tmp");
    let c = confined(base.path(), Network::None);
    let code = "import sys\nfor f in ('environ', 'maps', 'mem'):\n    try:\n        open('/proc/%s/%s' % (sys.argv[1], f), 'rb').read(1)\n        print(f, 'read')\n    except PermissionError:\n        print(f, 'refused')";
    let reader = || {
        let mut command = Command::new(python());
        command
            .arg("-c")
            .arg(code)
            .arg(target.id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        drop_to_nobody(&mut command);
        command
    };
    // Unconfined, the same program reads it: the refusals below are the sandbox's.
    let open = reader().output().expect("ran");
    assert!(
        String::from_utf8_lossy(&open.stdout).starts_with("environ read"),
        "{}",
        String::from_utf8_lossy(&open.stdout)
    );
    let prepared = prepare(&c, &Support::probe()).expect("prepared");
    let mut command = reader();
    let armed = prepared.arm(&mut command).expect("armed");
    let child = command.spawn().expect("spawned");
    let _guard = armed.started("test", &Reserved::new()).expect("started");
    let out = child.wait_with_output().expect("ran");
    let _ = target.kill();
    let _ = target.wait();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "environ refused\nmaps refused\nmem refused"
    );
}
