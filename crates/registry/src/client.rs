//! The MCP Registry API over HTTP: one page of a search, and one version of a server.

use std::time::Duration;

use serde::Serialize;

use crate::model::{ServerList, ServerResponse};
use crate::RegistryError;

/// How many entries a page asks for (the API allows 1 to 100).
pub const PAGE: u32 = 20;

/// One entry as a search shows it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub version: String,
    /// How it runs: `npm`, `pypi`, `oci`, `mcpb`, `remote`, or several.
    pub kinds: Vec<String>,
    /// The registry's message when the entry is deprecated.
    pub deprecated: Option<String>,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    pub servers: Vec<Listing>,
    /// Give it back for the next page; `None` at the end.
    pub next_cursor: Option<String>,
}

/// A registry at `base` (its API's address, without `/v0.1`).
#[derive(Debug, Clone)]
pub struct Registry {
    base: url::Url,
    http: reqwest::Client,
}

impl Registry {
    pub fn new(base: &str) -> Result<Self, RegistryError> {
        let mut base = url::Url::parse(base)
            .map_err(|e| RegistryError::Invalid(format!("the registry address {base}: {e}")))?;
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| RegistryError::Unreachable(e.to_string()))?;
        Ok(Self { base, http })
    }

    pub fn address(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, url: url::Url) -> Result<T, RegistryError> {
        let response = self
            .http
            .get(url.clone())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| RegistryError::Unreachable(format!("{}: {e}", self.address())))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(RegistryError::NotFound);
        }
        if !status.is_success() {
            return Err(RegistryError::Unreachable(format!(
                "{} answered {status}",
                self.address()
            )));
        }
        response.json().await.map_err(|e| {
            RegistryError::Invalid(format!(
                "{} sent what is not a registry answer: {e}",
                self.address()
            ))
        })
    }

    /// One page of the latest version of each server whose name or description holds
    /// `search`; deleted entries are left out (also when a registry sends them).
    /// `limit` servers a page (default [`PAGE`]).
    pub async fn search(
        &self,
        search: &str,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page, RegistryError> {
        let mut url = self
            .base
            .join("v0.1/servers")
            .map_err(|e| RegistryError::Invalid(e.to_string()))?;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("version", "latest");
            query.append_pair("limit", &limit.unwrap_or(PAGE).clamp(1, 100).to_string());
            if !search.trim().is_empty() {
                query.append_pair("search", search.trim());
            }
            if let Some(cursor) = cursor {
                query.append_pair("cursor", cursor);
            }
        }
        let list: ServerList = self.get(url).await?;
        let empty = list.servers.is_empty();
        let servers = list
            .servers
            .into_iter()
            .filter(|e| status(e) != Some("deleted"))
            .map(|e| listing(&e))
            .collect();
        Ok(Page {
            servers,
            // A registry may give a cursor whose page is empty: an empty page is the end too.
            next_cursor: list
                .metadata
                .next_cursor
                .filter(|c| !c.is_empty() && !empty),
        })
    }

    /// One version of a server (`latest` for the newest).
    pub async fn version(
        &self,
        name: &str,
        version: &str,
    ) -> Result<ServerResponse, RegistryError> {
        let mut url = self
            .base
            .join("v0.1/servers/")
            .map_err(|e| RegistryError::Invalid(e.to_string()))?;
        url.path_segments_mut()
            .map_err(|()| RegistryError::Invalid("the registry address cannot have a path".into()))?
            .pop_if_empty()
            .extend([name, "versions", version]);
        self.get(url).await.map_err(|e| match e {
            RegistryError::NotFound => RegistryError::Invalid(format!(
                "{} has no server {name} at version {version}",
                self.address()
            )),
            other => other,
        })
    }
}

fn status(entry: &ServerResponse) -> Option<&str> {
    entry
        .meta
        .official
        .as_ref()
        .and_then(|o| o.status.as_deref())
}

fn listing(entry: &ServerResponse) -> Listing {
    let server = &entry.server;
    let mut kinds: Vec<String> = server
        .packages
        .iter()
        .map(|p| p.registry_type.clone())
        .collect();
    if !server.remotes.is_empty() {
        kinds.push("remote".into());
    }
    kinds.dedup();
    let official = entry.meta.official.clone().unwrap_or_default();
    Listing {
        name: server.name.clone(),
        title: server.title.clone(),
        description: server.description.clone(),
        version: server.version.clone(),
        kinds,
        deprecated: (official.status.as_deref() == Some("deprecated")).then(|| {
            official
                .status_message
                .unwrap_or_else(|| "deprecated".into())
        }),
    }
}
