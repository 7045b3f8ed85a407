//! Conditions on a tool call's arguments, and how they read what they cannot check.
//!
//! A condition looks at one value in the arguments, named by a JSON pointer (RFC 6901, such as
//! `/path` or `/options/0`). The matchers are deliberately few and string-minded, because the
//! values users want rules on are paths, commands and URLs.
//!
//! # What cannot be checked
//!
//! A value may be missing, not a string, or not checkable by its text (a path with `..` in it
//! could lead anywhere). Such a value never *satisfies* a condition; what follows depends on the
//! rule it belongs to:
//!
//! - on an **Allow** rule the condition fails, so the grant does not apply: the model cannot
//!   earn a grant by leaving out or retyping the field it was meant to be checked on;
//! - on a **Deny** or **Ask** rule the condition holds, so the restriction applies: the model
//!   cannot slip past "ask before writing under /etc" by sending `path` as an array, or as
//!   `/tmp/../etc/passwd`.
//!
//! `Equals` is the exception: it compares whole JSON values, so a missing value is simply not
//! equal (a rule on `/force` equals `true` says nothing about calls that leave `force` out).
//!
//! # Commands
//!
//! A prefix such as `git status` is matched at a word boundary (`git statusx` does not match). A
//! shell joins commands with `;`, `&&`, `|`, `$(…)` and the like, so:
//!
//! - an Allow prefix holds only when the rest of the value has none of `` ; & | ` $ < > ``
//!   or a line break: "allow `git status`" never allows `git status; curl … | sh`;
//! - a Deny or Ask prefix holds when *any* piece of the value, split at those characters and at
//!   brackets and quotes, starts with it: "ask before `git push`" also catches
//!   `git add . && git push` and `bash -c "git push"`.
//!
//! This is a tripwire, not a sandbox: `sudo git push`, an alias or a script still get past a
//! Deny prefix. Rules that must hold against a determined model belong on the tool's side.
//! Because the Allow side refuses `&` and `$`, prefixes suit commands better than URLs; a glob
//! (`https://api.example.com/**`) suits URLs.
//!
//! # Globs
//!
//! Globs use `globset` with `*` stopping at `/` and `**` crossing it, so `/home/me/project/**` is
//! "anything under that folder".
//!
//! # Spellings
//!
//! Values are compared in their canonical form ([`crate::canonical`]), never as typed: a glob or
//! prefix that is an absolute path reads the value as a path (`//etc/./passwd` is `/etc/passwd`;
//! a relative path or a `..` segment cannot be checked, since links and the server's folder
//! decide where they lead); one that is a URL reads it as a URL (scheme, host, port and path as a
//! client parses them; user information, as in `https://api.example.com@evil.example`, cannot be
//! checked). Paths are compared case-sensitively and without resolving links.

use std::fmt;

use globset::GlobBuilder;

use crate::canonical::{canonical, kind_of_pattern, path, url_has_prefix, Canonical, Kind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One condition on the arguments; a rule's conditions must all hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ArgCondition {
    /// A JSON pointer into the arguments, such as `/path` or `/command`.
    pub pointer: String,
    pub matcher: Matcher,
}

/// How a condition compares the value it points at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", content = "value", rename_all = "camelCase")]
pub enum Matcher {
    /// The value is a string matching this glob.
    Glob(String),
    /// The value is a string starting with this text at a word boundary (see the module docs).
    Prefix(String),
    /// The value equals this JSON value exactly.
    Equals(Value),
}

/// Which way a condition reads a value it cannot check; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leaning {
    /// The condition belongs to an Allow rule: what cannot be checked does not hold.
    Grant,
    /// The condition belongs to a Deny or Ask rule: what cannot be checked holds.
    Restrict,
}

/// Characters that let a shell run, substitute or redirect another command.
const SHELL_CONTROL: &[char] = &[';', '&', '|', '`', '$', '<', '>', '\n', '\r'];

/// What no URL holds unencoded but a shell reads as control: a URL prefix's Allow refuses them
/// (`&` is left out: queries are made of it).
const URL_SHELL_CONTROL: &[char] = &[';', '|', '`', '$', '<', '>', '\n', '\r', ' ', '\t'];

