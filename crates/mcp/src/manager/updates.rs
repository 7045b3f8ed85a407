//! Resource updates from a 2026-07-28 server.
//!
//! That era has no `resources/subscribe`: a client names the resources it wants updates of in
//! the filter of a `subscriptions/listen` stream, fixed when the stream opens. So each server
//! with subscribers gets one stream of its own for them (apart from the list-change stream in
//! `listen.rs`), opened again with the new set whenever a resource is added or dropped: the new
//! stream is acknowledged before the old one is dropped, so no update falls between the two.
//! Its updates reach subscribers as [`ServerEvent::ResourceUpdated`], as an older server's do.
//! A stream the server ends is not opened again (a restarted server forgets subscriptions in
//! both eras).
//!
//! [`ServerEvent::ResourceUpdated`]: crate::ServerEvent::ResourceUpdated

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::Subscription;
use rmcp::{Peer, RoleClient};
use tokio::sync::broadcast;

use super::registry::ServerManager;
use crate::McpError;
use crate::ServerEvent;

/// Whether this connection speaks the era where resources are watched on a listen stream.
pub(super) fn watched_by_listen(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28)
}

impl ServerManager {
    /// Opens `server`'s resource stream for the URIs it now has subscribers for (or closes it
    /// when it has none), replacing the stream it had.
    pub(super) async fn watch_resources(
        &self,
        server: &str,
        peer: Peer<RoleClient>,
        timeout: std::time::Duration,
    ) -> Result<(), McpError> {
        // One change at a time per manager, so two subscribers arriving together cannot
        // leave the older set's stream in place.
        let mut watches = self.resource_watches.lock().await;
        let uris: Vec<String> = {
            let counts = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
            let mut uris: Vec<String> = counts
                .keys()
                .filter(|(s, _)| s == server)
                .map(|(_, uri)| uri.clone())
                .collect();
            uris.sort();
            uris
        };
        if uris.is_empty() {
            watches.remove(server);
            return Ok(());
        }
        let filter = SubscriptionFilter::builder()
            .resource_subscriptions(uris)
            .build();
        let failed = |detail: String| McpError::Request {
            server: server.to_owned(),
            what: "watch the resource",
            detail,
        };
        let subscription = tokio::time::timeout(timeout, peer.listen(filter))
            .await
            .map_err(|_| failed(format!("no answer within {} s", timeout.as_secs())))?
            .map_err(|e| failed(e.to_string()))?;
        let task = tokio::spawn(pass_updates(
            server.to_owned(),
            subscription,
            self.events.clone(),
        ));
        watches.insert(
            server.to_owned(),
            tokio_util::task::AbortOnDropHandle::new(task),
        );
        Ok(())
    }
}

/// Sends each update on `subscription` on as a [`ServerEvent::ResourceUpdated`] until the
/// stream ends (or the task is aborted for a newer stream).
async fn pass_updates(
    server: String,
    mut subscription: Subscription,
    events: broadcast::Sender<ServerEvent>,
) {
    loop {
        match subscription.next().await {
            Ok(Some(ServerNotification::ResourceUpdatedNotification(update))) => {
                let _ = events.send(ServerEvent::ResourceUpdated {
                    server: server.clone(),
                    uri: update.params.uri,
                });
            }
            Ok(Some(_)) => {}
            Ok(None) => {
                tracing::info!(server = %server, "the server ended the stream of resource updates");
                return;
            }
            Err(e) => {
                tracing::info!(server = %server, "the stream of resource updates failed: {e}");
                return;
            }
        }
    }
}
