//! Signing in to and out of remote servers, for the app and the CLI alike: the sign-in with the
//! server's settings and the keychain, then the server started again with it.

use std::sync::Arc;
use std::time::Duration;

use toolgate_oauth::{KeychainError, OpenBrowserError, SignInError, SignInRequest, SignedInInfo};
use toolgate_secrets::SecretError;
use toolgate_settings::{ExpandError, ServerConfig, Transport};

use crate::Host;

/// How long a sign-in waits for the browser by default.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// Why signing in to a server, or out of it, did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ServerSignInError {
    #[error("no server '{0}' is configured")]
    UnknownServer(String),
    /// A server started by a command (named here): only remote servers sign in.
    #[error("{0} is started by a command on this computer: only remote servers sign in")]
    NotRemote(String),
    /// A server whose `oauth.grant` gets tokens without a browser, at each connection.
    #[error(
        "{id} gets its tokens without a browser (its oauth.grant is {grant}): it signs in each time it connects. Restart it to sign in again (`toolgate servers restart {id}`, or Restart on its card)"
    )]
    NoBrowser { id: String, grant: &'static str },
    /// The server's `oauth.clientSecret` could not be filled in.
    #[error(transparent)]
    ClientSecret(#[from] ExpandError<ClientSecretError>),
    /// The task that read the client secret from the keychain failed.
    #[error("{0}")]
    Task(tokio::task::JoinError),
    #[error(transparent)]
    SignIn(#[from] SignInError),
    /// Signing out: the keychain did not let the sign-in go.
    #[error(transparent)]
    SignOut(#[from] KeychainError),
}

/// Why the client secret a sign-in sends (`oauth.clientSecret`) has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientSecretError {
    #[error(transparent)]
    Keychain(SecretError),
    #[error(
        "the secret {0} (oauth.clientSecret) is not set; set it under Servers & tools → Secrets"
    )]
    SecretNotSet(String),
    #[error("the environment variable {0} is not set")]
    EnvNotSet(String),
}

impl Host {
    fn remote(&self, id: &str) -> Result<(ServerConfig, String), ServerSignInError> {
        let server = self
            .settings()
            .servers
            .iter()
            .find(|s| s.id == id)
            .cloned()
            .ok_or_else(|| ServerSignInError::UnknownServer(id.to_owned()))?;
        let Transport::Http { url, .. } = &server.transport else {
            return Err(ServerSignInError::NotRemote(server.name));
        };
        let url = url.clone();
        Ok((server, url))
    }

    /// Signs in to remote server `id`: `show` gets the authorization URL, `open` opens it in the
    /// browser. `extra_scopes` asks for more than before (a step-up the user agreed to).
    /// `client_id` overrides the server's settings for a server that does not allow registration.
    /// On success the server is started again (if it is switched on) with the new sign-in.
    pub async fn sign_in(
        self: &Arc<Self>,
        id: &str,
        extra_scopes: Vec<String>,
        client_id: Option<String>,
        wait: Duration,
        show: &(dyn Fn(&str) + Send + Sync),
        open: &(dyn Fn(&str) -> Result<(), OpenBrowserError> + Send + Sync),
    ) -> Result<SignedInInfo, ServerSignInError> {
        let (server, url) = self.remote(id)?;
        if let Some(grant) = server
            .oauth
            .as_ref()
            .map(|o| o.grant)
            .filter(|g| *g != toolgate_settings::OAuthGrant::AuthorizationCode)
        {
            use toolgate_settings::OAuthGrant::*;
            let grant = match grant {
                ClientCredentials => "clientCredentials",
                JwtBearer => "jwtBearer",
                EnterpriseManaged => "enterpriseManaged",
                AuthorizationCode => "authorizationCode",
            };
            return Err(ServerSignInError::NoBrowser {
                id: id.to_owned(),
                grant,
            });
        }
        let mut settings = server.oauth.clone();
        if let Some(client_id) = client_id {
            settings.get_or_insert_with(Default::default).client_id = Some(client_id);
        }
        let client_secret = match settings.as_ref().and_then(|o| o.client_secret.clone()) {
            None => None,
            Some(reference) => {
                let secrets = self.secrets.clone();
                tokio::task::spawn_blocking(move || {
                    toolgate_settings::expand(&reference, |r| match r {
                        toolgate_settings::Reference::Secret(name) => secrets
                            .get(&toolgate_settings::secret_item(name))
                            .map_err(ClientSecretError::Keychain)?
                            .ok_or_else(|| ClientSecretError::SecretNotSet(name.to_owned())),
                        toolgate_settings::Reference::Env(name) => std::env::var(name)
                            .map_err(|_| ClientSecretError::EnvNotSet(name.to_owned())),
                    })
                })
                .await
                .map_err(ServerSignInError::Task)?
                .map(Some)?
            }
        };
        let request = SignInRequest {
            server: server.id.clone(),
            url,
            settings,
            extra_scopes,
            client_secret,
            timeout: wait,
            secrets: self.secrets.clone(),
        };
        let info = toolgate_oauth::sign_in(request, show, open).await?;
        if server.enabled {
            let _ = self.servers.manager.restart(&server.id).await;
        }
        Ok(info)
    }

    /// Signs remote server `id` out: its tokens revoked where the server offers it, and every
    /// keychain item of its sign-in removed; a running server is started again without them.
    /// Returns notes for the user (a revocation that failed).
    pub async fn sign_out(self: &Arc<Self>, id: &str) -> Result<Vec<String>, ServerSignInError> {
        let (server, url) = self.remote(id)?;
        let notes = toolgate_oauth::sign_out(&self.secrets, &server.id, &url).await?;
        if server.enabled {
            let _ = self.servers.manager.restart(&server.id).await;
        }
        Ok(notes)
    }
}
