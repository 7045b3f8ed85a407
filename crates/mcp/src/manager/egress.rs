//! Network "hosts": the proxy each start of such a server reaches the world through
//! (`toolgate-egress`), and the names it was refused, which wait on its card for the user's
//! answer (allow once, always, or deny).
//!
//! The methods are in `reach.rs`. The proxy lives as long as the server's process (its
//! `stdio` record holds it); the manager keeps a weak handle to reach the running one, so an
//! answer or a change of the list applies at once, without a restart.

use std::collections::{BTreeSet, HashMap};
use std::sync::Weak;

use toolgate_egress::{Allowance, Proxy};
use toolgate_settings::SandboxSettings;

/// The user's answer to "this server wants to reach HOST".
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum HostAnswer {
    /// Until the server stops.
    Once,
    /// Added to its list (the caller saves it in the settings).
    Always,
    /// Not asked again until the server stops.
    Deny,
}

/// One server's running proxy and the names waiting for an answer.
#[derive(Default)]
pub(super) struct Reach {
    pub(super) proxy: Weak<Proxy>,
    pub(super) wanted: BTreeSet<String>,
    pub(super) denied: BTreeSet<String>,
}

pub(super) type Reaches = std::sync::Mutex<HashMap<String, Reach>>;

pub(super) fn allowance_of(settings: &SandboxSettings) -> Allowance {
    Allowance::new(&settings.hosts, settings.private_addresses)
}
