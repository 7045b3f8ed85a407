//! Resources the user attaches to a message: their text goes to the model with the message, each
//! in a block that names its server and URI, so the model can tell them apart and cite them.
//! Binary contents (images, files) are named, not inlined: the model gets text here.

use rmcp::model::{ReadResourceResult, ResourceContents};

/// One attached resource, as read from its server.
#[derive(Debug, Clone)]
pub struct Attached {
    pub server_name: String,
    pub uri: String,
    /// The `resources/read` result as the server sent it.
    pub contents: ReadResourceResult,
}

/// The message the model gets: the user's text, then each resource.
pub fn with_attachments(text: &str, attached: &[Attached]) -> String {
    let mut message = text.trim_end().to_owned();
    for resource in attached {
        message.push_str(&format!(
            "\n\n<resource server=\"{}\" uri=\"{}\">\n",
            attr(&resource.server_name),
            attr(&resource.uri)
        ));
        let parts: Vec<String> = resource
            .contents
            .contents
            .iter()
            .map(|part| match part {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                ResourceContents::BlobResourceContents { mime_type, uri, .. } => format!(
                    "[{} content of {uri}, not included]",
                    mime_type.as_deref().unwrap_or("binary")
                ),
                _ => "[content of a kind Toolgate does not know, not included]".to_owned(),
            })
            .collect();
        message.push_str(&parts.join("\n"));
        message.push_str("\n</resource>");
    }
    message
}

/// A value fit for a double-quoted attribute.
fn attr(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: serde_json::Value) -> ReadResourceResult {
        serde_json::from_value(value).expect("a resources/read result")
    }

    #[test]
    fn text_is_included_binary_named_and_each_resource_marked() {
        let message = with_attachments(
            "Summarise these.\n",
            &[
                Attached {
                    server_name: "Notes".into(),
                    uri: "notes://trip".into(),
                    contents: read(
                        json!({"contents": [{"uri": "notes://trip", "text": "Oslo, 2 days"}]}),
                    ),
                },
                Attached {
                    server_name: "Files \"x\"".into(),
                    uri: "file:///a.png".into(),
                    contents: read(
                        json!({"contents": [{"uri": "file:///a.png", "mimeType": "image/png", "blob": "AAAA"}]}),
                    ),
                },
            ],
        );
        assert_eq!(
            message,
            "Summarise these.\n\n<resource server=\"Notes\" uri=\"notes://trip\">\nOslo, 2 days\n</resource>\n\n<resource server=\"Files &quot;x&quot;\" uri=\"file:///a.png\">\n[image/png content of file:///a.png, not included]\n</resource>"
        );
        assert_eq!(with_attachments("hi", &[]), "hi");
    }
}
