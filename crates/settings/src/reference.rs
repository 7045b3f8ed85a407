//! References in server `env` values and HTTP `headers`: `${secret:NAME}` names a secret in the
//! OS keychain, `${env:NAME}` a variable of Toolgate's own environment. Settings hold only the
//! reference; the value is looked up when the server is spawned or the request is sent, and never
//! written back.
//!
//! Other `${…}` text (VS Code's `${workspaceFolder}`, say) is left as it is.

use std::fmt;

/// One reference inside a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference<'a> {
    /// `${secret:NAME}`: the keychain item of the user's secret `NAME`.
    Secret(&'a str),
    /// `${env:NAME}`: Toolgate's environment variable `NAME`.
    Env(&'a str),
}

impl fmt::Display for Reference<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reference::Secret(name) => write!(f, "${{secret:{name}}}"),
            Reference::Env(name) => write!(f, "${{env:{name}}}"),
        }
    }
}

/// The keychain item that holds the user's secret `name` (apart from the provider keys).
pub fn secret_item(name: &str) -> String {
    format!("secret.{name}")
}

/// The secret name Toolgate gives a value a server asks for when it is added (a registry
/// entry's or a bundle's): the server's id and the value's key, in capitals, anything else `_`
/// (`weather` + `api_key` → `WEATHER_API_KEY`).
pub fn secret_name_for(server: &str, key: &str) -> String {
    format!("{server}_{key}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `name` can name a secret or variable: a letter or `_`, then letters, digits, `_`, `.`
/// or `-`.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// A piece of a value: literal text, or a reference.
enum Piece<'a> {
    Text(&'a str),
    Ref(Reference<'a>),
}

/// A `${secret:…}` or `${env:…}` whose name cannot name a secret or variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`${{{inner}}}` does not name a secret or variable: a name starts with a letter or '_' and has only letters, digits, '_', '.' and '-'"
)]
pub struct MalformedReference {
    /// What stands between `${` and `}`.
    pub inner: String,
}

/// Why a value could not be expanded: a malformed reference, or the lookup's own error `E`
/// (which must never contain a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError<E> {
    #[error(transparent)]
    Malformed(#[from] MalformedReference),
    #[error("{0}")]
    Lookup(E),
}

/// Splits a value into text and references.
fn pieces(value: &str) -> Result<Vec<Piece<'_>>, MalformedReference> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let inner = &rest[start + 2..start + len];
        let reference = if let Some(name) = inner.strip_prefix("secret:") {
            Some(Reference::Secret(name))
        } else {
            inner.strip_prefix("env:").map(Reference::Env)
        };
        match reference {
            Some(Reference::Secret(name) | Reference::Env(name)) if !valid_name(name) => {
                return Err(MalformedReference {
                    inner: inner.to_owned(),
                });
            }
            Some(reference) => {
                out.push(Piece::Text(&rest[..start]));
                out.push(Piece::Ref(reference));
            }
            None => out.push(Piece::Text(&rest[..start + len + 1])),
        }
        rest = &rest[start + len + 1..];
    }
    out.push(Piece::Text(rest));
    Ok(out)
}

/// The references in `value`, in order.
pub fn references(value: &str) -> Result<Vec<Reference<'_>>, MalformedReference> {
    Ok(pieces(value)?
        .into_iter()
        .filter_map(|p| match p {
            Piece::Ref(r) => Some(r),
            Piece::Text(_) => None,
        })
        .collect())
}

/// `value` with each reference replaced by what `lookup` gives for it. `lookup`'s error (which
/// must never contain a secret) stops the expansion.
pub fn expand<E>(
    value: &str,
    mut lookup: impl FnMut(Reference<'_>) -> Result<String, E>,
) -> Result<String, ExpandError<E>> {
    let mut out = String::with_capacity(value.len());
    for piece in pieces(value)? {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Ref(reference) => {
                out.push_str(&lookup(reference).map_err(ExpandError::Lookup)?);
            }
        }
    }
    Ok(out)
}

/// Environment variables that change how a program starts or what code it loads: a server
/// configuration pasted from the web could use them to run anything inside any server. Refused
/// in a server's `env` unless the user names them in `allowEnv`.
const HIJACKING_VARS: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "BASH_ENV",
    "ENV",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "ELECTRON_RUN_AS_NODE",
];

/// Whether setting `name` can make a server's program load other code (`LD_PRELOAD`, any
/// `DYLD_*`, `NODE_OPTIONS` and the like).
pub fn hijacks_process(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("DYLD_") || HIJACKING_VARS.contains(&upper.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_found_and_expanded_in_place() {
        let value = "Bearer ${secret:GH_TOKEN} for ${env:USER}${workspaceFolder}";
        assert_eq!(
            references(value).unwrap(),
            vec![Reference::Secret("GH_TOKEN"), Reference::Env("USER")]
        );
        let expanded = expand(value, |r| {
            Ok::<_, String>(match r {
                Reference::Secret(_) => "s3cret".into(),
                Reference::Env(_) => "ada".into(),
            })
        })
        .unwrap();
        assert_eq!(expanded, "Bearer s3cret for ada${workspaceFolder}");
        assert_eq!(
            expand("plain", |_| -> Result<String, String> { unreachable!() }).unwrap(),
            "plain"
        );
        assert_eq!(
            expand("${unclosed", |_| -> Result<String, String> {
                unreachable!()
            })
            .unwrap(),
            "${unclosed"
        );
        assert_eq!(Reference::Secret("A").to_string(), "${secret:A}");
    }

    #[test]
    fn malformed_references_and_failed_lookups_are_errors() {
        assert!(references("${secret:}")
            .unwrap_err()
            .to_string()
            .contains("does not name"));
        assert!(references("${env:1X}").is_err());
        assert_eq!(
            references("${secret:}").unwrap_err().to_string(),
            "`${secret:}` does not name a secret or variable: a name starts with a letter or '_' and has only letters, digits, '_', '.' and '-'"
        );
        assert_eq!(
            expand("${secret:MISSING}", |_| Err::<String, _>("not set"))
                .unwrap_err()
                .to_string(),
            "not set"
        );
        assert!(valid_name("a.b-c_1") && !valid_name("") && !valid_name("a b"));
        assert_eq!(secret_item("GH"), "secret.GH");
    }

    #[test]
    fn process_hijacking_variables_are_recognised() {
        for name in [
            "LD_PRELOAD",
            "ld_preload",
            "DYLD_INSERT_LIBRARIES",
            "NODE_OPTIONS",
        ] {
            assert!(hijacks_process(name), "{name}");
        }
        for name in ["GITHUB_TOKEN", "PATH_PREFIX", "NODE_ENV", "HOME"] {
            assert!(!hijacks_process(name), "{name}");
        }
    }
}
