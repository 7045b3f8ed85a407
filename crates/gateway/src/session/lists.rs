//! What a client sees: its profile's tools (the catalog a turn builds), resources, resource
//! templates and prompts; the wait before its first list; and telling it when they change.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::model::{Prompt, Resource, ResourceTemplate, ResourceUpdatedNotificationParam, Tool};
use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Value};
use toolgate_mcp::{ServerEvent, ServerSnapshot, ServerStatus};

use super::Session;

/// How often a session of the HTTP door checks that its client is still there, to stop
/// following lists for one that left without a word (its transport closes, nothing cancels).
const STILL_THERE: Duration = Duration::from_secs(10);

/// Where list changes go: an older-era session's peer, or a 2026-07-28 `subscriptions/listen`
/// stream (which rmcp filters to what the client asked for).
enum Listener<'a> {
    Session(rmcp::Peer<RoleServer>),
    /// A listen stream, with the (server, URI) it watches.
    Subscription(
        rmcp::service::SubscriptionSink,
        &'a BTreeSet<(String, String)>,
    ),
}

#[derive(Clone, Copy)]
enum ListKind {
    Tools,
    Resources,
    Prompts,
}

impl Listener<'_> {
    /// Tells the client; false once it cannot be told any more.
    async fn changed(&self, kind: ListKind) -> bool {
        match (self, kind) {
            (Listener::Session(peer), ListKind::Tools) => {
                peer.notify_tool_list_changed().await.is_ok()
            }
            (Listener::Session(peer), ListKind::Resources) => {
                peer.notify_resource_list_changed().await.is_ok()
            }
            (Listener::Session(peer), ListKind::Prompts) => {
                peer.notify_prompt_list_changed().await.is_ok()
            }
            (Listener::Subscription(sink, _), kind) => {
                let sent = match kind {
                    ListKind::Tools => sink.notify_tool_list_changed().await,
                    ListKind::Resources => sink.notify_resource_list_changed().await,
                    ListKind::Prompts => sink.notify_prompt_list_changed().await,
                };
                // A kind the client did not ask for is not sent, and is no reason to stop.
                matches!(
                    sent,
                    Ok(()) | Err(rmcp::service::SubscriptionSendError::NotificationNotAccepted(_))
                )
            }
        }
    }

    fn gone(&self) -> bool {
        match self {
            Listener::Session(peer) => peer.is_transport_closed(),
            Listener::Subscription(..) => false,
        }
    }
}

impl Session {
    /// The servers this client's profile shows that are enabled and still on their way up
    /// (not started yet, or starting), by name. A server that is ready, failed, retrying after
    /// a failure or waiting for a sign-in is settled: waiting would not bring its tools.
    async fn starting(&self, client: &str) -> Vec<String> {
        let only = self.host.client_view(client).servers;
        let snapshot = self.host.servers().snapshot().await;
        self.host
            .settings()
            .servers
            .iter()
            .filter(|s| s.enabled && only.as_ref().is_none_or(|o| o.contains(&s.id)))
            .filter(|s| {
                snapshot
                    .iter()
                    .find(|snap| snap.id == s.id)
                    .is_none_or(|snap| {
                        matches!(snap.status, ServerStatus::Starting | ServerStatus::Stopped)
                    })
            })
            .map(|s| s.name.clone())
            .collect()
    }

    /// Before a client's first list is answered: waits until the servers its profile shows
    /// that are starting are ready or have failed, at most the gateway's first-list wait. A
    /// host that lists once (many do) would otherwise keep a short list; later changes reach it
    /// as `list_changed`. Says in the log which servers it waited for.
    pub(super) async fn first_lists_settled(&self, client: &str) {
        if self.settled.load(Ordering::SeqCst) {
            return;
        }
        let wait = self.host.settings().gateway.first_list_wait();
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = self.host.servers().changes();
        let mut told = false;
        loop {
            let starting = self.starting(client).await;
            if starting.is_empty() {
                if told && !self.settled.swap(true, Ordering::SeqCst) {
                    tracing::info!(%client, "the servers it waited for are settled; answering its list");
                }
                break;
            }
            // Tools, resources and prompts are often asked for at once: one line says it.
            if !told && !self.said_waiting.swap(true, Ordering::SeqCst) {
                tracing::info!(%client, servers = %starting.join(", "), wait_secs = wait.as_secs(), "a client's first list waits for servers that are starting");
            }
            told = true;
            tokio::select! {
                () = self.closed.cancelled() => return,
                () = tokio::time::sleep_until(deadline) => {
                    tracing::warn!(%client, servers = %starting.join(", "), "still starting after the first-list wait; answering without them (they follow as list_changed)");
                    break;
                }
                changed = changes.changed() => if changed.is_err() { break },
            }
        }
        self.settled.store(true, Ordering::SeqCst);
    }

