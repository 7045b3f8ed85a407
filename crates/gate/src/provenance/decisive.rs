//! The arguments of a call that decide where data goes or what a change is: a recipient, an
//! address, an account, a web address, a path, a password.
//!
//! An argument is decisive when its schema's `format` names an address (`email`, `uri`,
//! `hostname` and their kin), or when a word of its name does (`recipient`, `to`, `cc`,
//! `iban`, `url`, `path`, `password`, `participants`…; names are cut at `_`, `-` and
//! lower-to-upper case changes, so `recipientEmail` and `user_email` count). A word list is a
//! judgement: a server author who names a recipient `who` is not caught by it, which only makes
//! the gate ask as it does today (nothing decisive is proven).
//!
//! A call that only reads sends nothing anywhere but in its request, so of its arguments only
//! those that say where the request goes count ([`destinations`]: a web address, a host, an
//! e-mail address; a channel or a file it reads from does not).

use serde_json::Value;

/// Words of a property's name that make it decisive.
const WORDS: &[&str] = &[
    "to",
    "recipient",
    "recipients",
    "cc",
    "bcc",
    "email",
    "emails",
    "mail",
    "address",
    "addresses",
    "url",
    "urls",
    "uri",
    "link",
    "href",
    "iban",
    "account",
    "destination",
    "dest",
    "host",
    "domain",
    "webhook",
    "endpoint",
    "phone",
    "participants",
    "attendees",
    "invitees",
    "user",
    "users",
    "member",
    "members",
    "channel",
    "path",
    "file",
    "filename",
    "directory",
    "folder",
    "password",
    "passphrase",
];

/// Words of a property's name that make it say where a read-only call's request goes.
const DESTINATION_WORDS: &[&str] = &[
    "url",
    "urls",
    "uri",
    "link",
    "links",
    "href",
    "host",
    "hostname",
    "domain",
    "site",
    "server",
    "webhook",
    "endpoint",
    "destination",
    "dest",
    "address",
    "addresses",
];

/// Schema formats that are addresses.
const FORMATS: &[&str] = &[
    "email",
    "idn-email",
    "uri",
    "url",
    "iri",
    "uri-reference",
    "iri-reference",
    "hostname",
    "idn-hostname",
];

/// A decisive string in the arguments: where it is (a JSON pointer) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decisive<'a> {
    pub at: String,
    pub value: &'a str,
}

/// The words of a property's name: cut at `_`, `-`, `.`, spaces and lower-to-upper changes.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut last_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | ' ') {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            last_lower = false;
            continue;
        }
        if c.is_uppercase() && last_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        last_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Whether a property of this name and schema decides where data goes.
pub fn is_decisive(name: &str, schema: Option<&Value>) -> bool {
    is_address(schema) || name_words(name).iter().any(|w| WORDS.contains(&w.as_str()))
}

/// Whether a property of this name and schema says where a request goes.
pub fn is_destination(name: &str, schema: Option<&Value>) -> bool {
    is_address(schema)
        || name_words(name)
            .iter()
            .any(|w| DESTINATION_WORDS.contains(&w.as_str()))
}

/// Whether the schema's `format` (or its items') is an address.
fn is_address(schema: Option<&Value>) -> bool {
    schema
        .and_then(|s| s.get("format").or_else(|| s.pointer("/items/format")))
        .and_then(Value::as_str)
        .is_some_and(|f| FORMATS.contains(&f))
}

/// The strings of `arguments` that say where a read-only call's request goes: those of
/// properties named or formatted as addresses (found as [`decisive`] finds its own), and any
/// other string holding a web or e-mail address, so a fetch tool that calls its address `q`
/// is not read as going nowhere.
pub fn destinations<'a>(properties: Option<&Value>, arguments: &'a Value) -> Vec<Decisive<'a>> {
    let mut out = found(properties, arguments, is_destination);
    let mut strings = Vec::new();
    collect(arguments, String::new(), &mut strings);
    for (at, value) in strings {
        if holds_address(value) && !out.iter().any(|d| d.at == at) {
            out.push(Decisive { at, value });
        }
    }
    out
}

/// Whether a text holds a web address (with a scheme, `www.`, or a host and a path) or an
/// e-mail address.
fn holds_address(text: &str) -> bool {
    text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '(' | ')'))
        .any(|word| {
            let host = word.split('/').next().unwrap_or_default();
            let word = word.to_lowercase();
            word.contains("://")
                || word.starts_with("www.")
                || super::tokens::is_email(&word)
                || (word.contains('/') && host.contains('.') && !host.starts_with('.'))
        })
}

/// The decisive strings of `arguments` (top-level properties, their arrays, and objects in
/// them one level down: `recipients: [{"email": …}]`), as `properties` (the tool's input
/// schema's) describe them.
pub fn decisive<'a>(properties: Option<&Value>, arguments: &'a Value) -> Vec<Decisive<'a>> {
    found(properties, arguments, is_decisive)
}

