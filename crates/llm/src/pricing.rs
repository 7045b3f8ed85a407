//! What a model call costs, estimated from the vendors' list prices.
//!
//! The table below is dated: prices change, and a new model is missing until it is added here.
//! A model not in the table has no price, and its calls are counted as "price unknown" rather
//! than as free. The price follows the model id and the wire format (Anthropic's models through
//! the Anthropic format, OpenAI's through the OpenAI format), whichever endpoint serves it: a
//! proxy in front of the vendor usually bills the same, and a local model never has one of
//! these names.
//!
//! To update: change the rows (dollars per million tokens, as the vendors publish them) and
//! [`PRICES_CHECKED`].

use serde::Serialize;

use crate::{Usage, WireFormat};

/// When the table was last checked against the vendors' pricing pages.
pub const PRICES_CHECKED: &str = "2026-11-25";

/// One model's list price, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache (Anthropic's five-minute cache; OpenAI charges the
    /// plain input price, and reports no writes).
    pub cache_write: f64,
}

const fn price(input: f64, cache_write: f64, cache_read: f64, output: f64) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// Anthropic, from platform.claude.com's pricing and model pages: input, five-minute cache
/// write, cache read, output. Claude Haiku 5.5's price is for prompts up to 100,000 tokens (see
/// [`LONG_PROMPT`]).
const ANTHROPIC: &[(&str, Price)] = &[
    ("claude-fable-5-1", price(10.0, 12.5, 0.25, 50.0)),
    ("claude-fable-5", price(10.0, 12.5, 1.0, 50.0)),
    ("claude-opus-5-5", price(4.0, 5.0, 0.20, 20.0)),
    ("claude-opus-5", price(5.0, 6.25, 0.50, 25.0)),
    ("claude-opus-4-8", price(5.0, 6.25, 0.50, 25.0)),
    ("claude-opus-4-7", price(5.0, 6.25, 0.50, 25.0)),
    ("claude-opus-4-6", price(5.0, 6.25, 0.50, 25.0)),
    ("claude-opus-4-5", price(5.0, 6.25, 0.50, 25.0)),
    ("claude-opus-4-1", price(15.0, 18.75, 1.50, 75.0)),
    ("claude-opus-4", price(15.0, 18.75, 1.50, 75.0)),
    ("claude-opus-4-0", price(15.0, 18.75, 1.50, 75.0)),
    ("claude-sonnet-5-5", price(2.0, 2.5, 0.20, 10.0)),
    ("claude-sonnet-5", price(2.0, 2.5, 0.20, 10.0)),
    ("claude-sonnet-4-6", price(3.0, 3.75, 0.30, 15.0)),
    ("claude-sonnet-4-5", price(3.0, 3.75, 0.30, 15.0)),
    ("claude-sonnet-4", price(3.0, 3.75, 0.30, 15.0)),
    ("claude-sonnet-4-0", price(3.0, 3.75, 0.30, 15.0)),
    ("claude-haiku-5-5", price(0.10, 0.125, 0.01, 0.50)),
    ("claude-haiku-4-5", price(1.0, 1.25, 0.10, 5.0)),
    ("claude-3-5-haiku", price(0.80, 1.0, 0.08, 4.0)),
];

/// Models whose prompts past a length cost more: (model, tokens, the price above that).
const LONG_PROMPT: &[(&str, u64, Price)] =
    &[("claude-haiku-5-5", 100_000, price(0.50, 0.625, 0.05, 2.50))];

/// OpenAI, from its pricing page: input, cached input, output (no cache writes).
const OPENAI: &[(&str, Price)] = &[
    ("gpt-5.4", price(2.50, 0.0, 0.25, 15.0)),
    ("gpt-5.4-mini", price(0.75, 0.0, 0.075, 4.50)),
    ("gpt-5.2", price(1.75, 0.0, 0.175, 14.0)),
    ("gpt-5.1", price(1.25, 0.0, 0.125, 10.0)),
    ("gpt-5", price(1.25, 0.0, 0.125, 10.0)),
    ("gpt-5-mini", price(0.25, 0.0, 0.025, 2.0)),
    ("gpt-5-nano", price(0.05, 0.0, 0.005, 0.40)),
    ("gpt-4.1", price(2.0, 0.0, 0.50, 8.0)),
    ("gpt-4.1-mini", price(0.40, 0.0, 0.10, 1.60)),
    ("gpt-4.1-nano", price(0.10, 0.0, 0.025, 0.40)),
    ("gpt-4o", price(2.50, 0.0, 1.25, 10.0)),
    ("gpt-4o-mini", price(0.15, 0.0, 0.075, 0.60)),
    ("o3", price(2.0, 0.0, 0.50, 8.0)),
    ("o4-mini", price(1.10, 0.0, 0.275, 4.40)),
];

