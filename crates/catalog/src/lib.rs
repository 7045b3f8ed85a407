//! Which MCP tools the model sees, under which names, and the way back to (server, tool).
//!
//! [`Catalog::build`] takes the running servers' tool lists and the user's [`CatalogSettings`]
//! and returns the visible tools as [`Entry`]s: a model-facing name, the original tool with its
//! annotations, and a normalized input schema. It is a pure function with no I/O, no clock and
//! no dependency on the rest of the workspace, so the app, the CLI and tests all call it with
//! plain values whenever a server starts, stops or changes its tool list.
//!
//! # Design choices
//!
//! The baseline we improve on is Spring AI's MCP client: a tool filter bean plus a prefix
//! generator that names the second `search` it meets `alt_1_search` and cuts long names from the
//! front. Its names depend on connection order, say nothing about where a tool comes from, and a
//! name cut from the front can collide silently. Here:
//!
//! - **One set of names for every provider.** Names match `^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`, the
//!   intersection of OpenAI's, Anthropic's and Gemini's rules, so one catalog serves any provider
//!   and switching provider never renames a tool. Only the tool *count* limit and the schema
//!   details differ per provider ([`Catalog::budget`], [`Catalog::check`], [`Entry::schema_for`]).
//! - **Order never matters.** Servers are sorted by id and tools by name before naming, and the
//!   only hash is FNV-1a with fixed constants. The same set of visible tools always gets the
//!   same names, across refreshes, restarts and platforms.
//! - **Collisions are judged strictly:** case-insensitively and with `-` equal to `_`, because
//!   models blur those. In mode `auto` every tool in a clash is prefixed with its server's prefix
//!   (`github__search`, `gitlab__search`), not all but the first. Anything still clashing, and
//!   any name over 64 characters, gets `_` and an 8-hex-digit hash of (server id, original name),
//!   so two copies of one server stay apart and a shortened name is stable.
//! - **Choices are kept by original tool name** in the settings, never by model-facing name
//!   (which can change when another server comes or goes), and never pruned: a tool that
//!   disappears and comes back keeps its switch.
//! - **Hidden tools stay listed** with the reason ([`Catalog::listing`]), so the UI can explain
//!   why a tool is missing instead of leaving the user to guess.
//! - **Schemas are fixed only where a provider would refuse them** (see [`provider::normalize`]):
//!   a request with one bad tool schema fails whole, for every tool.
//!
//! The module [`naming`] holds the name rules and their reasons in detail.

mod catalog;
mod error;
pub mod naming;
pub mod provider;
mod search;
mod settings;
mod source;

pub use catalog::{Budget, Catalog, Entry, ListedTool, ToolState};
pub use error::{CatalogError, PatternList, ToolRef};
pub use naming::{is_valid_name, NamingMode, MAX_NAME_LEN};
pub use provider::{Provider, ProviderRules};
pub use search::SearchIndex;
pub use settings::{CatalogSettings, HiddenReason, SearchMode, ServerToolSettings, ToolSearch};
pub use source::{Annotations, SourceServer, SourceTool};
