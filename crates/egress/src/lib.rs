//! Network access by host name, for a local server in network mode "hosts".
//!
//! The server's sandbox lets it reach one place only: 127.0.0.1 at the port of a [`Proxy`]
//! made for it (`toolgate-sandbox`'s `Network::Proxy`), and its `HTTPS_PROXY`, `HTTP_PROXY`
//! and `ALL_PROXY` point there. The proxy accepts `CONNECT host:port` (HTTPS and anything else
//! tunnelled) and plain HTTP requests in absolute form (`GET http://host/…`), and opens the
//! connection only when:
//!
//! 1. the name is on the server's list ([`Allowance`]: `api.github.com`, `*.notion.so` for
//!    any name under `notion.so`), or was allowed for this run of the server;
//! 2. unless the server may reach private addresses, every address the name resolves to is a
//!    public one ([`public`]): a listed name that resolves into the local network (DNS
//!    rebinding, or a name that was never public) is refused.
//!
//! The connection is made to the address that was checked, never resolved again. A refused
//! request is answered `403` with the reason in words, and reported ([`Refusal`]) so the
//! server's card can ask the user about the name.
//!
//! What this does not catch: a program that ignores the proxy variables cannot connect at
//! all (the sandbox refuses it), which shows as a connection error rather than a question;
//! and what the server sends to a listed host is its own business.

mod allowance;
mod proxy;
pub mod public;

pub use allowance::{normalise, Allowance, HostPattern, PatternError};
pub use proxy::{Proxy, Refusal};
