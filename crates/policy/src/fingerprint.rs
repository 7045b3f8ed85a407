//! Fingerprints: what a grant was given to, so that it lapses when that thing changes.
//!
//! A server id is only a name in the user's settings; what the user trusted is the program it
//! runs or the address it reaches. Likewise a tool name says little: the model reads the tool's
//! description and schema, and a server that rewrites them after approval ("rug pull") could turn
//! an approved `read_file` into something else. So a grant records both fingerprints, and
//! [`crate::decide`] re-asks when either differs.
//!
//! Both are SHA-256 over a canonical JSON text (object keys sorted at every depth, no
//! whitespace), written as 64 lowercase hex digits. A cryptographic hash because a collision
//! would carry a grant over to a server or tool someone crafted; canonical JSON because servers
//! serialize schemas with whatever key order their language has. Numbers keep their JSON text
//! (`1` and `1.0` differ): a schema that changes how it spells a number has changed.
//!
//! The input format is fixed: changing it would change every fingerprint and re-ask every bound
//! grant once (safe, but a nuisance), so do it only with a reason.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// How the client reaches a server: the part of its configuration whose change means "a
/// different server". Environment variables, working directory and HTTP headers are left out on
/// purpose: they hold secrets and tokens that rotate, and rotating a token must not revoke every
/// grant. A changed command line or URL, by contrast, is a different program or host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerEndpoint<'a> {
    Stdio {
        command: &'a str,
        args: &'a [String],
    },
    Http {
        url: &'a str,
    },
}

/// The fingerprint of a server's transport; see the module docs.
pub fn server_fingerprint(endpoint: &ServerEndpoint<'_>) -> String {
    let described = match endpoint {
        ServerEndpoint::Stdio { command, args } => {
            json!({ "kind": "stdio", "command": command, "args": args })
        }
        ServerEndpoint::Http { url } => json!({ "kind": "http", "url": url }),
    };
    hash_canonical(&described)
}

/// The fingerprint of a tool as listed: its name, description and input schema.
pub fn tool_fingerprint(name: &str, description: &str, input_schema: &Value) -> String {
    hash_canonical(&json!({
        "kind": "tool",
        "name": name,
        "description": description,
        "inputSchema": input_schema,
    }))
}

fn hash_canonical(value: &Value) -> String {
    let mut text = String::new();
    write_canonical(value, &mut text);
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `value` as compact JSON with object keys sorted. Written by hand, not through
/// `serde_json::to_string`, because `serde_json`'s map keeps insertion order whenever any crate
/// in the build enables its `preserve_order` feature, and a fingerprint must not depend on that.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(value: &Value) -> String {
        let mut out = String::new();
        write_canonical(value, &mut out);
        out
    }

    #[test]
    fn canonical_text_is_valid_sorted_json() {
        let value = json!({"b": [1, 2.5, null, true], "a": {"z": "q\"\\\n\u{1}", "y": false}});
        let text = canonical(&value);
        assert_eq!(
            text,
            r#"{"a":{"y":false,"z":"q\"\\\n\u0001"},"b":[1,2.5,null,true]}"#
        );
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn schema_key_order_does_not_matter() {
        let one: Value = serde_json::from_str(
            r#"{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}},"required":["path"]}"#,
        )
        .unwrap();
        let two: Value = serde_json::from_str(
            r#"{"required":["path"],"properties":{"n":{"type":"integer"},"path":{"type":"string"}},"type":"object"}"#,
        )
        .unwrap();
        assert_eq!(
            tool_fingerprint("read", "Reads a file", &one),
            tool_fingerprint("read", "Reads a file", &two)
        );
    }

    #[test]
    fn each_part_of_a_tool_changes_its_fingerprint() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let base = tool_fingerprint("read", "Reads a file", &schema);
        assert_eq!(base.len(), 64);
        assert!(base.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(base, tool_fingerprint("read", "Reads a file", &schema));
        assert_ne!(
            base,
            tool_fingerprint("read", "Reads a file, then mails it", &schema)
        );
        assert_ne!(base, tool_fingerprint("read2", "Reads a file", &schema));
        let wider = json!({"type": "object", "properties": {"path": {"type": "string"}, "to": {"type": "string"}}});
        assert_ne!(base, tool_fingerprint("read", "Reads a file", &wider));
    }

    #[test]
    fn server_fingerprint_follows_command_args_and_url() {
        let args = vec![
            "-y".to_owned(),
            "@modelcontextprotocol/server-filesystem".to_owned(),
        ];
        let npx = ServerEndpoint::Stdio {
            command: "npx",
            args: &args,
        };
        let base = server_fingerprint(&npx);
        assert_eq!(base, server_fingerprint(&npx));
        let other_args = vec!["-y".to_owned(), "evil-server".to_owned()];
        assert_ne!(
            base,
            server_fingerprint(&ServerEndpoint::Stdio {
                command: "npx",
                args: &other_args
            })
        );
        assert_ne!(
            base,
            server_fingerprint(&ServerEndpoint::Stdio {
                command: "uvx",
                args: &args
            })
        );
        // Arguments are a list, not a joined string: splitting differently is a different server.
        let joined = vec!["-y @modelcontextprotocol/server-filesystem".to_owned()];
        assert_ne!(
            base,
            server_fingerprint(&ServerEndpoint::Stdio {
                command: "npx",
                args: &joined
            })
        );
        let a = server_fingerprint(&ServerEndpoint::Http {
            url: "https://mcp.example.com/mcp",
        });
        let b = server_fingerprint(&ServerEndpoint::Http {
            url: "https://mcp.example.org/mcp",
        });
        assert_ne!(a, b);
        assert_ne!(a, base);
    }
}
