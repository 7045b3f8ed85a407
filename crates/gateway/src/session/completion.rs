//! `completion/complete` from a connected client: what is sent on to the server.
//!
//! A completion carries what is being typed into a prompt's or a template's argument (and the
//! arguments already filled in) to the server that owns it, to get suggestions back. It is a
//! way for data to reach a server, so it is not a free channel: a completion is a few characters
//! of typing, and one carrying more than [`MAX_VALUE`] characters in any value, or anything that
//! looks like a secret, is refused before it reaches the server, saying why. (Holding each
//! keystroke for a person's answer would make completion useless; these requests are not
//! audited one by one.)

use rmcp::model::CompleteRequestParams;
use serde_json::{Map, Value};

/// The longest value a completion sends on.
pub(crate) const MAX_VALUE: usize = 256;

/// Why `request` must not reach its server, if it must not.
pub(crate) fn refusal(request: &CompleteRequestParams) -> Option<String> {
    let mut values = Map::new();
    values.insert(
        request.argument.name.clone(),
        Value::String(request.argument.value.clone()),
    );
    for (name, value) in request
        .context
        .as_ref()
        .and_then(|c| c.arguments.as_ref())
        .into_iter()
        .flatten()
    {
        values.insert(format!("context/{name}"), Value::String(value.clone()));
    }
    if let Some((name, _)) = values
        .iter()
        .find(|(_, v)| v.as_str().is_some_and(|v| v.chars().count() > MAX_VALUE))
    {
        return Some(format!(
            "Toolgate sends a completion on only for a value of at most {MAX_VALUE} characters; {name} is longer"
        ));
    }
    let found = toolgate_agent::secrets::in_arguments(&Value::Object(values))?;
    Some(format!(
        "Toolgate does not send a completion on to the server: it carries what looks like a secret ({found})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ArgumentInfo, CompletionContext, PromptReference, Reference};

    fn request(value: &str, context: Option<(&str, &str)>) -> CompleteRequestParams {
        let mut request = CompleteRequestParams::new(
            Reference::Prompt(PromptReference::new("p")),
            ArgumentInfo::new("city", value),
        );
        if let Some((name, value)) = context {
            let mut c = CompletionContext::new();
            c.arguments = Some([(name.to_owned(), value.to_owned())].into());
            request.context = Some(c);
        }
        request
    }

    #[test]
    fn typing_passes_and_a_secret_or_a_long_value_does_not() {
        assert_eq!(refusal(&request("Par", None)), None);
        assert_eq!(refusal(&request("Par", Some(("country", "Fr")))), None);
        let token = "ghp_0123456789abcdefABCDEF0123456789abcd";
        for bad in [
            request(token, None),
            request("x", Some(("note", token))),
            request(&"a".repeat(MAX_VALUE + 1), None),
            request("x", Some(("notes", &"b".repeat(MAX_VALUE + 1)))),
        ] {
            let why = refusal(&bad).expect("refused");
            assert!(!why.contains(token), "{why}");
        }
    }
}
