//! What the user chooses about tools. Stored in the app's settings file, so every field has a
//! serde default and empty values are left out: an old file still loads, and a server the user
//! never touched adds nothing to the file.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::error::PatternList;
use crate::naming::{fold, NamingMode, MAX_PREFIX_LEN, PREFIX_SEPARATOR};
use crate::CatalogError;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogSettings {
    #[serde(default)]
    pub naming: NamingMode,
    /// By server id. A server with no entry shows all its tools under the default rules.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, ServerToolSettings>,
    /// When the model is offered a `search_tools` tool instead of every tool.
    #[serde(default, skip_serializing_if = "ToolSearch::is_default")]
    pub search: ToolSearch,
}

/// Tool search: past a threshold, the model gets the always-loaded tools and a `search_tools`
/// tool that finds (and loads, for the rest of the turn) the others by what they do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
pub struct ToolSearch {
    pub mode: SearchMode,
    /// In mode `auto`, search is on when more tools than this are visible.
    pub max_tools: usize,
    /// In mode `auto`, search is on when the visible tools' definitions are estimated at more
    /// tokens than this (see [`crate::Budget::estimated_tokens`]).
    pub max_tokens: usize,
}

impl Default for ToolSearch {
    fn default() -> Self {
        Self {
            mode: SearchMode::Auto,
            // Models choose worse among more than 30 to 50 tools (Anthropic's tool-search
            // guide), and definitions past ~10,000 tokens cost more on every request than a
            // search does once.
            max_tools: 40,
            max_tokens: 10_000,
        }
    }
}

