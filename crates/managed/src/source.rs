//! Where the managed policy is read from, and who may have written it.
//!
//! Each OS's management tools write to their own place: Linux `/etc/toolgate/managed.json` and
//! `/etc/toolgate/managed.d/*.json`; macOS the managed preferences of the app's id and
//! `/Library/Application Support/Toolgate/managed.json`; Windows
//! `HKLM\SOFTWARE\Policies\Toolgate` and `%ProgramData%\Toolgate\managed.json`. Nothing the
//! user controls (no environment variable, no setting) moves or hides them: only the code that
//! makes the host chooses a [`Source`], which is how tests point it at a folder of their own.
//!
//! On Unix a file, and the folder it is in, must belong to the owner the source names (root)
//! and be writable by nobody else; a file the user could have written is refused whole, with a
//! warning, never half-applied. The macOS and Windows readers are unit-tested on fixtures here
//! but have not been run on those systems.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

/// The places a host reads its managed policy from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Files read in this order; then every `*.json` of each folder of `drop_ins`, by name.
    pub files: Vec<PathBuf>,
    pub drop_ins: Vec<PathBuf>,
    /// A macOS managed-preferences property list.
    pub preferences: Option<PathBuf>,
    /// Read `HKLM\SOFTWARE\Policies\Toolgate` (Windows).
    pub registry: bool,
    /// The owner (uid) files and their folders must have on Unix: root (0), or in tests the
    /// test's own user.
    pub owner: u32,
    /// The organisation's signed remote policy as the system keeps it (put there by the
    /// management tools, or by `root`), checked like the files: the last verified copy the
    /// user cannot delete or replace, used when the user's own kept copy is gone or bad and
    /// the document cannot be fetched.
    pub remote_copy: Option<PathBuf>,
}

/// One place a policy came from, for the doctor and the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub place: String,
    pub modified: Option<SystemTime>,
}

/// Why a place's policy is not trusted: someone other than its owner could have written it.
#[derive(Debug, thiserror::Error)]
pub enum Untrusted {
    #[error("{}: {error}", place.display())]
    Unreadable {
        place: PathBuf,
        error: std::io::Error,
    },
    #[error("{} belongs to user {uid}, not {owner}", place.display())]
    Owner {
        place: PathBuf,
        uid: u32,
        owner: u32,
    },
    #[error("{} can be changed by other users (mode {mode:o})", place.display())]
    Writable { place: PathBuf, mode: u32 },
}

/// Why the system's copy of the remote policy cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RemoteCopyError {
    #[error("{}: {why}", path.display())]
    Untrusted { path: PathBuf, why: Untrusted },
    #[error("{}: {error}", path.display())]
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Why what a property list or the Windows registry holds does not read as a policy document.
#[derive(Debug, thiserror::Error)]
pub enum PolicyDocumentError {
    #[error("not a property list: {0}")]
    NotPropertyList(plist::Error),
    /// The property list has a value JSON cannot hold.
    #[error("{0}")]
    NotJsonValue(serde_json::Error),
    #[error("ManagedPolicy is not JSON: {0}")]
    WrappedNotJson(serde_json::Error),
    /// A registry value (`Policy`, or one per top-level key) that is not JSON.
    #[error("the value {name} is not JSON: {error}")]
    RegistryValueNotJson {
        name: String,
        error: serde_json::Error,
    },
    /// The registry key could not be opened.
    #[error("{0}")]
    Registry(std::io::Error),
}

/// What the places held: each usable document as JSON with its origin, and why others were
/// refused.
#[derive(Debug, Default)]
pub struct Read {
    pub documents: Vec<(Origin, Value)>,
    pub warnings: Vec<String>,
}

impl Source {
    /// This OS's places, as its management tools write them.
    pub fn system() -> Self {
        Source::for_os(std::env::consts::OS)
    }