/// A model id without its date: `claude-sonnet-4-5-20250929` and `gpt-4o-2024-08-06` are
/// priced as `claude-sonnet-4-5` and `gpt-4o`.
fn base_id(model: &str) -> &str {
    let model = model.trim();
    // Anthropic: `-YYYYMMDD`.
    if let Some((base, date)) = model.rsplit_once('-') {
        if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) {
            return base;
        }
    }
    // OpenAI: `-YYYY-MM-DD`.
    let bytes = model.as_bytes();
    if bytes.len() > 11 {
        let (base, date) = model.split_at(model.len() - 11);
        let d = date.as_bytes();
        let digits = |r: std::ops::Range<usize>| d[r].iter().all(u8::is_ascii_digit);
        if d[0] == b'-' && d[5] == b'-' && d[8] == b'-' && digits(1..5) && digits(6..8) {
            return base;
        }
    }
    model
}

/// The list price of `model` through `format`, if the table knows it, for a prompt of
/// `prompt_tokens` (input, cache reads and writes together).
pub fn price_of(format: WireFormat, model: &str, prompt_tokens: u64) -> Option<Price> {
    let base = base_id(model);
    let table = match format {
        WireFormat::Anthropic => ANTHROPIC,
        WireFormat::OpenAi => OPENAI,
    };
    let (_, price) = table.iter().find(|(id, _)| *id == base)?;
    let long = LONG_PROMPT
        .iter()
        .find(|(id, above, _)| *id == base && prompt_tokens > *above);
    Some(long.map_or(*price, |(_, _, long)| *long))
}

/// The estimated cost of one call's `usage`, in millionths of a dollar; `None` when the price
/// of `model` is not known.
pub fn cost_micro_usd(format: WireFormat, model: &str, usage: &Usage) -> Option<u64> {
    let price = price_of(format, model, usage.total_input())?;
    // Tokens × dollars per million tokens = millionths of a dollar.
    let micro = usage.input_tokens as f64 * price.input
        + usage.output_tokens as f64 * price.output
        + usage.cache_read_tokens as f64 * price.cache_read
        + usage.cache_write_tokens as f64 * price.cache_write;
    Some(micro.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_ids_are_priced_as_their_model() {
        assert_eq!(base_id("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
        assert_eq!(base_id("gpt-4o-2024-08-06"), "gpt-4o");
        assert_eq!(base_id("gpt-4o"), "gpt-4o");
        assert_eq!(base_id("claude-opus-4-20250514"), "claude-opus-4");
        assert_eq!(base_id("o3"), "o3");
    }

    #[test]
    fn a_call_is_priced_by_every_kind_of_token() {
        let usage = Usage {
            input_tokens: 1_000,
            output_tokens: 500,
            cache_read_tokens: 10_000,
            cache_write_tokens: 2_000,
        };
        // Sonnet 4.5: 1,000 × $3 + 500 × $15 + 10,000 × $0.30 + 2,000 × $3.75, per million.
        assert_eq!(
            cost_micro_usd(WireFormat::Anthropic, "claude-sonnet-4-5-20250929", &usage),
            Some(3_000 + 7_500 + 3_000 + 7_500)
        );
        // The same id through the other format, and an unknown model, have no price.
        assert_eq!(
            cost_micro_usd(WireFormat::OpenAi, "claude-sonnet-4-5", &usage),
            None
        );
        assert_eq!(
            cost_micro_usd(WireFormat::OpenAi, "llama3.1:8b", &usage),
            None
        );
        // A price near `gpt-5` is not taken for it.
        assert_eq!(price_of(WireFormat::OpenAi, "gpt-5.9-turbo", 0), None);
    }

    #[test]
    fn long_prompts_cost_more_where_the_vendor_says_so() {
        let short = price_of(WireFormat::Anthropic, "claude-haiku-5-5", 100_000);
        let long = price_of(WireFormat::Anthropic, "claude-haiku-5-5", 100_001);
        assert_eq!(short.map(|p| p.input), Some(0.10));
        assert_eq!(long.map(|p| p.input), Some(0.50));
    }
}
