//! The gate and its settings: answering waiting requests, pausing every tool, the rules and
//! options, the rule editor's preview and save, and the audit log.

use tauri::State;
use toolgate_agent::{Decision, PendingCall};
use toolgate_history::{AuditFilter, AuditRow};
use toolgate_host::RulePreview;
use toolgate_policy::{PolicySettings, Rule};

use crate::error::{CommandError, Result};
use crate::state::AppState;

#[tauri::command]
pub async fn answer_approval(
    state: State<'_, AppState>,
    id: String,
    decision: Decision,
) -> Result<()> {
    Ok(state.approvals().answer(&id, decision)?)
}

#[tauri::command]
pub async fn pending_approvals(state: State<'_, AppState>) -> Result<Vec<PendingCall>> {
    Ok(state.approvals().waiting())
}

/// Answers every waiting call the same way (approve all / deny all); returns how many.
#[tauri::command]
pub async fn answer_all(state: State<'_, AppState>, decision: Decision) -> Result<usize> {
    Ok(state.approvals().answer_all(&decision))
}

/// What the organisation's managed policy sets: its locks, servers and rules, and where from.
#[tauri::command]
pub async fn managed_policy(state: State<'_, AppState>) -> Result<toolgate_host::ManagedView> {
    Ok(state.managed_view())
}

/// The approval settings: pause-all, the defaults, and every rule.
#[tauri::command]
pub async fn approval_rules(state: State<'_, AppState>) -> Result<PolicySettings> {
    Ok(state.settings().policy.clone())
}

#[tauri::command]
pub async fn revoke_rule(state: State<'_, AppState>, id: String) -> Result<PolicySettings> {
    Ok(state.revoke_rule(&id)?)
}

/// Pauses every tool (waiting calls are denied at once) or lifts the pause.
#[tauri::command]
pub async fn set_paused(state: State<'_, AppState>, paused: bool) -> Result<PolicySettings> {
    Ok(state.set_paused(paused)?)
}

/// The approval options: read-only tools allowed without asking, and how long a call waits.
#[tauri::command]
pub async fn set_approval_options(
    state: State<'_, AppState>,
    auto_allow_read_only: bool,
    approval_timeout_secs: u64,
) -> Result<PolicySettings> {
    Ok(state.set_approval_options(auto_allow_read_only, approval_timeout_secs)?)
}

/// The approval audit log, newest first, filtered.
#[tauri::command]
pub async fn audit_log(state: State<'_, AppState>, filter: AuditFilter) -> Result<Vec<AuditRow>> {
    Ok(state.audit_log(filter).await?)
}

/// Writes the audit log (filtered) as JSON Lines into the app's data folder; returns the file.
#[tauri::command]
pub async fn export_audit(state: State<'_, AppState>, filter: AuditFilter) -> Result<String> {
    Ok(state.export_audit(filter).await?.display().to_string())
}

/// Which of the recent requests in the audit log `rule` would have matched; the rule is
/// checked as saving would check it.
#[tauri::command]
pub async fn preview_rule(state: State<'_, AppState>, rule: Rule) -> Result<RulePreview> {
    let host = state.host.clone();
    tauri::async_runtime::spawn_blocking(move || host.preview_rule(&rule))
        .await?
        .map_err(CommandError::from)
}

/// Saves a rule written or edited by hand (replacing the rule with its id); returns the policy.
#[tauri::command]
pub async fn save_rule(state: State<'_, AppState>, rule: Rule) -> Result<PolicySettings> {
    Ok(state.host.save_rule(rule).await?)
}
