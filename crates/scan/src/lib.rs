//! Secrets in what goes into a tool call and what comes back from one.
//!
//! The rules are `secretscan`'s (crates.io `secretscan` 0.2.5, MIT, 73 rules: cloud providers'
//! keys, the common services' tokens, private key blocks, JWTs checked for a JSON header,
//! passwords in assignments and URLs), minus its low-severity identifiers (client ids, tenant
//! ids), which are not secrets. A match of a contextual rule (a password or secret assigned in
//! text) counts only when the value is not a placeholder and its Shannon entropy is at least 3
//! bits a character. The values Toolgate keeps itself (the `${secret:…}` items servers are
//! given, the provider's key) are matched exactly, however they look.
//!
//! One pass of a `RegexSet` says which rules can match at all; only those run (`secretscan`'s
//! own `PatternSet`).

use regex::Regex;
use secretscan::scanner::PatternSet;
use secretscan::Severity;
use serde::Serialize;
use serde_json::Value;

/// One thing that looks like a secret: which rule, and where (byte offsets in the text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// What it looks like ("GitHub Token", "Private Key", "a secret Toolgate keeps (MAIL_KEY)").
    pub rule: String,
    #[ts(type = "number")]
    pub start: usize,
    #[ts(type = "number")]
    pub end: usize,
}

/// A finding in a JSON value: the JSON pointer of the string it is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Located {
    pub pointer: String,
    pub finding: Finding,
}

/// The rule set, compiled once, and the values Toolgate keeps.
pub struct Scanner {
    patterns: PatternSet,
    /// Rules whose match is only a secret when the value looks like one (entropy, no
    /// placeholder).
    contextual: Vec<String>,
    known: Vec<(String, String)>,
}

/// Shortest value of Toolgate's own that is matched exactly: shorter ones ("yes", a port) would
/// match everywhere.
const KNOWN_MIN_LEN: usize = 8;
/// Bits a character a contextual match needs.
const MIN_ENTROPY: f64 = 3.0;

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    pub fn new() -> Self {
        let mut patterns = std::collections::HashMap::new();
        let mut contextual = Vec::new();
        for rule in secretscan::rules() {
            if rule.severity == Severity::Low {
                continue;
            }
            if secretscan::placeholder::applies_to(rule.name) {
                contextual.push(rule.name.to_owned());
            }
            patterns.insert(rule.name.to_owned(), rule.regex.clone());
        }
        Scanner {
            patterns: PatternSet::new(&patterns),
            contextual,
            known: Vec::new(),
        }
    }

    /// Also matches these values exactly (name, value): what Toolgate keeps in the keychain.
    pub fn with_known(mut self, values: impl IntoIterator<Item = (String, String)>) -> Self {
        self.known = values
            .into_iter()
            .filter(|(_, v)| v.len() >= KNOWN_MIN_LEN)
            .collect();
        self
    }

    /// What in `text` looks like a secret, in order, overlaps merged.
    pub fn scan(&self, text: &str) -> Vec<Finding> {
        self.scan_with(text, &[])
    }

    /// [`Self::scan`], also matching `extra` values exactly (name, value): secrets learnt after
    /// the scanner was made (those the process has read from the keychain since).
    pub fn scan_with(&self, text: &str, extra: &[(String, String)]) -> Vec<Finding> {
        let mut found = Vec::new();
        for (name, regex) in self.patterns.candidates(text) {
            for m in regex.find_iter(text) {
                let (start, end) = value_span(regex, text, m.start(), m.end());
                if self.contextual.contains(name) && !looks_secret(&text[start..end]) {
                    continue;
                }
                found.push(Finding {
                    rule: name.clone(),
                    start,
                    end,
                });
            }
        }
        let extra = extra.iter().filter(|(_, v)| v.len() >= KNOWN_MIN_LEN);
        for (name, value) in self.known.iter().chain(extra) {
            for (start, _) in text.match_indices(value.as_str()) {
                found.push(Finding {
                    rule: format!("a secret Toolgate keeps ({name})"),
                    start,
                    end: start + value.len(),
                });
            }
        }
        merge(found)
    }

    /// `text` with each finding replaced by `[secret removed: RULE]`, and the findings.
    pub fn redact(&self, text: &str) -> (String, Vec<Finding>) {
        self.redact_with(text, &[])
    }

    /// [`Self::redact`] with `extra` values matched too (see [`Self::scan_with`]).
    pub fn redact_with(&self, text: &str, extra: &[(String, String)]) -> (String, Vec<Finding>) {
        let found = self.scan_with(text, extra);
        if found.is_empty() {
            return (text.to_owned(), found);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for f in &found {
            out.push_str(&text[at..f.start]);
            out.push_str(&format!("[secret removed: {}]", f.rule));
            at = f.end;
        }
        out.push_str(&text[at..]);
        (out, found)
    }

    /// Every string in `value` scanned, each finding with the JSON pointer of its string (keys
    /// are scanned too, under their object's pointer).
    pub fn scan_json(&self, value: &Value) -> Vec<Located> {
        self.scan_json_with(value, &[])
    }

    /// [`Self::scan_json`] with `extra` values matched too (see [`Self::scan_with`]).
    pub fn scan_json_with(&self, value: &Value, extra: &[(String, String)]) -> Vec<Located> {
        let mut out = Vec::new();
        walk(value, String::new(), &mut |pointer, text| {
            for finding in self.scan_with(text, extra) {
                out.push(Located {
                    pointer: pointer.clone(),
                    finding,
                });
            }
        });
        out
    }
}

/// The span of the secret itself: the last capture group that matched (rules capture the
/// value after `password=`), else the whole match.
fn value_span(regex: &Regex, text: &str, start: usize, end: usize) -> (usize, usize) {
    if regex.captures_len() <= 1 {
        return (start, end);
    }
    let Some(caps) = regex.captures(&text[start..end]) else {
        return (start, end);
    };
    (1..caps.len())
        .rev()
        .find_map(|i| caps.get(i))
        .map(|g| (start + g.start(), start + g.end()))
        .unwrap_or((start, end))
}

fn looks_secret(value: &str) -> bool {
    let value = value.trim_matches(|c: char| c == '"' || c == '\'' || c.is_whitespace());
    !secretscan::placeholder::is_placeholder(value)
        && secretscan::shannon_entropy(value) >= MIN_ENTROPY
}

/// Sorted by start; an overlapping finding joins the one before it.
fn merge(mut found: Vec<Finding>) -> Vec<Finding> {
    found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut out: Vec<Finding> = Vec::with_capacity(found.len());
    for f in found {
        match out.last_mut() {
            Some(last) if f.start < last.end => last.end = last.end.max(f.end),
            _ => out.push(f),
        }
    }
    out
}

fn walk(value: &Value, pointer: String, visit: &mut dyn FnMut(&String, &str)) {
    match value {
        Value::String(s) => visit(&pointer, s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, format!("{pointer}/{i}"), visit);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                visit(&pointer, key);
                let escaped = key.replace('~', "~0").replace('/', "~1");
                walk(item, format!("{pointer}/{escaped}"), visit);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
