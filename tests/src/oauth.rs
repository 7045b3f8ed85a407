//! The OAuth test servers of the remote-server tests: a real authorization server (oidc-provider
//! from npm, `tests/oauth/auth_server.mjs`) in front of server-everything over Streamable HTTP,
//! behind the test-only resource server `tests/oauth/resource_proxy.mjs` (which checks the
//! tokens); and the stand-in browser `tests/oauth/xdg-open`, which a test puts first on PATH.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{example_servers_dir, free_port, npm_server_entry, repo_root, temp_dir, TestDir};

/// The three processes, killed when dropped; what the authorization server and the resource
/// server print is kept.
pub struct OAuthServers {
    children: Vec<Child>,
    as_lines: Arc<Mutex<Vec<String>>>,
    proxy_lines: Arc<Mutex<Vec<String>>>,
    /// The protected MCP server's URL.
    pub url: String,
    /// The authorization server's issuer.
    pub issuer: String,
}

impl Drop for OAuthServers {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn spawn_node(args: &[&str], env: &[(&str, &Path)], lines: Arc<Mutex<Vec<String>>>) -> Child {
    let mut child = Command::new("node")
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node runs");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line == "ready" {
                let _ = tx.send(());
            }
            lines.lock().unwrap_or_else(|p| p.into_inner()).push(line);
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the test server said ready");
    child
}

impl OAuthServers {
    /// Starts the three; access tokens live `access_token_secs`; calls to `get-sum` need the
    /// `mcp:admin` scope (for step-up).
    pub fn start(access_token_secs: u32) -> Self {
        Self::start_with_fault(access_token_secs, "")
    }

    /// The same, with the resource server misconfigured (`fault` as `resource_proxy.mjs` reads
    /// it: `metadata-500`, `bad-metadata`, `wrong-issuer`).
    pub fn start_with_fault(access_token_secs: u32, fault: &str) -> Self {
        Self::start_with(access_token_secs, fault, "", None)
    }

    /// The same, with the authorization server in `mode` (as `auth_server.mjs` reads it: `cimd`,
    /// `post`), trusting the certificate `ca` when it fetches over https.
    pub fn start_with(access_token_secs: u32, fault: &str, mode: &str, ca: Option<&Path>) -> Self {
        let dir = example_servers_dir();
        let dir = dir.to_str().expect("a UTF-8 path");
        let (everything_port, as_port, proxy_port) = (free_port(), free_port(), free_port());
        let mut upstream = Command::new("node");
        upstream
            .arg(npm_server_entry("@modelcontextprotocol/server-everything"))
            .arg("streamableHttp")
            .env("PORT", everything_port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let upstream = upstream.spawn().expect("server-everything");
        let url = format!("http://127.0.0.1:{proxy_port}/mcp");
        let issuer = format!("http://127.0.0.1:{as_port}");
        let oauth = repo_root().join("tests/oauth");
        let as_lines = Arc::new(Mutex::new(Vec::new()));
        let proxy_lines = Arc::new(Mutex::new(Vec::new()));
        let auth = spawn_node(
            &[
                oauth
                    .join("auth_server.mjs")
                    .to_str()
                    .expect("a UTF-8 path"),
                dir,
                &as_port.to_string(),
                &url,
                &access_token_secs.to_string(),
                mode,
            ],
            &ca.map(|ca| ("NODE_EXTRA_CA_CERTS", ca))
                .into_iter()
                .collect::<Vec<_>>(),
            as_lines.clone(),
        );
        let proxy = spawn_node(
            &[
                oauth
                    .join("resource_proxy.mjs")
                    .to_str()
                    .expect("a UTF-8 path"),
                dir,
                &proxy_port.to_string(),
                &format!("http://127.0.0.1:{everything_port}/mcp"),
                &issuer,
                "get-sum",
                fault,
            ],
            &[],
            proxy_lines.clone(),
        );
        // server-everything takes a moment to listen.
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", everything_port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        OAuthServers {
            children: vec![upstream, auth, proxy],
            as_lines,
            proxy_lines,
            url,
            issuer,
        }
    }

    /// How many clients registered themselves (RFC 7591).
    pub fn registrations(&self) -> usize {
        self.as_lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|l| l.starts_with("registered "))
            .count()
    }

    /// The addresses the authorization server fetched (client metadata documents).
    pub fn fetched(&self) -> Vec<String> {
        self.as_lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(|l| l.strip_prefix("fetched ").map(str::to_owned))
            .collect()
    }

    /// What the resource server said of the DPoP proofs it saw (in `dpop` mode): `dpop <jti>`
    /// per proof accepted, `dpop refused <why>` per one refused.
    pub fn proofs(&self) -> Vec<String> {
        self.proxy_lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|l| l.starts_with("dpop "))
            .cloned()
            .collect()
    }

    /// Whether the resource server says `line` within 5 s. It writes its lines to a pipe that a
    /// thread reads, so a line can land a moment after the response it was about.
    pub fn says(&self, line: &str) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            if self.proofs().iter().any(|p| p == line) {
                return true;
            }
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// The tool calls the resource server passed on, as `call <tool> <subject>`.
    pub fn calls(&self) -> Vec<String> {
        self.proxy_lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|l| l.starts_with("call "))
            .cloned()
            .collect()
    }
}

/// PATH with the stand-in browser first.
pub fn path_with_browser() -> String {
    format!(
        "{}:{}",
        repo_root().join("tests/oauth").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A publisher's web server for a Client ID Metadata Document (`tests/oauth/document_host.mjs`):
/// https on 127.0.0.1 with a self-signed certificate made here (`openssl`), which the
/// authorization server is told to trust. Stopped when dropped.
pub struct DocumentHost {
    child: Option<Child>,
    dir: TestDir,
    port: u16,
    /// The document's address: the client id.
    pub url: String,
    /// The certificate, for `NODE_EXTRA_CA_CERTS`.
    pub cert: PathBuf,
}

const DOCUMENT_PATH: &str = "/toolgate/client-metadata.json";

impl DocumentHost {
    /// Makes the certificate and picks the address; nothing is served until [`Self::serve`].
    pub fn new() -> Self {
        let dir = temp_dir("cimd-host");
        let cert = dir.join("cert.pem");
        let status = Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
            ])
            .args(["-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1"])
            .arg("-keyout")
            .arg(dir.join("key.pem"))
            .arg("-out")
            .arg(&cert)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl runs");
        assert!(status.success(), "openssl made the certificate");
        let port = free_port();
        DocumentHost {
            child: None,
            url: format!("https://127.0.0.1:{port}{DOCUMENT_PATH}"),
            cert,
            dir,
            port,
        }
    }

    /// Serves `document` at [`Self::url`].
    pub fn serve(&mut self, document: &[u8]) {
        let file = self.dir.join("client-metadata.json");
        std::fs::write(&file, document).expect("the document is written");
        let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_owned();
        self.child = Some(spawn_node(
            &[
                &path(&repo_root().join("tests/oauth/document_host.mjs")),
                &self.port.to_string(),
                &path(&self.cert),
                &path(&self.dir.join("key.pem")),
                DOCUMENT_PATH,
                &path(&file),
            ],
            &[],
            Arc::new(Mutex::new(Vec::new())),
        ));
    }
}

impl Default for DocumentHost {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for DocumentHost {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
