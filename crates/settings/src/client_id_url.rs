//! What makes an address usable as a Client ID Metadata Document's URL (and so as an OAuth
//! client id), as the OAuth Client ID Metadata Document draft (-00 for MCP 2025-11-25, -02 for
//! 2026-07-28) requires: the `https` scheme, a path other than `/`, no fragment, no user name
//! or password, no `.` or `..` path segments. Checked here so a bad address is refused when the
//! settings are saved, naming the field, rather than by an authorization server mid sign-in.

/// Why `url` cannot be a client id URL, or `None` when it can.
pub fn client_id_url_problem(url: &str) -> Option<&'static str> {
    let Some(rest) = url.strip_prefix("https://") else {
        return Some("must be an https:// address");
    };
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return Some("must not contain spaces, control characters or backslashes");
    }
    if url.contains('#') {
        return Some("must not have a fragment (#…)");
    }
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, after) = rest.split_at(authority_end);
    if authority.is_empty() {
        return Some("is not a valid address: it names no host");
    }
    if authority.contains('@') {
        return Some("must not contain a user name or password");
    }
    let path = after.split('?').next().unwrap_or_default();
    if path.is_empty() || path == "/" {
        return Some("must have a path, such as https://example.com/toolgate/client.json");
    }
    if path.split('/').any(|segment| {
        let segment = segment.to_ascii_lowercase().replace("%2e", ".");
        segment == "." || segment == ".."
    }) {
        return Some("must not have . or .. path segments");
    }
    match url::Url::parse(url) {
        Ok(parsed) if parsed.host_str().is_some_and(|h| !h.is_empty()) => None,
        _ => Some("is not a valid address"),
    }
}

#[cfg(test)]
mod tests {
    use super::client_id_url_problem;

    #[test]
    fn only_https_addresses_with_a_path_are_client_ids() {
        for good in [
            "https://example.com/toolgate/client.json",
            "https://127.0.0.1:8443/client-metadata.json",
            "https://example.com/c?v=1",
        ] {
            assert_eq!(client_id_url_problem(good), None, "{good}");
        }
        for (bad, why) in [
            ("http://example.com/client.json", "https://"),
            ("https://example.com", "path"),
            ("https://example.com/", "path"),
            ("https://example.com/a#b", "fragment"),
            ("https://user:pw@example.com/a", "user name"),
            ("https://example.com/a/../b", ". or .."),
            ("https://example.com/a/%2E/b", ". or .."),
            ("https://example.com/a b", "spaces"),
            ("https:///a", "valid"),
        ] {
            let problem = client_id_url_problem(bad).unwrap_or_default();
            assert!(problem.contains(why), "{bad}: {problem}");
        }
    }
}
