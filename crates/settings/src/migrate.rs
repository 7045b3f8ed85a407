//! Settings written by an older Toolgate: the stored schema version, checked, and the steps
//! that bring each older version up to [`SCHEMA_VERSION`].
//!
//! A step runs only on files older than the version that introduced it, so a file of any age
//! reads as it always did. A new version adds a step here and bumps [`SCHEMA_VERSION`].

use serde_json::Value;

use crate::error::{invalid, SettingsError};
use crate::sandbox::SandboxSettings;
use crate::server::ServerConfig;
use crate::transport::Transport;
use crate::SCHEMA_VERSION;

/// The schema version a stored file says it is; 0 for a file with none, the oldest format.
pub(crate) fn stored_version(value: &Value) -> Result<u64, SettingsError> {
    // No `version` at all is the oldest file (version 1 had none to begin with); one that
    // is there must be a whole number we know how to read, not something to guess about.
    let found = match value.get("version") {
        None => 0,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n,
            _ => {
                return Err(invalid(
                    "version",
                    format!(
                        "must be a whole number from 1 to {SCHEMA_VERSION}, not {}",
                        shown_version(v)
                    ),
                ))
            }
        },
    };
    if found > u64::from(SCHEMA_VERSION) {
        return Err(SettingsError::TooNew {
            found: u32::try_from(found).unwrap_or(u32::MAX),
        });
    }
    Ok(found)
}

/// The steps that change the stored JSON, run before anything is read from it.
pub(crate) fn before_reading(value: &mut Value, found: u64) {
    if found < 2 {
        migrate_v1(value);
    }
}

/// The steps that need the servers as read.
pub(crate) fn after_reading(servers: &mut [ServerConfig], found: u64) {
    if found < 3 {
        migrate_v2(servers);
    }
}

/// Version 1 had only stdio servers, with `command` and `args` at the top of each entry.
fn migrate_v1(value: &mut Value) {
    if let Some(servers) = value.get_mut("servers").and_then(|s| s.as_array_mut()) {
        for server in servers.iter_mut().filter_map(|s| s.as_object_mut()) {
            server
                .entry("transport")
                .or_insert_with(|| Value::from("stdio"));
        }
    }
}

/// Version 3 confines local servers. Servers from before get a sandbox written out, so the file
/// says what applies: the defaults for what each server is, except that a server Toolgate does
/// not know keeps its network ([`SandboxSettings::migrated`]).
fn migrate_v2(servers: &mut [ServerConfig]) {
    for server in servers {
        if server.sandbox.is_none() && matches!(server.transport, Transport::Stdio { .. }) {
            server.sandbox = Some(SandboxSettings::migrated(server));
        }
    }
}

/// A `version` value for an error message: numbers and short strings as written, anything
/// else by its kind (the settings may hold secrets by mistake; a version never should).
fn shown_version(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() <= 16 => format!("the text {s:?}"),
        Value::String(_) => "a text".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProviderKind, ProviderSettings, Settings};

    fn command_of(s: &ServerConfig) -> &str {
        match &s.transport {
            Transport::Stdio { command, .. } => command,
            Transport::Http { url, .. } => url,
        }
    }

    #[test]
    fn migrates_version_1_stdio_entries() {
        let s = Settings::from_json(serde_json::json!({
            "version": 1,
            "servers": [{"id": "fs", "name": "Files", "command": "npx", "args": ["-y", "x"], "enabled": false}],
            "provider": ProviderSettings::defaults_for(ProviderKind::Anthropic),
        }))
        .expect("a version 1 file still reads");
        assert_eq!(s.version, SCHEMA_VERSION);
        assert_eq!(command_of(&s.servers[0]), "npx");
        assert!(!s.servers[0].enabled);
        assert!(s.servers[0].auto_restart);
        assert_eq!(s.servers[0].call_timeout_secs, 60);
    }

    #[test]
    fn a_version_that_is_not_a_known_whole_number_is_refused_with_the_field_named() {
        for (version, shown) in [
            (
                serde_json::json!(18_446_744_073_709_551_616_f64),
                "1.8446744073709552e+19",
            ),
            (serde_json::json!(-1), "-1"),
            (serde_json::json!(1.5), "1.5"),
            (serde_json::json!("2"), "the text \"2\""),
            (serde_json::json!(0), "0"),
            (serde_json::json!(null), "null"),
        ] {
            let err = Settings::from_json(serde_json::json!({"version": version})).unwrap_err();
            let SettingsError::Invalid { field, reason } = &err else {
                panic!("{version}: expected an invalid version, got {err:?}");
            };
            assert_eq!(field, "version");
            assert!(reason.contains("whole number from 1 to"), "{reason}");
            assert!(reason.ends_with(shown), "{version}: {reason}");
        }
        // 2^64 as JSON text is beyond u64 too, read as a float: refused, not taken as old.
        let huge: serde_json::Value =
            serde_json::from_str(r#"{"version": 18446744073709551616}"#).unwrap();
        assert!(matches!(
            Settings::from_json(huge),
            Err(SettingsError::Invalid { .. })
        ));
        // A file that never had a version is the oldest format, read as before.
        let unversioned = Settings::from_json(serde_json::json!({
            "servers": [{"id": "fs", "name": "Files", "command": "npx", "args": ["-y", "x"]}],
            "provider": {"kind": "openai", "baseUrl": "https://api.openai.com/v1", "model": "m"}
        }));
        assert!(unversioned.is_ok(), "{unversioned:?}");
    }

    #[test]
    fn refuses_settings_from_a_newer_version() {
        let err = Settings::from_json(serde_json::json!({"version": 99})).unwrap_err();
        assert_eq!(err, SettingsError::TooNew { found: 99 });
    }
}
