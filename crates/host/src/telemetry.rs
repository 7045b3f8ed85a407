//! The audit exporter's place in the host: which destination (`toolgate_telemetry::resolve`
//! over the organisation's telemetry, the user's settings and this process's environment),
//! started with the host when its history is open, restarted when the answer changes, stopped
//! with a short grace at shutdown, and reported by the doctor.
//!
//! One exporter per data folder sends at a time (the history's cursor names it), so the app,
//! `toolgate serve` and a CLI command beside them do not all send the same entries; whichever
//! runs sends what the others committed.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use toolgate_mcp::doctor::Check;
use toolgate_settings::TelemetrySettings;
use toolgate_telemetry::{resolve, Exporter, Resolution};

use crate::Host;

/// How long a stopping host still sends what is waiting (the rest goes at the next start).
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// The exporter and what it was started for.
#[derive(Default)]
pub(crate) struct Telemetry {
    resolution: Mutex<Option<Resolution>>,
    running: Mutex<Option<Exporter>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Host {
    /// Starts, restarts or stops the exporter as the organisation, the settings and the
    /// environment now say. Nothing happens while the answer is unchanged, or without a
    /// history (there is no audit to send).
    pub fn apply_telemetry(&self) {
        let user = self.settings().telemetry.clone();
        self.apply_telemetry_for(&user);
    }

    /// The host as it is opened: export on when it should be.
    pub(crate) fn with_telemetry(host: Arc<Host>) -> Arc<Host> {
        host.apply_telemetry();
        host
    }

    /// [`Self::apply_telemetry`] with the user's settings given (the caller holds them).
    pub(crate) fn apply_telemetry_for(&self, user: &TelemetrySettings) {
        let Ok(history) = self.history.clone() else {
            return;
        };
        // The organisation's telemetry (the managed policy's), which the user cannot change.
        let managed = self.managed();
        let resolution = resolve(
            managed
                .document
                .telemetry
                .as_ref()
                .and_then(|m| m.otlp.as_deref()),
            user.otlp.as_deref(),
            &|name| std::env::var(name).ok(),
        );
        let mut current = lock(&self.telemetry.resolution);
        if current.as_ref() == Some(&resolution) {
            return;
        }
        // The old one stops at once; what it left is the new one's to send.
        drop(lock(&self.telemetry.running).take());
        match &resolution {
            Resolution::On(config) => {
                tracing::info!(
                    "the audit is exported to {} (from {})",
                    config.logs_url,
                    config.source.describe()
                );
                let secrets = self.secrets.clone();
                let lookup = Box::new(move |value: &str| {
                    toolgate_settings::expand(value, |reference| {
                        toolgate_mcp::lookup_reference(Some(secrets.as_ref()), reference)
                    })
                    .map_err(Into::into)
                });
                *lock(&self.telemetry.running) =
                    Some(Exporter::start(history, config.clone(), lookup));
            }
            Resolution::Unusable { source, problem } => tracing::error!(
                "the audit cannot be exported as {} say: {problem}",
                source.describe()
            ),
            Resolution::Off => {}
        }
        *current = Some(resolution);
    }

    /// Sends what waits for at most `grace`, then stops the exporter (the host is stopping).
    pub(crate) async fn stop_telemetry(&self, grace: Duration) {
        let Some(exporter) = lock(&self.telemetry.running).take() else {
            return;
        };
        let _ = tokio::task::spawn_blocking(move || exporter.stop(grace)).await;
    }

    /// Where the audit is exported now, if anywhere: the destination the history keeps a
    /// cursor for.
    pub fn telemetry_destination(&self) -> Option<String> {
        match &*lock(&self.telemetry.resolution) {
            Some(Resolution::On(config)) => Some(config.destination().to_owned()),
            _ => None,
        }
    }

    /// What the doctor says about export: whether it is on, where to, and whether the collector
    /// keeps up (`waiting`: the entries not yet acknowledged, read off the async workers by the
    /// caller). Header values are never shown.
    pub fn telemetry_checks(&self, waiting: Option<u64>) -> Vec<Check> {
        let resolution = lock(&self.telemetry.resolution).clone();
        let check = |ok: bool, detail: String, fix: Option<&str>| Check {
            name: "audit export (OpenTelemetry)".to_owned(),
            ok,
            detail,
            fix: fix.map(str::to_owned),
        };
        let config = match resolution {
            None | Some(Resolution::Off) => {
                return vec![check(
                    true,
                    "off: the audit stays on this computer".into(),
                    None,
                )]
            }
            Some(Resolution::Unusable { source, problem }) => {
                return vec![check(
                    false,
                    format!(
                        "configured by {} but not sent: {problem}",
                        source.describe()
                    ),
                    Some("Point it at an OTLP/HTTP collector (http/protobuf, usually port 4318)"),
                )]
            }
            Some(Resolution::On(config)) => config,
        };
        let status = lock(&self.telemetry.running).as_ref().map(Exporter::status);
        let waiting = waiting.unwrap_or(0);
        let mut detail = format!("to {} (from {})", config.logs_url, config.source.describe());
        let ok = match &status {
            Some(s) if s.last_error.is_some() => {
                let error = s.last_error.as_deref().unwrap_or_default();
                detail.push_str(&format!("; the collector is not taking it: {error}"));
                false
            }
            Some(s) if !s.sending => {
                detail.push_str("; another Toolgate process on this data folder sends it");
                true
            }
            Some(s) if s.last_success_ms.is_some() => {
                detail.push_str("; the collector acknowledged the last batch");
                true
            }
            Some(_) => {
                detail.push_str("; nothing sent yet by this process");
                true
            }
            None => true,
        };
        detail.push_str(&format!("; {waiting} entries waiting"));
        vec![check(
            ok,
            detail,
            (!ok).then_some("Check that the collector runs and the address and headers are right; nothing is lost meanwhile"),
        )]
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use toolgate_secrets::MemoryStore;
    use toolgate_settings::OtlpSettings;

    use super::*;
    use crate::HostOptions;

    fn otlp(endpoint: &str) -> Option<Box<OtlpSettings>> {
        Some(Box::new(OtlpSettings {
            endpoint: Some(endpoint.to_owned()),
            ..OtlpSettings::default()
        }))
    }

    fn detail(host: &Host) -> String {
        host.telemetry_checks(None)[0].detail.clone()
    }

    /// `dir/policy` as an administrator leaves it, its managed.json saying `document`.
    #[cfg(unix)]
    fn policy(dir: &std::path::Path, document: &serde_json::Value) -> crate::ManagedSource {
        use std::os::unix::fs::MetadataExt;
        let folder = dir.join("policy");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("managed.json"), document.to_string()).unwrap();
        let owner = std::fs::metadata(&folder).unwrap().uid();
        crate::ManagedSource::at(&folder, owner)
    }

    #[cfg(unix)]
    #[tokio::test(flavor = "multi_thread")]
    async fn the_organisations_export_starts_with_the_host_and_the_user_cannot_turn_it_off() {
        let dir = tempfile::tempdir().unwrap();
        let org = serde_json::json!({"telemetry": {"otlp": {"endpoint": "http://127.0.0.1:9"}}});
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            managed: policy(dir.path(), &org),
            ..HostOptions::new(dir.path().join("data"))
        })
        .unwrap();
        assert!(lock(&host.telemetry.running).is_some());
        assert!(
            detail(&host)
                .starts_with("to http://127.0.0.1:9/v1/logs (from your organisation's policy)"),
            "{}",
            detail(&host)
        );
        host.update_settings(|s| {
            s.telemetry.otlp = Some(Box::new(OtlpSettings {
                enabled: Some(false),
                ..OtlpSettings::default()
            }))
        })
        .unwrap();
        assert!(detail(&host).contains("organisation"), "{}", detail(&host));
        // The policy withdrawn: the user's choice applies again as soon as it is read.
        policy(dir.path(), &serde_json::json!({}));
        host.reload_managed().await;
        assert!(detail(&host).starts_with("off"), "{}", detail(&host));
        assert!(lock(&host.telemetry.running).is_none());
    }

    #[test]
    fn the_users_endpoint_follows_the_settings_as_they_change() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        let before = detail(&host);
        host.update_settings(|s| s.telemetry.otlp = otlp("http://127.0.0.1:9"))
            .unwrap();
        assert!(
            detail(&host).contains("(from the settings)"),
            "{}",
            detail(&host)
        );
        // No history, no export: a front end that only edits settings sends nothing.
        let bare = Host::open(HostOptions {
            secrets: Arc::new(MemoryStore::default()),
            open_history: false,
            ..HostOptions::new(dir.path())
        })
        .unwrap();
        assert!(lock(&bare.telemetry.running).is_none());
        assert!(
            before.starts_with("off") || before.contains("OTEL_"),
            "{before}"
        );
    }
}