    /// The places of the OS named as [`std::env::consts::OS`] names it (`macos`, `windows`;
    /// any other is read as Linux), so each OS's layout is tested on any of them.
    pub fn for_os(os: &str) -> Self {
        let mut source = Source::none();
        match os {
            "macos" => {
                source.preferences = Some(PathBuf::from(
                    "/Library/Managed Preferences/dev.toolgate.desktop.plist",
                ));
                source.files = vec![PathBuf::from(
                    "/Library/Application Support/Toolgate/managed.json",
                )];
                source.remote_copy = Some(PathBuf::from(
                    "/Library/Application Support/Toolgate/managed-remote.json",
                ));
            }
            "windows" => {
                source.registry = true;
                let data = std::env::var_os("ProgramData")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from(r"C:\ProgramData"));
                source.files = vec![data.join("Toolgate").join("managed.json")];
                source.remote_copy = Some(data.join("Toolgate").join("managed-remote.json"));
            }
            _ => {
                source.files = vec![PathBuf::from("/etc/toolgate/managed.json")];
                source.drop_ins = vec![PathBuf::from("/etc/toolgate/managed.d")];
                source.remote_copy = Some(PathBuf::from("/var/lib/toolgate/managed-remote.json"));
            }
        }
        source
    }

    /// No managed policy at all.
    pub fn none() -> Self {
        Source {
            files: Vec::new(),
            drop_ins: Vec::new(),
            preferences: None,
            registry: false,
            owner: 0,
            remote_copy: None,
        }
    }

    /// `dir/managed.json`, `dir/managed.d/*.json` and `dir/managed-remote.json`, owned by
    /// `owner`: the Linux layout in a folder of the caller's choosing (tests).
    pub fn at(dir: &Path, owner: u32) -> Self {
        Source {
            files: vec![dir.join("managed.json")],
            drop_ins: vec![dir.join("managed.d")],
            remote_copy: Some(dir.join("managed-remote.json")),
            owner,
            ..Source::none()
        }
    }

    /// Every file this source would read, in order.
    pub fn paths(&self) -> Vec<PathBuf> {
        let mut paths = self.files.clone();
        for dir in &self.drop_ins {
            let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            names.sort();
            paths.extend(names);
        }
        paths.extend(self.preferences.clone());
        paths
    }

    /// What the files look like now (modification time and size of each that exists): a
    /// change here means the policy is read again.
    pub fn stamp(&self) -> Vec<(PathBuf, Option<(SystemTime, u64)>)> {
        let mut paths = self.paths();
        paths.extend(self.drop_ins.iter().cloned());
        // A new system copy of the remote policy is applied as soon as it lands.
        paths.extend(self.remote_copy.iter().cloned());
        paths
            .into_iter()
            .map(|p| {
                let seen = std::fs::metadata(&p)
                    .ok()
                    .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
                (p, seen)
            })
            .collect()
    }

    /// Reads every place, in order.
    pub fn read(&self) -> Read {
        let mut read = Read::default();
        for path in self.paths() {
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let origin = Origin {
                place: path.display().to_string(),
                modified: meta.modified().ok(),
            };
            if let Err(why) = self.trusted(&path) {
                read.warnings.push(format!(
                    "the managed policy {} was not applied: {why}; it must be owned by root and writable by no one else",
                    path.display()
                ));
                continue;
            }
            let parsed = std::fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    if Some(&path) == self.preferences.as_ref() {
                        from_plist(&bytes).map_err(|e| e.to_string())
                    } else {
                        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
                    }
                })
                .and_then(|value| {
                    crate::Document::parse(value.clone())
                        .map(|_| value)
                        .map_err(|e| e.0)
                });
            match parsed {
                Ok(value) => read.documents.push((origin, value)),
                Err(why) => read.warnings.push(format!(
                    "the managed policy {} was not applied: {why}",
                    path.display()
                )),
            }
        }
        if self.registry {
            match registry::read() {
                Ok(Some(value)) => match crate::Document::parse(value.clone()) {
                    Ok(_) => read.documents.push((
                        Origin {
                            place: registry::PLACE.to_owned(),
                            modified: None,
                        },
                        value,
                    )),
                    Err(e) => read.warnings.push(format!(
                        "the managed policy in {} was not applied: {e}",
                        registry::PLACE
                    )),
                },
                Ok(None) => {}
                Err(e) => read.warnings.push(format!(
                    "the managed policy in {} could not be read: {e}",
                    registry::PLACE
                )),
            }
        }
        read
    }

    /// The system's copy of the remote policy, when there is one that only the owner could
    /// have written.
    pub fn read_remote_copy(&self) -> Option<Result<Vec<u8>, RemoteCopyError>> {
        let path = self.remote_copy.as_ref()?;
        if !path.exists() {
            return None;
        }
        let read = || {
            self.trusted(path)
                .map_err(|why| RemoteCopyError::Untrusted {
                    path: path.clone(),
                    why,
                })?;
            std::fs::read(path).map_err(|error| RemoteCopyError::Unreadable {
                path: path.clone(),
                error,
            })
        };
        Some(read())
    }

    /// Whether `path` and its folder could only have been written by the owner.
    #[cfg(unix)]
    fn trusted(&self, path: &Path) -> Result<(), Untrusted> {
        use std::os::unix::fs::MetadataExt;
        let folder = path.parent().unwrap_or(Path::new("/"));
        let mut checked = vec![path.to_path_buf(), folder.to_path_buf()];
        // A drop-in's folder sits in the main folder: that one too.
        if self.drop_ins.iter().any(|d| d == folder) {
            checked.extend(folder.parent().map(Path::to_path_buf));
        }
        for place in checked {
            let meta = match std::fs::metadata(&place) {
                Ok(meta) => meta,
                Err(error) => return Err(Untrusted::Unreadable { place, error }),
            };
            if meta.uid() != self.owner {
                return Err(Untrusted::Owner {
                    place,
                    uid: meta.uid(),
                    owner: self.owner,
                });
            }
            if meta.mode() & 0o022 != 0 {
                return Err(Untrusted::Writable {
                    place,
                    mode: meta.mode() & 0o777,
                });
            }
        }
        Ok(())
    }

    /// Windows: `%ProgramData%` and `HKLM` are writable by administrators only; the file's
    /// access list is not checked here (not verified on Windows).
    #[cfg(not(unix))]
    fn trusted(&self, _path: &Path) -> Result<(), Untrusted> {
        Ok(())
    }
}

