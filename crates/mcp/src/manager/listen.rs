//! Live lists on 2026-07-28 connections.
//!
//! In that era a server sends `list_changed` only on a `subscriptions/listen` stream the client
//! opened (older servers send them unasked, and the connection's handler takes them). One stream
//! per connection asks for the lists the server says can change; its notices go to the same
//! channel the handler feeds, so the supervisor re-reads a list whatever the era. A stream that
//! ends while the connection lives (the server ended it, the transport dropped it, we fell
//! behind) is opened again, and every list re-read, since changes meanwhile went unsaid.

use std::time::Duration;

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, ServiceError, Subscription};
use rmcp::RoleClient;
use tokio::sync::mpsc;

use toolgate_mcp_client::client::ListKind;

/// Opens after a failure wait this long, doubled each time up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Failures in a row to open the stream before we stop trying for this connection.
const MAX_FAILURES: u32 = 8;

/// The lists a server says can change, as a subscription filter; `None` when the connection is
/// of the older era (notices come unasked) or nothing can change.
pub(super) fn filter_for(peer: &Peer<RoleClient>) -> Option<SubscriptionFilter> {
    let info = peer.peer_info()?;
    if info.protocol_version < ProtocolVersion::V_2026_07_28 {
        return None;
    }
    let caps = &info.capabilities;
    let mut builder = SubscriptionFilter::builder();
    let mut any = false;
    if caps.tools.as_ref().and_then(|c| c.list_changed) == Some(true) {
        builder = builder.tools_list_changed();
        any = true;
    }
    if caps.resources.as_ref().and_then(|c| c.list_changed) == Some(true) {
        builder = builder.resources_list_changed();
        any = true;
    }
    if caps.prompts.as_ref().and_then(|c| c.list_changed) == Some(true) {
        builder = builder.prompts_list_changed();
        any = true;
    }
    any.then(|| builder.build())
}

fn kinds(filter: &SubscriptionFilter) -> Vec<ListKind> {
    let mut kinds = Vec::new();
    if filter.tools_list_changed == Some(true) {
        kinds.push(ListKind::Tools);
    }
    if filter.resources_list_changed == Some(true) {
        kinds.push(ListKind::Resources);
    }
    if filter.prompts_list_changed == Some(true) {
        kinds.push(ListKind::Prompts);
    }
    kinds
}

/// Opens the stream once, before the first listing, so no change between the listing and the
/// stream goes unsaid. `None` when the server refuses it (the lists are then read at start only)
/// or it cannot be opened now ([`listen_for_changes`] tries again).
pub(super) async fn open(
    server: &str,
    peer: &Peer<RoleClient>,
    filter: &SubscriptionFilter,
) -> Result<Subscription, ServiceError> {
    let opened = peer.listen(filter.clone()).await;
    match &opened {
        Ok(subscription) => {
            tracing::info!(server, lists = ?kinds(subscription.acknowledged()), "listening for list changes");
        }
        Err(e) => tracing::info!(server, "could not open subscriptions/listen: {e}"),
    }
    opened
}

/// Keeps one `subscriptions/listen` stream open for the life of the connection (the caller
/// aborts it when the connection ends), passing list changes to `changes`. `first` is the
/// stream opened before the first listing, or why it could not be.
pub(super) async fn listen_for_changes(
    server: String,
    peer: Peer<RoleClient>,
    filter: SubscriptionFilter,
    first: Result<Subscription, ServiceError>,
    changes: mpsc::UnboundedSender<ListKind>,
) {
    let mut failures = 0u32;
    let mut next = Some(first);
    loop {
        if peer.is_transport_closed() {
            return;
        }
        let reopened = next.is_none();
        let opened = match next.take() {
            Some(first) => first,
            None => open(&server, &peer, &filter).await,
        };
        match opened {
            Ok(mut subscription) => {
                if reopened {
                    // rmcp caches lists until a notice says they changed, and notices were
                    // missed: read them afresh.
                    peer.clear_response_cache().await;
                    for kind in kinds(subscription.acknowledged()) {
                        let _ = changes.send(kind);
                    }
                }
                failures = 0;
                loop {
                    match subscription.next().await {
                        Ok(Some(notification)) => {
                            let kind = match notification {
                                ServerNotification::ToolListChangedNotification(_) => {
                                    ListKind::Tools
                                }
                                ServerNotification::ResourceListChangedNotification(_) => {
                                    ListKind::Resources
                                }
                                ServerNotification::PromptListChangedNotification(_) => {
                                    ListKind::Prompts
                                }
                                _ => continue,
                            };
                            if changes.send(kind).is_err() {
                                return;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            tracing::info!(server = %server, "the list subscription failed: {e}");
                            break;
                        }
                    }
                }
                if peer.is_transport_closed() {
                    return;
                }
                tracing::info!(server = %server, end = ?subscription.end(), "the list subscription ended; opening it again");
            }
            Err(ServiceError::McpError(error)) => {
                // The server refuses the method itself: asking again will not help.
                tracing::warn!(server = %server, "the server refused subscriptions/listen, so its lists are read only at start: {}", error.message);
                return;
            }
            Err(e) => {
                failures += 1;
                if failures >= MAX_FAILURES {
                    tracing::warn!(server = %server, "could not open subscriptions/listen after {failures} tries, so its lists are read only at start: {e}");
                    return;
                }
            }
        }
        let backoff = FIRST_BACKOFF
            .saturating_mul(2u32.saturating_pow(failures))
            .min(MAX_BACKOFF);
        tokio::time::sleep(backoff).await;
    }
}
