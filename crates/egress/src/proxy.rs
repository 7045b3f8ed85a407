//! The proxy itself: one listener on 127.0.0.1 per server start, a task per connection.
//!
//! **Its own server's only.** Any program of the user's can connect to a port of 127.0.0.1
//! (another server in network "loopback", a web page's fetch), and the port is readable in
//! `/proc/net/tcp`; so the port is no secret, and every request must carry the proxy's
//! credentials: `Proxy-Authorization: Basic base64(toolgate:<secret>)`, where the secret is
//! random per start and handed only to its server's process, inside its proxy variables
//! (`http://toolgate:<secret>@127.0.0.1:<port>`, which curl, Python's urllib, requests and
//! httpx, and Node's proxy agents turn into that header). A request without them, or with
//! others, is answered `407` before its target is read; the header is compared in constant
//! time and never passed on to the host.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use base64::Engine as _;

use crate::allowance::{normalise, Allowance};
use crate::public::is_public;

/// The longest request head read before a connection is refused.
const HEAD_LIMIT: usize = 16 * 1024;
/// How long the head may take to arrive, and a connection to the host to open.
const WAIT: Duration = Duration::from_secs(15);

/// A connection the proxy refused, for the server's card and its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The name (or address) asked for, normalised.
    pub host: String,
    pub port: u16,
    /// Why, in words.
    pub reason: String,
    /// Whether the name was on the list (and refused for where it resolves): allowing it again
    /// would change nothing.
    pub listed: bool,
}

type OnRefused = Arc<dyn Fn(Refusal) + Send + Sync>;

/// The user name in the proxy's credentials (the secret is the password).
const USER: &str = "toolgate";

