//! What is asking to pass the gate.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request that needs the user's approval: a tool call the model wants to make, or a request a
/// server makes of the client (sampling asks our model to generate text, with the user's tokens
/// and possibly the conversation's context; elicitation asks the user a question).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Subject {
    ToolCall(ToolCall),
    #[serde(rename_all = "camelCase")]
    Sampling {
        server_id: String,
        /// See [`crate::server_fingerprint`]. Carried here too so that a sampling grant, like a
        /// tool grant, lapses when the server behind the id is replaced.
        server_fingerprint: String,
    },
    #[serde(rename_all = "camelCase")]
    Elicitation {
        server_id: String,
        server_fingerprint: String,
    },
}

impl Subject {
    pub fn server_id(&self) -> &str {
        match self {
            Subject::ToolCall(call) => &call.server_id,
            Subject::Sampling { server_id, .. } | Subject::Elicitation { server_id, .. } => {
                server_id
            }
        }
    }

    pub fn server_fingerprint(&self) -> &str {
        match self {
            Subject::ToolCall(call) => &call.server_fingerprint,
            Subject::Sampling {
                server_fingerprint, ..
            }
            | Subject::Elicitation {
                server_fingerprint, ..
            } => server_fingerprint,
        }
    }
}

/// One tool call as the gate sees it: exactly the arguments that will be sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub server_id: String,
    /// The tool's own name on its server, not the model-facing name (which can change when
    /// another server comes or goes; see `toolgate-catalog`).
    pub tool: String,
    pub arguments: Value,
    #[serde(default)]
    pub annotations: Annotations,
    /// [`crate::server_fingerprint`] of the server's transport as it runs now.
    pub server_fingerprint: String,
    /// [`crate::tool_fingerprint`] of the tool as the server lists it now.
    pub tool_fingerprint: String,
}

/// The tool's annotations as its server states them. They are hints from the server, not
/// guarantees, so they only shape the defaults and never override a rule of the user's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subjects_round_trip_with_a_kind_tag() {
        let call = Subject::ToolCall(ToolCall {
            server_id: "fs".into(),
            tool: "read_file".into(),
            arguments: json!({"path": "/tmp/a"}),
            annotations: Annotations {
                read_only: true,
                destructive: false,
            },
            server_fingerprint: "s".into(),
            tool_fingerprint: "t".into(),
        });
        let value = serde_json::to_value(&call).unwrap();
        assert_eq!(value["kind"], json!("toolCall"));
        assert_eq!(value["serverId"], json!("fs"));
        assert_eq!(
            value["annotations"],
            json!({"readOnly": true, "destructive": false})
        );
        assert_eq!(serde_json::from_value::<Subject>(value).unwrap(), call);

        let sampling = Subject::Sampling {
            server_id: "fs".into(),
            server_fingerprint: "s".into(),
        };
        let value = serde_json::to_value(&sampling).unwrap();
        assert_eq!(
            value,
            json!({"kind": "sampling", "serverId": "fs", "serverFingerprint": "s"})
        );
        assert_eq!(serde_json::from_value::<Subject>(value).unwrap(), sampling);
    }
}