/// A managed-preferences property list as the policy document: a dictionary whose keys are the
/// document's (`servers`, `rules`, `settings`, …), or one key `ManagedPolicy` holding the
/// document as a JSON string (how some MDM tools can only deliver it).
pub fn from_plist(bytes: &[u8]) -> Result<Value, PolicyDocumentError> {
    let value: plist::Value =
        plist::from_bytes(bytes).map_err(PolicyDocumentError::NotPropertyList)?;
    let json = serde_json::to_value(&value).map_err(PolicyDocumentError::NotJsonValue)?;
    match json.get("ManagedPolicy") {
        Some(Value::String(text)) => {
            serde_json::from_str(text).map_err(PolicyDocumentError::WrappedNotJson)
        }
        _ => Ok(json),
    }
}

/// The registry's values under the policy key as the policy document: a `Policy` value holding
/// the whole document as JSON, or one value per top-level key, each holding that key's JSON.
pub fn from_registry_values(
    values: &[(String, String)],
) -> Result<Option<Value>, PolicyDocumentError> {
    let not_json = |name: &str| {
        let name = name.to_owned();
        move |error| PolicyDocumentError::RegistryValueNotJson { name, error }
    };
    if values.is_empty() {
        return Ok(None);
    }
    if let Some((_, text)) = values.iter().find(|(name, _)| name == "Policy") {
        return serde_json::from_str(text)
            .map(Some)
            .map_err(not_json("Policy"));
    }
    let mut document = serde_json::Map::new();
    for (name, text) in values {
        let value = serde_json::from_str(text).map_err(not_json(name))?;
        document.insert(name.clone(), value);
    }
    Ok(Some(Value::Object(document)))
}

mod registry {
    pub const PLACE: &str = r"HKLM\SOFTWARE\Policies\Toolgate";

    use super::PolicyDocumentError;

    #[cfg(windows)]
    pub fn read() -> Result<Option<serde_json::Value>, PolicyDocumentError> {
        use winreg::enums::HKEY_LOCAL_MACHINE;
        let key = match winreg::RegKey::predef(HKEY_LOCAL_MACHINE)
            .open_subkey(r"SOFTWARE\Policies\Toolgate")
        {
            Ok(key) => key,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(PolicyDocumentError::Registry(e)),
        };
        let values: Vec<(String, String)> = key
            .enum_values()
            .flatten()
            .filter_map(|(name, value)| {
                key.get_value::<String, _>(&name).ok().map(|text| {
                    let _ = value;
                    (name, text)
                })
            })
            .collect();
        super::from_registry_values(&values)
    }