/// Where a Deny or Ask prefix looks for the start of another command: the control characters,
/// plus brackets and quotes, behind which `$( … )`, `bash -c "…"` and subshells hide commands.
const COMMAND_BREAKS: &[char] = &[
    ';', '&', '|', '`', '$', '<', '>', '\n', '\r', '(', ')', '{', '}', '"', '\'',
];

impl ArgCondition {
    pub fn glob(pointer: impl Into<String>, pattern: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            matcher: Matcher::Glob(pattern.into()),
        }
    }

    pub fn prefix(pointer: impl Into<String>, prefix: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            matcher: Matcher::Prefix(prefix.into()),
        }
    }

    pub fn equals(pointer: impl Into<String>, value: Value) -> Self {
        Self {
            pointer: pointer.into(),
            matcher: Matcher::Equals(value),
        }
    }

    /// Whether the condition holds for these arguments, reading what cannot be checked the
    /// given way.
    pub(crate) fn holds(&self, arguments: &Value, leaning: Leaning) -> bool {
        match self.check(arguments) {
            Checked::Matches => true,
            Checked::DoesNotMatch => false,
            Checked::Unknown => leaning == Leaning::Restrict,
        }
    }

    fn check(&self, arguments: &Value) -> Checked {
        if pointer_problem(&self.pointer).is_some() {
            return Checked::Unknown;
        }
        let found = arguments.pointer(&self.pointer);
        match &self.matcher {
            Matcher::Equals(expected) => Checked::from(found == Some(expected)),
            Matcher::Glob(pattern) => match (found, compile_glob(pattern)) {
                (Some(Value::String(text)), Ok(glob)) => check_glob(text, pattern, &glob),
                _ => Checked::Unknown,
            },
            Matcher::Prefix(prefix) => match found {
                Some(Value::String(text)) if !prefix.is_empty() => {
                    check_prefix_of_kind(text, prefix)
                }
                _ => Checked::Unknown,
            },
        }
    }
}

/// A glob compares the value's canonical form ([`crate::canonical`]): a path pattern reads the
/// value as a path, a URL pattern as a URL, and any value that is a URL is parsed.
fn check_glob(text: &str, pattern: &str, glob: &globset::GlobMatcher) -> Checked {
    match canonical(text, kind_of_pattern(pattern)) {
        Canonical::Path(path) => Checked::from(glob.is_match(path)),
        Canonical::Url(url) => Checked::from(glob.is_match(url.as_str())),
        Canonical::Text(_) if kind_of_pattern(pattern) == Kind::Url => Checked::Unknown,
        Canonical::Text(text) if !has_parent_segment(&text) => Checked::from(glob.is_match(text)),
        Canonical::Text(_) | Canonical::Unknown => Checked::Unknown,
    }
}

/// A prefix by the kind of value it is written for: a URL prefix compares scheme, host, port
/// and path segments; a path prefix folds the value's path (a lone relative path is Unknown); a
/// command prefix reads the value as a command line.
fn check_prefix_of_kind(text: &str, prefix: &str) -> Checked {
    match kind_of_pattern(prefix) {
        Kind::Url => match canonical(text, Kind::Url) {
            Canonical::Url(url) => match url_has_prefix(&url, prefix) {
                Some(true) if text.trim().contains(URL_SHELL_CONTROL) => Checked::Unknown,
                Some(matches) => Checked::from(matches),
                None => Checked::Unknown,
            },
            Canonical::Path(_) | Canonical::Text(_) | Canonical::Unknown => Checked::Unknown,
        },
        Kind::Path => {
            let Canonical::Path(prefix) = path(prefix) else {
                return Checked::Unknown;
            };
            let value = text.trim_start();
            if value.starts_with('/') {
                // A path, or a command line starting with one: folded whole, so a `..` anywhere
                // in it (`/home/x /../../etc`) leaves the target unknown.
                match path(value) {
                    Canonical::Path(folded) => check_prefix(&folded, &prefix),
                    _ => Checked::Unknown,
                }
            } else if value.contains(char::is_whitespace) {
                // A command line: the path may come later (`sudo /bin/rm`), which the pieces
                // of `check_prefix` look for.
                check_prefix(value, &prefix)
            } else {
                // A lone relative path: where it leads depends on a folder the gate cannot see.
                Checked::Unknown
            }
        }
        Kind::Other => check_prefix(text, prefix),
    }
}

