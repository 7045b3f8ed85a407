//! The supervising task of each connection: it re-reads a list when the server says it changed,
//! and when the connection ends on its own, records why and decides, by the backoff, whether and
//! when the server is started again. The start itself is left to the caller (`lifecycle.rs`).

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use rmcp::service::{Peer, QuitReason};
use rmcp::RoleClient;
use tokio::sync::oneshot;

use super::backoff::{Action, Event, Policy, MAX_RESTARTS};
use super::connect::Connected;
use super::entry::Entry;
use super::listen;
use super::reasons::with_last_words;
use super::registry::ServerManager;
use crate::{PromptInfo, ResourceInfo, ResourceTemplateInfo, ServerStatus, ToolInfo};
use toolgate_mcp_client::client::ListKind;

/// Runs for the life of one connection: refreshes lists when the server says they changed,
/// and when the connection ends on its own, records why and returns the wait before the
/// server is to be started again, if it is to be.
pub(super) async fn supervise(
    manager: Weak<ServerManager>,
    id: String,
    generation: u64,
    connected: Connected,
    mut stop: oneshot::Receiver<()>,
) -> Option<Duration> {
    let Connected {
        service,
        process,
        mut list_changed,
        list_sender,
        listening,
        ..
    } = connected;
    let started = Instant::now();
    let peer = service.peer().clone();
    // 2026-07-28 servers tell of list changes only on a stream we open; it lives as long as
    // this connection.
    let _listening = listening.map(|(filter, first)| {
        tokio_util::task::AbortOnDropHandle::new(tokio::spawn(listen::listen_for_changes(
            id.clone(),
            peer.clone(),
            filter,
            first,
            list_sender,
        )))
    });
    let cancel = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let ended = loop {
        tokio::select! {
            _ = &mut stop => {
                // Closing the transport closes the server's stdin, unless a write to a server
                // that stopped reading holds it: then the process is stopped regardless, which
                // fails that write and lets the connection end.
                cancel.cancel();
                let grace = manager.upgrade().map_or(Duration::ZERO, |m| m.options.stop_grace);
                let closed = tokio::time::timeout(grace, &mut waiting).await.is_ok();
                if let (Some(me), Some(p)) = (manager.upgrade(), process) {
                    me.stop_process(&id, p, me.options.stop_grace).await;
                }
                if !closed {
                    let _ = tokio::time::timeout(grace, &mut waiting).await;
                }
                return None;
            }
            quit = &mut waiting => break quit,
            Some(kind) = list_changed.recv() => {
                // Servers often send a burst (server-everything sends four at start-up): one
                // re-read per list covers every notice already queued.
                let mut kinds = vec![kind];
                while let Ok(more) = list_changed.try_recv() {
                    if !kinds.contains(&more) {
                        kinds.push(more);
                    }
                }
                if let Some(me) = manager.upgrade() {
                    for kind in kinds {
                        tokio::spawn(me.clone().refresh(id.clone(), generation, peer.clone(), kind));
                    }
                }
            }
        }
    };
    let me = manager.upgrade()?;
    // The connection ended on its own: the process exited, or the transport failed.
    let exit = match process {
        Some(p) => Some(me.stop_process(&id, p, Duration::from_millis(500)).await),
        None => None,
    };
    let reason = match (&exit, ended) {
        (Some(exit), _) => format!("the server stopped unexpectedly: {exit}"),
        (None, Ok(QuitReason::JoinError(e))) | (None, Err(e)) => {
            format!("the connection failed: {e}")
        }
        (None, Ok(_)) => "the connection to the server was closed".to_owned(),
    };
    me.crashed(&id, generation, reason, started.elapsed()).await
}

impl ServerManager {
    /// Records a connection that ended on its own, unless a newer generation owns the entry;
    /// returns the wait before a restart, when one is due.
    async fn crashed(
        &self,
        id: &str,
        generation: u64,
        reason: String,
        uptime: Duration,
    ) -> Option<Duration> {
        let retry = {
            let mut entries = self.entries.lock().await;
            let entry = entries.get_mut(id).filter(|e| e.generation == generation)?;
            let reason = with_last_words(reason, None, &entry.log);
            tracing::warn!(server = id, %reason, "server stopped unexpectedly");
            entry.conn = None;
            entry.tools.clear();
            entry.resources.clear();
            entry.resource_templates.clear();
            entry.prompts.clear();
            self.back_off(entry, Event::Crashed { uptime }, reason)
        };
        self.changed(id);
        retry
    }

    /// Tells the entry's backoff what happened and sets its status to match: restarting
    /// (returning the delay) or failed.
    pub(super) fn back_off(
        &self,
        entry: &mut Entry,
        event: Event,
        reason: String,
    ) -> Option<Duration> {
        let policy = Policy {
            auto_restart: entry.config.auto_restart,
            first_delay: self.options.restart_delay,
        };
        match entry.backoff.next(event, policy) {
            Action::Restart { attempt, delay } => {
                entry.status = ServerStatus::Restarting {
                    attempt,
                    retry_in_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    reason,
                };
                Some(delay)
            }
            Action::GiveUp => {
                entry.status = ServerStatus::Failed {
                    reason: format!(
                        "{reason} (gave up after {MAX_RESTARTS} restarts; restart it by hand once fixed)"
                    ),
                };
                None
            }
            Action::Fail => {
                entry.status = ServerStatus::Failed { reason };
                None
            }
        }
    }

    /// Re-reads one list after the server said it changed.
    async fn refresh(
        self: Arc<Self>,
        id: String,
        generation: u64,
        peer: Peer<RoleClient>,
        kind: ListKind,
    ) {
        let outcome = match kind {
            ListKind::Tools => peer
                .list_all_tools()
                .await
                .map(|t| Lists::Tools(t.into_iter().map(ToolInfo::from).collect())),
            ListKind::Resources => match peer.list_all_resources().await {
                Ok(r) => {
                    // Templates are resources too: a server that changed one list may have
                    // changed the other; one that cannot list templates simply has none.
                    let templates = peer.list_all_resource_templates().await.unwrap_or_default();
                    Ok(Lists::Resources(
                        r.into_iter().map(ResourceInfo::from).collect(),
                        templates
                            .into_iter()
                            .map(ResourceTemplateInfo::from)
                            .collect(),
                    ))
                }
                Err(e) => Err(e),
            },
            ListKind::Prompts => peer
                .list_all_prompts()
                .await
                .map(|p| Lists::Prompts(p.into_iter().map(PromptInfo::from).collect())),
        };
        let lists = match outcome {
            Ok(lists) => lists,
            Err(e) => {
                tracing::warn!(server = %id, ?kind, "could not re-read a changed list: {e}");
                return;
            }
        };
        {
            let mut entries = self.entries.lock().await;
            let Some(entry) = entries.get_mut(&id).filter(|e| e.generation == generation) else {
                return;
            };
            match lists {
                Lists::Tools(t) => {
                    tracing::info!(server = %id, tools = t.len(), "tool list changed");
                    let accept_all = entry.config.trust.accept_tool_changes;
                    (entry.tools, entry.held) = self.review_tools(&id, accept_all, false, t);
                }
                Lists::Resources(r, t) => {
                    entry.resources = r;
                    entry.resource_templates = t;
                }
                Lists::Prompts(p) => entry.prompts = p,
            }
        }
        self.changed(&id);
    }
}

enum Lists {
    Tools(Vec<ToolInfo>),
    Resources(Vec<ResourceInfo>, Vec<ResourceTemplateInfo>),
    Prompts(Vec<PromptInfo>),
}