    /// The ready servers this client's profile shows.
    pub(super) async fn servers(&self, client: &str) -> Vec<ServerSnapshot> {
        let only = self.host.client_view(client).servers;
        let mut servers = self.host.servers().snapshot().await;
        servers.retain(|s| {
            s.enabled
                && s.status == ServerStatus::Ready
                && only.as_ref().is_none_or(|o| o.contains(&s.id))
        });
        servers
    }

    /// The catalog's tools for this client, each under the name the catalog gives it.
    pub(super) async fn tools(&self, client: &str) -> Result<Vec<Tool>, ErrorData> {
        let client = self.client_named(client);
        let catalog = self
            .agent(&client)
            .await
            .catalog_for_client()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        catalog
            .entries()
            .iter()
            .map(|entry| {
                let mut tool = serde_json::to_value(&*entry.tool)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                tool["name"] = Value::String(entry.model_name.clone());
                serde_json::from_value(tool).map_err(|e| {
                    ErrorData::internal_error(
                        format!(
                            "{} lists a tool Toolgate cannot pass on: {e}",
                            entry.server_name
                        ),
                        None,
                    )
                })
            })
            .collect()
    }

    /// A client by name, for what only needs its view (its profile), not its calls.
    pub(super) fn client_named(&self, name: &str) -> super::Client {
        super::Client {
            name: name.to_owned(),
            state: match &self.who {
                super::Who::Socket { state, .. } => state.clone(),
                super::Who::Door { clients, .. } => clients.get(name),
            },
        }
    }

    /// Prompts by the name this client sees: the server's own, or `server__name` where two
    /// servers use the same one; with the server and the prompt as the server lists it.
    pub(super) async fn prompts(
        &self,
        client: &str,
    ) -> Vec<(String, String, toolgate_mcp::PromptInfo)> {
        let servers = self.servers(client).await;
        let mut count = std::collections::HashMap::<String, usize>::new();
        for p in servers.iter().flat_map(|s| &s.prompts) {
            *count.entry(p.name.clone()).or_default() += 1;
        }
        servers
            .iter()
            .flat_map(|s| s.prompts.iter().map(move |p| (s.id.clone(), p.clone())))
            .map(|(server, p)| {
                let shown = if count.get(&p.name).copied().unwrap_or(0) > 1 {
                    format!("{server}__{}", p.name)
                } else {
                    p.name.clone()
                };
                (shown, server, p)
            })
            .collect()
    }

    /// `prompts/list`: each prompt by the name this client sees.
    pub(super) async fn prompt_list(&self, client: &str) -> Vec<Prompt> {
        self.prompts(client)
            .await
            .into_iter()
            .filter_map(|(shown, _, p)| {
                let arguments: Vec<Value> = p
                    .argument_info
                    .iter()
                    .map(|a| json!({ "name": a.name, "description": a.description, "required": a.required }))
                    .collect();
                serde_json::from_value::<Prompt>(json!({
                    "name": shown,
                    "description": p.description,
                    "arguments": arguments,
                }))
                .ok()
            })
            .collect()
    }

    /// `resources/list`: every resource of the servers this client sees.
    pub(super) async fn resources(&self, client: &str) -> Vec<Resource> {
        self.servers(client)
            .await
            .iter()
            .flat_map(|s| &s.resources)
            .filter_map(|r| {
                serde_json::from_value::<Resource>(json!({
                    "uri": r.uri,
                    "name": r.name,
                    "description": r.description,
                    "mimeType": r.mime_type,
                }))
                .ok()
            })
            .collect()
    }

