//! A client of the MCP Registry API (v0.1): search the servers an organisation's or the
//! official registry lists, read one version's `server.json`, and make it a server of the
//! settings, pinned to that version, its secrets bound for the keychain.
//!
//! - `model.rs`: the API's answers as the OpenAPI document describes them;
//! - `client.rs`: the HTTP calls (a page of a search, one version);
//! - `plan.rs`: an entry as a pinned server, and what the user must give for it.

mod client;
pub mod model;
mod plan;

pub use client::{Listing, Page, Registry, PAGE};
pub use plan::{build, plan, suggested_id, Ask, Built, Plan};

/// The official registry, used when neither the settings nor the managed policy name one.
pub const OFFICIAL: &str = "https://registry.modelcontextprotocol.io";

/// Why a registry could not be used, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("the registry could not be reached ({0}); the well-known servers are still offered under Add server")]
    Unreachable(String),
    #[error("not found in the registry")]
    NotFound,
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0} was withdrawn from the registry (deleted); it is not offered")]
    Deleted(String),
    #[error("{0} is required")]
    Missing(String),
}
