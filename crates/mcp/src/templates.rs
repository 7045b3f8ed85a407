//! Resource templates (RFC 6570 URI templates, `notes://{topic}`): their variables, and a
//! template filled in to the URI to read. The expansion is `iri-string`'s, which implements
//! every level of the RFC, so a value is encoded as the template's operator says.

use std::collections::BTreeMap;

use iri_string::spec::UriSpec;
use iri_string::template::simple_context::SimpleContext;
use iri_string::template::UriTemplateStr;

/// The template's variable names, each once, in order of first use; none for a template that
/// does not parse (it cannot be filled anyway).
pub fn variables(template: &str) -> Vec<String> {
    let Ok(parsed) = UriTemplateStr::new(template) else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for var in parsed.variables() {
        let name = var.as_str().to_owned();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The URI `template` names with `values`, or why it cannot be made. A variable left out
/// expands to nothing, as the RFC says; one the template does not have is an error (a typo).
pub fn expand(template: &str, values: &BTreeMap<String, String>) -> Result<String, String> {
    let parsed = UriTemplateStr::new(template)
        .map_err(|e| format!("'{template}' is not a URI template: {e}"))?;
    let known = variables(template);
    if let Some(unknown) = values.keys().find(|k| !known.contains(k)) {
        return Err(format!(
            "the template {template} has no variable '{unknown}' (it has: {})",
            known.join(", ")
        ));
    }
    let mut context = SimpleContext::new();
    for (name, value) in values {
        context.insert(name.as_str(), value.as_str());
    }
    parsed
        .expand::<UriSpec, _>(&context)
        .map(|uri| uri.to_string())
        .map_err(|e| format!("the template {template} could not be filled: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn variables_and_expansion_follow_the_rfc() {
        assert_eq!(variables("notes://{topic}"), ["topic"]);
        assert_eq!(
            variables("file:///{+path}{?q,lang}&x={q}"),
            ["path", "q", "lang"]
        );
        assert_eq!(
            expand("notes://{topic}", &values(&[("topic", "a b/c")])).unwrap(),
            "notes://a%20b%2Fc"
        );
        assert_eq!(
            expand("file:///{+path}", &values(&[("path", "home/a b")])).unwrap(),
            "file:///home/a%20b"
        );
        assert_eq!(
            expand("search{?q,lang}", &values(&[("q", "x")])).unwrap(),
            "search?q=x"
        );
        let typo = expand("notes://{topic}", &values(&[("topc", "x")])).unwrap_err();
        assert!(
            typo.contains("no variable 'topc'") && typo.contains("topic"),
            "{typo}"
        );
        assert!(expand("notes://{topic", &BTreeMap::new()).is_err());
    }
}
