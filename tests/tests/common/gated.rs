//! Servers whose questions (sampling, elicitation, questions inside a call) go through a real
//! gate, under the given rules, with the audit log in a SQLite file: the part of a host these
//! tests need, without a window. Shared by the test binaries that include it.

// Not every test binary that includes this uses all of it.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use toolgate_agent::{Gate, ModelSource, PolicyStore, ServerRequestGate};
use toolgate_history::History;
use toolgate_llm::Provider;
use toolgate_mcp::{ManagerOptions, ServerManager};

pub struct Gated {
    pub gate: Arc<Gate>,
    pub history: Arc<History>,
    pub servers: Arc<ServerManager>,
}

/// A manager whose servers' requests are held at a fresh gate, decided by `policy`, sampled
/// with `model`, and audited in `dir/history.sqlite3`.
pub fn gated_servers(
    dir: &Path,
    policy: Arc<dyn PolicyStore>,
    model: Arc<dyn ModelSource>,
) -> Gated {
    let gate = Arc::new(Gate::default());
    let history = Arc::new(History::open(&dir.join("history.sqlite3")).expect("history"));
    let requests =
        Arc::new(ServerRequestGate::new(gate.clone(), policy, model).with_audit(history.clone()));
    let servers = ServerManager::new(ManagerOptions {
        requests: requests.clone(),
        ..ManagerOptions::default()
    });
    requests.attach(&servers);
    Gated {
        gate,
        history,
        servers,
    }
}

/// No model: for servers that ask questions, not for sampling.
pub struct NoModel;

#[async_trait]
impl ModelSource for NoModel {
    async fn model(&self) -> Result<(Box<dyn Provider>, String), toolgate_agent::NoModel> {
        Err(toolgate_agent::NoModel::Provider(
            "no model in this test".into(),
        ))
    }
}
