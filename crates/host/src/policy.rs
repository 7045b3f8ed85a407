//! The approval rules as the host keeps them: the saved ones plus this process's grants, made
//! into one shared set after each change (every call reads it, none copies it), the pause, and
//! the [`PolicyStore`] the agents and the servers' requests consult, which saves an "always"
//! answer off the async workers.

use std::sync::{Arc, Mutex, Weak};

use toolgate_agent::{PolicyStore, RuleNotKept};
use toolgate_policy::{PolicySettings, Rule};
use toolgate_settings::file::FileError;

use crate::{lock, Host};

impl Host {
    /// Pauses every tool (denying what waits now) or lifts the pause.
    pub fn set_paused(&self, paused: bool) -> Result<PolicySettings, FileError> {
        let saved = self.update_settings(|s| s.policy.paused = paused)?;
        if paused {
            self.approvals.gate.deny_all("all tools are paused");
        }
        Ok(saved.policy)
    }

    /// The approval rules the agent and the servers' requests consult: the saved ones, read at
    /// every decision, plus this process's grants; "always" answers are saved to the file.
    pub fn policy(self: &Arc<Self>) -> Arc<dyn PolicyStore> {
        Arc::new(HostPolicy(Arc::downgrade(self)))
    }

    /// Adds rules that hold until this process ends and are never saved (`--approve`).
    pub fn grant_for_this_run(&self, rules: impl IntoIterator<Item = Rule>) {
        lock(&self.grants).extend(rules);
        self.policy_changed();
    }

    /// The saved rules and this process's grants, as one set: made once after each change,
    /// then shared by every call.
    pub fn policy_settings(&self) -> Arc<PolicySettings> {
        if let Some(policy) = &*self.policy.read().unwrap_or_else(|p| p.into_inner()) {
            return policy.clone();
        }
        let mut slot = self.policy.write().unwrap_or_else(|p| p.into_inner());
        // Made under the write lock: a change that lands meanwhile clears it after.
        let mut policy = self.settings().policy.clone();
        policy.rules.extend(lock(&self.grants).iter().cloned());
        // The organisation's rules, ranked with the user's by the same precedence, bound to
        // every configured server that runs what they name (never to an id alone). Programs
        // are found as the manager finds them, once it knows the PATH.
        let path = self
            .servers
            .manager
            .known_host_env()
            .map(|env| env.path_var())
            .unwrap_or_else(|| std::env::var_os("PATH").unwrap_or_default());
        let servers = self.settings().servers.clone();
        policy
            .rules
            .extend(self.managed().rules_for(&servers, &path));
        slot.get_or_insert_with(|| Arc::new(policy)).clone()
    }

    /// Forgets the policy set made from the old settings and grants.
    pub(crate) fn policy_changed(&self) {
        *self.policy.write().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// The host's rules, held weakly: the host owns the manager, which owns the requests' gate.
pub(crate) struct HostPolicy(pub(crate) Weak<Host>);

#[async_trait::async_trait]
impl PolicyStore for HostPolicy {
    fn settings(&self) -> Arc<PolicySettings> {
        // A host being dropped has nothing to allow: the defaults ask.
        self.0
            .upgrade()
            .map(|host| host.policy_settings())
            .unwrap_or_default()
    }

    /// Saved to the settings file on the blocking pool (an "always" answer on a call's path
    /// must not hold an async worker through a write and an fsync).
    async fn add_rule(&self, rule: Rule) -> Result<(), RuleNotKept> {
        let host = self.0.upgrade().ok_or(RuleNotKept::Stopping)?;
        let refused = Arc::new(Mutex::new(None));
        let slot = refused.clone();
        host.change_settings(move |s| {
            if let Err(e) = s.policy.add_rule(rule) {
                *lock(&slot) = Some(e);
            }
        })
        .await
        .map_err(|e| RuleNotKept::NotSaved(Box::new(e)))?;
        let refused = lock(&refused).take();
        refused.map_or(Ok(()), |e| Err(e.into()))
    }
}
