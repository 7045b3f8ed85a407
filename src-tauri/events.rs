//! The events the window listens to; what changed is fetched with a command, so they carry
//! nothing. (A turn's events go on its own `Channel`, not here.)

/// Sent whenever a server's status or tools change.
pub const SERVERS_CHANGED: &str = "servers-changed";
/// Sent whenever a request starts or stops waiting at the gate.
pub const APPROVALS_CHANGED: &str = "approvals-changed";
