//! The approval gate: everything between a request and the server it would reach.
//!
//! Whatever asks (the chat's model through `toolgate_agent`'s turn loop, a connected client
//! through the gateway, a server asking back with sampling, a question or a page), the request is
//! held here and settled by one pure step:
//!
//! - [`Gatekeeper`]: the gate as one conversation meets it (its rules, audit, exposure and
//!   wait), which the agent asks for a call's verdict.
//! - [`wait`]: the [`Gate`] where a request waits for a person's answer (window, tray,
//!   terminal), by an unguessable id, answered once; a dropped gate denies.
//! - [`approval`]: the rules' view of a call ([`PolicyStore`]) and the audit writes.
//! - [`gatekeeper`]: [`gatekeeper::settle`], the one decision from a [`gatekeeper::Held`] kind,
//!   its verdict, how the wait ended and who asks, to the audit entry, the event, the rule to
//!   save and whether it goes ahead; tested as a table (`tests/settle_table.rs`).
//! - [`exposure`]: what untrusted content a conversation has read and which calls could send
//!   data out.
//! - [`secrets`]: secrets found in arguments, and removed from every part of a result.
//! - [`requests`]: a server's sampling, questions and pages, through the same wait and settle.
//! - [`rules`]: an edited rule bound to the server it names; [`tray`]: the wait as the tray
//!   shows it; [`facts`]: a waiting request's facts in plain text, the same in the tray's
//!   submenu and the desktop notification.
//!
//! **Invariant:** nothing here runs a tool. A caller runs a request only on
//! [`gatekeeper::Next::Run`], which only an allow verdict or a person's yes produces.

pub mod approval;
pub mod exposure;
pub mod facts;
pub mod gatekeeper;
mod keeper;
pub mod provenance;
pub mod requests;
pub mod rules;
pub mod secrets;
pub mod tray;
pub mod wait;

pub use approval::{MemoryPolicy, PolicyStore, RuleNotKept};
pub use exposure::Exposure;
pub use facts::{Asking, Facts};
pub use keeper::Gatekeeper;
pub use requests::{
    link_of, open_in_browser, BrowserError, LinkError, ModelSource, NoModel, ServerRequestGate,
};
pub use rules::{bind_edited, BindError};
pub use wait::{
    Announcer, Asked, Decision, Gate, GateError, Lasting, Link, PendingCall, Reach, RequestKind,
};
