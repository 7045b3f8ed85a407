//! Turning MCP tool names into names every provider accepts, and keeping them apart.
//!
//! Every name this module produces matches `^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`: the intersection of
//! OpenAI's and Anthropic's rule (`^[a-zA-Z0-9_-]{1,64}$`) and Gemini's (starts with a letter or
//! underscore; letters, digits, `_ . : -`; at most 64). One set of names therefore serves every
//! provider, and switching provider mid-conversation never renames a tool.
//!
//! Names are a pure function of the *set* of visible tools: the caller sorts its input, the hash
//! is FNV-1a (fixed constants, not std's randomly seeded hasher), and no step depends on the order
//! servers connected in.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::error::ToolRef;
use crate::CatalogError;

/// The longest name any provider we target accepts.
pub const MAX_NAME_LEN: usize = 64;

/// Between a server's prefix and the tool's name. Two characters, so a single `_` inside a server
/// id or tool name does not read as the boundary.
pub const PREFIX_SEPARATOR: &str = "__";

/// Longest prefix taken from a server id. Longer ids are cut so the tool's own name, which says
/// what the tool does, keeps most of the 64 characters. Ids that agree on their first 24
/// characters then clash, and the clash is settled by the hash like any other.
pub const MAX_PREFIX_LEN: usize = 24;

/// Hex digits of hash appended to a shortened or disambiguated name: 32 bits, so a clash of two
/// suffixes needs tens of thousands of tools sharing one stem, and even then the salted retry in
/// [`assign_names`] resolves it.
const HASH_HEX_LEN: usize = 8;

/// When tool names carry their server's prefix (the user's choice, in
/// [`CatalogSettings`](crate::CatalogSettings)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum NamingMode {
    /// The tool's own name, unless it collides with another visible tool's; then every tool in
    /// the clash is named `<prefix>__<tool>`.
    #[default]
    Auto,
    /// Every tool is named `<prefix>__<tool>`: names never change when a server is added.
    Always,
    /// Never prefix; a collision is an error the user resolves by disabling a tool.
    None,
}

/// Replaces each run of characters outside `[A-Za-z0-9_-]` (non-ASCII, dots, slashes, spaces,
/// colons), with any underscores touching it, by one `_`. No transliteration: it would need
/// tables, and a readable-but-wrong guess at a name is worse than an honest `_`. A name left with
/// no letter or digit at all becomes `tool`, and the collision rules then tell such tools apart.
pub fn sanitize(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    // True while the last `_` pushed stands for replaced characters; underscores next to such a
    // run merge into it, so `café_menu` reads `caf_menu`, not `caf__menu`.
    let mut in_replaced_run = false;
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            out.push(c);
            in_replaced_run = false;
        } else if c == '_' {
            if !in_replaced_run {
                out.push(c);
            }
        } else if !out.ends_with('_') {
            out.push('_');
            in_replaced_run = true;
        } else {
            in_replaced_run = true;
        }
    }
    if out.bytes().any(|b| b.is_ascii_alphanumeric()) {
        out
    } else {
        "tool".to_owned()
    }
}

/// Gemini wants a letter or `_` first, and some OpenAI-compatible servers want a letter; `t_`
/// satisfies both and reads as "tool".
pub fn start_with_letter(name: String) -> String {
    if name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name
    } else {
        format!("t_{name}")
    }
}

/// The key two names collide under: ASCII case folded and `-` read as `_`.
///
/// Stricter than the providers, which would accept `get-user` beside `get_user` and `Search`
/// beside `search`. Models do not keep such names apart reliably: they emit `get_user` for a tool
/// declared as `get-user`, or change case. Two tools differing only that way would invite calling
/// the wrong one, so they count as a collision; and since every name in a catalog is unique
/// under this key, [`crate::Catalog::resolve_loose`] can map a slightly-off name back safely.
pub fn fold(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'-' => '_',
            b => char::from(b.to_ascii_lowercase()),
        })
        .collect()
}

