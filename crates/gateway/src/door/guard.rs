//! Who may come through the HTTP door, decided before any MCP is read:
//!
//! 1. **Host**: only a loopback name (`127.0.0.1`, `localhost`, `[::1]`, any 127.x address).
//!    A web page that rebinds its own name to 127.0.0.1 (DNS rebinding) still sends its own
//!    name as Host, and is refused: 403.
//! 2. **Origin**, when there is one (browsers send it; programs usually do not): only a loopback
//!    origin, so no web page elsewhere can drive the door from the user's browser: 403.
//! 3. **Token**: `Authorization: Bearer <token>`, one Toolgate issued and has not revoked: 401
//!    otherwise, saying how to get one. The token's name is the client's (its profile, its
//!    name on the gate's card), passed on in the request's extensions ([`DoorCaller`]).
//!
//! Each answer says what was wrong and how to fix it. The checks are pure functions, tested
//! by a table below; the middleware only applies them.

use std::net::IpAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{header, HeaderMap, StatusCode};
use toolgate_host::Host;

use crate::session::DoorCaller;

/// Why a request was turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    Host(String),
    Origin(String),
    NoToken,
    WrongToken,
    Keychain(String),
}

impl Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Refusal::Host(_) | Refusal::Origin(_) => StatusCode::FORBIDDEN,
            Refusal::NoToken | Refusal::WrongToken => StatusCode::UNAUTHORIZED,
            Refusal::Keychain(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn message(&self) -> String {
        match self {
            Refusal::Host(host) => format!(
                "Toolgate's HTTP door answers only requests addressed to this computer's \
                 loopback (127.0.0.1, localhost or [::1]), not to '{host}': connect to \
                 http://127.0.0.1:PORT/mcp. (Other names are refused against DNS rebinding.)"
            ),
            Refusal::Origin(origin) => format!(
                "Toolgate's HTTP door refuses requests from the web origin '{origin}': only \
                 pages served from this computer's loopback may call it (against DNS \
                 rebinding). A program, not a web page, should send no Origin."
            ),
            Refusal::NoToken => "Toolgate's HTTP door needs a token: issue one with \
                 `toolgate door token add NAME` (or in the window: Settings › Import and export › HTTP door) \
                 and send it as the header `Authorization: Bearer <token>`."
                .to_owned(),
            Refusal::WrongToken => "Toolgate did not issue this token, or it was revoked: \
                 `toolgate door token list` shows the clients that hold one; issue a new one \
                 with `toolgate door token add NAME`."
                .to_owned(),
            Refusal::Keychain(why) => {
                format!("Toolgate's HTTP door could not read its tokens from the keychain: {why}")
            }
        }
    }

    fn response(&self) -> Response {
        let mut response = Response::new(Body::from(self.message()));
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        match self {
            Refusal::NoToken => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer realm=\"toolgate\""),
                );
            }
            Refusal::WrongToken => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static(
                        "Bearer realm=\"toolgate\", error=\"invalid_token\"",
                    ),
                );
            }
            _ => {}
        }
        response
    }
}

/// Whether `host` (a Host header's name, or an origin's, without the port) is this computer's
/// loopback.
fn is_loopback_name(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The name in an authority (`host`, `host:port`, `[v6]:port`).
fn name_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

/// 1. The Host header names this computer's loopback.
pub(crate) fn check_host(host: Option<&str>) -> Result<(), Refusal> {
    match host {
        Some(host) if is_loopback_name(name_of(host.trim())) => Ok(()),
        Some(host) => Err(Refusal::Host(host.to_owned())),
        None => Err(Refusal::Host(String::new())),
    }
}

/// 2. The Origin, when there is one, is a loopback page's.
pub(crate) fn check_origin(origin: Option<&str>) -> Result<(), Refusal> {
    let Some(origin) = origin else {
        return Ok(());
    };
    let authority = origin
        .trim()
        .strip_prefix("http://")
        .or_else(|| origin.trim().strip_prefix("https://"));
    match authority {
        Some(authority) if !authority.contains('/') && is_loopback_name(name_of(authority)) => {
            Ok(())
        }
        _ => Err(Refusal::Origin(origin.to_owned())),
    }
}

/// 3. The bearer token, if the request carries one.
pub(crate) fn bearer(authorization: Option<&str>) -> Option<&str> {
    let value = authorization?.trim();
    let (scheme, token) = value.split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty()).then(|| token.trim())
}

