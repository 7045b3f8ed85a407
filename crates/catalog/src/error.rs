//! The errors a caller branches on: a settings screen shows them beside the field at fault, and the
//! turn loop refuses to start a request the provider would reject anyway.

use std::fmt;

use thiserror::Error;

use crate::Provider;

/// Which of a server's pattern lists a pattern came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternList {
    Include,
    Exclude,
}

impl fmt::Display for PatternList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PatternList::Include => "include",
            PatternList::Exclude => "exclude",
        })
    }
}

/// One tool, as named in an error: which server offers it and under which name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRef {
    pub server_id: String,
    pub server_name: String,
    pub tool: String,
}

impl fmt::Display for ToolRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.server_name == self.server_id {
            write!(f, "`{}` on server \"{}\"", self.tool, self.server_name)
        } else {
            write!(
                f,
                "`{}` on server \"{}\" ({})",
                self.tool, self.server_name, self.server_id
            )
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CatalogError {
    /// A glob pattern in a server's include or exclude list does not parse (or is empty).
    #[error("server `{server_id}`: the {list} pattern `{pattern}` is not valid: {reason}")]
    BadPattern {
        server_id: String,
        list: PatternList,
        pattern: String,
        reason: String,
    },

    /// A custom prefix that tool names could not carry as written.
    #[error("server `{server_id}`: the prefix `{prefix}` is not valid: {reason}")]
    BadPrefix {
        server_id: String,
        prefix: String,
        reason: String,
    },

    /// Two servers were given the same custom prefix, so prefixing could not tell them apart.
    #[error("servers `{first_server}` and `{second_server}` both use the prefix `{prefix}`")]
    DuplicatePrefix {
        prefix: String,
        first_server: String,
        second_server: String,
    },

    /// Two servers in one build share an id, so a tool call could not be routed back.
    #[error("two servers have the id `{0}`; server ids must be unique")]
    DuplicateServerId(String),

    /// In naming mode `none`, two visible tools would get the same name.
    #[error(
        "{first} and {second} would both be offered as `{name}`; \
         disable one of them, or let Toolgate prefix tool names"
    )]
    NameCollision {
        name: String,
        // Boxed to keep every `Result<_, CatalogError>` small.
        first: Box<ToolRef>,
        second: Box<ToolRef>,
    },

    /// More tools are visible than the provider accepts in one request.
    #[error(
        "{} accepts at most {limit} tools; {enabled} are enabled. \
         Disable {} tools or add exclude patterns in Tools settings.",
        provider.display_name(),
        enabled.saturating_sub(*limit)
    )]
    TooManyTools {
        provider: Provider,
        limit: usize,
        enabled: usize,
    },
}