/// A running proxy; it stops, with every connection through it, when dropped.
pub struct Proxy {
    port: u16,
    /// The password of its credentials: 64 hexadecimal digits (two random UUIDs, 244 random
    /// bits), safe in a URL as is. Never logged, never shown.
    secret: String,
    allowance: Arc<RwLock<Allowance>>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret stays out of every log line a `{:?}` could write.
        f.debug_struct("Proxy").field("port", &self.port).finish()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Starts a proxy on a free port of 127.0.0.1 allowing `allowance`; `refused` hears of each
    /// refusal.
    pub async fn start(
        allowance: Allowance,
        refused: impl Fn(Refusal) + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind((IpAddr::from([127, 0, 0, 1]), 0)).await?;
        let port = listener.local_addr()?.port();
        let secret = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let expected: Arc<[u8]> = format!("{USER}:{secret}").into_bytes().into();
        let allowance = Arc::new(RwLock::new(allowance));
        let shared = allowance.clone();
        let refused: OnRefused = Arc::new(refused);
        let task = tokio::spawn(async move {
            // Held by this task: aborting it drops the set, which aborts every connection.
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let allowance = shared.clone();
                        let refused = refused.clone();
                        let expected = expected.clone();
                        connections.spawn(async move {
                            if let Err(e) = serve(stream, &expected, &allowance, &refused).await {
                                tracing::debug!("a proxied connection ended: {e}");
                            }
                        });
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(Proxy {
            port,
            secret,
            allowance,
            task,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The value of the server's proxy variables, credentials included: for its process's
    /// environment only, never for a log or a report (see [`Self::shown_url`]).
    pub fn url(&self) -> String {
        format!("http://{USER}:{}@127.0.0.1:{}", self.secret, self.port)
    }

    /// The proxy's address as it may be shown, with its secret left out.
    pub fn shown_url(&self) -> String {
        format!("http://{USER}:***@127.0.0.1:{}", self.port)
    }

    /// Replaces the list and the private-address switch (the settings changed); names
    /// allowed once stay allowed for the run.
    pub fn update(&self, mut allowance: Allowance) {
        let mut current = self
            .allowance
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        allowance.once = std::mem::take(&mut current.once);
        *current = allowance;
    }

    /// Allows `host` until the server stops.
    pub fn allow_once(&self, host: &str) {
        self.allowance
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .once
            .insert(normalise(host));
    }

    pub fn allowance(&self) -> Allowance {
        self.allowance
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Where a request wants to go.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    /// `CONNECT`: a tunnel (answered 200 before the bytes flow); otherwise the request is
    /// passed on as it came.
    tunnel: bool,
}

/// `host:port`, with IPv6 in brackets.
fn authority(text: &str, default_port: u16) -> Option<(String, u16)> {
    let text = text.rsplit_once('@').map_or(text, |(_, host)| host);
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default_port,
            None => return None,
        };
        return Some((host.to_owned(), port));
    }
    match text.rsplit_once(':') {
        Some((host, port)) => Some((host.to_owned(), port.parse().ok()?)),
        None => Some((text.to_owned(), default_port)),
    }
}

fn target(method: &str, path: &str) -> Result<Target, String> {
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(path, 443).ok_or("a CONNECT needs host:port")?;
        return Ok(Target {
            host: normalise(&host),
            port,
            tunnel: true,
        });
    }
    let scheme_end = path
        .find("://")
        .filter(|i| path[..*i].eq_ignore_ascii_case("http"))
        .ok_or("only http:// requests in absolute form and CONNECT pass this proxy")?;
    let rest = &path[scheme_end + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host, port) = authority(&rest[..end], 80).ok_or("the request's host is not readable")?;
    if host.is_empty() {
        return Err("the request names no host".into());
    }
    Ok(Target {
        host: normalise(&host),
        port,
        tunnel: false,
    })
}

/// A request head as read: every byte read (head and whatever followed), its method and
/// target, and whether it carried the proxy's credentials.
struct Head {
    bytes: Vec<u8>,
    method: String,
    path: String,
    authorised: bool,
}

/// Whether a `Proxy-Authorization` value is `Basic` with exactly the credentials `expected`
/// (`user:secret`). The decoded bytes are compared in time that depends only on their length.
fn authorised(value: &[u8], expected: &[u8]) -> bool {
    let Ok(value) = std::str::from_utf8(value) else {
        return false;
    };
    let mut words = value.trim().splitn(2, ' ');
    let (Some(scheme), Some(encoded)) = (words.next(), words.next()) else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return false;
    }
    let encoded = encoded.trim();
    // Some clients leave out the padding; both spellings are the same credentials.
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(encoded));
    let Ok(decoded) = decoded else {
        return false;
    };
    decoded.len() == expected.len()
        && decoded
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

/// Reads the request head (see [`Head`]); `expected` is the proxy's `user:secret`.
async fn read_head(stream: &mut TcpStream, expected: &[u8]) -> Result<Head, String> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let read = stream
            .read(&mut chunk)
            .await
            .map_err(|e| format!("reading the request: {e}"))?;
        if read == 0 {
            return Err("the connection closed before a request".into());
        }
        buffer.extend_from_slice(&chunk[..read]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buffer) {
            Ok(httparse::Status::Complete(_)) => {
                let method = request.method.unwrap_or_default().to_owned();
                let path = request.path.unwrap_or_default().to_owned();
                // Every credential header must be right: a second, wrong one is refused too.
                let mut credentials = request
                    .headers
                    .iter()
                    .filter(|h| h.name.eq_ignore_ascii_case("proxy-authorization"))
                    .peekable();
                let authorised = credentials.peek().is_some()
                    && credentials.all(|h| authorised(h.value, expected));
                return Ok(Head {
                    bytes: buffer,
                    method,
                    path,
                    authorised,
                });
            }
            Ok(httparse::Status::Partial) if buffer.len() < HEAD_LIMIT => {}
            Ok(httparse::Status::Partial) => return Err("the request head is too long".into()),
            Err(e) => return Err(format!("not an HTTP request: {e}")),
        }
    }
}

async fn answer(stream: &mut TcpStream, status: &str, text: &str) {
    answer_with(stream, status, "", text).await;
}

