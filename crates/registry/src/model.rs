//! What the MCP Registry API sends (the OpenAPI document `docs/reference/api/openapi.yaml` of
//! github.com/modelcontextprotocol/registry, version 2025-12-01, and the `server.json` schema
//! it generates), read leniently: fields Toolgate does not use are ignored, so a registry that
//! adds some still reads.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `GET /v0.1/servers`.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerList {
    pub servers: Vec<ServerResponse>,
    #[serde(default)]
    pub metadata: ListMetadata,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMetadata {
    /// Absent or empty: no more pages.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One server version, with the registry's own record of it.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerResponse {
    pub server: ServerJson,
    #[serde(rename = "_meta", default)]
    pub meta: ResponseMeta,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ResponseMeta {
    #[serde(rename = "io.modelcontextprotocol.registry/official", default)]
    pub official: Option<Official>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Official {
    /// `active`, `deprecated` or `deleted`.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub status_message: Option<String>,
    #[serde(default)]
    pub is_latest: Option<bool>,
}

/// A server's `server.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    pub version: String,
    #[serde(default)]
    pub packages: Vec<Package>,
    #[serde(default)]
    pub remotes: Vec<Remote>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// npm, pypi, oci, mcpb, nuget, cargo…
    pub registry_type: String,
    pub identifier: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub file_sha256: Option<String>,
    pub transport: PackageTransport,
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    #[serde(default)]
    pub environment_variables: Vec<KeyValueInput>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageTransport {
    /// `stdio`, `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remote {
    /// `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
    /// Values for `{name}` in the URL.
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// A value the user may be asked for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub is_required: bool,
    #[serde(default)]
    pub is_secret: bool,
    /// A fixed value (with `{name}` filled from `variables`): not the user's to change.
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub choices: Vec<String>,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// An environment variable or a header.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyValueInput {
    pub name: String,
    #[serde(flatten)]
    pub input: Input,
}

/// A command-line argument.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// `positional` or `named`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A named argument's flag (`--port`).
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub value_hint: Option<String>,
    #[serde(flatten)]
    pub input: Input,
}
