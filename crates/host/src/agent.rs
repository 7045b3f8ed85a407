//! The only place a gated agent is made: [`Host::agent`].
//!
//! Every caller — Toolgate's chat, the CLI's `run`/`chat`, a client connected through the
//! gateway, an MCP App shown in a chat — gets its agent here, with every safeguard filled in the
//! same way: the host's gate, rules and audit log, the shared offers, and the exposure of the
//! conversation (or connection) the calls belong to. The callers differ only in the [`Caller`]
//! they pass, so none can forget a part.

use std::collections::BTreeSet;
use std::sync::Arc;

use toolgate_agent::{Agent, AgentParts, Exposure, HistoryRecorder, ToolTarget, TurnOptions};
use toolgate_catalog::CatalogSettings;

use crate::Host;

/// Who the agent works for.
pub enum Caller<'a> {
    /// Toolgate's chat, or the CLI's `run`/`chat`: a conversation in the history (`None` when
    /// it could not be saved), with the servers the user switched off for it.
    Chat {
        conversation: Option<String>,
        servers_off: &'a [String],
    },
    /// A host connected through the gateway (Claude Code, Cursor…), named by its profile or
    /// its `clientInfo.name`, on one connection.
    Client {
        name: &'a str,
        connection: &'a Connection,
    },
    /// An MCP App of `server`, shown in the chat `conversation`: it reaches only its own
    /// server's tools, and shares what that chat has read.
    App {
        server: &'a str,
        conversation: Option<String>,
    },
}

/// One connected client's connection: what it has read is kept across its calls (see
/// [`Exposure`]), and forgotten with it.
#[derive(Default)]
pub struct Connection {
    exposure: Arc<Exposure>,
}

/// What a connected client sees: its profile's servers, and the tool settings with the
/// profile's exclusions added.
#[derive(Debug, Clone)]
pub struct ClientView {
    /// The servers it is offered, by id; `None`: every server.
    pub servers: Option<BTreeSet<String>>,
    pub tools: CatalogSettings,
}

impl Host {
    /// A gated agent for `caller`.
    pub async fn agent(self: &Arc<Self>, caller: Caller<'_>) -> Agent {
        let history = self.history.clone().ok();
        let (mut tools, target) = {
            // Only what the agent needs: a call's path must not copy the whole settings.
            let settings = self.settings();
            let target = match &caller {
                Caller::Chat { .. } => settings.provider.tool_target(),
                _ => ToolTarget::Anthropic,
            };
            (settings.tools.clone(), target)
        };
        let mut parts = AgentParts {
            servers: self.servers.manager.clone(),
            gate: self.approvals.gate.clone(),
            policy: self.policy(),
            history: history.clone(),
            conversation: None,
            client: None,
            exposure: Arc::new(Exposure::new()),
            offers: self.offers.clone(),
            tools: CatalogSettings::default(),
            target,
            only: None,
            recorder: None,
            system: Some(toolgate_agent::SYSTEM_PROMPT.to_owned()),
        };
        match caller {
            Caller::Chat {
                conversation,
                servers_off,
            } => {
                // Servers switched off for this chat offer the model none of their tools.
                for server in servers_off {
                    let entry = tools.servers.entry(server.clone()).or_default();
                    entry.exclude.push("*".into());
                }
                parts.exposure = self.exposure(conversation.as_deref());
                if let (Some(history), Some(id)) = (&history, &conversation) {
                    parts.recorder =
                        Some(Arc::new(HistoryRecorder::new(history.clone(), id.clone())));
                }
                parts.conversation = conversation;
            }
            Caller::Client { name, connection } => {
                let view = self.client_view_of(name, tools);
                tools = view.tools;
                parts.only = view.servers;
                parts.client = Some(name.to_owned());
                parts.exposure = connection.exposure.clone();
            }
            Caller::App {
                server,
                conversation,
            } => {
                let name = self
                    .servers
                    .manager
                    .snapshot()
                    .await
                    .into_iter()
                    .find(|s| s.id == server)
                    .map_or_else(|| server.to_owned(), |s| s.name);
                parts.client = Some(format!("the {name} app"));
                // The app lives in the chat: what the chat read, the app's calls are judged by.
                parts.exposure = self.exposure(conversation.as_deref());
                parts.conversation = conversation;
            }
        }
        parts.tools = tools;
        Agent::new(parts)
    }

    /// What the client `name` (its profile, else its own name) is offered.
    pub fn client_view(&self, name: &str) -> ClientView {
        let tools = self.settings().tools.clone();
        self.client_view_of(name, tools)
    }

    /// `tools` (the user's tool settings) with the profile of `name` applied.
    fn client_view_of(&self, name: &str, mut tools: CatalogSettings) -> ClientView {
        let settings = self.settings();
        let Some((_, profile)) = settings.gateway.profile(name) else {
            return ClientView {
                servers: None,
                tools,
            };
        };
        for (server, globs) in &profile.exclude {
            tools
                .servers
                .entry(server.clone())
                .or_default()
                .exclude
                .extend(globs.iter().cloned());
        }
        ClientView {
            servers: profile.servers.clone(),
            tools,
        }
    }

    /// How a turn or call may run, with the user's approval time-out.
    pub fn turn_options(&self) -> TurnOptions {
        TurnOptions {
            approval_timeout: self.settings().policy.approval_timeout(),
            ..TurnOptions::default()
        }
    }
}
