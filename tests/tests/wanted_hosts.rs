//! Network "hosts" from the user's side, through the host: a server refused a name has it on
//! its card (`wantedHosts`) until the user answers. "Allow once" lets it through until the
//! server stops; "Always" adds it to the settings and the running proxy without a restart;
//! "Deny" is not asked again while it runs. The naive test server fetches with Python's
//! `urllib`, which honours the proxy variables as most programs do.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use toolgate_host::{Host, HostOptions};
use toolgate_mcp::{HostAnswer, HostEnv, ServerStatus};
use toolgate_secrets::MemoryStore;
use toolgate_settings::{NetworkAccess, SandboxSettings, Settings};
use toolgate_tests::{fault_server, temp_dir, web_page};

const PAGE: &str = "hello through the proxy";

fn open(data: &Path) -> Arc<Host> {
    let mut web = fault_server("web", "naive");
    web.sandbox = Some(SandboxSettings {
        network: NetworkAccess::Hosts,
        // The page is on this computer: names leading here are allowed once listed.
        private_addresses: true,
        ..Default::default()
    });
    toolgate_settings::file::save(&data.join("settings.json"), &Settings::first_run(web))
        .expect("settings");
    Host::open(HostOptions {
        env: Some(HostEnv::inherited()),
        secrets: Arc::new(MemoryStore::default()),
        ..HostOptions::new(data.to_path_buf())
    })
    .expect("host")
}

/// How many times `needle` is in the files under `dir`.
fn count_in(dir: &Path, needle: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                count_in(&path, needle)
            } else {
                std::fs::read_to_string(&path)
                    .map(|t| t.matches(needle).count())
                    .unwrap_or(0)
            }
        })
        .sum()
}

async fn fetch(host: &Host, url: &str) -> (bool, String) {
    let out = host
        .servers()
        .call_tool("web", "fetch_url", json!({ "url": url }))
        .await
        .expect("the call is answered");
    (!out.is_error, out.text)
}

async fn wanted(host: &Host) -> Vec<String> {
    host.servers()
        .snapshot()
        .await
        .into_iter()
        .find(|s| s.id == "web")
        .map(|s| s.wanted_hosts)
        .unwrap_or_default()
}

async fn ready(host: &Host) {
    for _ in 0..300 {
        let snapshot = host.servers().snapshot().await;
        if snapshot
            .iter()
            .any(|s| s.id == "web" && s.status == ServerStatus::Ready)
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!(
        "web never became ready: {:?}",
        host.servers().stderr_tail("web").await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_host_is_asked_on_the_card_and_each_answer_applies_at_once() {
    let dir = temp_dir("wanted-hosts");
    let (port, _) = web_page(PAGE.to_owned()).await;
    let host = open(&dir);
    host.run().await.expect("started");
    ready(&host).await;

    // Nothing listed: refused by the proxy, and the name waits on the card.
    let by_name = format!("http://localhost:{port}/");
    let (ok, text) = fetch(&host, &by_name).await;
    assert!(!ok && text.contains("403"), "{text}");
    assert_eq!(wanted(&host).await, ["localhost"]);

    // Once: through at once, not saved.
    host.answer_host("web", "localhost", HostAnswer::Once)
        .await
        .expect("answered");
    assert!(wanted(&host).await.is_empty());
    assert_eq!(fetch(&host, &by_name).await, (true, PAGE.to_owned()));
    let saved = |host: &Host| {
        host.settings()
            .servers
            .iter()
            .find(|s| s.id == "web")
            .and_then(|s| s.sandbox_settings())
            .map(|s| s.hosts)
            .unwrap_or_default()
    };
    assert!(saved(&host).is_empty(), "once is not saved");

    // Always: saved, and applied to the running proxy without a restart.
    let by_address = format!("http://127.0.0.1:{port}/");
    assert!(!fetch(&host, &by_address).await.0);
    assert_eq!(wanted(&host).await, ["127.0.0.1"]);
    // Each start of the server marks its log file with its sandbox.
    let starts = || count_in(&dir, "---- sandbox (");
    let started = starts();
    assert_eq!(started, 1, "one start so far");
    host.answer_host("web", "127.0.0.1", HostAnswer::Always)
        .await
        .expect("answered");
    assert_eq!(saved(&host), ["127.0.0.1"]);
    assert_eq!(fetch(&host, &by_address).await, (true, PAGE.to_owned()));
    assert_eq!(starts(), started, "not restarted");

    // Deny: refused, and not asked again while it runs.
    let other = format!("http://127.0.0.2:{port}/");
    assert!(!fetch(&host, &other).await.0);
    assert_eq!(wanted(&host).await, ["127.0.0.2"]);
    host.answer_host("web", "127.0.0.2", HostAnswer::Deny)
        .await
        .expect("answered");
    assert!(!fetch(&host, &other).await.0);
    assert!(
        wanted(&host).await.is_empty(),
        "a denied name is not asked again"
    );

    // A new run: "once" is gone, "always" stays.
    host.servers().restart("web").await.expect("restarted");
    ready(&host).await;
    assert!(
        !fetch(&host, &by_name).await.0,
        "allowed once, for that run only"
    );
    assert_eq!(fetch(&host, &by_address).await, (true, PAGE.to_owned()));
    host.shutdown("the test is over").await;
}
