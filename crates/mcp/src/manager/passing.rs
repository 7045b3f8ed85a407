//! Requests a connected client makes that Toolgate passes to the server owning what they name:
//! argument completions, and subscriptions to a resource's updates.
//!
//! Subscriptions are counted per server and resource: the server is asked once however many
//! clients subscribe, and told to stop when the last one unsubscribes (a 2026-07-28 server by
//! its resource stream's filter, `updates.rs`). Its updates reach every
//! subscriber as [`ServerEvent::ResourceUpdated`]. A server that restarts forgets them; its
//! subscribers are not told (nor do they miss an update they could not have had).
//!
//! [`ServerEvent::ResourceUpdated`]: crate::ServerEvent::ResourceUpdated
#![allow(deprecated)]

use rmcp::model::{
    CompleteRequestParams, CompleteResult, SubscribeRequestParams, UnsubscribeRequestParams,
};

use std::time::Duration;

use rmcp::{Peer, RoleClient};

use super::calls::running;
use super::registry::ServerManager;
use super::updates::watched_by_listen;
use crate::McpError;

impl ServerManager {
    /// `completion/complete` at `server`, as the client asked it (the reference already names
    /// the server's own prompt or template).
    pub async fn complete(
        &self,
        server: &str,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, McpError> {
        self.ask(server, "complete an argument", |peer| async move {
            peer.complete(params).await
        })
        .await
    }

    /// Whether `server` says it sends updates of the resources it is asked to watch.
    pub async fn offers_subscriptions(&self, server: &str) -> bool {
        let entries = self.entries.lock().await;
        entries
            .get(server)
            .and_then(|e| e.conn.as_ref())
            .and_then(|c| c.peer.peer_info())
            .and_then(|info| info.capabilities.resources.clone())
            .and_then(|r| r.subscribe)
            .unwrap_or(false)
    }

    /// One more subscriber to `uri` at `server`; the server is asked for the first.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), McpError> {
        let key = (server.to_owned(), uri.to_owned());
        let first = {
            let mut counts = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
            let count = counts.entry(key.clone()).or_default();
            *count += 1;
            *count == 1
        };
        if !first {
            return Ok(());
        }
        let asked = match self.by_listen(server).await {
            Some((peer, timeout)) => self.watch_resources(server, peer, timeout).await,
            None => {
                let params = SubscribeRequestParams::new(uri);
                self.ask(server, "subscribe to the resource", |peer| async move {
                    peer.subscribe(params).await
                })
                .await
            }
        };
        if asked.is_err() {
            self.forget(&key);
        }
        asked
    }

    /// One subscriber fewer; the server is told when none is left.
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), McpError> {
        let key = (server.to_owned(), uri.to_owned());
        if !self.forget(&key) {
            return Ok(());
        }
        if let Some((peer, timeout)) = self.by_listen(server).await {
            return self.watch_resources(server, peer, timeout).await;
        }
        let params = UnsubscribeRequestParams::new(uri);
        self.ask(server, "unsubscribe from the resource", |peer| async move {
            peer.unsubscribe(params).await
        })
        .await
    }

    /// The connection and its time-out when `server` is running and watches resources on a
    /// listen stream (2026-07-28); `None` for an older server (or one not running, which the
    /// request then reports).
    async fn by_listen(&self, server: &str) -> Option<(Peer<RoleClient>, Duration)> {
        let entries = self.entries.lock().await;
        let (entry, peer) = running(&entries, server).ok()?;
        watched_by_listen(&peer)
            .then(|| (peer, Duration::from_secs(entry.config.call_timeout_secs)))
    }

    /// Counts one subscriber out; true when it was the last.
    fn forget(&self, key: &(String, String)) -> bool {
        let mut counts = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        match counts.get_mut(key) {
            Some(count) if *count > 1 => {
                *count -= 1;
                false
            }
            Some(_) => {
                counts.remove(key);
                true
            }
            None => false,
        }
    }
}
