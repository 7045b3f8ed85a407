//! Adding, removing, starting, stopping and restarting servers, and the changes that restart one
//! (switching it on, new roots for a confined server). A start's connection is handed to its
//! supervising task (`supervision.rs`), whose asked-for restarts are scheduled here.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;
use toolgate_settings::{ServerConfig, Transport};

use super::backoff::Event;
use super::connect::{self, Connected};
use super::entry::{Conn, Retired, Starting};
use super::registry::ServerManager;
use super::supervision::supervise;
use crate::host_env::HostEnv;
use crate::McpError;
use crate::ServerStatus;

/// What a change of roots did to a running server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootsChange {
    /// It was told (`notifications/roots/list_changed`), or is not running.
    Told,
    /// Its sandbox is built from its roots, so it was restarted with the new ones.
    Restarted,
}

impl ServerManager {
    /// Replaces the configured servers and starts every enabled one, concurrently. Returns when
    /// each has either started or failed.
    pub async fn start_all(&self, configs: &[ServerConfig]) {
        self.stop_all().await;
        self.entries.lock().await.clear();
        self.add(configs).await;
    }

    /// Adds servers next to the running ones (after an import, say) and starts the enabled ones;
    /// a server whose id is already configured is left as it is.
    pub async fn add(&self, configs: &[ServerConfig]) {
        let mut added: Vec<&ServerConfig> = Vec::new();
        {
            let mut entries = self.entries.lock().await;
            for config in configs {
                if !entries.contains_key(&config.id) {
                    entries.insert(config.id.clone(), self.new_entry(config));
                    added.push(config);
                }
            }
        }
        self.changed("");
        // Each start is a task of its own, so the servers' spawns (a fork each, not cheap for a
        // large app) and handshakes run on every worker at once, with nothing in series.
        let starts: Vec<_> = added
            .iter()
            .filter(|c| c.enabled)
            .map(|c| {
                let (me, id) = (self.me.upgrade(), c.id.clone());
                tokio::spawn(async move {
                    if let Some(me) = me {
                        me.start(&id).await;
                    }
                })
            })
            .collect();
        for start in starts {
            let _ = start.await;
        }
    }

    /// Starts one configured server, stopping it first if it runs. This is also the user's
    /// "restart": it clears the crash count.
    pub async fn restart(&self, id: &str) -> Result<(), McpError> {
        self.entries
            .lock()
            .await
            .get_mut(id)
            .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?
            .backoff
            .reset();
        self.start(id).await;
        Ok(())
    }

