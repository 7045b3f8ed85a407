//! Where the values a conversation has seen came from, so the gate can tell a call built from
//! the user's own words from one built from what an outsider wrote.
//!
//! Every text that enters a conversation is read once into an index of its words
//! ([`tokens`]; the user's words also by pairs): the user's own words (each message, and the values the user typed when editing
//! a call's arguments), and each tool result, marked as *outside content* when its tool or
//! server reads the outside world ([`crate::exposure::source`]) and as *another result*
//! otherwise. For a call the gate then asks two questions, both by index lookups, so the cost
//! of a call does not grow with the conversation:
//!
//! - **Is every decisive argument the user's?** ([`Provenance::proven`]) A recipient, an
//!   address, an account, a web address, a path or a password ([`decisive`]) counts as the
//!   user's only when every one of its words is in the user's own words, a value of several
//!   words with its words together. A value the model built from outside content (reversed,
//!   split, decoded) is in nobody's words and is never proof.
//! - **Does an argument carry a value only outside content brought?**
//!   ([`Provenance::outside_only`]) A decisive argument whose words are all in outside content
//!   and not all in the user's words or another result; or an identifier anywhere in the
//!   arguments (an e-mail or web address, an IBAN, a path, a long number) that only outside
//!   content holds. The answer names the value, the tool and call that brought it and where in
//!   the result it was.
//!
//! Bounds: each text is read up to [`WORDS_PER_TEXT`] words and the index holds at most
//! [`MAX_KEYS`] keys; past that, outside content is no longer indexed and
//! [`Provenance::overflowed`] says so (the gate then treats nothing as proven).

pub mod decisive;
pub mod tokens;

use std::collections::HashMap;

use serde_json::Value;

use decisive::{collect, Decisive};
use tokens::{Kind, Words};

/// Words read from one text.
pub const WORDS_PER_TEXT: usize = 200_000;
/// Keys (words and pairs of words) the index of one conversation holds.
pub const MAX_KEYS: usize = 2_000_000;

/// What kind of result a text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Outside content: what the tool read, someone else wrote.
    Outside,
    /// The user's own data: a result of a server the user marked as a trusted source, from a
    /// tool not marked open-world. Proof, as the user's words are.
    Trusted,
    /// Any other result.
    Other,
}

impl Source {
    /// The origin of a text of this kind at `place`.
    pub fn origin(self, place: Place) -> Origin {
        match self {
            Source::Outside => Origin::Outside(place),
            Source::Trusted => Origin::Trusted(place),
            Source::Other => Origin::Result(place),
        }
    }
}

/// Where a text came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The user's own words: a message, or a value typed into a call's arguments.
    User,
    /// A result of a trusted source ([`Source::Trusted`]).
    Trusted(Place),
    /// A tool result that is outside content: what the tool read, someone else wrote.
    Outside(Place),
    /// Any other tool result.
    Result(Place),
}

/// Which call brought a text, and where in its result it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub tool: String,
    pub server: String,
    pub call_id: String,
    /// A JSON pointer into the result (`/content/0/text`).
    pub at: String,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} on {} (call {}, at {})",
            self.tool, self.server, self.call_id, self.at
        )
    }
}

/// Who holds a key: bits for the user, trusted sources and other results, and the first
/// outside text.
#[derive(Debug, Clone, Copy, Default)]
struct Holders {
    user: bool,
    trusted: bool,
    result: bool,
    /// Index into [`Provenance::places`] of the first outside text holding it.
    outside: Option<u32>,
}

/// A value of the arguments that only outside content brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideValue {
    /// Where in the arguments (a JSON pointer).
    pub at: String,
    /// The value, cut to a length a question can show.
    pub value: String,
    /// The result that brought it.
    pub from: Place,
}

impl std::fmt::Display for OutsideValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the value “{}” at {} came only from outside content: a result of {}",
            self.value, self.at, self.from
        )
    }
}

/// What one conversation has seen, by where it came from.
#[derive(Debug, Default)]
pub struct Provenance {
    keys: HashMap<String, Holders>,
    places: Vec<Place>,
    overflowed: bool,
    /// Whether any of the user's own words were seen (a connected client's are not).
    heard_user: bool,
}

impl Provenance {
    /// Reads `text` into the index as coming from `origin`.
    pub fn observe(&mut self, text: &str, origin: &Origin) {
        if self.overflowed {
            return;
        }
        let words = tokens::words(text, WORDS_PER_TEXT);
        self.heard_user |= *origin == Origin::User && !words.is_empty();
        let place = match origin {
            Origin::Outside(place) => {
                self.places.push(place.clone());
                Some((self.places.len() - 1) as u32)
            }
            _ => None,
        };
        let note = |key: String, keys: &mut HashMap<String, Holders>| {
            let holders = keys.entry(key).or_default();
            match origin {
                Origin::User => holders.user = true,
                Origin::Trusted(_) => holders.trusted = true,
                Origin::Result(_) => holders.result = true,
                Origin::Outside(_) => {
                    holders.outside.get_or_insert(place.unwrap_or_default());
                }
            }
        };
        // Pairs of words only from the user: a value of several words is proven only where the
        // user wrote its words together; results are indexed by word, which keeps reading a
        // long result cheap.
        if *origin == Origin::User {
            for key in words.pairs() {
                note(key, &mut self.keys);
            }
        }
        for (word, _) in words.words {
            note(word, &mut self.keys);
        }
        if self.keys.len() > MAX_KEYS {
            tracing::warn!(
                "this conversation has seen more than {MAX_KEYS} distinct words; outside content is no longer indexed"
            );
            self.overflowed = true;
        }
    }

