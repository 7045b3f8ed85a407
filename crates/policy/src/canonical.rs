//! One spelling for each target, so a condition compares what a value *means*, not how it was typed.
//!
//! A rule "deny `write_file` when `/path` matches `/etc/**`" must also hold for `//etc/passwd` and
//! `/./etc/passwd`, which the kernel opens as the same file; "allow `fetch` when `/url` starts with
//! `https://api.example.com`" must not grant `https://api.example.com@evil.example/steal`, which
//! every HTTP client sends to `evil.example`. So before a condition looks at a value it is put in
//! one canonical form, or found to have none:
//!
//! - **Paths** (a condition whose glob or prefix is an absolute path): repeated separators and `.`
//!   segments are folded, a trailing separator dropped. A `..` segment is not folded (a symbolic
//!   link makes `a/link/..` somewhere other than `a`), and a relative path depends on a folder
//!   the gate cannot see: both are [`Canonical::Unknown`].
//! - **URLs** (a value with a scheme and `//`): parsed as a browser would (WHATWG, the `url`
//!   crate), which lower-cases scheme and host, drops a default port and resolves `.`/`..` and
//!   their percent-encoded spellings. A URL with user information (`user@`, `user:pass@`) is
//!   Unknown: it is how a host is disguised, and no rule is written about it. A URL that does
//!   not parse is Unknown too.
//!
//! Unknown is read by the rule's leaning, as every unknown is (see [`crate::condition`]): it never
//! earns an Allow and never escapes a Deny or Ask.

use url::Url;

/// A value put in the form a condition compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Canonical {
    /// An absolute path with separators and `.` segments folded.
    Path(String),
    /// A parsed URL without user information.
    Url(Url),
    /// Neither a path nor a URL: compared as typed.
    Text(String),
    /// A path or URL whose target cannot be known from its text.
    Unknown,
}

/// What a condition's pattern says about the values it is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The pattern is an absolute path: every value is read as a path.
    Path,
    /// The pattern is a URL: every value is read as a URL, or as text when it has no scheme.
    Url,
    /// Anything else (a command, a name): values are compared as typed, but a value that is
    /// itself a URL is still parsed, so user information cannot slip past a glob.
    Other,
}

/// The kind of values a pattern (a glob or a prefix) is written for.
pub(crate) fn kind_of_pattern(pattern: &str) -> Kind {
    if pattern.starts_with('/') {
        Kind::Path
    } else if looks_like_url(pattern) {
        Kind::Url
    } else {
        Kind::Other
    }
}

/// The value as a condition with a pattern of `kind` compares it.
pub(crate) fn canonical(value: &str, kind: Kind) -> Canonical {
    match kind {
        Kind::Path => path(value),
        Kind::Url | Kind::Other if looks_like_url(value) => url(value),
        Kind::Url | Kind::Other => Canonical::Text(value.to_owned()),
    }
}

/// `scheme://…` at the start of the value (RFC 3986's scheme characters), after any spaces a
/// client would trim.
fn looks_like_url(value: &str) -> bool {
    let value = value.trim_start();
    let Some((scheme, rest)) = value.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && (rest.starts_with("//") || rest.starts_with("\\\\") || rest.starts_with("/\\"))
}

fn url(value: &str) -> Canonical {
    match Url::parse(value.trim()) {
        Ok(url) if url.username().is_empty() && url.password().is_none() => {
            without_root_dot(url).map_or(Canonical::Unknown, Canonical::Url)
        }
        _ => Canonical::Unknown,
    }
}

/// `evil.example.` is the same host as `evil.example` to DNS; a deny on one must hold for both.
fn without_root_dot(mut url: Url) -> Option<Url> {
    let host = match url.host() {
        Some(url::Host::Domain(domain)) if domain.ends_with('.') => {
            domain.trim_end_matches('.').to_owned()
        }
        _ => return Some(url),
    };
    if host.is_empty() {
        return None;
    }
    url.set_host(Some(&host)).ok()?;
    Some(url)
}

/// Folds `//` and `/./` in an absolute path; Unknown for a relative one or one with `..`.
pub(crate) fn path(value: &str) -> Canonical {
    if !value.starts_with('/') || value.contains('\0') {
        return Canonical::Unknown;
    }
    let mut folded = String::with_capacity(value.len());
    for segment in value.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Canonical::Unknown,
            segment => {
                folded.push('/');
                folded.push_str(segment);
            }
        }
    }
    if folded.is_empty() {
        folded.push('/');
    }
    Canonical::Path(folded)
}

