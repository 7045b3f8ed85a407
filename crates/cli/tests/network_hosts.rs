//! Network "hosts" (issue 30, part 4), through the real `toolgate` binary and the real
//! `mcp-server-fetch` (PyPI): a local HTTPS page answers as `allowed.test` and `other.test`
//! (both bound to 127.0.0.1 in an `/etc/hosts` of the test's own mount namespace, read by the
//! system's resolver as any name would be).
//!
//! - the server, allowed `allowed.test` with private addresses allowed, fetches the page under
//!   that name through Toolgate's proxy, and cannot under `other.test`;
//! - the same server cannot open a connection itself, to the page's address or anywhere else
//!   (the fault server's `connect_direct`, which ignores the proxy);
//! - without the private-address allowance, `allowed.test` resolving to 127.0.0.1 is refused.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::json;
use toolgate_settings::{NetworkAccess, SandboxSettings, ServerConfig, Settings};
use toolgate_tests::{fault_server, free_port, python_server_bin, temp_dir, with_hosts_file};

const PAGE: &str = "canary page 7f3a9c";

/// A local HTTPS server with a certificate for both names, answering every GET with PAGE.
struct Page {
    child: Child,
    port: u16,
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn certificate(dir: &Path) {
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .args([
            "-subj",
            "/CN=allowed.test",
            "-addext",
            "subjectAltName=DNS:allowed.test,DNS:other.test",
        ])
        .stderr(Stdio::null())
        .status()
        .expect("openssl runs");
    assert!(made.success(), "the test certificate was made");
}

fn page(dir: &Path) -> Page {
    let port = free_port();
    let script = format!(
        r#"
import http.server, ssl
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<html><body><p>{PAGE}</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
server = http.server.HTTPServer(("127.0.0.1", {port}), H)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain("{cert}", "{key}")
server.socket = context.wrap_socket(server.socket, server_side=True)
print("ready", flush=True)
server.serve_forever()
"#,
        cert = dir.join("cert.pem").display(),
        key = dir.join("key.pem").display(),
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut line,
    )
    .expect("the page says it is ready");
    assert_eq!(line.trim(), "ready");
    Page { child, port }
}

fn hosts_mode(server: &mut ServerConfig, hosts: &[&str], private: bool) {
    server.sandbox = Some(SandboxSettings {
        network: NetworkAccess::Hosts,
        hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        private_addresses: private,
        ..Default::default()
    });
}

fn settings(dir: &Path, private: bool) -> Settings {
    let mut fetch = ServerConfig::stdio(
        "fetch",
        python_server_bin("mcp-server-fetch").to_string_lossy(),
        ["--ignore-robots-txt", "--allow-private-ips"],
    );
    // The page's certificate, trusted as a user's own authority would be.
    if let toolgate_settings::Transport::Stdio { env, .. } = &mut fetch.transport {
        env.insert(
            "SSL_CERT_FILE".into(),
            dir.join("cert.pem").to_string_lossy().into_owned(),
        );
    }
    hosts_mode(&mut fetch, &["allowed.test"], private);
    let mut settings = Settings::first_run(fetch);
    let mut naive = fault_server("web", "naive");
    hosts_mode(&mut naive, &["allowed.test"], private);
    settings.servers.push(naive);
    settings
}

fn call(dir: &Path, hosts: &Path, tool: &str, arguments: serde_json::Value) -> String {
    let out: Output = with_hosts_file(hosts, Path::new(env!("CARGO_BIN_EXE_toolgate")))
        .arg("--data-dir")
        .arg(dir)
        .args(["call", tool, &arguments.to_string(), "--json"])
        .stdin(Stdio::null())
        .output()
        .expect("toolgate runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The test's folder (its certificate authority, hosts file and page), Toolgate's data folder
/// inside it (apart: Toolgate's own folder is never opened to a sandboxed server), the hosts
/// file and the page.
fn prepare(tag: &str, private: bool) -> (toolgate_tests::TestDir, PathBuf, PathBuf, Page) {
    let dir = temp_dir(tag);
    certificate(&dir);
    let hosts = dir.join("hosts");
    std::fs::write(
        &hosts,
        "127.0.0.1 localhost\n::1 localhost\n127.0.0.1 allowed.test other.test\n",
    )
    .expect("hosts file");
    let page = page(&dir);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    toolgate_settings::file::save(&data.join("settings.json"), &settings(&dir, private))
        .expect("settings saved");
    (dir, data, hosts, page)
}

#[test]
fn a_server_reaches_only_its_listed_names_and_only_through_the_proxy() {
    let (_dir, dir, hosts, page) = prepare("hosts-allowed", true);
    let port = page.port;

    let allowed = call(
        &dir,
        &hosts,
        "fetch",
        json!({"url": format!("https://allowed.test:{port}/"), "raw": true}),
    );
    assert!(
        allowed.contains(PAGE),
        "the listed name is reached: {allowed}"
    );

    let other = call(
        &dir,
        &hosts,
        "fetch",
        json!({"url": format!("https://other.test:{port}/"), "raw": true}),
    );
    assert!(
        !other.contains(PAGE),
        "another name of the same server: {other}"
    );
    assert!(
        other.contains("ProxyError('403 Forbidden')"),
        "refused by the proxy: {other}"
    );

    for (host, target) in [
        ("127.0.0.1", port),
        ("allowed.test", port),
        ("93.184.216.34", 443),
    ] {
        let direct = call(
            &dir,
            &hosts,
            "connect_direct",
            json!({"host": host, "port": target}),
        );
        assert!(
            direct.contains("PermissionError") && !direct.contains("connected to"),
            "{host}:{target} directly: {direct}"
        );
    }
}

#[test]
fn a_listed_name_resolving_to_this_computer_is_refused_without_the_private_allowance() {
    let (_dir, dir, hosts, page) = prepare("hosts-private", false);
    let out = call(
        &dir,
        &hosts,
        "fetch",
        json!({"url": format!("https://allowed.test:{}/", page.port), "raw": true}),
    );
    assert!(!out.contains(PAGE), "refused: {out}");
    assert!(
        out.contains("ProxyError('403 Forbidden')"),
        "refused by the proxy: {out}"
    );
}
