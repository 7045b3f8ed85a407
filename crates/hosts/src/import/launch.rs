//! A server's launch line: its command line or address as the user reads it before anything
//! runs ([`launch_line`]), with the parts that look like secrets hidden.
//!
//! The report shows it for every server an import adds, so that what will run is seen first.

use toolgate_settings::ServerConfig;
use toolgate_settings::Transport;

use super::vars;

/// What a secret-looking part of a launch line is shown as.
const HIDDEN_PART: &str = "(hidden)";

/// A server's command line or address as the user should read it before it runs. Parts that
/// look like secrets are hidden: the value of a `--token=…` flag or of the argument after a
/// `--api-key` flag, and in a URL a password and secret-looking query values.
pub fn launch_line(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, args, .. } => {
            let mut after_secret_flag = false;
            std::iter::once(command.clone())
                .chain(args.iter().map(|arg| {
                    let shown = if after_secret_flag && !arg.starts_with('-') {
                        HIDDEN_PART.to_owned()
                    } else {
                        match arg.split_once('=') {
                            Some((flag, value))
                                if flag.starts_with('-')
                                    && vars::looks_secret(flag)
                                    && !value.is_empty() =>
                            {
                                format!("{flag}={HIDDEN_PART}")
                            }
                            _ => arg.clone(),
                        }
                    };
                    after_secret_flag =
                        arg.starts_with('-') && !arg.contains('=') && vars::looks_secret(arg);
                    shown
                }))
                .map(|part| shell_quoted(&part))
                .collect::<Vec<_>>()
                .join(" ")
        }
        Transport::Http { url, .. } => url_without_secrets(url),
    }
}

fn shell_quoted(part: &str) -> String {
    let plain =
        !part.is_empty() && !part.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c));
    if plain || part == HIDDEN_PART {
        part.to_owned()
    } else {
        format!("'{}'", part.replace('\'', "'\\''"))
    }
}

fn url_without_secrets(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("{HIDDEN_PART}@{host}"),
        None => authority.to_owned(),
    };
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let mut shown = if scheme.is_empty() {
        format!("{authority}{path}")
    } else {
        format!("{scheme}://{authority}{path}")
    };
    if !query.is_empty() || tail.contains('?') {
        let (query, fragment) = query
            .split_once('#')
            .map_or((query, None), |(q, f)| (q, Some(f)));
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) if vars::looks_secret(key) && !value.is_empty() => {
                    format!("{key}={HIDDEN_PART}")
                }
                _ => pair.to_owned(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
        if let Some(fragment) = fragment {
            shown.push('#');
            shown.push_str(fragment);
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use crate::import::{plan_import, ImportOptions};
    use toolgate_settings::Settings;

    #[test]
    fn the_launch_line_is_what_runs_quoted_as_a_shell_reads_it_without_secrets() {
        let mut existing = Settings::first_run(toolgate_settings::example_server(None));
        existing.servers.clear();
        let text = r#"{"mcpServers": {
            "notes": {"command": "npx", "args": ["-y", "@scope/server", "/home/me/my notes", "it's"]},
            "remote": {"type": "http", "url": "https://example.com/mcp"},
            "hidden": {"command": "srv", "args": ["--api-key", "k-1234567", "--token=t-99999", "--verbose"]},
            "query": {"type": "http", "url": "https://me:pw@example.com/mcp?api_key=abc&x=1#top"}
        }}"#;
        let plan = plan_import(&existing, text, &ImportOptions::default()).unwrap();
        let runs: Vec<&str> = plan
            .report()
            .added
            .iter()
            .map(|a| a.runs.as_str())
            .collect();
        assert_eq!(
            runs,
            [
                "srv --api-key (hidden) --token=(hidden) --verbose",
                r"npx -y @scope/server '/home/me/my notes' 'it'\''s'",
                "https://(hidden)@example.com/mcp?api_key=(hidden)&x=1#top",
                "https://example.com/mcp",
            ]
        );
    }
}