impl ToolSearch {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// Whether search is on for a catalog of `tools` visible tools whose definitions take an
    /// estimated `tokens`.
    pub fn applies(&self, tools: usize, tokens: usize) -> bool {
        match self.mode {
            SearchMode::Auto => tools > self.max_tools || tokens > self.max_tokens,
            SearchMode::Always => true,
            SearchMode::Never => false,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// On past either threshold.
    #[default]
    Auto,
    /// Always: only the always-loaded tools and `search_tools` are offered.
    Always,
    /// Never: every visible tool is offered (up to the provider's limit).
    Never,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerToolSettings {
    /// Used instead of the server id when this server's tools are prefixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Glob patterns on the tool's original name; when non-empty, a tool must match one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Glob patterns on the tool's original name; a match hides the tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Original tool names the user switched off. Kept by name, not pruned when the server stops
    /// listing a tool, so a tool that disappears and comes back keeps the user's choice.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub disabled_tools: BTreeSet<String>,
    /// Every tool of this server is offered even when tool search is on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always_loaded: bool,
    /// Original names of this server's tools that are offered even when tool search is on.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub always_loaded_tools: BTreeSet<String>,
}

impl ServerToolSettings {
    /// True when this entry changes nothing and can be dropped from the file.
    pub fn is_empty(&self) -> bool {
        self.prefix.is_none()
            && self.include.is_empty()
            && self.exclude.is_empty()
            && self.disabled_tools.is_empty()
            && !self.always_loaded
            && self.always_loaded_tools.is_empty()
    }

    /// Whether `tool` (by its original name) is offered even when tool search is on.
    pub fn is_pinned(&self, tool: &str) -> bool {
        self.always_loaded || self.always_loaded_tools.contains(tool)
    }
}

impl CatalogSettings {
    /// Whether a server's tool (by its original name) is offered even when tool search is on.
    pub fn is_pinned(&self, server_id: &str, tool: &str) -> bool {
        self.servers
            .get(server_id)
            .is_some_and(|s| s.is_pinned(tool))
    }

    /// Pins one tool (or, with `tool` None, a whole server) as always loaded, or unpins it,
    /// dropping a server entry left empty.
    pub fn set_pinned(&mut self, server_id: &str, tool: Option<&str>, pinned: bool) {
        let entry = self.servers.entry(server_id.to_owned()).or_default();
        match (tool, pinned) {
            (None, pinned) => entry.always_loaded = pinned,
            (Some(tool), true) => {
                entry.always_loaded_tools.insert(tool.to_owned());
            }
            (Some(tool), false) => {
                entry.always_loaded_tools.remove(tool);
            }
        }
        if entry.is_empty() {
            self.servers.remove(server_id);
        }
    }

    /// Switches one tool on or off by its original name, dropping a server entry left empty.
    pub fn set_tool_enabled(&mut self, server_id: &str, tool: &str, enabled: bool) {
        let entry = self.servers.entry(server_id.to_owned()).or_default();
        if enabled {
            entry.disabled_tools.remove(tool);
        } else {
            entry.disabled_tools.insert(tool.to_owned());
        }
        if entry.is_empty() {
            self.servers.remove(server_id);
        }
    }

    /// Every problem a settings screen should refuse to save, first one found (servers in id
    /// order): bad or empty glob patterns, custom prefixes that are not valid name starts, and
    /// two servers with one custom prefix.
    ///
    /// [`crate::Catalog::build`] is more forgiving: it fails only on patterns it cannot apply,
    /// and makes any prefix valid, so a hand-edited file never leaves the model with no tools.
    pub fn validate(&self) -> Result<(), CatalogError> {
        let mut prefixes: HashMap<String, &str> = HashMap::new();
        for (server_id, server) in &self.servers {
            ToolFilter::compile(server_id, server)?;
            if let Some(prefix) = &server.prefix {
                check_prefix(server_id, prefix)?;
                if let Some(first) = prefixes.insert(fold(prefix), server_id) {
                    return Err(CatalogError::DuplicatePrefix {
                        prefix: prefix.clone(),
                        first_server: first.to_owned(),
                        second_server: server_id.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// A custom prefix must already be what [`crate::naming::prefix_for`] would make of it, so the
/// user sees exactly the prefix they typed.
fn check_prefix(server_id: &str, prefix: &str) -> Result<(), CatalogError> {
    let bad = |reason: &str| CatalogError::BadPrefix {
        server_id: server_id.to_owned(),
        prefix: prefix.to_owned(),
        reason: reason.to_owned(),
    };
    if !prefix.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(bad("it must start with a letter"));
    }
    if !prefix
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(bad("use only letters, digits, `_` and `-`"));
    }
    if fold(prefix).contains(PREFIX_SEPARATOR) {
        return Err(bad(&format!(
            "it must not contain `{PREFIX_SEPARATOR}` (or `_-`, `--`), which separates the prefix from the tool's name"
        )));
    }
    if prefix.ends_with(['_', '-']) {
        return Err(bad("it must not end with `_` or `-`"));
    }
    if prefix.len() > MAX_PREFIX_LEN {
        return Err(bad(&format!("use at most {MAX_PREFIX_LEN} characters")));
    }
    Ok(())
}

/// Why a tool is not offered to the model, as the UI's tool list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum HiddenReason {
    /// The whole server is switched off.
    ServerDisabled,
    /// The user switched this tool off.
    DisabledByUser,
    /// The server has include patterns and none matches.
    NotIncluded,
    /// This exclude pattern (the first that matches) hides the tool.
    Excluded { pattern: String },
    /// The server listed a second tool under a name it already used; only the first is offered,
    /// since a call could not say which one it meant.
    DuplicateName,
}

/// One server's include/exclude patterns, compiled once per build.
pub(crate) struct ToolFilter<'a> {
    include: Option<GlobSet>,
    exclude: GlobSet,
    settings: &'a ServerToolSettings,
}

impl<'a> ToolFilter<'a> {
    pub(crate) fn compile(
        server_id: &str,
        settings: &'a ServerToolSettings,
    ) -> Result<Self, CatalogError> {
        let include = if settings.include.is_empty() {
            None
        } else {
            Some(glob_set(
                server_id,
                PatternList::Include,
                &settings.include,
            )?)
        };
        let exclude = glob_set(server_id, PatternList::Exclude, &settings.exclude)?;
        Ok(Self {
            include,
            exclude,
            settings,
        })
    }

    /// `None` when the tool is shown; else the first reason, in this order: the user's explicit
    /// switch, then include, then exclude.
    pub(crate) fn hidden_reason(&self, tool: &str) -> Option<HiddenReason> {
        if self.settings.disabled_tools.contains(tool) {
            return Some(HiddenReason::DisabledByUser);
        }
        if let Some(include) = &self.include {
            if !include.is_match(tool) {
                return Some(HiddenReason::NotIncluded);
            }
        }
        let first = self.exclude.matches(tool).into_iter().min()?;
        Some(HiddenReason::Excluded {
            pattern: self.settings.exclude[first].clone(),
        })
    }
}

fn glob_set(
    server_id: &str,
    list: PatternList,
    patterns: &[String],
) -> Result<GlobSet, CatalogError> {
    let bad = |pattern: &str, reason: String| CatalogError::BadPattern {
        server_id: server_id.to_owned(),
        list,
        pattern: pattern.to_owned(),
        reason,
    };
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        if pattern.trim().is_empty() {
            return Err(bad(pattern, "the pattern is empty".to_owned()));
        }
        // Tool names are not paths: `*` crosses `/`, and `\` escapes on every platform alike
        // (globset's default for `\` differs on Windows).
        let glob = GlobBuilder::new(pattern)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| bad(pattern, e.kind().to_string()))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| bad(&patterns.join(" "), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_round_trip_and_stay_small() {
        let settings = CatalogSettings::default();
        let text = serde_json::to_value(&settings).unwrap();
        assert_eq!(text, json!({"naming": "auto"}));
        let back: CatalogSettings = serde_json::from_value(json!({})).unwrap();
        assert_eq!(back, settings);
    }

    #[test]
    fn full_settings_round_trip() {
        let value = json!({
            "naming": "always",
            "servers": {
                "github": {
                    "prefix": "gh",
                    "include": ["issue_*"],
                    "exclude": ["*delete*"],
                    "disabledTools": ["issue_lock"]
                }
            }
        });
        let settings: CatalogSettings = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(settings.naming, NamingMode::Always);
        assert_eq!(serde_json::to_value(&settings).unwrap(), value);
    }

    #[test]
    fn switching_a_tool_back_on_drops_the_empty_entry() {
        let mut settings = CatalogSettings::default();
        settings.set_tool_enabled("fs", "write_file", false);
        assert!(settings.servers["fs"].disabled_tools.contains("write_file"));
        settings.set_tool_enabled("fs", "write_file", true);
        assert!(settings.servers.is_empty());
    }

    #[test]
    fn validate_names_the_server_and_pattern() {
        let mut settings = CatalogSettings::default();
        settings.servers.insert(
            "github".into(),
            ServerToolSettings {
                exclude: vec!["ok_*".into(), "bad[".into()],
                ..Default::default()
            },
        );
        let err = settings.validate().unwrap_err();
        assert!(
            matches!(
                &err,
                CatalogError::BadPattern { server_id, list: PatternList::Exclude, pattern, .. }
                    if server_id == "github" && pattern == "bad["
            ),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains("github") && message.contains("bad["),
            "{message}"
        );
    }

    #[test]
    fn validate_rejects_bad_and_duplicate_prefixes() {
        let with_prefix = |p: &str| ServerToolSettings {
            prefix: Some(p.into()),
            ..Default::default()
        };
        for bad in ["1x", "a b", "ü", &"a".repeat(25)] {
            let settings = CatalogSettings {
                servers: [("s".to_owned(), with_prefix(bad))].into(),
                ..Default::default()
            };
            assert!(
                matches!(settings.validate(), Err(CatalogError::BadPrefix { .. })),
                "{bad:?}"
            );
        }
        let settings = CatalogSettings {
            servers: [
                ("a".to_owned(), with_prefix("gh")),
                ("b".to_owned(), with_prefix("GH")),
            ]
            .into(),
            ..Default::default()
        };
        assert!(matches!(
            settings.validate(),
            Err(CatalogError::DuplicatePrefix { .. })
        ));
    }

    #[test]
    fn empty_patterns_are_rejected() {
        let settings = CatalogSettings {
            servers: [(
                "s".to_owned(),
                ServerToolSettings {
                    include: vec![" ".into()],
                    ..Default::default()
                },
            )]
            .into(),
            ..Default::default()
        };
        assert!(matches!(
            settings.validate(),
            Err(CatalogError::BadPattern {
                list: PatternList::Include,
                ..
            })
        ));
    }
}
