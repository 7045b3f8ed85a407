//! Remote servers that ask for a sign-in, through the `toolgate` binary: a real authorization
//! server (oidc-provider from npm, `tests/oauth/auth_server.mjs`) in front of server-everything
//! over Streamable HTTP (behind the test-only resource server `tests/oauth/resource_proxy.mjs`,
//! which checks the tokens), and a stand-in browser (`tests/oauth/xdg-open` on PATH) that follows
//! the authorization URL, the login and the consent over HTTP as a person would.
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use toolgate_settings::{ServerConfig, Settings};
use toolgate_tests::oauth::{path_with_browser, DocumentHost, OAuthServers as Remote};
use toolgate_tests::{at_a_terminal, repo_root, temp_dir};

fn data_dir(tag: &str, id: &str, url: &str) -> toolgate_tests::TestDir {
    let dir = temp_dir(&format!("remote-{tag}"));
    let mut settings = Settings::first_run(ServerConfig::http(id, url));
    settings.servers[0].startup_timeout_secs = 30;
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
    dir
}

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env("PATH", path_with_browser())
        .stdin(Stdio::null())
        .output()
        .expect("toolgate runs");
    eprintln!(
        "toolgate {args:?} → {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The keychain item of a server's sign-in, read by another program (`secret-tool`).
fn keychain_item(id: &str, issuer: &str) -> Option<serde_json::Value> {
    let out = Command::new("secret-tool")
        .args([
            "lookup",
            "service",
            "toolgate",
            "username",
            &format!("oauth:{id}:{issuer}"),
        ])
        .output()
        .expect("secret-tool runs");
    serde_json::from_slice(&out.stdout).ok()
}

fn token(item: &serde_json::Value, which: &str) -> String {
    item["credentials"]["token_response"][which]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Every file under `dir`, for the scan for tokens.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// `toolgate secrets set NAME`, typed at its prompt.
fn set_secret(dir: &Path, name: &str, value: &str) {
    let mut set = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(dir)
        .args(["secrets", "set", name])
        .stdin(Stdio::piped())
        .spawn()
        .expect("toolgate runs");
    {
        use std::io::Write;
        let mut stdin = set.stdin.take().expect("stdin");
        stdin
            .write_all(format!("{value}\n").as_bytes())
            .expect("typed");
    }
    assert!(set.wait().expect("secrets set").success());
}

#[test]
fn sign_in_from_the_terminal_refresh_without_the_user_and_sign_in_again_after_a_revocation() {
    // Access tokens live 2 s: every step below outlives at least one.
    let remote = Remote::start(2);
    let id = format!("linear-{}", std::process::id());
    let dir = data_dir("flow", &id, &remote.url);

    let out = toolgate(&dir, &["servers", "restart", &id]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("sign in required"), "{}", text(&out));

    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("/auth?") && said.contains("code_challenge_method=S256"),
        "{said}"
    );
    assert!(
        said.contains("resource=") && said.contains("state="),
        "{said}"
    );
    assert!(
        said.contains(&format!("Signed in to {id} with {}", remote.issuer)),
        "{said}"
    );
    assert_eq!(remote.registrations(), 1, "one dynamic registration");

    let item = keychain_item(&id, &remote.issuer).expect("the sign-in is in the keychain");
    let (access, refresh) = (token(&item, "access_token"), token(&item, "refresh_token"));
    assert!(access.len() > 20 && refresh.len() > 10, "{item}");
    assert_eq!(item["client"]["registered"], true);

    let out = toolgate(&dir, &["call", "echo", r#"{"message": "signed in"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("signed in"));

    // The access token expires; the next command renews it without asking.
    std::thread::sleep(Duration::from_secs(3));
    let out = toolgate(&dir, &["call", "echo", r#"{"message": "renewed"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let renewed = keychain_item(&id, &remote.issuer).expect("still signed in");
    assert_ne!(
        token(&renewed, "access_token"),
        access,
        "a new access token"
    );
    assert_eq!(remote.calls().len(), 2, "{:?}", remote.calls());
    assert_eq!(
        remote.registrations(),
        1,
        "no second registration after a restart"
    );

    // No token anywhere in the data folder (settings, logs, history).
    let renewed_access = token(&renewed, "access_token");
    let renewed_refresh = token(&renewed, "refresh_token");
    for file in files(&dir) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        let content = String::from_utf8_lossy(&bytes);
        for secret in [&access, &refresh, &renewed_access, &renewed_refresh] {
            assert!(
                !content.contains(secret.as_str()),
                "a token in {}",
                file.display()
            );
        }
    }

    // Step-up: get-sum needs mcp:admin, which was not granted. Without a terminal and with no
    // browser to open, nobody can sign in: the call is refused at once saying what to do. (With
    // a browser it signs in there, as the conformance suite's step-up scenario shows.)
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(&*dir)
        .args(["call", "get-sum", r#"{"a": 1, "b": 2}"#])
        .env("PATH", dir.join("no-browser"))
        .stdin(Stdio::null())
        .output()
        .expect("toolgate runs");
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).contains("needs more access"), "{}", text(&out));
    assert!(text(&out).contains("mcp:admin"), "{}", text(&out));
    // At a terminal the user is asked first; "y" signs in again for the extra scope (the
    // stand-in browser consents), and the same call then runs.
    let command = format!(
        "{} --data-dir {} call get-sum '{{\"a\": 1, \"b\": 2}}'",
        env!("CARGO_BIN_EXE_toolgate"),
        dir.display()
    );
    let out = at_a_terminal(&command, b"y\n", |c| {
        c.env("PATH", path_with_browser());
    });
    let screen = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{screen}");
    assert!(
        screen
            .contains("needs more access (mcp:tools mcp:admin). Sign in again to grant it? [y/N]"),
        "{screen}"
    );
    assert!(screen.contains(&format!("Signed in to {id}")), "{screen}");
    assert!(screen.contains("mcp:admin"), "{screen}");
    assert!(
        screen.contains('3'),
        "the call ran after the step-up: {screen}"
    );
    assert_eq!(
        remote.registrations(),
        1,
        "the step-up reused the registration"
    );

    // The refresh token is revoked at the authorization server (as by the user on its site):
    // once the access token expires, the server says "sign in again".
    let item = keychain_item(&id, &remote.issuer).expect("signed in");
    let client_id = item["client"]["clientId"].as_str().unwrap().to_owned();
    let status = Command::new("python3")
        .args([
            "-c",
            "import sys, urllib.parse, urllib.request\n\
             body = urllib.parse.urlencode({'token': sys.argv[2], 'client_id': sys.argv[3]}).encode()\n\
             print(urllib.request.urlopen(sys.argv[1], data=body).status)",
        ])
        .arg(format!("{}/token/revocation", remote.issuer))
        .arg(token(&item, "refresh_token"))
        .arg(&client_id)
        .output()
        .expect("python3");
    assert_eq!(String::from_utf8_lossy(&status.stdout).trim(), "200");
    std::thread::sleep(Duration::from_secs(3));
    let out = toolgate(&dir, &["servers", "restart", &id]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("sign in again"), "{}", text(&out));
    let after = keychain_item(&id, &remote.issuer).expect("the registration stays");
    assert!(
        after["credentials"].is_null(),
        "the refused tokens are gone: {after}"
    );

    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        remote.registrations(),
        1,
        "signing in again reused the registration"
    );

    let out = toolgate(&dir, &["servers", "logout", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(keychain_item(&id, &remote.issuer), None);
    // No sign-in left its in-flight state (PKCE verifier) behind. (The other test of this file
    // may have one in flight for a moment: it is given the time to end.)
    let listed = || {
        let items = Command::new("secret-tool")
            .args(["search", "--all", "service", "toolgate"])
            .output()
            .expect("secret-tool runs");
        format!(
            "{}{}",
            String::from_utf8_lossy(&items.stdout),
            String::from_utf8_lossy(&items.stderr)
        )
    };
    let mut left = listed();
    for _ in 0..100 {
        if !left.contains("oauth-state:") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        left = listed();
    }
    assert!(!left.contains("oauth-state:"), "{left}");
    let listed = left;
    assert!(!listed.contains(&format!("oauth:{id}")), "{listed}");
    let out = toolgate(&dir, &["servers", "restart", &id]);
    assert!(text(&out).contains("sign in required"), "{}", text(&out));
}

#[test]
fn a_sign_in_that_fails_stores_nothing_and_says_why() {
    let remote = Remote::start(3600);
    let id = format!("fails-{}", std::process::id());
    // A wrong state: the answer that comes back is not this sign-in's. The stand-in browser is
    // replaced by one that changes the state on the way back.
    let dir = data_dir("fails", &id, &remote.url);
    let tampering = temp_dir("remote-tamper");
    let script = tampering.join("xdg-open");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec {} \"$(echo \"$1\" | sed 's/state=[^&]*/state=forged/')\"\n",
            repo_root().join("tests/oauth/xdg-open").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(&*dir)
        .args(["servers", "login", &id, "--wait", "30"])
        .env(
            "PATH",
            format!("{}:{}", tampering.display(), path_with_browser()),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("state does not match"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("nothing was saved"), "{}", text(&out));
    assert_eq!(keychain_item(&id, &remote.issuer), None);

    // An authorization server that is down.
    drop(remote);
    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("could not reach"), "{}", text(&out));
    assert!(text(&out).contains(&id), "{}", text(&out));
}

#[test]
fn a_token_is_never_sent_to_another_address_that_took_the_same_server_id() {
    let remote = Remote::start(3600);
    let id = format!("moved-{}", std::process::id());
    let dir = data_dir("moved", &id, &remote.url);
    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let item = keychain_item(&id, &remote.issuer).expect("signed in");
    let access = token(&item, "access_token");

    // Another data folder (or an import, or the same server added again) names the same id at
    // another address, whose metadata claims the same authorization server.
    let seen = temp_dir("remote-lookalike");
    let received = seen.join("received");
    let mut lookalike = Command::new("python3")
        .arg(repo_root().join("tests/oauth/lookalike_server.py"))
        .arg(&remote.issuer)
        .arg(&received)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(lookalike.stdout.take().expect("stdout")),
        &mut ready,
    )
    .expect("the lookalike says ready");
    let port = ready.trim().strip_prefix("ready ").expect("ready PORT");
    let elsewhere = format!("http://127.0.0.1:{port}/mcp");
    let other = data_dir("moved-other", &id, &elsewhere);

    let out = toolgate(
        &other,
        &["call", "echo", r#"{"message": "to the lookalike"}"#],
    );
    let _ = lookalike.kill();
    let _ = lookalike.wait();
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("was made for") && said.contains("Sign in again"),
        "{said}"
    );
    let got = std::fs::read_to_string(&received).unwrap_or_default();
    assert!(
        !got.contains(&access) && !got.to_ascii_lowercase().contains("bearer"),
        "the lookalike was sent: {got}"
    );
    // The sign-in is untouched, and still serves its own address.
    let kept = keychain_item(&id, &remote.issuer).expect("still signed in");
    assert_eq!(token(&kept, "access_token"), access);
    assert_eq!(kept["resource"].as_str(), Some(remote.url.as_str()));
    let out = toolgate(&dir, &["call", "echo", r#"{"message": "still here"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("still here"));
}

#[test]
fn a_client_id_and_secret_entered_by_the_user_sign_in_with_client_secret_basic() {
    // The authorization server knows `toolgate-by-hand` (client_secret_basic, redirect port
    // 47123), registered by hand as for a provider without dynamic registration.
    let remote = Remote::start(2);
    let id = format!("byhand-{}", std::process::id());
    let dir = temp_dir("remote-byhand");
    let mut server = ServerConfig::http(&id, &remote.url);
    server.oauth = Some(toolgate_settings::OAuthSettings {
        client_id: Some("toolgate-by-hand".into()),
        client_secret: Some(format!("${{secret:BYHAND_{}}}", std::process::id())),
        callback_port: Some(47123),
        ..Default::default()
    });
    let settings = Settings::first_run(server);
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");

    // Without the secret in the keychain the sign-in says which one is missing.
    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "30"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("oauth.clientSecret"), "{}", text(&out));

    set_secret(
        &dir,
        &format!("BYHAND_{}", std::process::id()),
        "by-hand-secret-0123456789",
    );

    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("client_id=toolgate-by-hand"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("127.0.0.1%3A47123"), "{}", text(&out));
    assert_eq!(
        remote.registrations(),
        0,
        "nothing registered: the user's client was used"
    );
    let out = toolgate(&dir, &["call", "echo", r#"{"message": "by hand"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Renewed after expiry: the token request authenticates with the secret (basic).
    std::thread::sleep(Duration::from_secs(3));
    let out = toolgate(&dir, &["call", "echo", r#"{"message": "renewed by hand"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(remote.calls().len(), 2);
    let out = toolgate(&dir, &["servers", "logout", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let _ = Command::new("secret-tool")
        .args(["clear", "service", "toolgate", "username"])
        .arg(format!("secret.BYHAND_{}", std::process::id()))
        .status();
}

#[test]
fn misconfigured_servers_are_named_with_what_is_wrong_and_nothing_is_stored() {
    for (fault, said) in [
        ("metadata-500", "could not reach"),
        ("bad-metadata", "sign-in information Toolgate cannot use"),
        ("wrong-issuer", "answered as http://127.0.0.1:9/impostor"),
    ] {
        let remote = Remote::start_with_fault(3600, fault);
        let id = format!("{fault}-{}", std::process::id());
        let dir = data_dir(fault, &id, &remote.url);
        let out = toolgate(&dir, &["servers", "login", &id, "--wait", "20"]);
        assert_eq!(out.status.code(), Some(1), "{fault}: {}", text(&out));
        let words = text(&out);
        assert!(words.contains(said), "{fault}: {words}");
        assert!(words.contains(&id), "{fault}: the server is named: {words}");
        assert_eq!(keychain_item(&id, &remote.issuer), None, "{fault}");
        assert_eq!(remote.registrations(), 0, "{fault}: nothing registered");
    }
}

#[test]
fn a_client_id_metadata_document_is_the_client_id_where_the_authorization_server_takes_one() {
    // The publisher's side: the document `toolgate client-metadata` prints for its address,
    // hosted there over https (a certificate the authorization server trusts).
    let mut host = DocumentHost::new();
    let dir = temp_dir("remote-cimd");
    let out = toolgate(&dir, &["client-metadata", &host.url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let document: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(document["client_id"], host.url.as_str());
    assert_eq!(
        document["redirect_uris"],
        serde_json::json!(["http://127.0.0.1/callback"])
    );
    host.serve(&out.stdout);

    // An authorization server that offers both documents and dynamic registration, access
    // tokens living 2 s; the server's settings name the document.
    let remote = Remote::start_with(2, "", "cimd", Some(&host.cert));
    let id = format!("cimd-{}", std::process::id());
    let mut server = ServerConfig::http(&id, &remote.url);
    server.startup_timeout_secs = 30;
    server.oauth = Some(toolgate_settings::OAuthSettings {
        client_metadata_url: Some(host.url.clone()),
        ..Default::default()
    });
    toolgate_settings::file::save(&dir.join("settings.json"), &Settings::first_run(server))
        .expect("settings");

    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let as_client_id = host.url.replace(':', "%3A").replace('/', "%2F");
    assert!(
        text(&out).contains(&format!("client_id={as_client_id}&")),
        "the document's address is the client id: {}",
        text(&out)
    );
    assert_eq!(
        remote.registrations(),
        0,
        "documents come before registering"
    );
    assert!(
        remote.fetched().contains(&host.url),
        "the authorization server read the document: {:?}",
        remote.fetched()
    );
    let item = keychain_item(&id, &remote.issuer).expect("the sign-in is in the keychain");
    assert_eq!(item["client"]["clientId"], host.url.as_str(), "{item}");
    assert_eq!(item["client"]["document"], true, "{item}");
    let access = token(&item, "access_token");

    let out = toolgate(&dir, &["call", "echo", r#"{"message": "by document"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Renewed after expiry as the same public client (its id, no secret).
    std::thread::sleep(Duration::from_secs(3));
    let out = toolgate(
        &dir,
        &["call", "echo", r#"{"message": "renewed by document"}"#],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let renewed = keychain_item(&id, &remote.issuer).expect("still signed in");
    assert_ne!(
        token(&renewed, "access_token"),
        access,
        "a new access token"
    );
    assert_eq!(remote.calls().len(), 2, "{:?}", remote.calls());
    assert_eq!(remote.registrations(), 0);
    let out = toolgate(&dir, &["servers", "logout", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("did not confirm"), "{}", text(&out));

    // A server whose settings name no document: the same authorization server is registered
    // with instead.
    let plain = format!("cimd-plain-{}", std::process::id());
    let other = data_dir("cimd-plain", &plain, &remote.url);
    let out = toolgate(&other, &["servers", "login", &plain, "--wait", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(remote.registrations(), 1);
    let out = toolgate(&other, &["servers", "logout", &plain]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_client_id_and_secret_entered_by_the_user_sign_in_with_client_secret_post() {
    // The authorization server lets no app register and takes client_secret_post only, at its
    // token and revocation endpoints; `toolgate-by-post` was registered there by hand.
    let remote = Remote::start_with(2, "", "post", None);
    let id = format!("bypost-{}", std::process::id());
    let secret = format!("BYPOST_{}", std::process::id());
    let dir = temp_dir("remote-bypost");
    let mut server = ServerConfig::http(&id, &remote.url);
    server.startup_timeout_secs = 30;
    server.oauth = Some(toolgate_settings::OAuthSettings {
        client_id: Some("toolgate-by-post".into()),
        client_secret: Some(format!("${{secret:{secret}}}")),
        ..Default::default()
    });
    toolgate_settings::file::save(&dir.join("settings.json"), &Settings::first_run(server))
        .expect("settings");
    set_secret(&dir, &secret, "by-post-secret-0123456789");

    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("client_id=toolgate-by-post"),
        "{}",
        text(&out)
    );
    let item = keychain_item(&id, &remote.issuer).expect("the sign-in is in the keychain");
    let access = token(&item, "access_token");
    let out = toolgate(&dir, &["call", "echo", r#"{"message": "by post"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Renewed after expiry: the refresh request carries the secret in its form.
    std::thread::sleep(Duration::from_secs(3));
    let out = toolgate(&dir, &["call", "echo", r#"{"message": "renewed by post"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let renewed = keychain_item(&id, &remote.issuer).expect("still signed in");
    assert_ne!(
        token(&renewed, "access_token"),
        access,
        "a new access token"
    );
    assert_eq!(remote.calls().len(), 2);
    // Signing out revokes with the secret in the form too: the server confirms it.
    let out = toolgate(&dir, &["servers", "logout", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("did not confirm"), "{}", text(&out));
    let _ = Command::new("secret-tool")
        .args(["clear", "service", "toolgate", "username"])
        .arg(format!("secret.{secret}"))
        .status();
}

/// The status a POST of `initialize` to `url` gets with `headers`: what a program holding a
/// copied token would see.
fn post_status(url: &str, headers: &[(&str, &str)]) -> u16 {
    use std::io::{Read, Write};
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("an http URL");
    let path = &url[url.find(address).expect("address") + address.len()..];
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"thief","version":"1"}}}"#;
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = std::net::TcpStream::connect(address).expect("the server answers");
    stream.write_all(request.as_bytes()).expect("sent");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_dpop_bound_sign_in_proves_its_key_on_every_request_and_a_copied_token_is_refused() {
    // oidc-provider binding tokens to the client's key and insisting on its nonce; the resource
    // server taking DPoP-bound tokens only, with a nonce of its own. Access tokens live 2 s.
    let remote = Remote::start_with(2, "dpop", "dpop", None);
    let id = format!("dpop-{}", std::process::id());
    let dir = data_dir("dpop", &id, &remote.url);

    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let item = keychain_item(&id, &remote.issuer).expect("the sign-in is in the keychain");
    assert_eq!(
        item["credentials"]["token_response"]["token_type"]
            .as_str()
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("dpop"),
        "a DPoP-bound token: {}",
        item["credentials"]["token_response"]["token_type"]
    );
    let access = token(&item, "access_token");
    let key = Command::new("secret-tool")
        .args(["lookup", "service", "toolgate", "username"])
        .arg(format!("oauth-dpop:{id}"))
        .output()
        .expect("secret-tool runs");
    assert!(!key.stdout.is_empty(), "the key is in the keychain");

    let out = toolgate(&dir, &["call", "echo", r#"{"message": "proven"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("proven"));
    let accepted = |proofs: &[String]| proofs.iter().filter(|p| !p.contains("refused")).count();
    assert!(
        accepted(&remote.proofs()) >= 2,
        "every request proven: {:?}",
        remote.proofs()
    );
    assert!(
        remote
            .proofs()
            .iter()
            .all(|p| !p.starts_with("dpop refused")),
        "no proof refused (the nonce was asked for with a 401, not refused): {:?}",
        remote.proofs()
    );

    // The token expires; the next command renews it with a proof of the same key.
    std::thread::sleep(Duration::from_secs(3));
    let out = toolgate(&dir, &["call", "echo", r#"{"message": "renewed"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let renewed = keychain_item(&id, &remote.issuer).expect("still signed in");
    assert_ne!(
        token(&renewed, "access_token"),
        access,
        "a new access token"
    );
    assert_eq!(remote.calls().len(), 2, "{:?}", remote.calls());

    // A copied token is no use without the key: as a bearer token, or under the DPoP scheme
    // with no proof.
    let fresh = token(&renewed, "access_token");
    assert_eq!(
        post_status(
            &remote.url,
            &[("Authorization", &format!("Bearer {fresh}"))]
        ),
        401
    );
    assert_eq!(
        post_status(&remote.url, &[("Authorization", &format!("DPoP {fresh}"))]),
        401
    );
    assert!(
        remote.says("dpop refused no proof"),
        "{:?}",
        remote.proofs()
    );

    // Signing out removes the key with the tokens.
    let out = toolgate(&dir, &["servers", "logout", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let key = Command::new("secret-tool")
        .args(["lookup", "service", "toolgate", "username"])
        .arg(format!("oauth-dpop:{id}"))
        .output()
        .expect("secret-tool runs");
    assert!(key.stdout.is_empty(), "the key is gone");
}

#[test]
fn a_machine_client_gets_its_token_by_client_credentials_with_no_browser() {
    // oidc-provider knows `toolgate-machine` (client credentials only, client_secret_basic).
    let remote = Remote::start(3600);
    let id = format!("machine-{}", std::process::id());
    let dir = temp_dir("remote-machine");
    let secret = format!("MACHINE_{}", std::process::id());
    let mut server = ServerConfig::http(&id, &remote.url);
    server.startup_timeout_secs = 30;
    server.oauth = Some(toolgate_settings::OAuthSettings {
        grant: toolgate_settings::OAuthGrant::ClientCredentials,
        client_id: Some("toolgate-machine".into()),
        client_secret: Some(format!("${{secret:{secret}}}")),
        scopes: vec!["mcp:tools".into()],
        ..Default::default()
    });
    toolgate_settings::file::save(&dir.join("settings.json"), &Settings::first_run(server))
        .expect("settings");
    set_secret(&dir, &secret, "machine-secret-0123456789");

    // No `servers login`, no browser on PATH: the first use gets the token.
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(&*dir)
        .args(["call", "echo", r#"{"message": "as a machine"}"#])
        .env("PATH", dir.join("no-browser"))
        .stdin(Stdio::null())
        .output()
        .expect("toolgate runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("as a machine"));
    assert_eq!(remote.calls().len(), 1, "{:?}", remote.calls());
    assert_eq!(remote.registrations(), 0, "nothing registered");
    let item = keychain_item(&id, &remote.issuer).expect("the token is in the keychain");
    assert!(token(&item, "access_token").len() > 20, "{item}");
    // A browser sign-in is not how this server gets its tokens, and it says what to do instead.
    let out = toolgate(&dir, &["servers", "login", &id, "--wait", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("without a browser"), "{}", text(&out));

    // A wrong secret is refused by the authorization server, and said so.
    set_secret(&dir, &secret, "not-the-secret");
    let out = toolgate(&dir, &["servers", "logout", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = toolgate(&dir, &["call", "echo", r#"{"message": "refused"}"#]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).contains("client credentials"), "{}", text(&out));
    let _ = Command::new("secret-tool")
        .args(["clear", "service", "toolgate", "username"])
        .arg(format!("secret.{secret}"))
        .status();
}
