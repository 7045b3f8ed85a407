//! Names for servers pasted without one: from the package a runner fetches, the image a
//! container runs, the program, or the host a URL reaches.

/// A name for a server pasted without one: the package a runner fetches (`npx -y
/// @scope/server-x@1` → `server-x`), the image `docker run` starts, else the program's name.
pub(super) fn name_from_command(command: &str, args: &[String]) -> String {
    let program = file_stem(command);
    let runners = ["npx", "uvx", "bunx", "pnpx", "pipx"];
    let package = if runners.contains(&program.as_str()) {
        args.iter()
            .find(|a| !a.starts_with('-'))
            .map(|p| package_name(p))
    } else if program == "docker" || program == "podman" {
        args.iter()
            .rev()
            .find(|a| !a.starts_with('-'))
            .map(|image| {
                let last = image.rsplit('/').next().unwrap_or(image);
                last.split([':', '@']).next().unwrap_or(last).to_owned()
            })
    } else {
        None
    };
    package.filter(|p| !p.is_empty()).unwrap_or(program)
}

/// `@scope/name@1.2` → `name`; `name==1.2` → `name`.
fn package_name(spec: &str) -> String {
    let unscoped = spec.strip_prefix('@').map_or(spec, |rest| {
        rest.split_once('/').map_or(rest, |(_, name)| name)
    });
    unscoped
        .split(['@', '=', '<', '>', '['])
        .next()
        .unwrap_or(unscoped)
        .to_owned()
}

fn file_stem(command: &str) -> String {
    let file = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let lower = file.to_ascii_lowercase();
    for ext in [".exe", ".cmd", ".bat", ".js", ".mjs", ".py"] {
        if lower.ends_with(ext) {
            return file[..file.len() - ext.len()].to_owned();
        }
    }
    file.to_owned()
}

/// The host of a URL, without any user:password part or port.
pub(super) fn name_from_url(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host);
    if host.is_empty() {
        "server".to_owned()
    } else {
        host.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_for_servers_pasted_alone() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            name_from_command(
                "npx",
                &args(&["-y", "@modelcontextprotocol/server-github@1.2"])
            ),
            "server-github"
        );
        assert_eq!(
            name_from_command("uvx", &args(&["mcp-server-time==0.6"])),
            "mcp-server-time"
        );
        assert_eq!(
            name_from_command(
                "docker",
                &args(&[
                    "run",
                    "-i",
                    "--rm",
                    "ghcr.io/github/github-mcp-server:latest"
                ])
            ),
            "github-mcp-server"
        );
        assert_eq!(
            name_from_command("/usr/local/bin/my-server", &[]),
            "my-server"
        );
        assert_eq!(name_from_command("C:\\tools\\srv.exe", &[]), "srv");
        assert_eq!(
            name_from_url("https://user:pw@mcp.example.com:8443/mcp?x=1"),
            "mcp.example.com"
        );
    }
}