/// The three answers a condition can give; `Unknown` is read by the rule's [`Leaning`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checked {
    Matches,
    DoesNotMatch,
    Unknown,
}

impl From<bool> for Checked {
    fn from(matches: bool) -> Self {
        if matches {
            Checked::Matches
        } else {
            Checked::DoesNotMatch
        }
    }
}

/// A prefix check that both leanings can use: `Matches` only for a single clean command,
/// `Unknown` when the prefix starts some later command (a Deny or Ask then holds, an Allow not).
fn check_prefix(text: &str, prefix: &str) -> Checked {
    if let Some(rest) = after_word(text.trim_start(), prefix) {
        if !rest.contains(SHELL_CONTROL) {
            return Checked::Matches;
        }
        // The prefix starts the value but something is chained after it.
        return Checked::Unknown;
    }
    let later = text
        .split(COMMAND_BREAKS)
        .any(|piece| after_word(piece.trim_start(), prefix).is_some());
    if later {
        Checked::Unknown
    } else {
        Checked::DoesNotMatch
    }
}

/// The rest of `text` after `prefix`, if `prefix` ends at a word boundary there.
fn after_word<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(prefix)?;
    let ends_word = prefix.ends_with(|c: char| !is_word_char(c));
    let next_is_word = rest.starts_with(is_word_char);
    (ends_word || !next_is_word).then_some(rest)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.')
}

fn has_parent_segment(path: &str) -> bool {
    path.split(['/', '\\']).any(|segment| segment == "..")
}

pub(crate) fn compile_glob(pattern: &str) -> Result<globset::GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|e| e.kind().to_string())
}

/// Why `pointer` is not a JSON pointer (RFC 6901), if it is not.
pub(crate) fn pointer_problem(pointer: &str) -> Option<&'static str> {
    if pointer.is_empty() {
        // The whole arguments object: valid, and useful with `Equals`.
        return None;
    }
    if !pointer.starts_with('/') {
        return Some("a JSON pointer starts with `/`, like `/path`");
    }
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Some("`~` must be followed by `0` (for `~`) or `1` (for `/`)");
        }
    }
    None
}

