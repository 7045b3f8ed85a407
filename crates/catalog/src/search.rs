//! Finding tools by what they do: a local ranking over the visible tools' names, titles,
//! descriptions and argument names, for the `search_tools` tool a model gets when the catalog is
//! too large to send whole. No network and no model: BM25 over words, with a tool's name
//! weighing more than its description.
//!
//! Words are split at anything that is not a letter or digit and at camelCase humps
//! (`createIssue` → `create`, `issue`), lower-cased, and cut to a crude stem (`files`, `filing`
//! → `fil…`), so "list the files" finds `list_directory`'s "Lists files". A query word also
//! matches a longer tool word it begins (`calend` finds `calendar`), at half weight.

use std::collections::HashMap;

use serde_json::Value;

use crate::{Catalog, Entry};

/// Field weights: a word in the tool's name says more about it than one in its description.
const NAME: f64 = 3.0;
const TITLE: f64 = 2.0;
const SERVER: f64 = 1.0;
const DESCRIPTION: f64 = 1.0;
const ARGUMENTS: f64 = 0.75;
/// BM25's saturation and length normalization, at their usual values.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words too common in requests and descriptions to tell tools apart.
const STOP: &[&str] = &[
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "for", "from", "get", "i",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "please", "that", "the", "this",
    "to", "tool", "tools", "use", "using", "want", "with", "you", "your",
];

/// The visible tools of one catalog, as words, ready to rank.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    /// Per entry (in [`Catalog::entries`] order): each word's weighted count.
    docs: Vec<HashMap<String, f64>>,
    /// Per entry: its weighted length.
    lengths: Vec<f64>,
    average: f64,
    /// How many entries hold each word.
    frequency: HashMap<String, usize>,
}

impl SearchIndex {
    pub fn new(catalog: &Catalog) -> Self {
        let docs: Vec<HashMap<String, f64>> = catalog.entries().iter().map(document).collect();
        let lengths: Vec<f64> = docs.iter().map(|d| d.values().sum()).collect();
        let average = if lengths.is_empty() {
            1.0
        } else {
            (lengths.iter().sum::<f64>() / lengths.len() as f64).max(1.0)
        };
        let mut frequency: HashMap<String, usize> = HashMap::new();
        for doc in &docs {
            for word in doc.keys() {
                *frequency.entry(word.clone()).or_default() += 1;
            }
        }
        Self {
            docs,
            lengths,
            average,
            frequency,
        }
    }

    /// The indexes (into [`Catalog::entries`]) of the tools that best match `query`, best
    /// first, at most `limit`; ties keep the catalog's order. A query with no known word finds
    /// nothing.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let terms = words(query);
        let count = self.docs.len() as f64;
        let idf = |df: usize| (1.0 + (count - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, doc)| {
                let norm = K1 * (1.0 - B + B * self.lengths[i] / self.average);
                let score: f64 = terms
                    .iter()
                    .map(|term| {
                        let exact = doc.get(term).map(|tf| (term, *tf, 1.0));
                        // A query word that begins a longer word of the tool, at half weight.
                        let prefix = || {
                            (term.len() >= 3)
                                .then(|| {
                                    doc.iter()
                                        .filter(|(w, _)| {
                                            w.len() > term.len() && w.starts_with(term.as_str())
                                        })
                                        .map(|(w, tf)| (w, *tf, 0.5))
                                        .max_by(|a, b| a.1.total_cmp(&b.1))
                                })
                                .flatten()
                        };
                        exact.or_else(prefix).map_or(0.0, |(word, tf, weight)| {
                            let df = self.frequency.get(word).copied().unwrap_or(1);
                            weight * idf(df) * tf * (K1 + 1.0) / (tf + norm)
                        })
                    })
                    .sum();
                (score > 0.0).then_some((i, score))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.into_iter().take(limit).map(|(i, _)| i).collect()
    }
}

/// One tool as weighted words.
fn document(entry: &Entry) -> HashMap<String, f64> {
    let mut doc: HashMap<String, f64> = HashMap::new();
    let mut add = |text: &str, weight: f64| {
        for word in words(text) {
            *doc.entry(word).or_default() += weight;
        }
    };
    add(&entry.model_name, NAME);
    if entry.tool.name != entry.model_name {
        add(&entry.tool.name, NAME);
    }
    if let Some(title) = entry
        .tool
        .title
        .as_deref()
        .or(entry.tool.annotations.title.as_deref())
    {
        add(title, TITLE);
    }
    add(&entry.server_name, SERVER);
    add(&entry.server_id, SERVER);
    add(&entry.tool.description, DESCRIPTION);
    arguments(&entry.tool.input_schema, &mut |text, weight| {
        add(text, weight)
    });
    doc
}

/// The names and descriptions of a schema's properties, one level down and in nested objects.
fn arguments(schema: &Value, add: &mut dyn FnMut(&str, f64)) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        add(name, ARGUMENTS);
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            add(description, ARGUMENTS / 2.0);
        }
        arguments(property, add);
    }
}

