//! `toolgate door token add|list|revoke`: the HTTP door's tokens, one per client, in the
//! keychain. A token is printed once, when it is issued; after that only its name is shown.

use anyhow::Result;

use crate::context::Context;

/// Issues a token for `name` and prints it, alone, on stdout (so a script can take it); how to
/// use it goes to stderr.
pub fn token_add(ctx: &Context, name: &str) -> Result<u8> {
    let token = ctx.host.door_tokens().issue(name)?;
    println!("{token}");
    let url = toolgate_host::door_url(&ctx.host.door_settings().address);
    eprintln!(
        "toolgate door: issued a token for '{name}'. It is shown this once: give it to the client \
         as the header `Authorization: Bearer <token>`, with the address {url} \
         (`toolgate serve --http ADDRESS`, or the window's HTTP door). The client is known as \
         '{name}' on approval cards and in the log, and sees the gateway profile '{name}' if \
         there is one. Revoke it with `toolgate door token revoke {name}`."
    );
    Ok(0)
}

/// The clients holding a token, one name a line (or a JSON list).
pub fn token_list(ctx: &Context, json: bool) -> Result<u8> {
    let names = ctx.host.door_tokens().names()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&names)?);
    } else if names.is_empty() {
        eprintln!("toolgate door: no tokens; issue one with `toolgate door token add NAME`");
    } else {
        for name in names {
            println!("{name}");
        }
    }
    Ok(0)
}

/// Revokes `name`'s token: the door refuses it from its next request on (within two seconds
/// when the door runs in another process).
pub fn token_revoke(ctx: &Context, name: &str) -> Result<u8> {
    ctx.host.door_tokens().revoke(name)?;
    eprintln!("toolgate door: revoked the token of '{name}'");
    Ok(0)
}
