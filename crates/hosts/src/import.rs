//! Importing MCP server configs written for other hosts.
//!
//! Users paste the `mcpServers` snippet an MCP server's README shows, or point at another host's
//! config file. [`plan_import`] reads that text into a complete [`ImportPlan`] (or an
//! [`ImportError`] naming what is wrong and where), merged against the user's current
//! [`Settings`](toolgate_settings::Settings) but not yet applied. Its [`ImportReport`] (serializable for the window, with a
//! `Display` for the CLI) says what would be added, renamed and skipped, the approval rules that
//! would be created, the VS Code inputs the user must be asked for, the values that could move to
//! the keychain, and warnings. [`ImportPlan::apply`] takes the user's answers
//! ([`ImportChoices`]) and returns the new, validated settings and the secrets the caller must put
//! in the keychain. Nothing is half-applied: planning and applying either succeed whole or fail.
//!
//! The module is pure: no files, no keychain, no environment (except
//! [`claude_desktop_config_path`], a row of [`crate::host_paths`], which reads `HOME`, `APPDATA`
//! or `XDG_CONFIG_HOME`). The caller reads the file and stores the secrets.
//!
//! The work is done in steps, each its own module: `read` (the text, its shape, each entry),
//! `merge` (what is added under which id, what is skipped), `plan` (the report, secrets and
//! rules), `apply` (the user's answers); `report` is what the user is shown, `launch` how a
//! server's command line is shown, `vars` the `${…}` references of every host.
//!
//! # Formats
//!
//! Detected from the JSON's shape unless the caller names one ([`ImportOptions::format`]):
//!
//! - [`Format::McpServers`]: `{"mcpServers": {...}}`, from Claude Desktop, Cursor, Claude Code's
//!   `.mcp.json`, Cline, Windsurf, Gemini CLI.
//! - [`Format::VsCode`]: VS Code's `mcp.json`, `{"servers": {...}, "inputs": [...]}`, or the
//!   same under `"mcp"` in its `settings.json`.
//! - [`Format::ServerMap`]: the inside of `mcpServers` pasted alone, `{"name": {"command": ...}}`:
//!   chosen when every top-level value is an object and one of them looks like a server.
//! - [`Format::SingleServer`]: one entry pasted alone, `{"command": ...}` or `{"url": ...}`,
//!   named after the package it runs or the host it reaches (or [`ImportOptions::name`]).
//!
//! Comments and trailing commas are accepted (VS Code's files are JSONC); a text with both
//! `mcpServers` and `servers` is refused as ambiguous.
//!
//! # Rules where the formats are ambiguous
//!
//! - **Transport.** `type` (or Cline's `transportType`) decides: `stdio`; `http`,
//!   `streamable-http`, `streamableHttp` → Streamable HTTP. Without a `type`, a `command` means
//!   stdio and a URL means Streamable HTTP (Cursor's rule; a server that only speaks the older
//!   transport turns the first request down and Toolgate falls back to it). `type: "sse"` is the
//!   older HTTP+SSE transport; any other type is skipped and reported, not guessed. The URL is `url`, or Gemini CLI's `httpUrl`
//!   (preferred when both are present) or Windsurf's `serverUrl`. Both a command and a URL
//!   without a `type` is an error.
//! - **Timeouts.** `timeout` becomes the call timeout: values above 3600 are milliseconds (Gemini
//!   CLI), values up to 3600 are seconds (Cline and Roo Code, which cap at 3600); rounded up,
//!   limited to 1..=86400 s, and the maximum call time raised to match. The report says how each
//!   value was read.
//! - **Disabled.** `"disabled": true` (or `"enabled": false`) imports the server switched off.
//!   A disabled entry whose command line or URL another server already runs (in the settings or
//!   enabled in the same import) is skipped as a disabled duplicate.
//! - **Auto-approval.** `autoApprove` and `alwaysAllow` become "always allow this tool on this
//!   server" rules bound to the server's command line or URL (not to the tool's description,
//!   which the import cannot know), so the grant lapses if the server's launch changes. Names
//!   with `*` are not imported (Toolgate grants name one tool). A skipped server's list is not
//!   imported.
//! - **References.** Toolgate fills in `${env:NAME}` and `${secret:NAME}` only in env values
//!   and HTTP headers (see [`toolgate_settings::reference`]); there they are kept, and a malformed one is an
//!   error. Claude Code's `${NAME}` (upper case) becomes `${env:NAME}` there. VS Code's
//!   `${input:id}` becomes the user's answer, or `${secret:NAME}` for a password input (NAME
//!   from the id). Any other reference (`${workspaceFolder}`, `${NAME:-default}`), and every
//!   reference in the command, arguments, working folder or URL, is kept as written with a
//!   warning that the server receives the text as it is; a password input there still becomes a
//!   `${secret:…}` reference (a secret is never written into the settings), with a warning.
//!   `envFile` is not read (warning).
//! - **Risky env.** An entry whose env sets a variable that can make its program load other code
//!   (`LD_PRELOAD`, `NODE_OPTIONS`…, [`crate::hijacks_process`]) is skipped, unless the entry
//!   lists it in Toolgate's own `allowEnv`, which is imported.
//! - **Ids.** A server's id is its name slugified (lower-case `a-z`, `0-9` and `-`); an id already
//!   used gets `-2`, `-3`, … and is reported as renamed. Entries are taken in key order.
//!   An entry whose transport equals an existing server's is skipped as identical; a value the
//!   existing server keeps in the keychain matches any literal value, so importing a file again
//!   after moving its secrets adds nothing.
//! - **Secrets.** Literal env values whose name contains KEY, TOKEN, SECRET or PASSWORD, and such
//!   headers plus `Authorization`, are offered for the keychain. The suggested name is the
//!   variable's name, or `<SERVER>_<NAME>` upper-cased when that is taken (always, for headers),
//!   with `_2`, … until unique among the settings' `${secret:…}` references and this import's.
//!   For `Authorization: <scheme> <credentials>` only the credentials move.

mod apply;
mod error;
mod launch;
mod link;
mod merge;
mod plan;
mod read;
mod report;
pub(crate) use toolgate_settings::vars;

use std::path::PathBuf;

pub use apply::{Applied, ImportChoices, SecretMove, SecretToStore};
pub use error::{ImportError, SecretLocation};
pub use launch::launch_line;
pub use link::{read_install_link, InstallLink, LinkError};
pub use plan::{plan_import, ImportOptions, ImportPlan};
pub use read::Format;
pub use report::{
    AddedServer, Clash, ImportReport, ImportWarning, ImportedRule, InputRequest, RenamedServer,
    SecretCandidate, SkipReason, SkippedServer, TransportKind,
};

use crate::host_paths::{config_path_here, HostKind};

/// The JSON of a host's config file, with comments and trailing commas allowed (VS Code's and
/// Zed's files are JSONC); the error says where the text is not JSON.
pub fn parse_jsonc(text: &str) -> Result<serde_json::Value, ImportError> {
    read::parse_text(text)
}

/// Where Claude Desktop keeps its config on this OS: macOS
/// `~/Library/Application Support/Claude/claude_desktop_config.json`, Windows
/// `%APPDATA%\Claude\claude_desktop_config.json`, elsewhere `$XDG_CONFIG_HOME/Claude/…` or
/// `~/.config/Claude/claude_desktop_config.json`. `None` when the variable it needs is unset.
/// The file may not exist: check before offering it. Its row of the hosts' path table
/// ([`crate::host_paths`]), where the paths are tested for every OS.
pub fn claude_desktop_config_path() -> Option<PathBuf> {
    config_path_here(HostKind::ClaudeDesktop)
}
