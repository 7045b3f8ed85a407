//! `servers login` and `servers logout`: signing in to a remote server from a terminal, and the
//! step-up a call needs, asked at the terminal first.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::context::Context;

/// When an access token expires, in words: "in 59 minutes", "in 2 s".
pub fn expiry(info: &toolgate_host::SignedInInfo) -> String {
    let Some(at) = info.expires_at else {
        return "no expiry given".into();
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let left = at.saturating_sub(now);
    let when = match left {
        0 => "expired".to_owned(),
        s if s < 120 => format!("expires in {s} s"),
        s if s < 7200 => format!("expires in {} minutes", s / 60),
        s => format!("expires in {} hours", s / 3600),
    };
    if info.renewable {
        format!("{when}, renewed without asking")
    } else {
        when
    }
}

/// `toolgate servers login ID`: prints the address, opens the browser when there is one, waits.
pub async fn login(
    ctx: &Context,
    id: &str,
    client_id: Option<String>,
    scopes: Vec<String>,
    wait_secs: u64,
) -> Result<u8> {
    let show = |url: &str| {
        println!(
            "To sign in to {id}, open this address in a browser (opening it for you):\n\n  {url}\n"
        );
        println!("Waiting for the sign-in to finish (Ctrl-C to stop)…");
        let _ = std::io::stdout().flush();
    };
    let open = |url: &str| toolgate_oauth::open_in_browser(url);
    let info = ctx
        .host
        .sign_in(
            id,
            scopes,
            client_id,
            Duration::from_secs(wait_secs),
            &show,
            &open,
        )
        .await
        .map_err(|e| anyhow!(e))?;
    println!(
        "Signed in to {id} with {} ({}); scopes: {}",
        info.issuer,
        expiry(&info),
        if info.scopes.is_empty() {
            "as granted".to_owned()
        } else {
            info.scopes.join(" ")
        }
    );
    Ok(0)
}

/// `toolgate servers logout ID`.
pub async fn logout(ctx: &Context, id: &str) -> Result<u8> {
    let notes = ctx.host.sign_out(id).await.map_err(|e| anyhow!(e))?;
    for note in &notes {
        eprintln!("{note}");
    }
    println!("Signed out of {id}: its tokens and registration are gone from the keychain.");
    Ok(0)
}

/// A call refused for want of scopes: signs in again for them, as the first sign-in does (the
/// browser opened on the authorization server, which asks the user there). At a terminal it asks
/// first; without one, the call the user asked for is reason enough to open the browser, as
/// `servers login` does. Returns whether the sign-in happened and succeeded.
pub async fn step_up(ctx: &Context, server: &str, scope: &str) -> Result<bool> {
    if std::io::stdin().is_terminal() {
        eprint!("{server} needs more access ({scope}). Sign in again to grant it? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Ok(false);
        }
    } else if browser_on_path() {
        eprintln!("{server} needs more access ({scope}): signing in again for it in the browser.");
    } else {
        // Nobody to ask and no browser to open: waiting for a sign-in nobody can do would only
        // hang a script. The refusal says what to run.
        return Ok(false);
    }
    let scopes = scope.split_whitespace().map(str::to_owned).collect();
    login(
        ctx,
        server,
        None,
        scopes,
        toolgate_host::SIGN_IN_WAIT.as_secs(),
    )
    .await?;
    Ok(true)
}

/// Whether a browser can be opened the way [`toolgate_oauth::open_in_browser`] opens one.
fn browser_on_path() -> bool {
    if cfg!(any(target_os = "macos", windows)) {
        return true;
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("xdg-open").is_file()))
}

/// `toolgate client-metadata [URL]`: the document to host at URL, on stdout.
pub fn client_metadata(url: Option<&str>, callback_ports: &[u16]) -> Result<u8> {
    let Some(url) = url.or(toolgate_oauth::BUILT_IN_CLIENT_METADATA_URL) else {
        return Err(anyhow!(
            "give the https:// address the document will be served at, e.g. `toolgate client-metadata https://example.org/toolgate/client.json` (this build of Toolgate has none built in)"
        ));
    };
    let document =
        toolgate_oauth::client_metadata_document(url, callback_ports).map_err(|e| anyhow!(e))?;
    println!("{}", serde_json::to_string_pretty(&document)?);
    Ok(0)
}
