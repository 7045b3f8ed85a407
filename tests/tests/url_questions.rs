//! A server's question that is a page to open (URL-mode elicitation), asked inside a call by
//! the 2026-07-28 server of `tests/modern_server.py`: the page is shown with its domain, opened
//! in the browser only when the user says so, and audited either way. The browser is stood in
//! for by an `xdg-open` first on this test's PATH that fetches the page over HTTP, as a browser
//! would; the page is served here, so the test sees whether (and when) it was opened.
//!
//! Its own test binary: it sets PATH for the whole process before anything runs.
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_agent::{Decision, MemoryPolicy, RequestKind};
use toolgate_history::{AuditDecision, AuditFilter};
use toolgate_policy::PolicySettings;
use toolgate_settings::Transport;
use toolgate_tests::{modern_server, temp_dir};

#[path = "common/gated.rs"]
mod gated;

use gated::{gated_servers, NoModel};

/// Serves the sign-in page, counting the visits.
async fn sign_in_page() -> (String, Arc<AtomicUsize>) {
    let visits = Arc::new(AtomicUsize::new(0));
    let counted = visits.clone();
    let app = axum::Router::new().route(
        "/signin",
        axum::routing::get(move || {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                "signed in"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (
        format!("http://127.0.0.1:{port}/signin?session=abc"),
        visits,
    )
}

#[tokio::test]
async fn a_page_is_opened_only_when_the_user_says_so_and_audited_either_way() {
    let dir = temp_dir("url-question");
    // The stand-in browser: fetches the page it is given, as a browser would.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let opener = bin.join("xdg-open");
    std::fs::write(
        &opener,
        "#!/bin/sh\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n",
    )
    .expect("xdg-open");
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("executable");
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::set_var("PATH", format!("{}:{path}", bin.display()));

    let (url, visits) = sign_in_page().await;
    let gated::Gated {
        gate,
        history,
        servers,
    } = gated_servers(
        &dir,
        Arc::new(MemoryPolicy::new(PolicySettings::default())),
        Arc::new(NoModel),
    );
    // The log in a folder of its own: `dir` holds `bin`, a folder on PATH, which no server may
    // be given to change.
    let logs = dir.join("log");
    std::fs::create_dir_all(&logs).expect("log folder");
    let mut config = modern_server("m", &logs.join("server.jsonl"));
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("MODERN_SIGNIN_URL".into(), url.clone());
    }
    servers.start_all(&[config]).await;

    let held = || async {
        for _ in 0..400 {
            if let Some(call) = gate.waiting().into_iter().next() {
                return call;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("nothing was held at the gate");
    };

    // Declined: never opened.
    let running = {
        let servers = servers.clone();
        tokio::spawn(async move { servers.call_tool("m", "sign_in", json!({})).await })
    };
    let asked = held().await;
    assert_eq!(asked.request, RequestKind::Elicitation);
    let link = asked.link.clone().expect("a page to open");
    assert_eq!(link.domain, "127.0.0.1");
    assert_eq!(link.url, url);
    assert_eq!(
        asked.message.as_deref(),
        Some("Sign in to the example service")
    );
    assert!(asked.reason.contains("127.0.0.1"), "{}", asked.reason);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(visits.load(Ordering::SeqCst), 0, "not opened while asked");
    gate.answer(&asked.id, Decision::Deny { reason: None })
        .expect("answered");
    let output = running.await.expect("joined").expect("the call ends");
    assert_eq!(output.text, "sign-in answered: decline");
    assert_eq!(visits.load(Ordering::SeqCst), 0, "a no never opens it");

    // Opened: the browser reaches the page, and the server hears accept.
    let running = {
        let servers = servers.clone();
        tokio::spawn(async move { servers.call_tool("m", "sign_in", json!({})).await })
    };
    let asked = held().await;
    gate.answer(&asked.id, Decision::Approve).expect("answered");
    let output = running.await.expect("joined").expect("the call ends");
    assert_eq!(output.text, "sign-in answered: accept");
    for _ in 0..100 {
        if visits.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        visits.load(Ordering::SeqCst),
        1,
        "opened once, in the browser"
    );

    let audit = history
        .audit(&AuditFilter {
            tool: Some("elicitation/create".into()),
            ..AuditFilter::default()
        })
        .expect("audit");
    assert_eq!(audit.len(), 2, "{audit:?}");
    let reasons: Vec<(AuditDecision, String)> = audit
        .iter()
        .map(|a| (a.entry.decision, a.entry.reason.clone().unwrap_or_default()))
        .collect();
    assert!(
        reasons.contains(&(
            AuditDecision::Denied,
            "not opened (the user did not open the page)".to_owned()
        )),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&(
            AuditDecision::Allowed,
            "opened 127.0.0.1 in the browser".to_owned()
        )),
        "{reasons:?}"
    );
    assert!(audit.iter().all(|a| a.entry.arguments["url"] == json!(url)));
    servers.stop_all().await;
}
