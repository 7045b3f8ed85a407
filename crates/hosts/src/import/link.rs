//! Install links: the `toolgate://install?…` links (and the Cursor, VS Code and LM Studio links
//! people pass around, which carry the same thing) read into the server entry they hold, for
//! the Add server dialog to show filled in. Reading a link adds nothing: the dialog shows the
//! exact command, and only the user's click adds it.
//!
//! Forms read:
//!
//! - `toolgate://install?name=NAME&config=BASE64` — the config is one server's JSON entry
//!   (`{"command": …, "args": […]}` or `{"url": …}`), base64 (standard or URL-safe, padded or
//!   not); the same query as Cursor's `cursor://anysphere.cursor-deeplink/mcp/install?…` and LM
//!   Studio's `lmstudio://add_mcp?…`;
//! - `toolgate://install?{JSON}` — the entry itself, URL-encoded, with its `name` inside, as
//!   VS Code's `vscode:mcp/install?{JSON}`.

use base64::Engine;
use serde::Serialize;
use serde_json::Value;

/// The longest link read: a server entry is a few hundred bytes.
const LIMIT: usize = 64 * 1024;

/// A server entry from an install link, for the Add server dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct InstallLink {
    /// The name the link gives the server.
    pub name: String,
    /// The server's entry as JSON text, as pasting it would give.
    pub text: String,
    /// Whose link form it was: "Toolgate", "Cursor", "VS Code" or "LM Studio".
    pub form: String,
}

/// Why a link is not an install link, in words that say what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LinkError(pub String);

fn wrong(why: impl Into<String>) -> LinkError {
    LinkError(format!(
        "{}: an install link is toolgate://install?name=NAME&config=BASE64 (a server's JSON \
         entry, base64) or toolgate://install?{{JSON with a name}}",
        why.into()
    ))
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim().trim_end_matches('=');
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(text)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text))
        .ok()
}

/// Reads an install link.
pub fn read_install_link(link: &str) -> Result<InstallLink, LinkError> {
    let link = link.trim();
    if link.len() > LIMIT {
        return Err(wrong("the link is too long"));
    }
    let (form, query) = [
        ("toolgate://install?", "Toolgate"),
        ("toolgate://install/?", "Toolgate"),
        ("cursor://anysphere.cursor-deeplink/mcp/install?", "Cursor"),
        ("vscode:mcp/install?", "VS Code"),
        ("vscode-insiders:mcp/install?", "VS Code"),
        ("lmstudio://add_mcp?", "LM Studio"),
    ]
    .iter()
    .find_map(|(prefix, form)| {
        link.get(..prefix.len())
            .filter(|p| p.eq_ignore_ascii_case(prefix))
            .map(|_| (*form, &link[prefix.len()..]))
    })
    .ok_or_else(|| wrong("this is not an install link"))?;
    let (name, mut entry) =
        if query.starts_with('{') || query.starts_with("%7B") || query.starts_with("%7b") {
            let text = percent_decode(query)?;
            let mut entry: Value = serde_json::from_str(&text)
                .map_err(|e| wrong(format!("its JSON is not valid ({e})")))?;
            let name = entry
                .as_object_mut()
                .and_then(|o| o.remove("name"))
                .and_then(|n| n.as_str().map(str::to_owned))
                .ok_or_else(|| wrong("its JSON has no \"name\""))?;
            (name, entry)
        } else {
            let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
            let name = get("name").ok_or_else(|| wrong("it has no name="))?;
            let config = get("config").ok_or_else(|| wrong("it has no config="))?;
            let bytes = decode_base64(&config).ok_or_else(|| wrong("its config is not base64"))?;
            let entry: Value = serde_json::from_slice(&bytes)
                .map_err(|e| wrong(format!("its config is not JSON ({e})")))?;
            (name, entry)
        };
    let name = name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(wrong(
            "its name is empty, too long or has control characters",
        ));
    }
    let Some(object) = entry.as_object_mut() else {
        return Err(wrong("its config is not a JSON object"));
    };
    // Cursor's links wrap the entry in the name at times: {"NAME": {...}}.
    if object.len() == 1 {
        if let Some(Value::Object(inner)) = object.get(&name).cloned() {
            *object = inner;
        }
    }
    if !object.contains_key("command") && !object.contains_key("url") {
        return Err(wrong("its config has neither a command nor a url"));
    }
    let text = serde_json::to_string_pretty(&entry).map_err(|e| wrong(e.to_string()))?;
    Ok(InstallLink {
        name,
        text,
        form: form.to_owned(),
    })
}

fn percent_decode(text: &str) -> Result<String, LinkError> {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .ok_or_else(|| wrong("its JSON is not readable"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    #[test]
    fn toolgate_cursor_and_lm_studio_links_carry_a_base64_entry() {
        let config =
            b64(r#"{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]}"#);
        for (prefix, form) in [
            ("toolgate://install?", "Toolgate"),
            ("cursor://anysphere.cursor-deeplink/mcp/install?", "Cursor"),
            ("lmstudio://add_mcp?", "LM Studio"),
        ] {
            let link = read_install_link(&format!("{prefix}name=memory&config={config}")).unwrap();
            assert_eq!(link.name, "memory");
            assert_eq!(link.form, form);
            let entry: Value = serde_json::from_str(&link.text).unwrap();
            assert_eq!(entry["command"], "npx");
        }
        let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"url":"https://mcp.example.com/mcp?a=1&b=2"}"#);
        let link = read_install_link(&format!("toolgate://install?name=remote&config={url_safe}"))
            .unwrap();
        assert!(link.text.contains("https://mcp.example.com/mcp?a=1&b=2"));
    }

    #[test]
    fn vs_code_links_carry_the_entry_with_its_name() {
        let json = r#"{"name":"time","command":"uvx","args":["mcp-server-time"]}"#;
        let encoded: String = url::form_urlencoded::byte_serialize(json.as_bytes()).collect();
        for link in [
            format!("vscode:mcp/install?{encoded}"),
            format!("toolgate://install?{json}"),
        ] {
            let read = read_install_link(&link).unwrap();
            assert_eq!(read.name, "time");
            let entry: Value = serde_json::from_str(&read.text).unwrap();
            assert_eq!(entry["args"][0], "mcp-server-time");
            assert!(entry.get("name").is_none());
        }
    }

    #[test]
    fn what_is_not_an_install_link_says_what_one_looks_like() {
        for (link, says) in [
            ("https://example.com", "not an install link"),
            ("toolgate://install?config=e30", "no name="),
            ("toolgate://install?name=x", "no config="),
            ("toolgate://install?name=x&config=!!!", "not base64"),
            (
                &format!("toolgate://install?name=x&config={}", b64("[1]")),
                "not a JSON object",
            ),
            (
                &format!("toolgate://install?name=x&config={}", b64("{}")),
                "neither a command nor a url",
            ),
            (
                &format!(
                    "toolgate://install?name=%01&config={}",
                    b64(r#"{"url":"https://x"}"#)
                ),
                "control characters",
            ),
            ("toolgate://install?{\"command\":\"x\"}", "no \"name\""),
        ] {
            let e = read_install_link(link).expect_err(link);
            assert!(
                e.0.contains(says) && e.0.contains("toolgate://install?name="),
                "{link}: {e}"
            );
        }
    }
}
