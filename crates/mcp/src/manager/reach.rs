//! The manager's side of network "hosts" (see `egress.rs`): a start's proxy, the names it
//! refused, the user's answers and a new list applied to the running proxy.

use std::sync::Arc;

use toolgate_egress::{Proxy, Refusal};
use toolgate_settings::{NetworkAccess, SandboxSettings, ServerConfig};

use super::egress::{allowance_of, HostAnswer, Reach};
use super::registry::ServerManager;
use crate::logs::ServerLog;
use crate::McpError;

impl ServerManager {
    /// The proxy for a start of `config`, when its sandbox is on in network "hosts".
    pub(super) async fn start_proxy(
        &self,
        config: &ServerConfig,
        log: &ServerLog,
    ) -> Result<Option<Arc<Proxy>>, String> {
        let Some(settings) = config
            .sandbox_settings()
            .filter(|s| s.enabled && s.network == NetworkAccess::Hosts)
        else {
            return Ok(None);
        };
        let me = self.me.clone();
        let id = config.id.clone();
        let log = log.clone();
        let proxy = Proxy::start(allowance_of(&settings), move |refusal: Refusal| {
            log.mark(&format!("network: {}", refusal.reason));
            if let Some(manager) = me.upgrade() {
                manager.refused_host(&id, refusal);
            }
        })
        .await
        .map_err(|e| format!("its network proxy could not be started: {e}"))?;
        let proxy = Arc::new(proxy);
        let mut reaches = self.reaches.lock().unwrap_or_else(|p| p.into_inner());
        // A new run: the answers of the last one (its "once" and its "deny") are gone with it.
        reaches.insert(
            config.id.clone(),
            Reach {
                proxy: Arc::downgrade(&proxy),
                ..Reach::default()
            },
        );
        Ok(Some(proxy))
    }

    fn refused_host(&self, id: &str, refusal: Refusal) {
        if refusal.listed {
            return; // on the list already: allowing it would change nothing
        }
        let added = {
            let mut reaches = self.reaches.lock().unwrap_or_else(|p| p.into_inner());
            let reach = reaches.entry(id.to_owned()).or_default();
            !reach.denied.contains(&refusal.host) && reach.wanted.insert(refusal.host)
        };
        if added {
            self.changed(id);
        }
    }

    /// The names `id` was refused and the user has not answered yet.
    pub(super) fn wanted_hosts(&self, id: &str) -> Vec<String> {
        self.reaches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .map(|r| r.wanted.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Applies the user's answer about `host` to the running proxy of `id`. For
    /// [`HostAnswer::Always`] the caller saves the list too ([`Self::set_reach`]).
    pub async fn answer_host(
        &self,
        id: &str,
        host: &str,
        answer: HostAnswer,
    ) -> Result<(), McpError> {
        if !self.entries.lock().await.contains_key(id) {
            return Err(McpError::UnknownServer(id.to_owned()));
        }
        let host = toolgate_egress::normalise(host);
        {
            let mut reaches = self.reaches.lock().unwrap_or_else(|p| p.into_inner());
            let reach = reaches.entry(id.to_owned()).or_default();
            reach.wanted.remove(&host);
            match answer {
                HostAnswer::Deny => {
                    reach.denied.insert(host);
                }
                HostAnswer::Once | HostAnswer::Always => {
                    reach.denied.remove(&host);
                    if let Some(proxy) = reach.proxy.upgrade() {
                        proxy.allow_once(&host);
                    }
                }
            }
        }
        self.changed(id);
        Ok(())
    }

    /// New sandbox settings for `id` whose only change is its list of hosts or its
    /// private-address switch: kept for its next start and applied to the running proxy, with
    /// no restart.
    pub async fn set_reach(&self, id: &str, sandbox: SandboxSettings) -> Result<(), McpError> {
        let allowance = allowance_of(&sandbox);
        self.entries
            .lock()
            .await
            .get_mut(id)
            .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?
            .config
            .sandbox = Some(sandbox);
        let proxy = self
            .reaches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .and_then(|r| r.proxy.upgrade());
        if let Some(proxy) = proxy {
            proxy.update(allowance);
        }
        self.changed(id);
        Ok(())
    }

    /// Forgets a stopped server's answers for the run.
    pub(super) fn forget_reach(&self, id: &str) {
        self.reaches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }
}
