//! Network "hosts" from the user's side: answering "SERVER wants to reach HOST" (allow once,
//! always, deny), and a list of hosts saved without restarting the server.

use toolgate_mcp::HostAnswer;

use crate::server_edits::ServerEditError;
use crate::Host;

impl Host {
    /// The user's answer about a host `id`'s proxy refused. "Always" adds it to the server's
    /// list in the settings; every answer applies to the running server at once.
    pub async fn answer_host(
        &self,
        id: &str,
        host: &str,
        answer: HostAnswer,
    ) -> Result<(), ServerEditError> {
        let host = toolgate_egress::normalise(host);
        if answer == HostAnswer::Always {
            if let Err(e) = toolgate_egress::HostPattern::parse(&host) {
                return Err(ServerEditError::Refused(
                    toolgate_settings::SettingsError::Invalid {
                        field: format!("servers.{id}.sandbox.hosts"),
                        reason: e.0,
                    },
                ));
            }
            let mut saved = None;
            self.update_settings(|s| {
                if let Some(server) = s.servers.iter_mut().find(|s| s.id == id) {
                    let mut sandbox = server.sandbox_settings().unwrap_or_default();
                    if !sandbox.hosts.contains(&host) {
                        sandbox.hosts.push(host.clone());
                    }
                    server.sandbox = Some(sandbox.clone());
                    saved = Some(sandbox);
                }
            })?;
            if let Some(sandbox) = saved {
                self.servers.manager.set_reach(id, sandbox).await?;
            }
        }
        self.servers.manager.answer_host(id, &host, answer).await?;
        Ok(())
    }
}