/// The prefix that marks a server's tools: the custom prefix if set, else the server id, made
/// valid and cut to [`MAX_PREFIX_LEN`].
///
/// A prefix never holds the separator and never ends with `_` or `-`, even as [`fold`] reads
/// them (`-` as `_`): otherwise server `cnt__evil` (or `cnt-`) would name its tools
/// `cnt__evil__read` (`cnt-__read`), which read as server `cnt`'s. So each run of two or more
/// `_`/`-` becomes one `_`, and trailing ones go.
pub fn prefix_for(server_id: &str, custom: Option<&str>) -> String {
    let raw = custom
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or(server_id);
    let valid = start_with_letter(sanitize(raw));
    let joiner = |b: u8| b == b'_' || b == b'-';
    let bytes = valid.as_bytes();
    let mut prefix = String::with_capacity(valid.len());
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..].iter().take_while(|&&b| joiner(b)).count();
        if run >= 2 {
            prefix.push('_');
            i += run;
        } else {
            prefix.push(char::from(bytes[i]));
            i += 1;
        }
    }
    // Sanitized text is ASCII, so any byte index is a character boundary.
    prefix.truncate(MAX_PREFIX_LEN);
    // Starts with a letter, so trimming cannot empty it.
    prefix.truncate(prefix.trim_end_matches(['_', '-']).len());
    prefix
}

/// Whether `name` (a tool's own name, or a model-facing one) begins with `prefix` and the
/// separator, ignoring case and `-`/`_` as [`fold`] does: a name that would read as a tool of
/// the server with that prefix.
pub fn starts_with_prefix(name: &str, prefix: &str) -> bool {
    let (name, prefix) = (fold(name), fold(prefix));
    name.strip_prefix(prefix.as_str())
        .is_some_and(|rest| rest.starts_with(PREFIX_SEPARATOR))
}

/// A stable 32-bit hash of one tool's identity (and a salt for retries), as hex.
///
/// FNV-1a 64 with its published constants, folded to 32 bits: the same on every platform, in
/// every build and every run, which `std::hash` does not promise. The server id is part of the
/// input, so two copies of one server get different hashes for the same tool.
fn tool_hash(server_id: &str, tool: &str, salt: u32) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
    };
    eat(server_id.as_bytes());
    // 0xFF never occurs in UTF-8, so ("ab", "c") and ("a", "bc") hash differently.
    eat(&[0xFF]);
    eat(tool.as_bytes());
    if salt > 0 {
        eat(&[0xFF]);
        eat(&salt.to_le_bytes());
    }
    // Truncation to the low half is the point: fold the high half in first.
    let folded = ((h >> 32) ^ h) as u32;
    format!("{folded:08x}")
}

/// `name` cut so that `_` and the hash fit in [`MAX_NAME_LEN`].
fn with_hash(name: &str, hash: &str) -> String {
    let keep = MAX_NAME_LEN - 1 - HASH_HEX_LEN;
    // Names reaching here are sanitized ASCII, so slicing by bytes is safe.
    let stem = &name[..name.len().min(keep)];
    format!("{stem}_{hash}")
}

/// `name` if it fits, else its first 55 characters, `_` and the tool's hash.
fn fit(name: String, server_id: &str, tool: &str) -> String {
    if name.len() <= MAX_NAME_LEN {
        name
    } else {
        with_hash(&name, &tool_hash(server_id, tool, 0))
    }
}

/// One visible tool, as naming needs it.
pub struct NameInput<'a> {
    pub server_id: &'a str,
    pub server_name: &'a str,
    pub tool: &'a str,
    /// From [`prefix_for`].
    pub prefix: &'a str,
    /// The tool's own name begins with another server's prefix and separator
    /// ([`starts_with_prefix`]): it takes its own server's prefix in every mode, so no name
    /// the model or a host sees borrows another server's.
    pub imitates: bool,
}

