//! What front ends use of the running Toolgate besides [`Host`](crate::Host)'s own methods:
//! a few services, each with only the calls the app, the tray, the CLI and the gateway make.
//! The parts behind them (the server manager, the approval gate) stay inside the host, so no
//! front end reaches around it (ARCHITECTURE.md, `crates/host`).

mod approvals;
mod servers;

pub use approvals::Approvals;
pub use servers::Servers;