/// A URL prefix's verdict on a canonical URL: same scheme, host and port, and the value's path
/// (with query) starting with the prefix's at a segment boundary. `None` when `prefix` is no
/// URL with a host (the caller then compares text).
pub(crate) fn url_has_prefix(value: &Url, prefix: &str) -> Option<bool> {
    let Canonical::Url(prefix) = url(prefix) else {
        return None;
    };
    // A prefix without a host, or written with user information (which `url` refuses), names
    // no place a client would reach: the caller reads it as Unknown.
    prefix.host_str()?;
    let same_origin = value.scheme() == prefix.scheme()
        && value.host_str() == prefix.host_str()
        && value.port_or_known_default() == prefix.port_or_known_default();
    if !same_origin {
        return Some(false);
    }
    let wanted = &prefix[url::Position::BeforePath..url::Position::AfterQuery];
    let have = &value[url::Position::BeforePath..url::Position::AfterQuery];
    let Some(rest) = have.strip_prefix(wanted) else {
        return Some(false);
    };
    // `/v1` covers `/v1`, `/v1/…`, `/v1?…`, not `/v1beta`.
    Some(
        wanted.ends_with(['/', '?', '&', '='])
            || rest.is_empty()
            || rest.starts_with(['/', '?', '#']),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fold_to_one_spelling() {
        for spelling in [
            "/etc/passwd",
            "//etc/passwd",
            "/./etc/passwd",
            "/etc//passwd",
            "/etc/./passwd",
            "/etc/passwd/",
            "/etc/passwd/.",
            "///etc/.//./passwd//",
        ] {
            assert_eq!(
                path(spelling),
                Canonical::Path("/etc/passwd".into()),
                "{spelling}"
            );
        }
        assert_eq!(path("/"), Canonical::Path("/".into()));
        assert_eq!(path("//"), Canonical::Path("/".into()));
    }

    #[test]
    fn paths_without_a_known_target() {
        for spelling in [
            "etc/passwd",
            "./etc/passwd",
            "../etc/passwd",
            "/tmp/../etc/passwd",
            "",
            " /etc/passwd",
            "~/notes",
            "/etc/pass\0wd",
        ] {
            assert_eq!(path(spelling), Canonical::Unknown, "{spelling:?}");
        }
    }

    #[test]
    fn urls_parse_as_a_client_would_and_user_information_is_unknown() {
        let Canonical::Url(url) = canonical("HTTPS://API.Example.COM:443/a/./b/../c", Kind::Url)
        else {
            panic!("a URL");
        };
        assert_eq!(url.as_str(), "https://api.example.com/a/c");
        for disguised in [
            "https://api.example.com@evil.example/steal",
            "https://api.example.com:443@evil.example/",
            "https://user:pw@api.example.com/",
            "https://:pw@api.example.com/",
            "http://[not an address/",
        ] {
            assert_eq!(
                canonical(disguised, Kind::Url),
                Canonical::Unknown,
                "{disguised}"
            );
        }
        assert_eq!(
            canonical("git push", Kind::Other),
            Canonical::Text("git push".into())
        );
    }

    #[test]
    fn a_url_prefix_compares_origin_and_path_segments() {
        let check = |value: &str, prefix: &str| match canonical(value, Kind::Url) {
            Canonical::Url(url) => url_has_prefix(&url, prefix),
            other => panic!("{value}: {other:?}"),
        };
        let api = "https://api.example.com";
        assert_eq!(check("https://api.example.com", api), Some(true));
        assert_eq!(check("https://api.example.com/v1/x", api), Some(true));
        assert_eq!(check("https://API.example.com./v1", api), Some(true));
        assert_eq!(
            check("https://api.example.com.evil.example/", api),
            Some(false)
        );
        assert_eq!(check("https://api.example.com:8443/", api), Some(false));
        assert_eq!(check("http://api.example.com/", api), Some(false));
        assert_eq!(check("https://api.example.com:443/v1", api), Some(true));
        let v1 = "https://api.example.com/v1";
        assert_eq!(check("https://api.example.com/v1", v1), Some(true));
        assert_eq!(check("https://api.example.com/v1/models", v1), Some(true));
        assert_eq!(check("https://api.example.com/v1?x=1", v1), Some(true));
        assert_eq!(check("https://api.example.com/v1beta", v1), Some(false));
        assert_eq!(
            check("https://api.example.com/v1/../admin", v1),
            Some(false)
        );
        assert_eq!(
            check("https://api.example.com/v1/%2e%2e/admin", v1),
            Some(false)
        );
        assert_eq!(check("https://api.example.com/x", "not a url"), None);
        assert_eq!(
            check("https://api.example.com/x", "https://u@api.example.com"),
            None
        );
    }
}