/// The model-facing name of each tool, in input order. `tools` must be sorted by (server id,
/// tool name) and hold each pair once; then the result depends only on the set of tools.
///
/// 1. Each tool gets a candidate: its sanitized name (`auto`, `none`) or `<prefix>__<name>`
///    (`always`, and in every mode a tool that [imitates](NameInput::imitates) another
///    server: `evil__cnt__read`, never `cnt__read`). In `auto`, tools whose sanitized names
///    collide under [`fold`] (judged before any shortening) all take the prefixed form: every
///    party to a clash is renamed, not all but the first, since "first" would depend on which
///    server happened to connect first.
/// 2. In `none`, any collision of unprefixed names is an error naming both tools.
/// 3. Candidates over 64 characters are cut and given the tool's hash.
/// 4. Whatever still collides (same-server `get-user`/`get_user` under a prefix, two servers
///    with one custom prefix, a tool literally named `a__echo`) is given the tool's hash, with a
///    salt in the astronomically rare case that the hashed name is taken too.
pub fn assign_names(
    tools: &[NameInput<'_>],
    mode: NamingMode,
) -> Result<Vec<String>, CatalogError> {
    // Collisions are judged on the full sanitized name, before shortening: the same long name
    // on two servers is a clash to be prefixed, although the two shortened forms would differ
    // by their hashes.
    let base: Vec<String> = tools
        .iter()
        .map(|t| start_with_letter(sanitize(t.tool)))
        .collect();
    let plain = |i: usize| fit(base[i].clone(), tools[i].server_id, tools[i].tool);
    let prefixed = |t: &NameInput<'_>| {
        let name = format!("{}{PREFIX_SEPARATOR}{}", t.prefix, sanitize(t.tool));
        fit(name, t.server_id, t.tool)
    };

    // Impostors are prefixed whatever the mode, so their own names clash with nothing.
    let unprefixed = |i: &usize| !tools[*i].imitates;

    let mut names: Vec<String> = match mode {
        NamingMode::Always => tools.iter().map(prefixed).collect(),
        NamingMode::None => {
            let mut seen: HashMap<String, usize> = HashMap::new();
            for i in (0..tools.len()).filter(unprefixed) {
                let name = &base[i];
                if let Some(&j) = seen.get(&fold(name)) {
                    let tool_ref = |t: &NameInput<'_>| {
                        Box::new(ToolRef {
                            server_id: t.server_id.to_owned(),
                            server_name: t.server_name.to_owned(),
                            tool: t.tool.to_owned(),
                        })
                    };
                    return Err(CatalogError::NameCollision {
                        name: plain(j),
                        first: tool_ref(&tools[j]),
                        second: tool_ref(&tools[i]),
                    });
                }
                seen.insert(fold(name), i);
            }
            (0..tools.len())
                .map(|i| {
                    if tools[i].imitates {
                        prefixed(&tools[i])
                    } else {
                        plain(i)
                    }
                })
                .collect()
        }
        NamingMode::Auto => {
            let counts = fold_counts((0..tools.len()).filter(unprefixed).map(|i| &base[i]));
            (0..tools.len())
                .map(|i| {
                    if tools[i].imitates || counts[&fold(&base[i])] > 1 {
                        prefixed(&tools[i])
                    } else {
                        plain(i)
                    }
                })
                .collect()
        }
    };

    let counts = fold_counts(&names);
    let mut taken: HashSet<String> = names
        .iter()
        .map(|n| fold(n))
        .filter(|f| counts[f] == 1)
        .collect();
    for (name, t) in names.iter_mut().zip(tools) {
        if counts[&fold(name)] == 1 {
            continue;
        }
        // Salt 0 is the tool's plain hash; later salts exist only so the loop always ends.
        let mut salt = 0u32;
        loop {
            let candidate = with_hash(name, &tool_hash(t.server_id, t.tool, salt));
            if taken.insert(fold(&candidate)) {
                *name = candidate;
                break;
            }
            salt = salt.wrapping_add(1);
        }
    }
    Ok(names)
}

fn fold_counts<'a>(names: impl IntoIterator<Item = &'a String>) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for name in names {
        *counts.entry(fold(name)).or_insert(0) += 1;
    }
    counts
}

