//! The MCP servers the host runs, as front ends show and use them: their state and its
//! changes, starting and stopping them, and what the user (or a client through the gateway)
//! reads and calls by hand. Changes that are also saved to the settings (switching a server
//! on or off, its roots, its sandbox) are [`Host`](crate::Host)'s own methods. Cheap to clone: a
//! task that watches the servers keeps its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{CompleteRequestParams, CompleteResult, GetPromptResult, ReadResourceResult};
use serde_json::Value;
use toolgate_agent::apps::{AppDocument, AppError};
use toolgate_mcp::{McpError, ServerEvent, ServerManager, ServerSnapshot, ToolOutput};
use toolgate_settings::ServerConfig;

/// The host's servers for front ends. Calls made here are the user's own (a call by hand from
/// the window, a resource they attach): whatever a model asks goes through the host's gated
/// agent ([`Host::agent`](crate::Host::agent)) instead.
#[derive(Clone)]
pub struct Servers {
    pub(crate) manager: Arc<ServerManager>,
}

impl Servers {
    /// Every configured server as it is now: status, tools, resources, prompts.
    pub async fn snapshot(&self) -> Vec<ServerSnapshot> {
        self.manager.snapshot().await
    }

    /// A receiver that changes whenever a server's status or lists change.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.manager.subscribe()
    }

    /// Progress, log messages and output lines as servers send them, plus change notices.
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<ServerEvent> {
        self.manager.events()
    }

    /// The server's stderr as kept in memory, oldest first (the window shows the last lines
    /// of it: [`Host::server_log`](crate::Host::server_log)).
    pub async fn stderr_tail(&self, id: &str) -> Vec<String> {
        self.manager.stderr_tail(id).await
    }

    /// Starts every enabled server of `configs`, each in its own task, and waits for all of
    /// them to be ready or failed.
    pub async fn start_all(&self, configs: &[ServerConfig]) {
        self.manager.start_all(configs).await
    }

    /// Starts one configured server (stopping it first if it runs) and waits until it is ready
    /// or has failed.
    pub async fn start(&self, id: &str) {
        self.manager.start(id).await
    }

    /// Adds servers newly saved to the settings and starts those that are enabled.
    pub async fn add(&self, configs: &[ServerConfig]) {
        self.manager.add(configs).await
    }

    /// Stops a server and starts it again.
    pub async fn restart(&self, id: &str) -> Result<(), McpError> {
        self.manager.restart(id).await
    }

    /// Stops every server this host runs.
    pub async fn stop_all(&self) {
        self.manager.stop_all().await
    }

    /// Forgets the tools accepted from server `id`, so a server later added under that id has
    /// its first tool list accepted as a new server's.
    pub fn forget_tools(&self, id: &str) {
        self.manager.forget_tools(id)
    }

    /// Keeps `port` closed to every confined server while the returned reservation lives (the
    /// gateway's HTTP door, once it has its port).
    pub fn hold_port(&self, port: u16) -> toolgate_sandbox::Reservation {
        self.manager.reserved_ports().hold(port)
    }

    /// Calls a tool for the user, who asked for it by hand: no gate, the server's timeouts.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<ToolOutput, McpError> {
        self.manager.call_tool(server, tool, arguments).await
    }

    /// Reads one of a server's resources, as the server sent it.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, McpError> {
        self.manager.read_resource(server, uri).await
    }

    /// Fills a resource template with `values` and reads the resource it names: the URI read,
    /// and the result.
    pub async fn read_resource_template(
        &self,
        server: &str,
        template: &str,
        values: &BTreeMap<String, String>,
    ) -> Result<(String, ReadResourceResult), McpError> {
        self.manager
            .read_resource_template(server, template, values)
            .await
    }

    /// One of a server's prompts filled with `arguments`.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
    ) -> Result<GetPromptResult, McpError> {
        self.manager.get_prompt(server, name, arguments).await
    }

    /// The MCP App (`ui://` resource) at `uri` of `server`, checked and ready to show.
    pub async fn load_app(&self, server: &str, uri: &str) -> Result<AppDocument, AppError> {
        toolgate_agent::apps::load(&self.manager, server, uri).await
    }

    /// `completion/complete` at `server`, as a client of the gateway asked it.
    pub async fn complete(
        &self,
        server: &str,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, McpError> {
        self.manager.complete(server, params).await
    }

    /// Whether `server` sends updates of the resources it is asked to watch.
    pub async fn offers_subscriptions(&self, server: &str) -> bool {
        self.manager.offers_subscriptions(server).await
    }

    /// One more subscriber to `uri` at `server` (the server is asked for the first).
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), McpError> {
        self.manager.subscribe_resource(server, uri).await
    }

    /// One subscriber fewer to `uri` at `server` (the server is told when none is left).
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), McpError> {
        self.manager.unsubscribe_resource(server, uri).await
    }
}