    /// Reads every string of a tool result (`content` blocks, `structuredContent`, `_meta`),
    /// each with its place in the result.
    pub fn observe_result(&mut self, result: &Value, source: Source, place: Place) {
        let mut strings = Vec::new();
        collect(result, String::new(), &mut strings);
        for (at, text) in strings {
            let place = Place {
                at,
                ..place.clone()
            };
            self.observe(text, &source.origin(place));
        }
    }

    /// Whether the user's own words were seen at all: in Toolgate's chat and the CLI, not for a
    /// connected client, whose user's words never cross the gate.
    pub fn heard_user(&self) -> bool {
        self.heard_user
    }

    /// Whether the index stopped growing (see the module's bounds).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Whether every word of `value` is held by someone `holds` accepts.
    fn all_held(&self, words: &Words, holds: impl Fn(&Holders) -> bool) -> bool {
        !words.is_empty()
            && words
                .words
                .iter()
                .all(|(key, _)| self.keys.get(key).is_some_and(&holds))
    }

    /// Whether the user's own words hold `value`, its words together, or a trusted source
    /// holds all of its words.
    pub fn said_by_user(&self, value: &str) -> bool {
        let words = tokens::words(value, 64);
        let said = self.all_held(&words, |h| h.user)
            && words
                .pairs()
                .all(|pair| self.keys.get(&pair).is_some_and(|h| h.user));
        said || self.all_held(&words, |h| h.trusted)
    }

    /// Whether the call's decisive arguments are all the user's: `None` when the call has no
    /// decisive argument (nothing to prove), else the first that is not.
    pub fn proven<'a>(&self, decisive: &'a [Decisive<'a>]) -> Result<(), Option<&'a Decisive<'a>>> {
        if decisive.is_empty() || self.overflowed {
            return Err(None);
        }
        match decisive.iter().find(|d| !self.said_by_user(d.value)) {
            Some(d) => Err(Some(d)),
            None => Ok(()),
        }
    }

    /// A value of the call's arguments that only outside content brought: a decisive value
    /// whose words all come from outside content and not from the user or another result, or
    /// an identifier anywhere in the arguments that only outside content holds.
    pub fn outside_only(
        &self,
        arguments: &Value,
        decisive: &[Decisive<'_>],
    ) -> Option<OutsideValue> {
        for d in decisive {
            let words = tokens::words(d.value, 64);
            let from_outside = self.all_held(&words, |h| h.outside.is_some());
            let from_others = self.all_held(&words, |h| h.user || h.trusted || h.result);
            if from_outside && !from_others {
                let first = words.words.first().map(|(w, _)| w.as_str()).unwrap_or("");
                return Some(self.found(&d.at, d.value, first));
            }
        }
        self.identifier(arguments, |h| {
            h.is_some_and(|h| h.outside.is_some() && !h.user && !h.trusted && !h.result)
        })
        .map(|(at, word)| self.found(&at, &word, &word))
    }

    /// An identifier in the arguments (an e-mail or web address, an IBAN, a path, a long
    /// number) that no text the conversation has seen holds: the model made it (or rebuilt it
    /// from pieces: reversed, spelled out, joined). Where it is and its value.
    pub fn nobodys(&self, arguments: &Value) -> Option<(String, String)> {
        if self.overflowed {
            return None;
        }
        self.identifier(arguments, |h| h.is_none())
            .map(|(at, word)| (at, shown(&word)))
    }

    /// An identifier in the arguments that only a result holds, not the user's words and not
    /// outside content: data of the user's that a read would carry to its server. Where it is
    /// and its value.
    pub fn private_in(&self, arguments: &Value) -> Option<(String, String)> {
        self.identifier(arguments, |h| {
            h.is_some_and(|h| (h.result || h.trusted) && !h.user && h.outside.is_none())
        })
        .map(|(at, word)| (at, shown(&word)))
    }

    /// The first identifier anywhere in the arguments whose holders (none when no text held
    /// it) `pick` picks: where it is and the word, in its compared form.
    fn identifier(
        &self,
        arguments: &Value,
        pick: impl Fn(Option<&Holders>) -> bool,
    ) -> Option<(String, String)> {
        let mut strings = Vec::new();
        collect(arguments, String::new(), &mut strings);
        for (at, text) in strings {
            for (word, kind) in tokens::words(text, 4_096).words {
                if kind == Kind::Identifier && pick(self.keys.get(&word)) {
                    return Some((at, word));
                }
            }
        }
        None
    }

    fn found(&self, at: &str, value: &str, key: &str) -> OutsideValue {
        let from = self
            .keys
            .get(key)
            .and_then(|h| h.outside)
            .and_then(|i| self.places.get(i as usize))
            .cloned()
            .unwrap_or_else(|| Place {
                tool: "a tool".into(),
                server: "a server".into(),
                call_id: "?".into(),
                at: "?".into(),
            });
        OutsideValue {
            at: at.to_owned(),
            value: shown(value),
            from,
        }
    }
}

/// The strings of `edited` that `original` does not hold: what the user typed when editing a
/// call's arguments (the values left as the model wrote them are not the user's words).
pub fn typed<'a>(original: &Value, edited: &'a Value) -> Vec<&'a str> {
    let mut before = Vec::new();
    collect(original, String::new(), &mut before);
    let mut after = Vec::new();
    collect(edited, String::new(), &mut after);
    after
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| !before.iter().any(|(_, b)| b == s))
        .collect()
}

/// A value cut to what a question can show.
pub fn shown(value: &str) -> String {
    const SHOWN: usize = 48;
    if value.chars().count() <= SHOWN {
        value.to_owned()
    } else {
        format!("{}…", value.chars().take(SHOWN).collect::<String>())
    }
}

#[cfg(test)]
mod tests;
