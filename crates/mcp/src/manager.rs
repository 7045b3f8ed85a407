//! The supervisor: one entry per configured server, one task per live connection.
//!
//! Each start bumps the entry's `generation`. A connection task only ever changes its entry while
//! the generation is still its own, so a stop, restart or reconfiguration that happened meanwhile
//! always wins and stale tasks cannot resurrect a server.
//!
//! Each part uses only parts listed before it:
//! - `backoff.rs`: when a crashed server starts again (pure);
//! - `entry.rs`: one server's record, and what a stop takes from it;
//! - `registry.rs`: [`ServerManager`], its entries, generations, version and snapshot;
//! - `reasons.rs`: why a start failed, in words;
//! - `listen.rs`: the `subscriptions/listen` stream of a 2026-07-28 connection;
//! - `connect.rs`: spawn or dial, handshake and first listing;
//! - `calls.rs`, `tasks.rs`: tool calls, and those a server runs as tasks;
//! - `reads.rs`: resources and prompts read, questions answered first;
//! - `passing.rs`: a connected client's completions and resource subscriptions;
//! - `supervision.rs`: each connection's task, and the restart a crash asks for;
//! - `lifecycle.rs`: add, remove, start, stop and restart.

mod backoff;
mod baseline;
mod calls;
mod connect;
mod egress;
mod entry;
mod lifecycle;
mod listen;
mod passing;
mod pinned;
mod quarantine;
mod reach;
mod reads;
mod reasons;
mod registry;
mod sign_in;
mod supervision;
mod tasks;
mod updates;

pub use egress::HostAnswer;
pub use lifecycle::RootsChange;
pub use registry::{Admission, ManagerOptions, Refusal, ServerManager};
