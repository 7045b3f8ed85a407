//! Which wire format an endpoint speaks. A module of its own because both the formats
//! ([`crate::anthropic`], [`crate::openai`]) and the HTTP provider that calls into them name it:
//! with it in `http.rs` the formats depended on the provider that depends on them.

/// Which wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    Anthropic,
    OpenAi,
}
