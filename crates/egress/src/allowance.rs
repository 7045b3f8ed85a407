//! Which host names a server may reach: its list (from its settings) and the names the user
//! allowed for this run of it.

use std::collections::BTreeSet;
use std::fmt;

/// One entry of a server's list: a name, or `*.` and a domain for every name under it (not the
/// domain itself: list `notion.so` too for that).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum HostPattern {
    Exact(String),
    Under(String),
}

/// Why an entry is not a host name, in words that say how to write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PatternError {}

/// A host name as compared: lower case, without a trailing dot, without IPv6 brackets.
pub fn normalise(host: &str) -> String {
    host.trim()
        .trim_end_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn valid_name(name: &str) -> bool {
    if name.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

impl HostPattern {
    /// Reads one entry as the user wrote it.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let text = text.trim();
        let wrong = |why: &str| {
            Err(PatternError(format!(
                "\"{text}\" is not a host name {why}: write a name such as api.github.com, or \
                 *.notion.so for every name under notion.so"
            )))
        };
        if text.contains("://") || text.contains('/') {
            return wrong("(leave out the scheme and the path)");
        }
        if text.contains(':') && text.parse::<std::net::IpAddr>().is_err() && !text.starts_with('[')
        {
            return wrong("(leave out the port: every port of a listed host is allowed)");
        }
        let (under, name) = match text.strip_prefix("*.") {
            Some(rest) => (true, normalise(rest)),
            None => (false, normalise(text)),
        };
        if name.contains('*') {
            return wrong("(a * only goes first, as in *.example.com)");
        }
        if !valid_name(&name) {
            return wrong("");
        }
        if under && !name.contains('.') {
            return wrong("(*. needs a domain with a dot, not a whole top-level domain)");
        }
        Ok(if under {
            HostPattern::Under(name)
        } else {
            HostPattern::Exact(name)
        })
    }

    /// Whether `host` (normalised) is this entry's.
    pub fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(name) => host == name,
            HostPattern::Under(domain) => host
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostPattern::Exact(name) => f.write_str(name),
            HostPattern::Under(domain) => write!(f, "*.{domain}"),
        }
    }
}

/// What one server may reach through its proxy now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowance {
    pub patterns: Vec<HostPattern>,
    /// Names allowed for this run only ("allow once").
    pub once: BTreeSet<String>,
    /// Whether a name may resolve to a private, loopback or link-local address.
    pub private: bool,
}

impl Allowance {
    /// The allowance of a server's settings: its list (entries that are not host names are
    /// left out; the settings check refuses them before) and its private-address switch.
    pub fn new<S: AsRef<str>>(hosts: &[S], private: bool) -> Self {
        Allowance {
            patterns: hosts
                .iter()
                .filter_map(|h| HostPattern::parse(h.as_ref()).ok())
                .collect(),
            once: BTreeSet::new(),
            private,
        }
    }

    /// Whether `host` may be reached (its addresses are checked after).
    pub fn allows(&self, host: &str) -> bool {
        let host = normalise(host);
        self.once.contains(&host) || self.patterns.iter().any(|p| p.matches(&host))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_domains_match_as_written() {
        let list = Allowance::new(&["api.github.com", "*.notion.so", "10.0.0.5"], false);
        for (host, allowed) in [
            ("api.github.com", true),
            ("API.GitHub.com.", true),
            ("github.com", false),
            ("evil-api.github.com", false),
            ("api.github.com.evil.test", false),
            ("www.notion.so", true),
            ("a.b.notion.so", true),
            ("notion.so", false),
            ("evilnotion.so", false),
            ("10.0.0.5", true),
            ("10.0.0.6", false),
        ] {
            assert_eq!(list.allows(host), allowed, "{host}");
        }
    }

    #[test]
    fn allowed_once_is_allowed_for_the_run() {
        let mut list = Allowance::new::<&str>(&[], false);
        assert!(!list.allows("example.com"));
        list.once.insert("example.com".into());
        assert!(list.allows("Example.com"));
    }

    #[test]
    fn entries_that_are_not_host_names_say_how_to_write_them() {
        for (text, says) in [
            ("https://api.github.com", "leave out the scheme"),
            ("api.github.com/repos", "leave out the scheme and the path"),
            ("api.github.com:443", "leave out the port"),
            ("api.*.com", "a * only goes first"),
            ("*.com", "top-level domain"),
            ("", "is not a host name"),
            ("bad name.com", "is not a host name"),
        ] {
            let e = HostPattern::parse(text).expect_err(text);
            assert!(e.0.contains(says), "{text}: {e}");
        }
        assert_eq!(
            HostPattern::parse(" *.Notion.so ").unwrap().to_string(),
            "*.notion.so"
        );
        assert!(HostPattern::parse("::1").is_ok());
    }
}
