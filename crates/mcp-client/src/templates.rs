//! Resource templates (RFC 6570 URI templates, `notes://{topic}`): their variables, and a
//! template filled in to the URI to read. The expansion is `iri-string`'s, which implements
//! every level of the RFC, so a value is encoded as the template's operator says.

use std::collections::BTreeMap;

use iri_string::spec::UriSpec;
use iri_string::template::simple_context::SimpleContext;
use iri_string::template::{Error as TemplateSyntax, UriTemplateStr};

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

/// Why a template could not be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("'{template}' is not a URI template: {error}")]
    NotATemplate {
        template: String,
        error: TemplateSyntax,
    },
    /// A value for a variable the template does not have (a typo); `known` are the ones it has.
    #[error(
        "the template {template} has no variable '{unknown}' (it has: {})",
        known.join(", ")
    )]
    UnknownVariable {
        template: String,
        unknown: String,
        known: Vec<String>,
    },
    #[error("the template {template} could not be filled: {error}")]
    NotFilled {
        template: String,
        error: TemplateSyntax,
    },
}

/// The URI `template` names with `values`, or why it cannot be made. A variable left out
/// expands to nothing, as the RFC says; one the template does not have is an error (a typo).
pub fn expand(template: &str, values: &BTreeMap<String, String>) -> Result<String, TemplateError> {
    let parsed = UriTemplateStr::new(template).map_err(|error| TemplateError::NotATemplate {
        template: template.to_owned(),
        error,
    })?;
    let known = variables(template);
    if let Some(unknown) = values.keys().find(|k| !known.contains(k)) {
        return Err(TemplateError::UnknownVariable {
            template: template.to_owned(),
            unknown: unknown.clone(),
            known,
        });
    }
    let mut context = SimpleContext::new();
    for (name, value) in values {
        context.insert(name.as_str(), value.as_str());
    }
    parsed
        .expand::<UriSpec, _>(&context)
        .map(|uri| uri.to_string())
        .map_err(|error| TemplateError::NotFilled {
            template: template.to_owned(),
            error,
        })
}

/// Whether `uri` is one `template` can name: each literal part in place, each expression
/// matching what it could expand to (a simple `{var}` no `/`, `?` or `#`; a reserved `{+var}` or
/// fragment `{#var}` anything; the others anything after their operator). For finding which
/// server's template a URI a client asks for belongs to; a template that does not parse
/// matches nothing.
pub fn matches(template: &str, uri: &str) -> bool {
    if UriTemplateStr::new(template).is_err() {
        return false;
    }
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        parts.push(Part::Literal(&rest[..open]));
        let Some(close) = rest[open..].find('}') else {
            return false;
        };
        let expression = &rest[open + 1..open + close];
        parts.push(match expression.chars().next() {
            Some('+' | '#') => Part::Any(None),
            Some(op @ ('/' | '.' | ';' | '?' | '&')) => Part::Any(Some(op)),
            _ => Part::Simple,
        });
        rest = &rest[open + close + 1..];
    }
    parts.push(Part::Literal(rest));
    match_parts(&parts, uri)
}

enum Part<'a> {
    Literal(&'a str),
    /// `{var}`: unreserved characters and escapes, so no `/`, `?` or `#`.
    Simple,
    /// An operator's expression: empty, or its operator followed by anything (`None`: anything).
    Any(Option<char>),
}

fn match_parts(parts: &[Part<'_>], uri: &str) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(text) => uri
            .strip_prefix(text)
            .is_some_and(|after| match_parts(rest, after)),
        Part::Simple => {
            let stop = uri.find(['/', '?', '#']).unwrap_or(uri.len());
            (0..=stop)
                .rev()
                .any(|taken| match_parts(rest, &uri[taken..]))
        }
        Part::Any(op) => {
            if match_parts(rest, uri) {
                return true;
            }
            if op.is_some_and(|op| !uri.starts_with(op)) {
                return false;
            }
            uri.char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .any(|taken| match_parts(rest, &uri[taken..]))
        }
    }
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
        let typo = expand("notes://{topic}", &values(&[("topc", "x")]))
            .unwrap_err()
            .to_string();
        assert!(
            typo.contains("no variable 'topc'") && typo.contains("topic"),
            "{typo}"
        );
        assert!(expand("notes://{topic", &BTreeMap::new()).is_err());
    }

    #[test]
    fn a_uri_matches_the_templates_that_could_name_it() {
        assert!(matches(
            "test://template/{id}/data",
            "test://template/123/data"
        ));
        assert!(!matches(
            "test://template/{id}/data",
            "test://template/1/2/data"
        ));
        assert!(!matches("test://template/{id}/data", "test://other/1/data"));
        assert!(matches("file:///{+path}", "file:///home/a/b.txt"));
        assert!(matches("search{?q,lang}", "search?q=x&lang=en"));
        assert!(matches("search{?q,lang}", "search"));
        assert!(!matches("search{?q,lang}", "searchx"));
        assert!(matches("notes://{topic}", "notes://a%20b"));
        assert!(!matches("notes://{topic", "notes://x"), "does not parse");
    }
}
