//! What the running servers offer, as the catalog receives it.
//!
//! These are this crate's own types, not the MCP client's, so the catalog depends on no other
//! workspace crate and can be tested with plain values.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One running MCP server and the tools it lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceServer {
    /// The user's unique server id; tool calls are routed by it.
    pub id: String,
    /// Name shown to the user.
    pub name: String,
    /// When false, none of the server's tools is offered (they are still listed, as hidden).
    pub enabled: bool,
    pub tools: Vec<SourceTool>,
}

/// One tool as the server describes it in `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SourceTool {
    /// The server's own name for the tool; calls go back to the server under this name.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of the arguments, exactly as the server sent it.
    #[serde(default)]
    pub input_schema: Value,
    #[serde(default)]
    pub annotations: Annotations,
}

/// MCP tool annotations. They are hints from the server, not guarantees: the approval gate may use
/// them to choose a default, never to skip asking when the user said to ask.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl SourceTool {
    /// The best human-readable name: the tool's title, the annotations' title, or its name.
    pub fn display_title(&self) -> &str {
        self.title
            .as_deref()
            .or(self.annotations.title.as_deref())
            .unwrap_or(&self.name)
    }
}