fn header(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The middleware: each request checked in the order above; a passing one carries its
/// client's name on to the MCP service.
pub(crate) async fn guard(
    State(host): State<Arc<Host>>,
    mut request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    if let Err(refusal) = check_host(header(headers, header::HOST))
        .and_then(|()| check_origin(header(headers, header::ORIGIN)))
    {
        tracing::warn!(status = %refusal.status(), "the HTTP door refused a request: {}", refusal.message());
        return refusal.response();
    }
    let Some(token) = bearer(header(headers, header::AUTHORIZATION)).map(str::to_owned) else {
        return Refusal::NoToken.response();
    };
    // The keychain is a D-Bus call: off the async workers.
    let checked = tokio::task::spawn_blocking(move || host.door_tokens().client_of(&token)).await;
    match checked {
        Ok(Ok(Some(name))) => {
            request.extensions_mut().insert(DoorCaller(name));
            next.run(request).await
        }
        Ok(Ok(None)) => {
            tracing::warn!("the HTTP door refused a request with a token it did not issue");
            Refusal::WrongToken.response()
        }
        Ok(Err(e)) => Refusal::Keychain(e.to_string()).response(),
        Err(e) => Refusal::Keychain(e.to_string()).response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_and_origins_come_in() {
        for host in [
            "127.0.0.1:8787",
            "localhost:8787",
            "LOCALHOST",
            "[::1]:8787",
            "127.0.0.2",
        ] {
            assert_eq!(check_host(Some(host)), Ok(()), "{host}");
        }
        for host in [
            "evil.example.com",
            "evil.example.com:8787",
            "localhost.evil.example.com",
            "127.0.0.1.nip.io:8787",
            "[::2]:8787",
            "192.168.1.2:8787",
            "",
        ] {
            assert!(check_host(Some(host)).is_err(), "{host}");
        }
        assert!(check_host(None).is_err(), "no Host at all");

        assert_eq!(check_origin(None), Ok(()), "a program sends none");
        for origin in [
            "http://127.0.0.1:8787",
            "http://localhost:3000",
            "https://[::1]:8787",
        ] {
            assert_eq!(check_origin(Some(origin)), Ok(()), "{origin}");
        }
        for origin in [
            "http://evil.example.com",
            "https://localhost.evil.example.com",
            "null",
            "file://",
            "http://127.0.0.1.evil.example.com",
            "http://localhost/path",
        ] {
            assert!(check_origin(Some(origin)).is_err(), "{origin}");
        }
    }

    #[test]
    fn refusals_say_what_to_do_with_the_right_status() {
        assert_eq!(Refusal::Host("x".into()).status(), StatusCode::FORBIDDEN);
        assert_eq!(Refusal::Origin("x".into()).status(), StatusCode::FORBIDDEN);
        let missing = Refusal::NoToken.response();
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert!(missing.headers().contains_key(header::WWW_AUTHENTICATE));
        assert!(Refusal::NoToken
            .message()
            .contains("toolgate door token add"));
        assert!(Refusal::WrongToken.message().contains("revoked"));
    }

    #[test]
    fn the_token_is_read_from_a_bearer_header_only() {
        assert_eq!(bearer(Some("Bearer tgd_abc")), Some("tgd_abc"));
        assert_eq!(bearer(Some("bearer   tgd_abc ")), Some("tgd_abc"));
        assert_eq!(bearer(Some("Basic dXNlcjpwYXNz")), None);
        assert_eq!(bearer(Some("Bearer ")), None);
        assert_eq!(bearer(None), None);
    }
}
