//! The values in a text, as provenance compares them.
//!
//! A text is cut into words at white space and punctuation that no address, identifier or
//! number carries, lower-cased (so `Alice@Example.com` and `alice@example.com` are one value).
//! Each word is kept as it is and, where its kind has one, in a normal form:
//!
//! - a web address without its scheme, a leading `www.`, or a final `/`
//!   (`https://www.Example.com/a/` is `example.com/a`);
//! - an IBAN without the spaces people put between its groups of four (`GB29 NWBK 6016 …`);
//! - a number written with separators by its digits alone, when it has at least
//!   [`LONG_NUMBER`] of them (`+1 (555) 010-9999`, `5550109999`).
//!
//! Words are also paired with the next word ([`Words::pairs`]), so a value of several words
//! ("Riverside View Hotel") is found only where its words stand together.
//!
//! What a value is *made of* matters too: a word of letters alone ("hotel", "tomorrow") says
//! little about where a value came from, while an address, an IBAN, a path or a long number
//! does ([`Kind::Identifier`]).

/// Digits a number needs before its separators are dropped to compare it.
pub const LONG_NUMBER: usize = 7;

/// What a word is, for how much it says about where a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Letters, or a short number: common to many texts.
    Plain,
    /// An e-mail address, a web address, an IBAN, a path, or a long number.
    Identifier,
}

/// The words of a text in order, each in its compared form.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Words {
    pub words: Vec<(String, Kind)>,
}

impl Words {
    /// Consecutive pairs of words, as one key (`"riverside view"`).
    pub fn pairs(&self) -> impl Iterator<Item = String> + '_ {
        self.words
            .windows(2)
            .map(|w| format!("{} {}", w[0].0, w[1].0))
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

/// Characters that end a word: white space and punctuation no value carries.
fn breaks(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            ',' | ';'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '<'
                | '>'
                | '"'
                | '\''
                | '`'
                | '|'
                | '!'
                | '*'
                | '\\'
        )
}

/// Punctuation that closes a sentence rather than belonging to the word before it.
fn trailing(c: char) -> bool {
    matches!(c, '.' | ':' | '?' | '=' | '&' | '#' | '-' | '_' | '+')
}

/// The words of `text`, at most `limit` of them.
pub fn words(text: &str, limit: usize) -> Words {
    let mut out: Vec<(String, Kind)> = Vec::new();
    for raw in text.split(breaks) {
        if out.len() >= limit {
            break;
        }
        let word = raw
            .trim_end_matches(trailing)
            .trim_start_matches(['.', ':']);
        if word.is_empty() {
            continue;
        }
        let word = word.to_lowercase();
        let (word, kind) = normal(&word);
        if !word.is_empty() {
            out.push((word, kind));
        }
    }
    join_groups(&mut out);
    Words { words: out }
}

/// One word in its compared form, and its kind.
fn normal(word: &str) -> (String, Kind) {
    if let Some(rest) = word
        .strip_prefix("https://")
        .or_else(|| word.strip_prefix("http://"))
    {
        return (web(rest), Kind::Identifier);
    }
    if word.starts_with("www.") {
        return (web(word), Kind::Identifier);
    }
    if is_email(word) {
        return (word.to_owned(), Kind::Identifier);
    }
    if is_date(word) {
        return (word.to_owned(), Kind::Plain);
    }
    if word.contains('/') && word.len() > 1 {
        // A path, or an address without its scheme (`example.com/pay`).
        let trimmed = word.trim_end_matches('/');
        return (trimmed.to_owned(), Kind::Identifier);
    }
    let digits = word.chars().filter(char::is_ascii_digit).count();
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    if is_iban(word) {
        return (word.to_owned(), Kind::Identifier);
    }
    if digits >= LONG_NUMBER && letters == 0 {
        return (
            word.chars().filter(char::is_ascii_digit).collect(),
            Kind::Identifier,
        );
    }
    if digits > 0 && letters > 0 && word.len() >= 6 {
        // A mixed identifier: an order number, a file id, a password.
        return (word.to_owned(), Kind::Identifier);
    }
    if word.contains('.') && letters > 0 && word.split('.').all(|p| !p.is_empty()) {
        // A host name or a file name (`evil.example`, `report.pdf`).
        return (web(word), Kind::Identifier);
    }
    (word.to_owned(), Kind::Plain)
}

/// A web address without its scheme, `www.` or final `/`.
fn web(rest: &str) -> String {
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    rest.trim_end_matches('/').to_owned()
}