    /// Starts one configured server (stopping it first if it runs) and waits until it is
    /// ready or has failed.
    pub fn start<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        self.start_if(id, None)
    }

    /// Starts a server if its generation is still `expected` (a restart scheduled after a crash
    /// must not revive a server stopped meanwhile). Boxed: a crash restarts the server from inside
    /// the task a start spawns.
    fn start_if<'a>(&'a self, id: &'a str, expected: Option<u64>) -> BoxFuture<'a, ()> {
        Box::pin(self.start_inner(id, expected))
    }

    async fn start_inner(&self, id: &str, expected: Option<u64>) {
        // The PATH the start will find its program on, found before the entries are locked
        // (it may wait for the login shell): the admission checks what runs there.
        let known = self.entries.lock().await.get(id).map(|e| e.config.clone());
        let host = match known.as_ref().map(|c| &c.transport) {
            Some(Transport::Stdio { command, cwd, .. }) => {
                self.host_env_for(command, cwd.as_deref()).await.clone()
            }
            // A remote server's admission looks nothing up.
            _ => HostEnv::from_dirs(Vec::new()),
        };
        let cancel = CancellationToken::new();
        let (_done, done) = watch::channel(());
        let (config, log, roots, refused, generation, retired) = {
            let mut entries = self.entries.lock().await;
            let Some(entry) = entries.get_mut(id) else {
                return;
            };
            if expected.is_some_and(|g| g != entry.generation) {
                return;
            }
            if let Err(reason) = self.admitted(&entry.config, &host) {
                tracing::warn!(server = id, %reason, "server not started");
                let retired = entry.retire(self.next_generation(), ServerStatus::Failed { reason });
                entry.blocked = true;
                drop(entries);
                self.changed(id);
                retired.finish().await;
                return;
            }
            entry.blocked = false;
            let generation = self.next_generation();
            let retired = entry.retire(generation, ServerStatus::Starting);
            entry.starting = Some(Starting {
                cancel: cancel.clone(),
                done,
            });
            entry.session = None;
            entry.needs_scope = None;
            entry
                .refused
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
            (
                entry.config.clone(),
                entry.log.clone(),
                entry.roots.clone(),
                entry.refused.clone(),
                generation,
                retired,
            )
        };
        self.changed(id);
        retired.finish().await;
        // Only now: the old process's last words must not explain the new one's failure.
        log.clear();
        let mut facts = super::connect::StartFacts::default();
        let outcome = self
            .connect(&config, &log, roots, refused, &cancel, &mut facts)
            .await;
        let mut entries = self.entries.lock().await;
        let Some(entry) = entries.get_mut(id).filter(|e| e.generation == generation) else {
            // Stopped or restarted while starting: this connection is no longer wanted.
            drop(entries);
            if let Ok((connected, ..)) = outcome {
                self.close_connected(id, connected).await;
            }
            return;
        };
        entry.starting = None;
        if facts.sandbox.is_some() {
            entry.sandbox = facts.sandbox;
        }
        if facts.installed.is_some() {
            entry.installed = facts.installed;
        }
        let retry = match outcome {
            Ok((connected, listed)) => {
                tracing::info!(server = id, tools = listed.tools.len(), "server ready");
                let peer = connected.service.peer().clone();
                entry.implementation = listed.implementation;
                entry.protocol_version = listed.protocol_version;
                let accept_all = entry.config.trust.accept_tool_changes;
                (entry.tools, entry.held) = self.review_tools(id, accept_all, true, listed.tools);
                entry.resources = listed.resources;
                entry.resource_templates = listed.resource_templates;
                entry.prompts = listed.prompts;
                entry.session = connected.session.clone();
                entry.status = ServerStatus::Ready;
                let (stop, stop_rx) = oneshot::channel();
                let task = tokio::spawn(self.supervised(id, generation, connected, stop_rx));
                entry.conn = Some(Conn { peer, stop, task });
                None
            }
            Err(connect::Failure {
                reason,
                sign_in: Some(again),
                needs_scope,
            }) => {
                // Nothing is retried until the user signs in: a retry would only be refused.
                tracing::info!(server = id, %reason, "server needs a sign-in");
                entry.status = ServerStatus::SignIn { reason, again };
                entry.needs_scope = needs_scope;
                None
            }
            Err(connect::Failure { reason, .. }) => {
                // The reason is the server's status, which the window and the CLI show; a
                // warning too would say it twice.
                tracing::info!(server = id, %reason, "server failed to start");
                self.back_off(entry, Event::StartFailed, reason)
            }
        };
        drop(entries);
        self.changed(id);
        if let Some(delay) = retry {
            self.restart_later(id, generation, delay);
        }
    }

    /// Stops one server and leaves it stopped.
    pub async fn stop(&self, id: &str) -> Result<(), McpError> {
        let retired = {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(id)
                .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?;
            entry.retire(self.next_generation(), ServerStatus::Stopped)
        };
        self.changed(id);
        retired.finish().await;
        Ok(())
    }

    /// Stops a server and forgets it (the user removed it).
    pub async fn remove(&self, id: &str) -> Result<(), McpError> {
        self.stop(id).await?;
        self.entries.lock().await.remove(id);
        self.forget_reach(id);
        self.changed(id);
        Ok(())
    }

    /// Switches a server on (starting it) or off (stopping it), and remembers the choice for
    /// the snapshot.
    pub async fn set_enabled(&self, id: &str, enabled: bool) -> Result<(), McpError> {
        {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(id)
                .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?;
            entry.config.enabled = enabled;
        }
        if enabled {
            self.start(id).await;
            Ok(())
        } else {
            self.stop(id).await
        }
    }

    /// Whether the manager's admission lets `config` start.
    fn admitted(&self, config: &ServerConfig, host: &HostEnv) -> Result<(), String> {
        match &self.options.admit {
            Some(admit) => admit(config, host).map_err(|refusal| refusal.to_string()),
            None => Ok(()),
        }
    }

    /// Asks the admission again of every server, after the policy behind it changed: a
    /// running or starting server it now refuses is stopped and shown as failed with the
    /// reason; one it refused before and lets through now is started, if it is enabled.
    pub async fn enforce_admission(&self) {
        let host = self.host_env().await.clone();
        let (retired, to_start) = {
            let mut entries = self.entries.lock().await;
            let mut retired = Vec::new();
            let mut to_start = Vec::new();
            for (id, entry) in entries.iter_mut() {
                match self.admitted(&entry.config, &host) {
                    Err(reason) => {
                        let shown = matches!(&entry.status, ServerStatus::Failed { reason: r } if *r == reason);
                        let live = entry.conn.is_some() || entry.starting.is_some();
                        if live || (entry.config.enabled && !shown) {
                            tracing::warn!(server = %id, %reason, "server stopped by the managed policy");
                            retired.push(
                                entry.retire(
                                    self.next_generation(),
                                    ServerStatus::Failed { reason },
                                ),
                            );
                            entry.blocked = true;
                        }
                    }
                    Ok(()) => {
                        if entry.blocked && entry.config.enabled {
                            to_start.push(id.clone());
                        }
                    }
                }
            }
            (retired, to_start)
        };
        futures::future::join_all(retired.into_iter().map(Retired::finish)).await;
        self.changed("");
        for id in to_start {
            self.start(&id).await;
        }
    }

    /// Stops every server, starting ones included: closes stdin, waits, then terminates each
    /// process group. Returns when every process is gone.
    pub async fn stop_all(&self) {
        let retired: Vec<Retired> = {
            let mut entries = self.entries.lock().await;
            entries
                .values_mut()
                .map(|e| e.retire(self.next_generation(), ServerStatus::Stopped))
                .collect()
        };
        futures::future::join_all(retired.into_iter().map(Retired::finish)).await;
        self.changed("");
    }

    /// Changes the folders a server is offered as roots, and tells it so. A confined server's
    /// sandbox is built from its roots, so a running one is restarted to apply them (the log
    /// says why).
    pub async fn set_roots(&self, id: &str, roots: Vec<PathBuf>) -> Result<RootsChange, McpError> {
        let (peer, restart) = {
            let mut entries = self.entries.lock().await;
            let entry = entries
                .get_mut(id)
                .ok_or_else(|| McpError::UnknownServer(id.to_owned()))?;
            *entry.roots.write().unwrap_or_else(|p| p.into_inner()) = roots.clone();
            let changed = entry.config.roots != roots;
            entry.config.roots = roots;
            let confined = entry.config.sandbox_settings().is_some_and(|s| s.enabled);
            let live = entry.conn.is_some() || entry.starting.is_some();
            if changed && confined && live {
                (None, Some(entry.log.clone()))
            } else {
                (entry.conn.as_ref().map(|c| c.peer.clone()), None)
            }
        };
        if let Some(log) = restart {
            self.start(id).await;
            // After the start, which clears the previous run's lines from the log's tail.
            log.push(
                "(toolgate) restarted: its folders changed, and its sandbox is built from them",
            );
            return Ok(RootsChange::Restarted);
        }
        if let Some(peer) = peer {
            peer.notify_roots_list_changed()
                .await
                .map_err(|e| McpError::Request {
                    server: id.to_owned(),
                    what: "be told its roots changed",
                    detail: e.to_string(),
                })?;
        }
        Ok(RootsChange::Told)
    }

    /// Starts the server after `delay`, unless it was stopped or started anew meanwhile: a
    /// newer generation then owns it.
    fn restart_later(&self, id: &str, generation: u64, delay: Duration) {
        let me = self.me.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Some(me) = me.upgrade() {
                me.start_if(&id, Some(generation)).await;
            }
        });
    }

    /// The supervising task of a new connection, which starts the server again when the
    /// connection ends on its own and the backoff says so.
    fn supervised(
        &self,
        id: &str,
        generation: u64,
        connected: Connected,
        stop: oneshot::Receiver<()>,
    ) -> impl Future<Output = ()> + Send + 'static {
        let me = self.me.clone();
        let id = id.to_owned();
        async move {
            let restart = supervise(me.clone(), id.clone(), generation, connected, stop).await;
            if let (Some(delay), Some(me)) = (restart, me.upgrade()) {
                me.restart_later(&id, generation, delay);
            }
        }
    }
}
