//! Resources the user attaches to a message: their text goes to the model with the message, each
//! in a block that names its server and URI, so the model can tell them apart and cite them.
//! Binary contents (images, files) are named, not inlined: the model gets text here.

use serde_json::Value;

/// One attached resource, as read from its server.
#[derive(Debug, Clone)]
pub struct Attached {
    pub server_name: String,
    pub uri: String,
    /// The `resources/read` result: `{"contents": [{"uri", "mimeType", "text" | "blob"}]}`.
    pub contents: Value,
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
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|part| match part.get("text").and_then(Value::as_str) {
                Some(text) => text.to_owned(),
                None => format!(
                    "[{} content of {}, not included]",
                    part.get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("binary"),
                    part.get("uri")
                        .and_then(Value::as_str)
                        .unwrap_or("the resource")
                ),
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

    #[test]
    fn text_is_included_binary_named_and_each_resource_marked() {
        let message = with_attachments(
            "Summarise these.\n",
            &[
                Attached {
                    server_name: "Notes".into(),
                    uri: "notes://trip".into(),
                    contents: json!({"contents": [{"uri": "notes://trip", "text": "Oslo, 2 days"}]}),
                },
                Attached {
                    server_name: "Files \"x\"".into(),
                    uri: "file:///a.png".into(),
                    contents: json!({"contents": [{"uri": "file:///a.png", "mimeType": "image/png", "blob": "AAAA"}]}),
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
