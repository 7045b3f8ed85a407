//! Sandbox benchmark: what confining a server costs.
//!
//! 1. Start-up: the same server started confined (its default sandbox: the plan, Landlock's
//!    ruleset with a descriptor per folder, the seccomp filters) and unconfined, alternately,
//!    until ready. Target: confined within 1.1x unconfined.
//! 2. A loopback connection: a confined python3 opens and closes TCP connections to a listener
//!    on 127.0.0.1 in network "loopback" (each `connect` checked and made by Toolgate's
//!    supervisor) and in network "any" (no supervisor), in one run. No target: it says what a
//!    server that talks to a local database pays per connection.
//!
//! Run: `cargo bench -p toolgate-tests --bench sandbox`. Prints a table; asserts only that every
//! server became ready and every connection was made.
//!
//! It measures Linux's sandbox (Landlock, seccomp): on other platforms it has nothing to run.

#[cfg(target_os = "linux")]
#[path = "sandbox/run.rs"]
mod run;

#[cfg(target_os = "linux")]
#[tokio::main]
async fn main() {
    run::main().await;
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the sandbox benchmark measures Linux's sandbox: nothing to run on this platform");
}
