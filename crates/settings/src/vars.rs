//! `${…}` references inside imported strings, and the names Toolgate gives secrets.
//!
//! Toolgate resolves two kinds of reference when it starts a server, in env values and HTTP
//! headers only: `${env:NAME}` (its environment) and `${secret:NAME}` (the OS keychain), with NAME
//! matching `[A-Za-z_][A-Za-z0-9_.-]*` (see [`crate::reference`]). Other hosts write other things: VS Code `${input:id}` and
//! `${workspaceFolder}`, Claude Code `${NAME}` and `${NAME:-default}`. This module only finds and
//! rewrites references; what each one becomes is decided by the importer. Names are checked by
//! [`crate::reference::valid_name`], the rule the resolver applies.

pub use crate::reference::valid_name;

/// Rewrites every complete `${inner}` in `s`: `f` returns the replacement, or `None` to keep the
/// reference as written. A `${` without a closing `}` is plain text.
pub fn rewrite(s: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        out.push_str(&rest[..start]);
        let inner = &after[..end];
        match f(inner) {
            Some(replacement) => out.push_str(&replacement),
            None => {
                out.push_str("${");
                out.push_str(inner);
                out.push('}');
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The inner text of every complete `${…}` in `s`, in order.
pub fn references(s: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        found.push(&after[..end]);
        rest = &after[end + 1..];
    }
    found
}

/// What a reference means to Toolgate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference<'a> {
    /// `${env:NAME}`: resolved by Toolgate from its environment.
    Env,
    /// `${secret:NAME}`: resolved by Toolgate from the keychain.
    Secret(&'a str),
    /// `${input:id}`: a VS Code input the user is prompted for.
    Input(&'a str),
    /// `${NAME}` with an upper-case NAME: Claude Code's spelling of an environment variable.
    /// Editor variables are camelCase (`${workspaceFolder}`, `${userHome}`) and are not this.
    Bare(&'a str),
    /// `${env:…}` or `${secret:…}` without a valid name: refused in env and headers by the
    /// settings' validation.
    Malformed,
    /// Anything else (`${workspaceFolder}`, `${NAME:-default}`, …): kept as written.
    Other,
}

pub fn classify(inner: &str) -> Reference<'_> {
    if let Some(name) = inner.strip_prefix("env:") {
        if valid_name(name) {
            Reference::Env
        } else {
            Reference::Malformed
        }
    } else if let Some(name) = inner.strip_prefix("secret:") {
        if valid_name(name) {
            Reference::Secret(name)
        } else {
            Reference::Malformed
        }
    } else if let Some(id) = inner.strip_prefix("input:").filter(|id| !id.is_empty()) {
        Reference::Input(id)
    } else if is_env_var_name(inner) {
        Reference::Bare(inner)
    } else {
        Reference::Other
    }
}

/// A conventional environment variable name: `[A-Z_][A-Z0-9_]*`.
fn is_env_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// A reference as it may be shown in a warning: its name, but never what follows a `:-` or
/// another separator, which could be a default value and so a secret.
pub fn shown(inner: &str) -> String {
    let name: String = inner
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':'))
        .take(64)
        .collect();
    if name.len() == inner.len() {
        format!("${{{name}}}")
    } else {
        format!("${{{name}…}}")
    }
}

/// Turns any text into a valid secret name: invalid characters become `_`, and a name that would
/// start with a digit, `.` or `-` gets a leading `_`.
pub fn secret_name_from(text: &str) -> String {
    let mut name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    name
}

/// `base`, or `base_2`, `base_3`, … : the first that `taken` does not hold.
pub fn unique(base: &str, taken: &dyn Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_owned();
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|candidate| !taken(candidate))
        .unwrap_or_else(|| base.to_owned())
}

/// Whether an env variable or header with this name probably holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD"]
        .iter()
        .any(|word| upper.contains(word))
}

/// Whether a header with this name probably holds a secret.
pub fn header_looks_secret(name: &str) -> bool {
    looks_secret(name) || name.to_ascii_uppercase().contains("AUTHORIZATION")
}

/// `Bearer xyz` → (`Bearer`, `xyz`): the scheme of an `Authorization` value and its credentials.
pub fn split_scheme(value: &str) -> Option<(&str, &str)> {
    let (scheme, credentials) = value.trim().split_once(' ')?;
    let credentials = credentials.trim();
    (!scheme.is_empty()
        && scheme.chars().all(|c| c.is_ascii_alphabetic())
        && !credentials.is_empty())
    .then_some((scheme, credentials))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_complete_references_only() {
        let out = rewrite("a ${x} b ${y} ${unterminated", |inner| {
            (inner == "x").then(|| "X".to_owned())
        });
        assert_eq!(out, "a X b ${y} ${unterminated");
        assert_eq!(references("${a}${b}c${"), ["a", "b"]);
        assert!(references("plain").is_empty());
    }

    #[test]
    fn classifies_references() {
        assert_eq!(classify("env:HOME"), Reference::Env);
        assert_eq!(
            classify("secret:gh.token-1"),
            Reference::Secret("gh.token-1")
        );
        assert_eq!(classify("input:api-key"), Reference::Input("api-key"));
        assert_eq!(classify("GITHUB_TOKEN"), Reference::Bare("GITHUB_TOKEN"));
        assert_eq!(classify("workspaceFolder"), Reference::Other);
        assert_eq!(classify("env:1BAD"), Reference::Malformed);
        assert_eq!(classify("secret:"), Reference::Malformed);
        assert_eq!(classify("API_KEY:-sk-123"), Reference::Other);
        assert_eq!(classify("input:"), Reference::Other);
    }

    #[test]
    fn shown_never_includes_a_default_value() {
        assert_eq!(shown("workspaceFolder"), "${workspaceFolder}");
        assert_eq!(shown("env:A B"), "${env:A…}");
        assert_eq!(shown("API_KEY:-sk-123456"), "${API_KEY:…}");
    }

    #[test]
    fn secret_names_are_valid_and_unique() {
        assert_eq!(secret_name_from("api key"), "api_key");
        assert_eq!(secret_name_from("1password"), "_1password");
        assert!(valid_name(&secret_name_from("-x")));
        let taken = |n: &str| n == "A" || n == "A_2";
        assert_eq!(unique("A", &taken), "A_3");
        assert_eq!(unique("B", &taken), "B");
    }

    #[test]
    fn splits_authorization_values() {
        assert_eq!(split_scheme("Bearer abc"), Some(("Bearer", "abc")));
        assert_eq!(split_scheme("abc"), None);
        assert_eq!(split_scheme("Bearer "), None);
        assert!(header_looks_secret("authorization"));
        assert!(header_looks_secret("X-Api-Key"));
        assert!(!header_looks_secret("Accept"));
    }
}
