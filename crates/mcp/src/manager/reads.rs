//! A server's resources and prompts read for a caller: within the server's call timeout, and
//! with the questions the server asks first (`input_required`) answered as a call's are: by the
//! caller's asker when it has one (a connected client), else by the manager's handler.

use rmcp::model::InputResponses;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::calls::{pace, too_many_rounds, unexpected, MAX_ROUNDS};
use super::registry::ServerManager;
use crate::McpError;

impl ServerManager {
    /// Reads one of a server's resources, within the server's call timeout; the result as the
    /// server sent it (`contents`: text or base64 blobs). Questions the server asks first
    /// (`input_required`) are answered as a call's are.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<rmcp::model::ReadResourceResult, McpError> {
        use rmcp::model::ReadResourceResponse;
        let what = "read the resource";
        let mut params = rmcp::model::ReadResourceRequestParams::new(uri);
        let mut state_only = 0;
        for _ in 0..MAX_ROUNDS {
            let sent = params.clone();
            let asked = match self
                .ask(server, what, |peer| async move {
                    peer.read_resource_once(sent).await
                })
                .await?
            {
                ReadResourceResponse::Complete(result) => return Ok(result),
                ReadResourceResponse::InputRequired(asked) => asked,
                _ => return Err(unexpected(server, what)),
            };
            let (responses, state) = self
                .next_round(server, what, asked, &mut state_only, None)
                .await?;
            params.input_responses = responses;
            params.request_state = state;
        }
        Err(too_many_rounds(server, what))
    }

    /// Fills one of a server's resource templates with `values` and reads the resource it
    /// names: the URI read, and the result as [`Self::read_resource`] gives it.
    pub async fn read_resource_template(
        &self,
        server: &str,
        template: &str,
        values: &std::collections::BTreeMap<String, String>,
    ) -> Result<(String, rmcp::model::ReadResourceResult), McpError> {
        let uri = crate::templates::expand(template, values).map_err(|e| McpError::Request {
            server: server.to_owned(),
            what: "fill the resource template",
            detail: e.to_string(),
        })?;
        let contents = self.read_resource(server, &uri).await?;
        Ok((uri, contents))
    }

    /// Gets one of a server's prompts filled with `arguments`, within the server's call timeout;
    /// the result as the server sent it (`description`, `messages`). Questions the server asks
    /// first (`input_required`) are answered as a call's are.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
    ) -> Result<rmcp::model::GetPromptResult, McpError> {
        self.get_prompt_for(server, name, arguments, None).await
    }

    /// [`Self::get_prompt`] for a caller whose asker answers the server's questions.
    pub async fn get_prompt_for(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        asker: Option<&crate::Asker>,
    ) -> Result<rmcp::model::GetPromptResult, McpError> {
        use rmcp::model::GetPromptResponse;
        let what = "get the prompt";
        let mut params = rmcp::model::GetPromptRequestParams::new(name);
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let mut state_only = 0;
        for _ in 0..MAX_ROUNDS {
            let sent = params.clone();
            let asked = match self
                .ask(server, what, |peer| async move {
                    peer.get_prompt_once(sent).await
                })
                .await?
            {
                GetPromptResponse::Complete(result) => return Ok(result),
                GetPromptResponse::InputRequired(asked) => asked,
                _ => return Err(unexpected(server, what)),
            };
            let (responses, state) = self
                .next_round(server, what, asked, &mut state_only, asker)
                .await?;
            params.input_responses = responses;
            params.request_state = state;
        }
        Err(too_many_rounds(server, what))
    }

    /// The answers and state for the next round of a resource read or prompt.
    async fn next_round(
        &self,
        server: &str,
        what: &'static str,
        asked: rmcp::model::InputRequiredResult,
        state_only: &mut u32,
        asker: Option<&crate::Asker>,
    ) -> Result<(Option<InputResponses>, Option<String>), McpError> {
        let roots = self.roots_of(server).await;
        let requests = asked.input_requests.unwrap_or_default();
        pace(requests.is_empty(), state_only).await;
        let responses = self
            .fulfil(server, &roots, requests, &CancellationToken::new(), asker)
            .await
            .map_err(|detail| McpError::Request {
                server: server.to_owned(),
                what,
                detail: format!("its question was not answered: {detail}"),
            })?;
        Ok((
            (!responses.is_empty()).then_some(responses),
            asked.request_state,
        ))
    }
}
