//! A host process for the tests that kill one: it runs the servers listed in a JSON file with the
//! real `ServerManager`, prints `ready` and each server's status, then waits to be killed.
//!
//! Usage: toolgate-test-host <state dir> <servers.json>

use std::path::PathBuf;

use toolgate_mcp::{ManagerOptions, ServerManager};
use toolgate_settings::ServerConfig;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(state_dir), Some(config)) = (args.next(), args.next()) else {
        return Err("usage: toolgate-test-host <state dir> <servers.json>".into());
    };
    let configs: Vec<ServerConfig> = serde_json::from_slice(&std::fs::read(config)?)?;
    let state_dir = PathBuf::from(state_dir);
    let servers = ServerManager::new(ManagerOptions {
        // As the host does: each server's data folder (and its temporary folder) in the data
        // folder, so a killed host leaves them where the test cleans up.
        server_data: Some(state_dir.join("servers")),
        state_dir: Some(state_dir),
        ..ManagerOptions::default()
    });
    servers.start_all(&configs).await;
    for s in servers.snapshot().await {
        println!("{} {}", s.id, s.status);
    }
    println!("ready");
    std::future::pending::<()>().await;
    Ok(())
}
