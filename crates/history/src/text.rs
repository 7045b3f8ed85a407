//! The case folding search uses, for conversations and the audit log alike.

/// Lower-cases char by char. Unlike `str::to_lowercase` it has no context rule (a final `Σ`
/// becoming `ς`), so a word folds the same alone as inside a sentence.
///
/// Its output is stored (`messages.search_text`): a change to it needs a migration that folds
/// the stored text again, or old messages stop matching.
pub(crate) fn fold(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}