/// [`answer`] with `extra` header lines (each ending in CRLF).
async fn answer_with(stream: &mut TcpStream, status: &str, extra: &str, text: &str) {
    let body = format!("{text}\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         {extra}Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The addresses to connect to, or why none may be.
async fn resolve(target: &Target, private: bool) -> Result<Vec<SocketAddr>, (String, bool)> {
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((target.host.as_str(), target.port))
        .await
        .map_err(|e| (format!("{} could not be resolved: {e}", target.host), false))?
        .collect();
    if addresses.is_empty() {
        return Err((format!("{} resolves to no address", target.host), false));
    }
    if !private {
        if let Some(inside) = addresses.iter().find(|a| !is_public(a.ip())) {
            return Err((
                format!(
                    "{} resolves to {}, which is not a public address (this server may not reach \
                     private, loopback or link-local addresses)",
                    target.host,
                    inside.ip()
                ),
                true,
            ));
        }
    }
    Ok(addresses)
}

async fn connect(addresses: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::other("no address");
    for address in addresses {
        match tokio::time::timeout(WAIT, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = e,
            Err(_) => last = std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"),
        }
    }
    Err(last)
}

async fn serve(
    mut client: TcpStream,
    expected: &[u8],
    allowance: &RwLock<Allowance>,
    refused: &OnRefused,
) -> Result<(), String> {
    let Head {
        bytes: head,
        method,
        path,
        authorised,
    } = tokio::time::timeout(WAIT, read_head(&mut client, expected))
        .await
        .map_err(|_| "no request within 15 s".to_owned())??;
    if !authorised {
        // Before the target is read: a stranger learns nothing of the list.
        answer_with(
            &mut client,
            "407 Proxy Authentication Required",
            "Proxy-Authenticate: Basic realm=\"Toolgate\"\r\n",
            "Toolgate refused: this proxy serves one server only, which has its credentials in \
             its proxy variables (HTTPS_PROXY); a program that does not send them cannot use it",
        )
        .await;
        return Err("a request without this proxy's credentials".to_owned());
    }
    let target = match target(&method, &path) {
        Ok(target) => target,
        Err(why) => {
            answer(&mut client, "400 Bad Request", &why).await;
            return Err(why);
        }
    };
    let (allowed, private) = {
        let allowance = allowance.read().unwrap_or_else(PoisonError::into_inner);
        (allowance.allows(&target.host), allowance.private)
    };
    let refuse = |reason: String, listed: bool| Refusal {
        host: target.host.clone(),
        port: target.port,
        reason,
        listed,
    };
    if !allowed {
        let refusal = refuse(
            format!(
                "{} is not on this server's list of hosts (network \"hosts\"); allow it on \
                 the server's card in Toolgate",
                target.host
            ),
            false,
        );
        answer(
            &mut client,
            "403 Forbidden",
            &format!("Toolgate refused: {}", refusal.reason),
        )
        .await;
        refused(refusal);
        return Ok(());
    }
    let addresses = match resolve(&target, private).await {
        Ok(addresses) => addresses,
        Err((reason, listed)) => {
            let status = if listed {
                "403 Forbidden"
            } else {
                "502 Bad Gateway"
            };
            answer(&mut client, status, &format!("Toolgate refused: {reason}")).await;
            refused(refuse(reason, listed));
            return Ok(());
        }
    };
    let mut upstream = match connect(&addresses).await {
        Ok(upstream) => upstream,
        Err(e) => {
            let why = format!("{}:{} could not be reached: {e}", target.host, target.port);
            answer(&mut client, "502 Bad Gateway", &why).await;
            return Err(why);
        }
    };
    if target.tunnel {
        let head_end = head_length(&head);
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .map_err(|e| e.to_string())?;
        upstream
            .write_all(&head[head_end..])
            .await
            .map_err(|e| e.to_string())?;
    } else {
        upstream
            .write_all(&forwarded(&head))
            .await
            .map_err(|e| e.to_string())?;
    }
    tokio::io::copy_bidirectional(&mut client, &mut upstream)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A plain-HTTP request as passed on to the host: its head without the proxy's own headers
/// (the credentials are this proxy's, not the host's business) and with `Connection: close`, so
/// the one request checked is the only one sent on this connection; then whatever followed.
fn forwarded(buffer: &[u8]) -> Vec<u8> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    // Rebuilt from what was parsed (not cut from the text), so a head with bare LF line ends
    // loses its credentials too.
    let Ok(httparse::Status::Complete(end)) = request.parse(buffer) else {
        return buffer.to_vec();
    };
    let mut out = Vec::with_capacity(buffer.len());
    out.extend_from_slice(request.method.unwrap_or_default().as_bytes());
    out.push(b' ');
    out.extend_from_slice(request.path.unwrap_or_default().as_bytes());
    out.extend_from_slice(format!(" HTTP/1.{}\r\n", request.version.unwrap_or(1)).as_bytes());
    let hop = [
        "proxy-authorization",
        "proxy-connection",
        "connection",
        "keep-alive",
    ];
    for header in request.headers.iter() {
        if hop.iter().any(|h| header.name.eq_ignore_ascii_case(h)) {
            continue;
        }
        out.extend_from_slice(header.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(header.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out.extend_from_slice(&buffer[end..]);
    out
}

/// Where the head ends in `buffer` (which holds a complete head).
fn head_length(buffer: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    match httparse::Request::new(&mut headers).parse(buffer) {
        Ok(httparse::Status::Complete(length)) => length,
        _ => buffer.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn targets_are_read_from_connect_and_absolute_requests() {
        let t = target("CONNECT", "api.github.com:443").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.tunnel),
            ("api.github.com", 443, true)
        );
        let t = target("GET", "http://Example.com/a/b?c").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.tunnel),
            ("example.com", 80, false)
        );
        let t = target("GET", "http://user@example.com:8080").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("example.com", 8080));
        let t = target("CONNECT", "[2606:4700::1111]:443").unwrap();
        assert_eq!(t.host, "2606:4700::1111");
        assert!(target("GET", "/relative").is_err());
        assert!(target("GET", "https://example.com/").is_err());
        assert!(target("CONNECT", "example.com:port").is_err());
    }

    /// A server on 127.0.0.1 answering one line, and its port.
    async fn upstream() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let mut buf = [0u8; 1024];
                let n = s.read(&mut buf).await.unwrap_or(0);
                let _ = s.write_all(b"upstream heard: ").await;
                let _ = s.write_all(&buf[..n]).await;
            }
        });
        port
    }

    /// Sends `request` as it is and returns everything answered.
    async fn ask_raw(port: u16, request: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(request).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The `Proxy-Authorization` line a client builds from `user:password` of the proxy URL.
    fn credentials_of(url: &str) -> String {
        let rest = url.strip_prefix("http://").unwrap();
        let (userinfo, _) = rest.split_once('@').unwrap();
        let encoded = base64::engine::general_purpose::STANDARD.encode(userinfo);
        format!("Proxy-Authorization: Basic {encoded}\r\n")
    }

    /// Sends `request` with the proxy's credentials (after its request line), as its own
    /// server's client would.
    async fn ask(proxy: &Proxy, request: &str) -> String {
        let (line, rest) = request.split_once("\r\n").unwrap();
        let request = format!("{line}\r\n{}{rest}", credentials_of(&proxy.url()));
        ask_raw(proxy.port(), request.as_bytes()).await
    }

    #[tokio::test]
    async fn listed_names_pass_others_are_refused_and_reported() {
        let port = upstream().await;
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        let proxy = Proxy::start(Allowance::new(&["localhost"], true), move |r| {
            sink.lock().unwrap().push(r)
        })
        .await
        .unwrap();
        let tunnel = ask(
            &proxy,
            &format!("CONNECT localhost:{port} HTTP/1.1\r\nHost: x\r\n\r\nhello"),
        )
        .await;
        assert!(tunnel.starts_with("HTTP/1.1 200"), "{tunnel}");
        assert!(tunnel.ends_with("upstream heard: hello"), "{tunnel}");
        let plain = ask(
            &proxy,
            &format!("GET http://localhost:{port}/x HTTP/1.1\r\nHost: localhost\r\n\r\n"),
        )
        .await;
        assert!(
            plain.starts_with("upstream heard: GET http://localhost"),
            "{plain}"
        );

        let refused = ask(
            &proxy,
            &format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        assert!(
            refused.contains("127.0.0.1 is not on this server's list"),
            "{refused}"
        );
        let heard = heard.lock().unwrap().clone();
        assert_eq!(heard.len(), 1);
        assert_eq!(
            (heard[0].host.as_str(), heard[0].listed),
            ("127.0.0.1", false)
        );

        proxy.allow_once("127.0.0.1");
        let once = ask(
            &proxy,
            &format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nx"),
        )
        .await;
        assert!(once.starts_with("HTTP/1.1 200"), "{once}");
    }

    #[tokio::test]
    async fn a_listed_name_resolving_to_a_private_address_is_refused_unless_allowed() {
        let port = upstream().await;
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        let proxy = Proxy::start(Allowance::new(&["localhost"], false), move |r| {
            sink.lock().unwrap().push(r)
        })
        .await
        .unwrap();
        let refused = ask(
            &proxy,
            &format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        assert!(
            refused.contains("which is not a public address"),
            "{refused}"
        );
        assert!(heard.lock().unwrap()[0].listed);
        proxy.update(Allowance::new(&["localhost"], true));
        let now = ask(
            &proxy,
            &format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\nx"),
        )
        .await;
        assert!(now.starts_with("HTTP/1.1 200"), "{now}");
    }

    /// The upstream server, recording everything it was sent.
    async fn recording_upstream() -> (u16, Arc<Mutex<Vec<u8>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).await.unwrap_or(0);
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
                let _ = s.write_all(b"HTTP/1.1 204 No Content\r\n\r\n").await;
            }
        });
        (port, heard)
    }

    #[tokio::test]
    async fn only_a_client_with_the_proxys_credentials_is_served() {
        let (port, heard) = recording_upstream().await;
        let proxy = Proxy::start(Allowance::new(&["localhost"], true), |_| {})
            .await
            .unwrap();
        let url = proxy.url();
        let secret = url
            .strip_prefix("http://toolgate:")
            .and_then(|r| r.split_once('@'))
            .map(|(s, _)| s.to_owned())
            .unwrap();
        assert!(secret.len() >= 64, "{url}");
        let basic = |userinfo: &str| {
            format!(
                "Proxy-Authorization: Basic {}\r\n",
                base64::engine::general_purpose::STANDARD.encode(userinfo)
            )
        };
        let connect = |extra: &str| {
            format!("CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost\r\n{extra}\r\nhello")
        };
        // A neighbour that found the port (in /proc/net/tcp) but has no credentials, or
        // guessed at them, in every spelling.
        let other = Proxy::start(Allowance::new(&["localhost"], true), |_| {})
            .await
            .unwrap();
        let wrong = [
            String::new(),
            basic(&format!("toolgate:{}", &secret[..secret.len() - 1])),
            basic(&format!("toolgate:{secret}x")),
            basic(&format!("someone:{secret}")),
            basic("toolgate:"),
            basic(&secret),
            credentials_of(&other.url()),
            format!("Proxy-Authorization: Bearer {secret}\r\n"),
            format!("Proxy-Authorization: Basic toolgate:{secret}\r\n"),
            format!(
                "Authorization: {}",
                &basic(&format!("toolgate:{secret}"))[21..]
            ),
            "Proxy-Authorization: Basic !!!\r\n".to_owned(),
            // A right one and a wrong one: all must be right.
            format!(
                "{}{}",
                basic(&format!("toolgate:{secret}")),
                basic("toolgate:guess")
            ),
        ];
        for extra in &wrong {
            let answer = ask_raw(proxy.port(), connect(extra).as_bytes()).await;
            assert!(
                answer.starts_with("HTTP/1.1 407")
                    && answer.contains("Proxy-Authenticate: Basic realm=\"Toolgate\""),
                "{extra:?}: {answer}"
            );
            let plain =
                format!("GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n");
            let answer = ask_raw(proxy.port(), plain.as_bytes()).await;
            assert!(answer.starts_with("HTTP/1.1 407"), "{extra:?}: {answer}");
        }
        assert!(heard.lock().unwrap().is_empty(), "nothing reached the host");

        // The owner's client: accepted, in the spellings clients use.
        let right = format!("toolgate:{secret}");
        let unpadded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&right);
        for extra in [
            credentials_of(&url),
            format!("proxy-authorization: basic {unpadded}\r\n"),
        ] {
            let answer = ask_raw(proxy.port(), connect(&extra).as_bytes()).await;
            assert!(answer.starts_with("HTTP/1.1 200"), "{extra:?}: {answer}");
        }

        // A plain request is passed on without the proxy's credentials, even with bare LFs.
        heard.lock().unwrap().clear();
        let plain = format!(
            "GET http://localhost:{port}/x HTTP/1.1\nHost: localhost\n{}\nProxy-Connection: keep-alive\n\n",
            credentials_of(&url).trim_end()
        );
        let answer = ask_raw(proxy.port(), plain.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
        let sent = String::from_utf8_lossy(&heard.lock().unwrap()).into_owned();
        assert!(sent.starts_with("GET http://localhost:"), "{sent}");
        assert!(
            !sent.contains(&secret)
                && !sent.to_ascii_lowercase().contains("proxy-")
                && sent.contains("Connection: close"),
            "{sent}"
        );

        // Shown anywhere but the server's environment, the secret is left out.
        assert!(!proxy.shown_url().contains(&secret));
        assert!(!format!("{proxy:?}").contains(&secret));
        assert_ne!(url, other.url(), "each proxy has its own secret");
    }
}