    #[cfg(not(windows))]
    pub fn read() -> Result<Option<serde_json::Value>, PolicyDocumentError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_property_list_reads_as_the_document() {
        let plist = br#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
  <key>settings</key><dict><key>sandbox</key><true/><key>approvalTimeoutSecs</key><integer>120</integer></dict>
  <key>servers</key><dict><key>deny</key><array><dict><key>npm</key><string>bad-server</string></dict></array></dict>
</dict></plist>"#;
        let value = from_plist(plist).expect("reads");
        let d = crate::Document::parse(value).expect("valid");
        assert_eq!(d.settings.sandbox, Some(true));
        assert_eq!(d.settings.approval_timeout_secs, Some(120));
        assert_eq!(d.servers.deny[0].npm.as_deref(), Some("bad-server"));

        let wrapped = br#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>ManagedPolicy</key><string>{"settings": {"autoAllowReadOnly": false}}</string></dict></plist>"#;
        let d = crate::Document::parse(from_plist(wrapped).expect("reads")).expect("valid");
        assert_eq!(d.settings.auto_allow_read_only, Some(false));
    }

    #[test]
    fn registry_values_read_as_the_document() {
        let one = vec![(
            "Policy".to_owned(),
            r#"{"servers": {"allowUserServers": false}}"#.to_owned(),
        )];
        let d = crate::Document::parse(from_registry_values(&one).unwrap().unwrap()).unwrap();
        assert!(!d.servers.allow_user_servers);
        let per_key = vec![
            ("settings".to_owned(), r#"{"sandbox": true}"#.to_owned()),
            (
                "registry".to_owned(),
                r#"{"url": "https://r.example", "registryOnly": true}"#.to_owned(),
            ),
        ];
        let value = from_registry_values(&per_key).unwrap().unwrap();
        assert_eq!(value["registry"]["registryOnly"], json!(true));
        assert!(crate::Document::parse(value).is_ok());
        assert!(matches!(from_registry_values(&[]), Ok(None)));
        assert!(from_registry_values(&[("settings".into(), "{".into())]).is_err());
    }

    /// `/Library/Managed Preferences/dev.toolgate.desktop.plist` as a configuration profile
    /// with Toolgate's preferences leaves it: the XML form an administrator uploads to the MDM
    /// (or `defaults export` prints), and the binary form macOS writes (made from the XML one by
    /// Python's plistlib, not by the reader's own crate).
    const XML: &[u8] = include_bytes!("../fixtures/macos/dev.toolgate.desktop.xml.plist");
    const BINARY: &[u8] = include_bytes!("../fixtures/macos/dev.toolgate.desktop.binary.plist");
    /// A binary property list whose one key `ManagedPolicy` holds the document as JSON text.
    const WRAPPED: &[u8] = include_bytes!("../fixtures/macos/dev.toolgate.desktop.wrapped.plist");

    #[test]
    fn macos_reads_the_managed_preferences_of_the_apps_bundle_id() {
        let source = Source::for_os("macos");
        let preferences = source.preferences.clone().expect("a property list");
        assert_eq!(
            preferences,
            Path::new("/Library/Managed Preferences/dev.toolgate.desktop.plist")
        );
        assert_eq!(
            source.files,
            [Path::new(
                "/Library/Application Support/Toolgate/managed.json"
            )]
        );
        assert!(source.drop_ins.is_empty() && !source.registry);
        assert_eq!(source.owner, 0, "root must own them");
        assert_eq!(
            source.paths().last(),
            Some(&preferences),
            "the profile's preferences are read last, over the file"
        );
        // A profile's preferences land in the file named after the bundle id it targets: the
        // app's, from tauri.conf.json.
        let conf = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tauri.conf.json"),
        )
        .expect("tauri.conf.json");
        let conf: Value = serde_json::from_str(&conf).expect("JSON");
        assert_eq!(
            preferences.file_stem().and_then(|s| s.to_str()),
            conf["identifier"].as_str()
        );

        let linux = Source::for_os("linux");
        assert_eq!(linux.preferences, None);
        assert_eq!(linux.files, [Path::new("/etc/toolgate/managed.json")]);
        let windows = Source::for_os("windows");
        assert!(windows.registry && windows.preferences.is_none());
    }

