//! The approval settings a window changes besides the rule editor (`rules.rs`): revoking a
//! rule, and the options (read-only tools allowed without asking, how long a call waits).

use toolgate_policy::PolicySettings;
use toolgate_settings::file::FileError;

use crate::Host;

/// The shortest and longest wait for an answer a user may set, in seconds.
const APPROVAL_TIMEOUT_SECS: (u64, u64) = (5, 86_400);

/// Why a rule was not revoked.
#[derive(Debug, thiserror::Error)]
pub enum RevokeError {
    #[error("no rule with that id; it may already be revoked")]
    NoSuchRule,
    #[error(transparent)]
    Settings(#[from] FileError),
}

impl Host {
    /// Removes saved rule `id`; returns the approval settings.
    pub fn revoke_rule(&self, id: &str) -> Result<PolicySettings, RevokeError> {
        let mut found = false;
        let saved = self.update_settings(|s| found = s.policy.revoke(id).is_ok())?;
        if !found {
            return Err(RevokeError::NoSuchRule);
        }
        Ok(saved.policy)
    }

    /// Saves the approval options; the wait is kept between 5 seconds and a day.
    pub fn set_approval_options(
        &self,
        auto_allow_read_only: bool,
        approval_timeout_secs: u64,
    ) -> Result<PolicySettings, FileError> {
        let (least, most) = APPROVAL_TIMEOUT_SECS;
        let saved = self.update_settings(|s| {
            s.policy.auto_allow_read_only = auto_allow_read_only;
            s.policy.approval_timeout_secs = Some(approval_timeout_secs.clamp(least, most));
        })?;
        Ok(saved.policy)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use toolgate_secrets::MemoryStore;

    use super::*;
    use crate::HostOptions;

    #[tokio::test]
    async fn the_wait_is_kept_in_bounds_and_an_unknown_rule_is_not_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        let saved = host.set_approval_options(true, 0).unwrap();
        assert!(saved.auto_allow_read_only);
        assert_eq!(saved.approval_timeout_secs, Some(5));
        let saved = host.set_approval_options(false, u64::MAX).unwrap();
        assert_eq!(saved.approval_timeout_secs, Some(86_400));
        assert!(matches!(
            host.revoke_rule("no-such-rule"),
            Err(RevokeError::NoSuchRule)
        ));
    }
}