/// Whether `name` matches `^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`, the rule every produced name obeys.
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_NAME_LEN
        && bytes[0].is_ascii_alphabetic()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_replaces_runs_and_keeps_dashes() {
        let cases = [
            ("get-user", "get-user"),
            ("files.read", "files_read"),
            ("a..b//c", "a_b_c"),
            ("café au lait", "caf_au_lait"),
            ("検索", "tool"),
            ("検索_v2", "_v2"),
            ("a_.b", "a_b"),
            ("keep__double", "keep__double"),
            ("", "tool"),
            ("_-_", "tool"),
            ("ns:tool", "ns_tool"),
        ];
        for (raw, want) in cases {
            assert_eq!(sanitize(raw), want, "sanitize({raw:?})");
        }
    }

    #[test]
    fn names_start_with_a_letter() {
        assert_eq!(start_with_letter("2fa".into()), "t_2fa");
        assert_eq!(start_with_letter("_v2".into()), "t__v2");
        assert_eq!(start_with_letter("ok".into()), "ok");
    }

    #[test]
    fn fold_ignores_case_and_dash_versus_underscore() {
        assert_eq!(fold("Get-User"), fold("get_user"));
        assert_ne!(fold("get_user"), fold("get_users"));
    }

    #[test]
    fn hash_is_fixed_across_runs_and_platforms() {
        // Pinned values, checked against an independent FNV-1a implementation: if they change,
        // every shortened or disambiguated name users have seen changes too.
        assert_eq!(tool_hash("github", "search", 0), "19db914f");
        assert_eq!(tool_hash("fs-2", "read_file", 3), "8af4acd1");
        assert_ne!(
            tool_hash("github", "search", 0),
            tool_hash("gitlab", "search", 0)
        );
        assert_ne!(tool_hash("ab", "c", 0), tool_hash("a", "bc", 0));
        assert_ne!(tool_hash("a", "b", 0), tool_hash("a", "b", 1));
        assert_eq!(tool_hash("github", "search", 0).len(), HASH_HEX_LEN);
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let long = "x".repeat(128);
        let name = fit(long.clone(), "s", &long);
        assert_eq!(name.len(), MAX_NAME_LEN);
        assert!(name.starts_with(&"x".repeat(55)));
        assert_eq!(&name[55..56], "_");
        assert!(is_valid_name(&name));
    }

    #[test]
    fn prefix_is_sanitized_and_bounded() {
        assert_eq!(prefix_for("github.com/me", None), "github_com_me");
        assert_eq!(prefix_for("1password", None), "t_1password");
        assert_eq!(prefix_for("x", Some("gh")), "gh");
        assert_eq!(prefix_for("x", Some("  ")), "x");
        assert_eq!(prefix_for(&"a".repeat(40), None).len(), MAX_PREFIX_LEN);
    }

    #[test]
    fn a_prefix_never_holds_the_separator_or_ends_with_underscore() {
        assert_eq!(prefix_for("cnt__evil", None), "cnt_evil");
        assert_eq!(prefix_for("cnt_", None), "cnt");
        assert_eq!(prefix_for("_x", None), "t_x");
        assert_eq!(prefix_for("x", Some("a___b__")), "a_b");
        assert_eq!(prefix_for("0-.vdc", None), "t_0_vdc");
        assert_eq!(prefix_for("cnt-", None), "cnt");
        assert_eq!(prefix_for("my-server", None), "my-server");
        let cut = format!("{}_b", "a".repeat(MAX_PREFIX_LEN - 1));
        assert_eq!(prefix_for(&cut, None), "a".repeat(MAX_PREFIX_LEN - 1));
    }

    #[test]
    fn starts_with_prefix_reads_as_the_model_would() {
        assert!(starts_with_prefix("cnt__read", "cnt"));
        assert!(starts_with_prefix("CNT--read", "cnt"));
        assert!(!starts_with_prefix("cnt_read", "cnt"));
        assert!(!starts_with_prefix("cntx__read", "cnt"));
        assert!(!starts_with_prefix("cnt", "cnt"));
    }

    fn input<'a>(server: &'a str, tool: &'a str, imitates: bool) -> NameInput<'a> {
        NameInput {
            server_id: server,
            server_name: server,
            tool,
            prefix: server,
            imitates,
        }
    }

    #[test]
    fn an_impostor_takes_its_own_prefix_in_every_mode() {
        for mode in [NamingMode::Auto, NamingMode::Always, NamingMode::None] {
            let tools = [
                input("cnt", "harmless_read", false),
                input("evil", "cnt__harmless_read", true),
            ];
            let names = assign_names(&tools, mode).unwrap();
            assert_eq!(names[1], "evil__cnt__harmless_read", "{mode:?}");
            let own = if mode == NamingMode::Always {
                "cnt__harmless_read"
            } else {
                "harmless_read"
            };
            assert_eq!(names[0], own, "{mode:?}");
        }
    }
}