impl fmt::Display for ArgCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "the arguments"
        } else {
            &self.pointer
        };
        match &self.matcher {
            Matcher::Glob(pattern) => write!(f, "{at} matches ‘{pattern}’"),
            Matcher::Prefix(prefix) => write!(f, "{at} starts with ‘{prefix}’"),
            Matcher::Equals(value) => write!(f, "{at} is {value}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn both(condition: &ArgCondition, args: &Value) -> (bool, bool) {
        (
            condition.holds(args, Leaning::Grant),
            condition.holds(args, Leaning::Restrict),
        )
    }

    #[test]
    fn glob_under_a_folder() {
        let c = ArgCondition::glob("/path", "/home/me/project/**");
        let cases = [
            (
                json!({"path": "/home/me/project/src/main.rs"}),
                (true, true),
            ),
            (json!({"path": "/home/me/project"}), (false, false)),
            (json!({"path": "/home/me/projects/x"}), (false, false)),
            (json!({"path": "/etc/passwd"}), (false, false)),
            // Cannot be checked by its text: an Allow fails, a Deny or Ask holds.
            (
                json!({"path": "/home/me/project/../../../etc/passwd"}),
                (false, true),
            ),
            (json!({"path": ["/home/me/project/a"]}), (false, true)),
            (json!({"other": "/home/me/project/a"}), (false, true)),
            (json!("not an object"), (false, true)),
        ];
        for (args, expected) in cases {
            assert_eq!(both(&c, &args), expected, "{args}");
        }
    }

    #[test]
    fn single_star_stays_in_its_folder() {
        let c = ArgCondition::glob("/path", "/tmp/*.txt");
        assert!(c.holds(&json!({"path": "/tmp/a.txt"}), Leaning::Grant));
        assert!(!c.holds(&json!({"path": "/tmp/sub/a.txt"}), Leaning::Grant));
    }

    #[test]
    fn prefix_on_a_command() {
        let c = ArgCondition::prefix("/command", "git status");
        let cases = [
            ("git status", (true, true)),
            ("git status --short", (true, true)),
            ("  git status", (true, true)),
            ("git statusx", (false, false)),
            ("git stash", (false, false)),
            // Chained after a clean start: an Allow must not cover the tail.
            ("git status; rm -rf ~", (false, true)),
            ("git status && curl x | sh", (false, true)),
            ("git status $(rm -rf ~)", (false, true)),
            ("git status > /etc/hosts", (false, true)),
            ("git status\nrm -rf ~", (false, true)),
            // Hidden behind another command: a Deny or Ask still sees it.
            ("echo hi; git status", (false, true)),
            ("bash -c \"git status\"", (false, true)),
            ("echo $(git status)", (false, true)),
        ];
        for (command, expected) in cases {
            assert_eq!(
                both(&c, &json!({ "command": command })),
                expected,
                "{command:?}"
            );
        }
    }

    #[test]
    fn prefix_ending_in_a_separator_needs_no_space_after_it() {
        let c = ArgCondition::prefix("/url", "https://api.example.com/");
        assert!(c.holds(
            &json!({"url": "https://api.example.com/v1"}),
            Leaning::Grant
        ));
        let c = ArgCondition::prefix("/path", "/home/me/proj");
        assert!(c.holds(&json!({"path": "/home/me/proj/a"}), Leaning::Grant));
        assert!(!c.holds(&json!({"path": "/home/me/proj.secret"}), Leaning::Grant));
        assert!(!c.holds(&json!({"path": "/home/me/project"}), Leaning::Restrict));
    }

    #[test]
    fn prefix_on_a_missing_or_non_string_value() {
        let c = ArgCondition::prefix("/command", "git push");
        assert_eq!(both(&c, &json!({})), (false, true));
        assert_eq!(
            both(&c, &json!({"command": ["git", "push"]})),
            (false, true)
        );
        assert_eq!(both(&c, &json!({"command": null})), (false, true));
    }

    #[test]
    fn equals_compares_whole_values_and_missing_is_not_equal() {
        let c = ArgCondition::equals("/options/force", json!(true));
        assert_eq!(both(&c, &json!({"options": {"force": true}})), (true, true));
        assert_eq!(
            both(&c, &json!({"options": {"force": false}})),
            (false, false)
        );
        assert_eq!(both(&c, &json!({"options": {}})), (false, false));
        assert_eq!(
            both(&c, &json!({"options": {"force": "true"}})),
            (false, false)
        );
        let whole = ArgCondition::equals("", json!({}));
        assert!(whole.holds(&json!({}), Leaning::Grant));
    }

    #[test]
    fn pointer_escapes_reach_odd_keys() {
        let c = ArgCondition::equals("/a~1b/c~0d", json!(1));
        assert!(c.holds(&json!({"a/b": {"c~d": 1}}), Leaning::Grant));
    }

    #[test]
    fn a_broken_condition_never_grants_and_always_restricts() {
        for c in [
            ArgCondition::glob("/path", "a[b"),
            ArgCondition::prefix("path", "x"),
            ArgCondition::equals("/bad~2", json!(1)),
            ArgCondition::prefix("/path", ""),
        ] {
            assert_eq!(both(&c, &json!({"path": "x"})), (false, true), "{c}");
        }
    }

    #[test]
    fn pointer_problems() {
        assert_eq!(pointer_problem(""), None);
        assert_eq!(pointer_problem("/a/0/~0~1"), None);
        assert!(pointer_problem("path").is_some());
        assert!(pointer_problem("/a~").is_some());
        assert!(pointer_problem("/a~2").is_some());
    }

    #[test]
    fn conditions_describe_themselves() {
        assert_eq!(
            ArgCondition::prefix("/command", "git status").to_string(),
            "/command starts with ‘git status’"
        );
        assert_eq!(ArgCondition::equals("/n", json!(3)).to_string(), "/n is 3");
    }
}
