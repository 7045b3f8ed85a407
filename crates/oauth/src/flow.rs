//! The sign-in: discovery, the client's identity, the browser, the loopback redirect, the code
//! exchanged for tokens. Nothing is stored unless the whole flow succeeds, except the in-flight
//! state (deleted whichever way it ends).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthorizationRequest, AuthorizationSession, StateStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolgate_secrets::SecretStore;
use toolgate_settings::OAuthSettings;

use crate::store::{self, ClientRecord};
use crate::{
    discover, document, install, manager_for, KeychainFor, OpenBrowserError, SignInError,
    SignedInInfo,
};

/// What to sign in to.
pub struct SignInRequest {
    /// The server's id (names its keychain items) and what to call it in messages.
    pub server: String,
    pub url: String,
    pub settings: Option<OAuthSettings>,
    /// Scopes asked for on top of the usual ones (step-up after a 403 `insufficient_scope`).
    pub extra_scopes: Vec<String>,
    /// The client secret from `settings.client_secret`, already read from the keychain.
    pub client_secret: Option<String>,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    pub secrets: Arc<dyn SecretStore>,
}

/// Opens `url` in the user's browser: `xdg-open` (or the desktop's equivalent), found on PATH.
/// The child is waited for in the background, so it never lingers as a zombie.
pub fn open_in_browser(url: &str) -> Result<(), OpenBrowserError> {
    #[cfg(target_os = "macos")]
    let mut command = std::process::Command::new("open");
    #[cfg(target_os = "windows")]
    let mut command = {
        let mut c = std::process::Command::new("rundll32");
        c.arg("url.dll,FileProtocolHandler");
        c
    };
    #[cfg(not(any(target_os = "macos", target_os = "windows")))]
    let mut command = std::process::Command::new("xdg-open");
    command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().map_err(OpenBrowserError)?;
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// What the browser brought back to the loopback address.
struct Callback {
    code: Option<String>,
    state: Option<String>,
    issuer: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// Signs in: `show` gets the authorization URL (to print it), `open` opens it in a browser.
/// Returns what the window may see of the new sign-in.
pub async fn sign_in(
    request: SignInRequest,
    show: &(dyn Fn(&str) + Send + Sync),
    open: &(dyn Fn(&str) -> Result<(), OpenBrowserError> + Send + Sync),
) -> Result<SignedInInfo, SignInError> {
    let server = request.server.as_str();
    let named = || server.to_owned();
    let describe = |error| SignInError::Authorization {
        server: named(),
        error: Box::new(error),
    };
    let settings = request.settings.clone().unwrap_or_default();
    let manager = manager_for(&request.url).await.map_err(describe)?;
    let Some(found) = discover(&manager, &request.url).await.map_err(describe)? else {
        return Err(SignInError::NoMetadata { server: named() });
    };
    let Some(issuer) = found.issuer.clone() else {
        return Err(SignInError::NoIssuer { server: named() });
    };
    // DPoP where the authorization server takes it: this server's key (made now if it has
    // none), and discovery again through a client whose token requests carry its proofs.
    let (mut manager, found) =
        if crate::dpop::wanted(&found.metadata, found.asks_dpop, settings.dpop) {
            let key = crate::dpop::Dpop::load(&request.secrets, server, true)
                .await
                .map_err(|error| SignInError::DpopKey {
                    server: named(),
                    error,
                })?
                .ok_or_else(|| SignInError::DpopKeyNotMade { server: named() })?;
            let manager = crate::dpop::manager(&request.url, key)
                .await
                .map_err(describe)?;
            let found = discover(&manager, &request.url)
                .await
                .map_err(describe)?
                .ok_or_else(|| SignInError::MetadataGone { server: named() })?;
            tracing::info!(
                server,
                "the authorization server takes DPoP: tokens are bound to Toolgate's key"
            );
            (manager, found)
        } else {
            (manager, found)
        };
    if found.legacy {
        tracing::info!(
            server,
            "no OAuth metadata: using the 2025-03-26 endpoints at the server's origin"
        );
    }
    let registration_endpoint = found.metadata.registration_endpoint.clone();
    let cimd_supported = found
        .metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let info = install(
        &mut manager,
        found.metadata,
        found.legacy,
        KeychainFor {
            secrets: &request.secrets,
            server,
            url: &request.url,
            issuer: &issuer,
            on_change: None,
        },
    );
    let states = Arc::new(store::KeychainStates {
        secrets: request.secrets.clone(),
    });
    manager.set_state_store(StatesRef(states.clone()));

    let stored: Option<store::Record> = {
        let (s, i) = (server.to_owned(), issuer.clone());
        store::blocking(&request.secrets, move |k| {
            store::read_json(k, &store::record_item(&s, &i))
        })
        .await
        .map_err(|error| SignInError::KeychainRead {
            server: named(),
            error,
        })?
    };
    let stored_client = stored.as_ref().and_then(|r| r.client.clone());
    let granted: Vec<String> = stored
        .as_ref()
        .and_then(|r| r.credentials.as_ref())
        .map(|c| c.granted_scopes.clone())
        .unwrap_or_default();

    // The loopback redirect (RFC 8252): the port the user chose, else the one registered before
    // (so the registration still matches), else any free one.
    let wanted_port = settings.callback_port.or_else(|| {
        stored_client
            .as_ref()
            .and_then(|c| url::Url::parse(&c.redirect_uri).ok())
            .and_then(|u| u.port())
    });
    let listener = bind_loopback(wanted_port, settings.callback_port.is_some())
        .await
        .map_err(SignInError::Listen)?;
    let port = listener
        .local_addr()
        .map_err(SignInError::ListenAddress)?
        .port();
    let redirect_uri = document::redirect_uri(port);

    // The client's identity, in the order both MCP authorization eras give: a client id the user
    // entered (now, or at an earlier sign-in), a Client ID Metadata Document where the
    // authorization server accepts one, then a registration of Toolgate's own (kept from an
    // earlier sign-in, or made now). A new identity is saved only when the sign-in succeeds.
    let mut auth = AuthorizationRequest::new(redirect_uri.clone()).with_client_name("Toolgate");
    let document = document::document_url(&settings, document::BUILT_IN_CLIENT_METADATA_URL);
    let kept = |registered: bool| {
        stored_client
            .clone()
            .filter(|c| c.registered == registered && !c.document && c.redirect_uri == redirect_uri)
    };
    let client = if let Some(entered) = &settings.client_id {
        ClientRecord {
            client_id: entered.clone(),
            client_secret: request.client_secret.clone(),
            redirect_uri: redirect_uri.clone(),
            registered: false,
            document: false,
        }
    } else if let Some(entered) = kept(false) {
        entered
    } else if let Some(url) = document.filter(|_| cimd_supported) {
        ClientRecord {
            client_id: url,
            client_secret: None,
            redirect_uri: redirect_uri.clone(),
            registered: false,
            document: true,
        }
    } else if let Some(registered) = kept(true) {
        registered
    } else if registration_endpoint.is_some() {
        let scopes = requested_scopes(&settings, &request.extra_scopes, &granted);
        let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let config = manager
            .register_client("Toolgate", &redirect_uri, &refs)
            .await
            .map_err(describe)?;
        tracing::info!(server, "registered Toolgate with the authorization server");
        ClientRecord {
            client_id: config.client_id,
            client_secret: config.client_secret,
            redirect_uri: redirect_uri.clone(),
            registered: true,
            document: false,
        }
    } else {
        return Err(SignInError::NoRegistration {
            server: named(),
            issuer,
        });
    };
    auth = if client.document {
        // rmcp sends the document's address as the client id, with no secret and no registration.
        auth.with_client_metadata_url(&client.client_id)
    } else {
        with_client(auth, &client.client_id, client.client_secret.as_deref())
    };
    let scopes = requested_scopes(&settings, &request.extra_scopes, &granted);
    auth = if scopes.is_empty() {
        auth.with_initial_scope_selection()
    } else {
        auth.with_scopes(scopes)
    };

    let session = AuthorizationSession::new(manager, auth)
        .await
        .map_err(|(_, e)| describe(e))?;
    let url = session.get_authorization_url().to_owned();
    let expected_state = url::Url::parse(&url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .unwrap_or_default();

    let outcome = async {
        show(&url);
        if let Err(why) = open(&url) {
            tracing::info!(server, "{why}; the user opens the URL by hand");
        }
        let callback = tokio::time::timeout(request.timeout, wait_for_callback(&listener, server))
            .await
            .map_err(|_| SignInError::TimedOut {
                server: named(),
                seconds: request.timeout.as_secs(),
            })??;
        if let Some(code) = callback.error {
            let description = callback.error_description;
            return Err(if code == "access_denied" {
                SignInError::Declined {
                    server: named(),
                    description,
                }
            } else {
                SignInError::Refused {
                    server: named(),
                    code,
                    description,
                }
            });
        }
        if callback.state.as_deref() != Some(expected_state.as_str()) {
            return Err(SignInError::StateMismatch { server: named() });
        }
        let Some(code) = callback.code else {
            return Err(SignInError::NoCode { server: named() });
        };
        session
            .handle_callback_with_issuer(&code, &expected_state, callback.issuer.as_deref())
            .await
            .map_err(describe)
    }
    .await;
    // The in-flight state goes whichever way the flow ended.
    let _ = states.delete(&expected_state).await;
    outcome?;

    let (s, i) = (server.to_owned(), issuer.clone());
    store::blocking(&request.secrets, move |k| {
        store::update_record(k, &s, &i, |r| r.client = Some(client))?;
        store::note_issuer(k, &s, &i)
    })
    .await
    .map_err(|error| SignInError::KeychainSave {
        server: named(),
        error,
    })?;
    let signed_in = info.lock().unwrap_or_else(|p| p.into_inner()).clone();
    signed_in.ok_or_else(|| SignInError::NoToken { server: named() })
}

fn with_client(auth: AuthorizationRequest, id: &str, secret: Option<&str>) -> AuthorizationRequest {
    let auth = auth.with_preregistered_client(id);
    match secret {
        Some(secret) => auth.with_client_secret(secret),
        None => auth,
    }
}

/// The user's scopes, plus the ones a step-up needs on top of what was granted.
fn requested_scopes(settings: &OAuthSettings, extra: &[String], granted: &[String]) -> Vec<String> {
    let mut scopes: Vec<String> = settings.scopes.clone();
    if !extra.is_empty() {
        scopes.extend(granted.iter().cloned());
        scopes.extend(extra.iter().cloned());
    }
    let mut seen = std::collections::HashSet::new();
    scopes.retain(|s| seen.insert(s.clone()));
    scopes
}

/// Listens on 127.0.0.1: `port` if given and free (required when the user fixed it).
async fn bind_loopback(port: Option<u16>, required: bool) -> std::io::Result<TcpListener> {
    if let Some(port) = port {
        match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(listener) => return Ok(listener),
            Err(e) if required => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("port {port} (oauth.callbackPort) is taken: {e}"),
                ))
            }
            Err(_) => {}
        }
    }
    TcpListener::bind(("127.0.0.1", 0)).await
}