/// A date or a time of numbers (`2024-05-01`, `01/05/2024`, `10:30`): common to many texts.
fn is_date(word: &str) -> bool {
    let parts: Vec<&str> = word.split(['-', '/', '.', ':']).collect();
    let numbers = parts
        .iter()
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let short = parts.iter().filter(|p| p.len() <= 2).count();
    let years = parts.iter().filter(|p| p.len() == 4).count();
    numbers
        && match parts.len() {
            2 => short == 2,
            3 => short == 3 || (short == 2 && years == 1),
            _ => false,
        }
}

pub fn is_email(word: &str) -> bool {
    let Some((user, host)) = word.split_once('@') else {
        return false;
    };
    !user.is_empty() && host.contains('.') && !host.starts_with('.') && !host.contains('@')
}

/// Two letters, two digits, then 11 to 30 letters and digits (ISO 13616's shape).
fn is_iban(word: &str) -> bool {
    let b = word.as_bytes();
    (15..=34).contains(&b.len())
        && b[..2].iter().all(u8::is_ascii_alphabetic)
        && b[2..4].iter().all(u8::is_ascii_digit)
        && b[4..].iter().all(u8::is_ascii_alphanumeric)
}

/// An IBAN (or a long number) written in groups: the groups joined into one word, which
/// replaces them.
fn join_groups(words: &mut Vec<(String, Kind)>) {
    let mut i = 0;
    while i < words.len() {
        let start = &words[i].0;
        let iban_start = start.len() == 4
            && start.as_bytes()[..2].iter().all(u8::is_ascii_alphabetic)
            && start.as_bytes()[2..].iter().all(u8::is_ascii_digit);
        let number_start = start.bytes().all(|b| b.is_ascii_digit()) && start.len() <= 4;
        if !(iban_start || number_start) {
            i += 1;
            continue;
        }
        let mut joined = start.clone();
        let mut end = i + 1;
        // An IBAN's groups are four characters, the last one may be shorter and of digits;
        // a number's groups are digits.
        while end < words.len() {
            let group = &words[end].0;
            let digits = group.bytes().all(|b| b.is_ascii_digit());
            let full = group.len() == 4 && group.bytes().all(|b| b.is_ascii_alphanumeric());
            let fits = match iban_start {
                true => full || (digits && group.len() < 4),
                false => digits && group.len() <= 4,
            };
            if !fits || group.is_empty() {
                break;
            }
            joined.push_str(group);
            end += 1;
            if iban_start && group.len() < 4 {
                break;
            }
        }
        let whole = if iban_start {
            is_iban(&joined)
        } else {
            joined.len() >= LONG_NUMBER && end - i >= 2
        };
        if whole {
            words.splice(i..end, [(joined, Kind::Identifier)]);
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Vec<String> {
        words(text, 1000)
            .words
            .into_iter()
            .map(|(w, _)| w)
            .collect()
    }

    fn ids(text: &str) -> Vec<String> {
        words(text, 1000)
            .words
            .into_iter()
            .filter(|(_, k)| *k == Kind::Identifier)
            .map(|(w, _)| w)
            .collect()
    }

    #[test]
    fn addresses_and_numbers_compare_in_one_form_however_they_are_written() {
        assert_eq!(
            ids("Send it to Mark.Black-2134@Gmail.com, please."),
            ["mark.black-2134@gmail.com"]
        );
        assert_eq!(
            ids("see https://www.Secure-Systems-252.com/pay/ now"),
            ["secure-systems-252.com/pay"]
        );
        assert_eq!(
            ids("(www.secure-systems-252.com)"),
            ["secure-systems-252.com"]
        );
        assert_eq!(
            ids("IBAN: GB29 NWBK 6016 1331 9268 19."),
            ["gb29nwbk60161331926819"]
        );
        assert_eq!(ids("US133000000121212121212"), ["us133000000121212121212"]);
        assert_eq!(ids("call +1 555 010 9999"), ["5550109999"]);
        assert_eq!(ids("or 555-010-9999"), ["5550109999"]);
        assert_eq!(ids("the file /home/u/notes.txt"), ["/home/u/notes.txt"]);
        assert_eq!(ids("order a1b2c3d4"), ["a1b2c3d4"]);
        // Words of letters, dates' short numbers and amounts are plain.
        assert!(ids("Pay 98.70 on 2024-05-01 to the landlord").is_empty());
    }

    #[test]
    fn words_are_cut_at_punctuation_no_value_carries() {
        assert_eq!(
            of("Riverside View Hotel: \"best\" (really)!"),
            ["riverside", "view", "hotel", "best", "really"]
        );
        let pairs: Vec<String> = words("Riverside View Hotel", 10).pairs().collect();
        assert_eq!(pairs, ["riverside view", "view hotel"]);
    }

    #[test]
    fn a_text_is_read_only_up_to_its_limit() {
        assert_eq!(words("a b c d e", 3).words.len(), 3);
    }
}