    /// `resources/templates/list`: every resource template of the servers this client sees.
    pub(super) async fn templates(&self, client: &str) -> Vec<ResourceTemplate> {
        self.servers(client)
            .await
            .iter()
            .flat_map(|s| &s.resource_templates)
            .filter_map(|t| {
                serde_json::from_value::<ResourceTemplate>(json!({
                    "uriTemplate": t.uri_template,
                    "name": t.name,
                    "description": t.description,
                    "mimeType": t.mime_type,
                }))
                .ok()
            })
            .collect()
    }

    /// The server whose template is `uri` (a completion names the template itself), or names
    /// it (a read names a resource made from one), among those this client sees.
    pub(super) async fn template_owner(&self, client: &str, uri: &str) -> Option<String> {
        let servers = self.servers(client).await;
        let owns = |exact: bool| {
            servers
                .iter()
                .find(|s| {
                    s.resource_templates.iter().any(|t| {
                        if exact {
                            t.uri_template == uri
                        } else {
                            toolgate_mcp::templates::matches(&t.uri_template, uri)
                        }
                    })
                })
                .map(|s| s.id.clone())
        };
        owns(true).or_else(|| owns(false))
    }

    /// What this client sees of the lists, to tell when one changed.
    async fn lists(&self, client: &str) -> (String, Vec<String>, Vec<String>) {
        let servers = self.servers(client).await;
        let tools = self.tools(client).await.unwrap_or_default();
        (
            serde_json::to_string(&tools).unwrap_or_default(),
            servers
                .iter()
                .flat_map(|s| s.resources.iter().map(|r| r.uri.clone()))
                .collect(),
            servers
                .iter()
                .flat_map(|s| s.prompts.iter().map(|p| p.name.clone()))
                .collect(),
        )
    }

    /// Tells an older-era session whenever its tools, resources or prompts change, and when a
    /// resource it subscribed to was updated, until it ends or can no longer be told.
    pub(super) async fn follow_session(&self, client: &str, peer: rmcp::Peer<RoleServer>) {
        self.follow_lists(client, Listener::Session(peer)).await;
    }

    /// Tells a 2026-07-28 client's `subscriptions/listen` stream whenever its lists change, and
    /// when a resource it `watched` (server, URI) was updated.
    pub(super) async fn follow_subscription(
        &self,
        client: &str,
        sink: rmcp::service::SubscriptionSink,
        watched: &BTreeSet<(String, String)>,
    ) {
        self.follow_lists(client, Listener::Subscription(sink, watched))
            .await;
    }

    async fn follow_lists(&self, client: &str, to: Listener<'_>) {
        let mut changes = self.host.servers().changes();
        let mut events = self.host.servers().events();
        let mut seen = self.lists(client).await;
        loop {
            tokio::select! {
                () = self.closed.cancelled() => return,
                () = tokio::time::sleep(STILL_THERE) => {
                    if to.gone() { return }
                    continue;
                }
                event = events.recv() => {
                    match event {
                        Ok(ServerEvent::ResourceUpdated { server, uri }) => {
                            let key = (server, uri);
                            let told = match &to {
                                Listener::Session(peer) => {
                                    if !self.lock_subscribed().contains(&key) {
                                        continue;
                                    }
                                    let update = ResourceUpdatedNotificationParam::new(key.1);
                                    peer.notify_resource_updated(update).await.is_ok()
                                }
                                Listener::Subscription(sink, watched) => {
                                    if !watched.contains(&key) {
                                        continue;
                                    }
                                    sink.notify_resource_updated(key.1).await.is_ok()
                                }
                            };
                            if !told {
                                return;
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                        _ => {}
                    }
                    continue;
                }
                changed = changes.changed() => if changed.is_err() { return },
            }
            let now = self.lists(client).await;
            for (differs, kind) in [
                (now.0 != seen.0, ListKind::Tools),
                (now.1 != seen.1, ListKind::Resources),
                (now.2 != seen.2, ListKind::Prompts),
            ] {
                if differs && !to.changed(kind).await {
                    return;
                }
            }
            seen = now;
        }
    }
}