/// Waits for the browser's request to `/callback`, answering it with a short page (and anything
/// else, such as a favicon, with 404).
async fn wait_for_callback(listener: &TcpListener, server: &str) -> Result<Callback, SignInError> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(SignInError::Receive)?;
        let Some(target) = read_request_target(&mut stream).await else {
            continue;
        };
        let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
            respond(&mut stream, 400, "Bad request").await;
            continue;
        };
        if url.path() != document::CALLBACK_PATH {
            respond(&mut stream, 404, "Not found").await;
            continue;
        }
        let get = |key: &str| {
            url.query_pairs()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.into_owned())
        };
        let callback = Callback {
            code: get("code"),
            state: get("state"),
            issuer: get("iss"),
            error: get("error"),
            error_description: get("error_description"),
        };
        let page = if callback.error.is_some() {
            format!("Toolgate was not signed in to {server}. You can close this tab.")
        } else {
            format!("Signed in to {server}. You can close this tab and return to Toolgate.")
        };
        respond(&mut stream, 200, &page).await;
        return Ok(callback);
    }
}

/// The target of an HTTP request line (`GET /callback?… HTTP/1.1`), reading at most 16 KiB.
async fn read_request_target(stream: &mut TcpStream) -> Option<String> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buffer.windows(4).any(|w| w == b"\r\n\r\n") && buffer.len() < 16 * 1024 {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        if read == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let text = String::from_utf8_lossy(&buffer);
    let mut parts = text.lines().next()?.split_whitespace();
    let method = parts.next()?;
    let target = parts.next()?;
    (method == "GET" && target.starts_with('/')).then(|| target.to_owned())
}

async fn respond(stream: &mut TcpStream, status: u16, text: &str) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    // The text names a server the user configured: escaped, it is shown as text, never markup.
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Toolgate</title></head><body style=\"font-family:sans-serif;margin:3em\"><p>{escaped}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// rmcp takes its state store by value; the flow keeps a handle to delete the state itself.
struct StatesRef(Arc<store::KeychainStates>);

#[async_trait::async_trait]
impl StateStore for StatesRef {
    async fn save(
        &self,
        csrf_token: &str,
        state: rmcp::transport::auth::StoredAuthorizationState,
    ) -> Result<(), rmcp::transport::auth::AuthError> {
        self.0.save(csrf_token, state).await
    }
    async fn load(
        &self,
        csrf_token: &str,
    ) -> Result<
        Option<rmcp::transport::auth::StoredAuthorizationState>,
        rmcp::transport::auth::AuthError,
    > {
        self.0.load(csrf_token).await
    }
    async fn delete(&self, csrf_token: &str) -> Result<(), rmcp::transport::auth::AuthError> {
        self.0.delete(csrf_token).await
    }
}
