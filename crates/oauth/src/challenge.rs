//! The request without a token that discovery starts from (RFC 9728 §5.1): a server that wants a
//! sign-in answers it 401 with a `WWW-Authenticate` challenge naming its resource metadata.
//!
//! It is the request an unpinned connection sends first, `server/discover` of the 2026-07-28
//! era, whole: the `MCP-Protocol-Version` and `Mcp-Method` headers and the `_meta` protocol
//! fields that era asks of every request (SEP-2575, SEP-2243). A bare request would be the
//! first thing a 2026-07-28 server sees of Toolgate, and one that breaks its rules. A server of
//! an older era refuses it with a sign-in as it refuses any request without a token; and unlike
//! an `initialize`, it leaves no session open on a server that needs no sign-in.

use rmcp::model::{
    ClientCapabilities, ClientJsonRpcMessage, ClientRequest, DiscoverRequest,
    DiscoverRequestParams, Implementation, ProtocolVersion, RequestId, RequestMetaObject,
};
use rmcp::transport::common::http_header::{HEADER_MCP_METHOD, HEADER_MCP_PROTOCOL_VERSION};

/// The probe's method, as the body and the `Mcp-Method` header name it.
const METHOD: &str = "server/discover";

/// The probe's body: `server/discover` with the client context in its `_meta`. No capabilities
/// are declared: the probe answers nothing the server might ask.
fn body(version: &ProtocolVersion) -> serde_json::Value {
    let meta = RequestMetaObject::with_client_context(
        version.clone(),
        Implementation::new("toolgate", env!("CARGO_PKG_VERSION")),
        ClientCapabilities::default(),
    );
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover.extensions.insert(meta);
    let message = ClientJsonRpcMessage::request(
        ClientRequest::DiscoverRequest(discover),
        RequestId::Number(0),
    );
    serde_json::to_value(message).unwrap_or_default()
}

/// The `WWW-Authenticate` header the probe gets from the server, when it answers 401 (a server
/// that needs no sign-in answers otherwise, and there is no challenge).
pub(crate) async fn challenge(url: &str) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .ok()?;
    let version = ProtocolVersion::V_2026_07_28;
    let response = client
        .post(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .header(HEADER_MCP_PROTOCOL_VERSION, version.as_str())
        .header(HEADER_MCP_METHOD, METHOD)
        .json(&body(&version))
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        // A 401 with no challenge still asks for a sign-in: discovery goes on from the
        // well-known places.
        .or_else(|| Some("Bearer".to_owned()))
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// One request read whole from `listener`, answered with `reply`: its head and its body.
    async fn one_request(listener: tokio::net::TcpListener, reply: &str) -> (String, String) {
        let (mut stream, _) = listener.accept().await.expect("the probe connects");
        let mut read = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.expect("reads");
            read.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&read).to_string();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if body.len() >= length {
                    stream.write_all(reply.as_bytes()).await.expect("answers");
                    return (head.to_owned(), body.to_owned());
                }
            }
            assert!(n > 0, "the probe hung up mid-request");
        }
    }

    fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
        head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    #[tokio::test]
    async fn the_probe_is_a_whole_2026_request_and_reads_the_challenge() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let reply = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer resource_metadata=\"http://x/m\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        let (asked, (head, body)) = tokio::join!(challenge(&url), one_request(listener, reply));
        assert_eq!(
            asked.as_deref(),
            Some("Bearer resource_metadata=\"http://x/m\"")
        );

        let body: serde_json::Value = serde_json::from_str(&body).expect("a JSON body");
        assert_eq!(body["method"], "server/discover");
        let meta = &body["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "toolgate"
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        // The headers say what the body says, byte for byte (header values are case-sensitive).
        assert_eq!(header(&head, "mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(header(&head, "mcp-method"), Some("server/discover"));
        assert!(header(&head, "accept").is_some_and(|a| a.contains("text/event-stream")));
    }

    #[tokio::test]
    async fn anything_but_a_401_is_no_challenge() {
        for reply in [
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
            // A server that wants no sign-in and does not know the method, or the version.
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            "HTTP/1.1 403 Forbidden\r\nWWW-Authenticate: Bearer error=\"insufficient_scope\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        ] {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            let (asked, _) = tokio::join!(challenge(&url), one_request(listener, reply));
            assert_eq!(asked, None, "{reply}");
        }
        // A 401 without a challenge still asks for a sign-in.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let reply = "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        let (asked, _) = tokio::join!(challenge(&url), one_request(listener, reply));
        assert_eq!(asked.as_deref(), Some("Bearer"));
    }
}
