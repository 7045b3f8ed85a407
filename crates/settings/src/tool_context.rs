//! Tool context (seed 004): what a server is told about each call in the call's `_meta`, opt-in
//! per server, and checked so it never carries a secret.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{invalid, SettingsError};

/// Context passed to a server with each `tools/call`, in the request's `_meta`: opt-in per server,
/// so no server learns anything about the conversation it was not given. Never a secret: a value
/// that refers to the keychain, or a key named like a credential, is refused by validation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolContext {
    /// Send the conversation's id as `dev.toolgate/conversationId` (a chat's calls only; a
    /// connected client's and the user's own calls belong to no conversation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conversation_id: bool,
    /// Keys and values the user chose, sent as they are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta: BTreeMap<String, serde_json::Value>,
}

/// The `_meta` key the conversation id is sent under.
pub const CONVERSATION_META_KEY: &str = "dev.toolgate/conversationId";

impl ToolContext {
    pub fn is_off(&self) -> bool {
        !self.conversation_id && self.meta.is_empty()
    }

    /// The `_meta` entries for one call: the user's keys, and the conversation id when asked
    /// for and known.
    pub fn meta_for(
        &self,
        conversation: Option<&str>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut meta: serde_json::Map<String, serde_json::Value> = self
            .meta
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let (true, Some(id)) = (self.conversation_id, conversation) {
            meta.insert(CONVERSATION_META_KEY.to_owned(), id.into());
        }
        meta
    }

    /// Why a key or value may not be sent, naming it.
    pub(crate) fn check(&self, at: &dyn Fn(&str) -> String) -> Result<(), SettingsError> {
        for (key, value) in &self.meta {
            let field = at(&format!("toolContext.meta.{key}"));
            // The spec's `_meta` key grammar: an optional `prefix/` of dot-separated labels,
            // then a name that starts and ends with a letter or digit.
            let (prefix, name) = key.rsplit_once('/').unwrap_or(("", key));
            let label_ok = |l: &str| {
                !l.is_empty()
                    && l.starts_with(|c: char| c.is_ascii_alphabetic())
                    && l.ends_with(|c: char| c.is_ascii_alphanumeric())
                    && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            };
            let name_ok = !name.is_empty()
                && name.starts_with(|c: char| c.is_ascii_alphanumeric())
                && name.ends_with(|c: char| c.is_ascii_alphanumeric())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !name_ok || (!prefix.is_empty() && !prefix.split('.').all(label_ok)) {
                return Err(invalid(
                    field,
                    "is not a valid _meta key: use letters, digits, '-', '_' and '.', starting and ending with a letter or digit, optionally after a prefix such as example.com/",
                ));
            }
            let reserved = prefix.split('.').any(|l| {
                l.eq_ignore_ascii_case("modelcontextprotocol") || l.eq_ignore_ascii_case("mcp")
            }) || key == "progressToken"
                || key == CONVERSATION_META_KEY;
            if reserved {
                return Err(invalid(
                    field,
                    "is reserved by MCP or Toolgate; choose a key with your own prefix",
                ));
            }
            if crate::vars::header_looks_secret(key) {
                return Err(invalid(
                    field,
                    "looks like a credential; tool context is sent to the server with every call and must never hold a secret (a server that needs one gets it in its env or headers as ${secret:NAME})",
                ));
            }
            let text = value.to_string();
            if text.contains("${secret:") || text.contains("${env:") {
                return Err(invalid(
                    field,
                    "refers to a secret or a variable; tool context is sent as written and must never hold a secret",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{ServerConfig, Settings};

    fn server(id: &str, command: &str) -> ServerConfig {
        ServerConfig::stdio(id, command, Vec::<String>::new())
    }

    #[test]
    fn tool_context_is_off_by_default_and_never_holds_a_secret() {
        let mut s = Settings::first_run(server("a", "node"));
        assert!(s.servers[0].tool_context.is_off());
        let json = serde_json::to_value(&s.servers[0]).unwrap();
        assert!(json.get("toolContext").is_none(), "not written while off");
        s.servers[0].tool_context.conversation_id = true;
        s.servers[0]
            .tool_context
            .meta
            .insert("example.com/tenant".into(), "acme".into());
        s.validate().expect("a plain key and value");
        assert_eq!(
            s.servers[0].tool_context.meta_for(Some("c1")),
            serde_json::json!({"example.com/tenant": "acme", "dev.toolgate/conversationId": "c1"})
                .as_object()
                .unwrap()
                .clone()
        );
        for (key, value, says) in [
            ("apiKey", "x", "credential"),
            ("example.com/Authorization", "x", "credential"),
            ("region", "${secret:REGION}", "must never hold a secret"),
            ("io.modelcontextprotocol/x", "1", "reserved"),
            ("progressToken", "1", "reserved"),
            ("-bad", "1", "not a valid _meta key"),
        ] {
            let mut bad = s.clone();
            bad.servers[0].tool_context.meta = [(key.to_owned(), serde_json::json!(value))].into();
            let e = bad.validate().unwrap_err().to_string();
            assert!(
                e.contains(says) && e.contains("toolContext.meta"),
                "{key}: {e}"
            );
            assert!(
                !e.contains("${secret:REGION}"),
                "the value is never repeated: {e}"
            );
        }
    }
}
