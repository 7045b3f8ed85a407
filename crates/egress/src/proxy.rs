//! The proxy itself: one listener on 127.0.0.1 per server start, a task per connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

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

/// A running proxy; it stops, with every connection through it, when dropped.
pub struct Proxy {
    port: u16,
    allowance: Arc<RwLock<Allowance>>,
    task: JoinHandle<()>,
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
                        connections.spawn(async move {
                            if let Err(e) = serve(stream, &allowance, &refused).await {
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
            allowance,
            task,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The value of the server's proxy variables.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
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

/// Reads the request head; returns the bytes read (head and whatever followed) and the
/// head's method and target.
async fn read_head(stream: &mut TcpStream) -> Result<(Vec<u8>, String, String), String> {
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
                return Ok((buffer, method, path));
            }
            Ok(httparse::Status::Partial) if buffer.len() < HEAD_LIMIT => {}
            Ok(httparse::Status::Partial) => return Err("the request head is too long".into()),
            Err(e) => return Err(format!("not an HTTP request: {e}")),
        }
    }
}

async fn answer(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!("{text}\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
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
    allowance: &RwLock<Allowance>,
    refused: &OnRefused,
) -> Result<(), String> {
    let (head, method, path) = tokio::time::timeout(WAIT, read_head(&mut client))
        .await
        .map_err(|_| "no request within 15 s".to_owned())??;
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
        upstream.write_all(&head).await.map_err(|e| e.to_string())?;
    }
    tokio::io::copy_bidirectional(&mut client, &mut upstream)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
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

    async fn ask(proxy: &Proxy, request: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", proxy.port()))
            .await
            .unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
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
}
