//! The text as JSON, with what JSONC allows (comments, trailing commas): VS Code's and Zed's
//! files are JSONC, and users paste from them.
//!
//! Comments and trailing commas are blanked in place rather than removed, so serde_json's line
//! and column in an error still point into the user's text.

use serde_json::Value;

use crate::import::error::ImportError;
use toolgate_settings::without_values;

/// The JSON of the text: comments and trailing commas allowed (VS Code's files are JSONC).
pub(in crate::import) fn parse_text(text: &str) -> Result<Value, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ImportError::Empty);
    }
    serde_json::from_str(&strip_jsonc(text)).map_err(|e| ImportError::Json(without_values(&e)))
}

/// `text` with comments and trailing commas blanked out. Every removed byte becomes a space (a
/// newline stays a newline), so serde_json's line and column still point into the user's text.
fn strip_jsonc(text: &str) -> String {
    blank_trailing_commas(&blank_comments(text))
}

fn blank(out: &mut String, c: char) {
    if c == '\n' {
        out.push('\n');
    } else {
        out.extend(std::iter::repeat_n(' ', c.len_utf8()));
    }
}

fn blank_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let end = match (in_string, c, chars.get(i + 1)) {
            (false, '/', Some('/')) => (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len()),
            (false, '/', Some('*')) => (i + 2..chars.len())
                .find(|&j| chars[j] == '*' && chars.get(j + 1) == Some(&'/'))
                .map_or(chars.len(), |j| j + 2),
            _ => {
                out.push(c);
                if in_string && c == '\\' {
                    if let Some(&escaped) = chars.get(i + 1) {
                        out.push(escaped);
                        i += 1;
                    }
                } else if c == '"' {
                    in_string = !in_string;
                }
                i += 1;
                continue;
            }
        };
        for &c in &chars[i..end] {
            blank(&mut out, c);
        }
        i = end;
    }
    out
}

/// Blanks each `,` followed (after white space) by `}` or `]`; comments are already blanked.
fn blank_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            out.push(c);
        } else if c == ','
            && matches!(
                chars[i + 1..].iter().find(|c| !c.is_whitespace()),
                Some('}' | ']')
            )
        {
            out.push(' ');
        } else {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas_are_blanked_in_place() {
        let text = "{\n  // a comment with é and a \"\n  \"a\": \"http://x \\\" // not a comment\", /* block\n */ \"b\": [1, 2, /* x */],\n}";
        let cleaned = strip_jsonc(text);
        assert_eq!(cleaned.len(), text.len());
        assert_eq!(cleaned.lines().count(), text.lines().count());
        let value: Value = serde_json::from_str(&cleaned).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": "http://x \" // not a comment", "b": [1, 2]})
        );
    }
}