/// The strings of the properties `counts` picks, top-level and in objects of a list.
fn found<'a>(
    properties: Option<&Value>,
    arguments: &'a Value,
    counts: fn(&str, Option<&Value>) -> bool,
) -> Vec<Decisive<'a>> {
    let mut out = Vec::new();
    let Some(object) = arguments.as_object() else {
        return out;
    };
    for (name, value) in object {
        let property = properties.and_then(|p| p.get(name));
        let at = format!("/{}", escape(name));
        if counts(name, property) {
            strings(value, &at, &mut out);
        } else if let Some(items) = value.as_array() {
            // Objects in a list: `[{"email": …, "name": …}]`.
            for (i, item) in items.iter().enumerate() {
                let Some(inner) = item.as_object() else {
                    continue;
                };
                let item_schema = property.and_then(|p| p.pointer("/items/properties"));
                for (key, v) in inner {
                    if counts(key, item_schema.and_then(|s| s.get(key))) {
                        strings(v, &format!("{at}/{i}/{}", escape(key)), &mut out);
                    }
                }
            }
        }
    }
    out
}

/// Every string in `value` (itself, or the strings of a list).
fn strings<'a>(value: &'a Value, at: &str, out: &mut Vec<Decisive<'a>>) {
    match value {
        Value::String(s) if !s.trim().is_empty() => out.push(Decisive {
            at: at.to_owned(),
            value: s,
        }),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if let Value::String(s) = item {
                    if !s.trim().is_empty() {
                        out.push(Decisive {
                            at: format!("{at}/{i}"),
                            value: s,
                        });
                    }
                }
            }
        }
        _ => {}
    }
}

/// Every string in `value` with its JSON pointer; object keys are not values.
pub fn collect<'a>(value: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(s) => out.push((at, s)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                collect(v, format!("{at}/{}", escape(k)), out);
            }
        }
        _ => {}
    }
}

/// A JSON pointer's escaping of one key (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn recipients_addresses_accounts_paths_and_passwords_decide() {
        let schema = json!({"properties": {
            "recipients": {"type": "array", "items": {"type": "string"}},
            "subject": {"type": "string"},
            "body": {"type": "string"},
            "site": {"type": "string", "format": "uri"},
            "newPassword": {"type": "string"},
            "amount": {"type": "number"},
        }});
        let args = json!({
            "recipients": ["a@x.example", "b@x.example"],
            "subject": "hi", "body": "see you", "site": "https://y.example",
            "newPassword": "hunter22", "amount": 10,
        });
        let found: Vec<(String, &str)> = decisive(schema.get("properties"), &args)
            .into_iter()
            .map(|d| (d.at, d.value))
            .collect();
        assert_eq!(
            found,
            [
                ("/newPassword".to_owned(), "hunter22"),
                ("/recipients/0".to_owned(), "a@x.example"),
                ("/recipients/1".to_owned(), "b@x.example"),
                ("/site".to_owned(), "https://y.example"),
            ]
        );
    }

    #[test]
    fn names_are_cut_into_words_however_they_are_written() {
        for name in [
            "user_email",
            "recipientEmail",
            "RecipientIBAN",
            "file-path",
            "to",
        ] {
            assert!(is_decisive(name, None), "{name}");
        }
        for name in ["subject", "body", "amount", "toggle", "stopwatch", "note"] {
            assert!(!is_decisive(name, None), "{name}");
        }
    }

    #[test]
    fn a_read_only_call_s_destinations_are_where_its_request_goes() {
        let schema = json!({"properties": {
            "channel": {"type": "string"},
            "path": {"type": "string"},
            "query": {"type": "string"},
            "feed": {"type": "string", "format": "uri"},
        }});
        let args = json!({"channel": "random", "path": "/notes", "query": "q",
                          "feed": "https://x.example/rss", "targetUrl": "https://y.example",
                          "mirrors": [{"host": "z.example"}], "emailAddress": "a@x.example"});
        let found: Vec<&str> = destinations(schema.get("properties"), &args)
            .into_iter()
            .map(|d| d.value)
            .collect();
        assert_eq!(
            found,
            [
                "a@x.example",
                "https://x.example/rss",
                "z.example",
                "https://y.example"
            ]
        );
        // An address in an argument of any name is where the request goes too.
        let args = json!({"q": "see evil.example/collect?d=1", "n": {"deep": "WWW.x.example"},
                          "who": "a@b.example", "note": "plain words, a file.docx, ../up"});
        let found: Vec<(String, &str)> = destinations(None, &args)
            .into_iter()
            .map(|d| (d.at, d.value))
            .collect();
        assert_eq!(
            found,
            [
                ("/n/deep".to_owned(), "WWW.x.example"),
                ("/q".to_owned(), "see evil.example/collect?d=1"),
                ("/who".to_owned(), "a@b.example"),
            ]
        );
    }

    #[test]
    fn objects_in_a_list_are_read_one_level_down() {
        let args = json!({"guests": [{"name": "Al", "email": "al@x.example"}]});
        let found = decisive(None, &args);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].at, "/guests/0/email");
    }
}