/// Lower-cased stems of the words of `text`, stop words left out.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    let mut flush = |word: &mut String| {
        if !word.is_empty() {
            let lower = word.to_lowercase();
            // Single letters (the `s` of `file's`) say nothing.
            if lower.chars().count() > 1 && !STOP.contains(&lower.as_str()) {
                out.push(stem(&lower));
            }
            word.clear();
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            // camelCase: a capital after a small letter starts a new word.
            if c.is_uppercase() && previous_lower {
                flush(&mut word);
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            word.push(c);
        } else {
            flush(&mut word);
            previous_lower = false;
        }
    }
    flush(&mut word);
    out
}

/// A crude English stem: enough that `files`, `file` and `filing` meet, never so much that
/// short words vanish.
fn stem(word: &str) -> String {
    let long = |stem: &str| stem.chars().count() >= 3;
    if let Some(stem) = word.strip_suffix("ies").filter(|s| long(s)) {
        return format!("{stem}y");
    }
    if let Some(stem) = word.strip_suffix("es").filter(|s| {
        long(s)
            && ["s", "x", "z", "ch", "sh"]
                .iter()
                .any(|end| s.ends_with(end))
    }) {
        return stem.to_owned();
    }
    for suffix in ["ing", "ed"] {
        if let Some(stem) = word.strip_suffix(suffix).filter(|s| long(s)) {
            return stem.to_owned();
        }
    }
    match word.strip_suffix('s') {
        Some(stem) if long(stem) && !stem.ends_with('s') => stem.to_owned(),
        _ => word.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CatalogSettings, SourceServer, SourceTool};
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value) -> SourceTool {
        SourceTool {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema: schema,
            annotations: Default::default(),
        }
    }

    fn catalog() -> Catalog {
        let servers = vec![
            SourceServer {
                id: "github".into(),
                name: "GitHub".into(),
                enabled: true,
                tools: vec![
                    tool(
                        "create_issue",
                        "Open a new issue in a repository.",
                        json!({"type": "object", "properties": {"title": {"type": "string"}}}),
                    ),
                    tool(
                        "list_pull_requests",
                        "Lists pull requests of a repository.",
                        json!({"type": "object"}),
                    ),
                ],
            },
            SourceServer {
                id: "files".into(),
                name: "Files".into(),
                enabled: true,
                tools: vec![
                    tool(
                        "read_file",
                        "Read the complete contents of a file.",
                        json!({"type": "object", "properties": {"path": {"type": "string", "description": "Where the file is"}}}),
                    ),
                    tool(
                        "list_directory",
                        "Lists files and folders in a directory.",
                        json!({"type": "object"}),
                    ),
                ],
            },
            SourceServer {
                id: "calendar".into(),
                name: "Calendar".into(),
                enabled: true,
                tools: vec![tool(
                    "createEvent",
                    "Adds an event to the user's calendar.",
                    json!({"type": "object"}),
                )],
            },
        ];
        Catalog::build(&servers, &CatalogSettings::default()).expect("builds")
    }

    fn names(catalog: &Catalog, hits: Vec<usize>) -> Vec<String> {
        hits.into_iter()
            .map(|i| catalog.entries()[i].model_name.clone())
            .collect()
    }

    #[test]
    fn tools_are_found_by_what_they_do() {
        let catalog = catalog();
        let index = SearchIndex::new(&catalog);
        assert_eq!(
            names(&catalog, index.search("open an issue on github", 1)),
            ["create_issue"]
        );
        assert_eq!(
            names(&catalog, index.search("show the files in a folder", 1)),
            ["list_directory"]
        );
        assert_eq!(
            names(&catalog, index.search("read a file's contents", 1)),
            ["read_file"]
        );
        assert_eq!(
            names(&catalog, index.search("schedule a calendar event", 1)),
            ["createEvent"]
        );
        assert_eq!(
            names(&catalog, index.search("calend", 1)),
            ["createEvent"],
            "a prefix finds"
        );
        assert!(
            index.search("the of to", 5).is_empty(),
            "stop words find nothing"
        );
        assert!(index.search("quantum teleportation", 5).is_empty());
        assert_eq!(index.search("list", 10).len(), 2, "every match, no more");
    }

    #[test]
    fn words_split_at_case_and_punctuation_and_meet_their_plurals() {
        assert_eq!(
            words("createIssue list_files HTTP2Server file's"),
            ["create", "issue", "list", "file", "http2", "server", "file"]
        );
        assert_eq!(stem("directories"), "directory");
        assert_eq!(stem("matches"), "match");
        assert_eq!(stem("listing"), "list");
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("is"), "is");
    }
}