    #[test]
    fn a_profiles_xml_preferences_read_as_the_whole_document() {
        let d = crate::Document::parse(from_plist(XML).expect("reads")).expect("valid");
        assert!(d.servers.allow_user_servers);
        assert_eq!(d.servers.deny[0].npm.as_deref(), Some("@evil/mcp-server"));
        assert_eq!(
            d.servers.deny[1].url.as_deref(),
            Some("https://*.untrusted.example/*")
        );
        let corp = &d.servers.required[0];
        assert_eq!(
            (corp.id.as_str(), corp.name.as_str()),
            ("corp", "Corp knowledge base")
        );
        let toolgate_settings::Transport::Stdio { command, args, .. } = &corp.transport else {
            panic!("a local server: {:?}", corp.transport);
        };
        assert_eq!(command, "/Library/Application Support/Corp/bin/corp-mcp");
        assert_eq!(args, &["--workspace", "/Users/Shared/Corp Docs"]);
        assert_eq!(d.rules[0].to_rule().id, "org:no-push");
        assert_eq!(
            d.rules[0].note.as_deref(),
            Some("No pushes from agents & assistants")
        );
        assert_eq!(d.settings.approval_timeout_secs, Some(300));
        assert_eq!(d.settings.auto_allow_read_only, Some(false));
        assert_eq!(d.settings.sandbox, Some(true));
        assert_eq!(
            d.settings.network_at_most,
            Some(toolgate_settings::NetworkAccess::Loopback)
        );
        assert_eq!(d.settings.review_results["fetch"], ["*"]);
        let registry = d.registry.expect("a registry");
        assert_eq!(
            registry.url.as_deref(),
            Some("https://mcp-registry.corp.example/")
        );
        assert!(!registry.registry_only);
    }

    #[test]
    fn a_binary_property_list_reads_as_its_xml_form() {
        assert!(BINARY.starts_with(b"bplist00"), "the fixture is binary");
        assert_eq!(
            from_plist(BINARY).expect("binary"),
            from_plist(XML).expect("XML")
        );
        let d = crate::Document::parse(from_plist(WRAPPED).expect("reads")).expect("valid");
        assert!(!d.servers.allow_user_servers);
        assert_eq!(d.settings.sandbox, Some(true));
        assert_eq!(
            d.settings.default_decision,
            Some(toolgate_policy::DefaultDecision::Deny)
        );
    }

    #[test]
    fn what_is_not_the_policy_is_refused_with_its_reason() {
        assert!(from_plist(b"{\"settings\": {}}")
            .unwrap_err()
            .to_string()
            .starts_with("not a property list"));
        let text = String::from_utf8(XML.to_vec()).expect("UTF-8");
        // A key the document does not know (here one a profile's payload has, misplaced)
        // refuses it whole, naming the key.
        let extra = text.replacen(
            "<dict>\n\t<key>registry</key>",
            "<dict>\n\t<key>PayloadUUID</key>\n\t<string>5E1C0B1A-8C3D-4C7E-9B0A-2F6A1D3E4B5C</string>\n\t<key>registry</key>",
            1,
        );
        assert_ne!(extra, text);
        let e = crate::Document::parse(from_plist(extra.as_bytes()).expect("reads")).unwrap_err();
        assert!(e.0.contains("PayloadUUID"), "{e}");
        let wrapped = br#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>ManagedPolicy</key><string>{"settings": </string></dict></plist>"#;
        assert!(from_plist(wrapped)
            .unwrap_err()
            .to_string()
            .starts_with("ManagedPolicy is not JSON"));
    }

    /// The whole read of a preferences file, as on a Mac but in a folder of the test's own,
    /// owned by the test's user.
    #[cfg(unix)]
    #[test]
    fn the_preferences_file_is_read_as_a_property_list_and_checked_like_the_others() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = std::env::temp_dir().join(format!(
            "toolgate-managed-preferences-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("folder");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("mode");
        let owner = std::fs::metadata(&dir).expect("folder").uid();
        let plist = dir.join("dev.toolgate.desktop.plist");
        std::fs::write(&plist, BINARY).expect("write");
        std::fs::set_permissions(&plist, std::fs::Permissions::from_mode(0o644)).expect("mode");
        let source = Source {
            preferences: Some(plist.clone()),
            owner,
            ..Source::none()
        };
        let read = source.read();
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        assert_eq!(read.documents.len(), 1);
        assert_eq!(read.documents[0].0.place, plist.display().to_string());
        assert_eq!(read.documents[0].1, from_plist(XML).expect("XML"));

        // Writable by others: refused whole, with the reason.
        std::fs::set_permissions(&plist, std::fs::Permissions::from_mode(0o666)).expect("mode");
        let read = source.read();
        assert!(read.documents.is_empty());
        assert!(
            read.warnings[0].contains("can be changed by other users"),
            "{:?}",
            read.warnings
        );
        // Not a property list: refused, with the reason.
        std::fs::set_permissions(&plist, std::fs::Permissions::from_mode(0o644)).expect("mode");
        std::fs::write(&plist, b"servers = nothing").expect("write");
        let read = source.read();
        assert!(read.documents.is_empty());
        assert!(
            read.warnings[0].contains("not a property list"),
            "{:?}",
            read.warnings
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
