//! Windows: an AppContainer per server, inside the Job Object every server already joins
//! (`toolgate-guard`). **Not verified**: this type-checks for `x86_64-pc-windows-gnu` and has
//! never run; Toolgate's process supervision does not build for Windows yet either.
//!
//! The design, step by step:
//!
//! 1. **A profile per server**, `Toolgate.Server.<id>` ([`container_name`]): created with
//!    `CreateAppContainerProfile`, or, when it exists, its SID derived by name.
//! 2. **Files.** A process in an AppContainer reads only what is granted to its SID (or to "ALL
//!    APPLICATION PACKAGES", which covers Windows and Program Files). Each folder of the
//!    [`Confinement`] is granted to the container's SID by an inheritable ACE: read and execute
//!    for `read`, full control for `write` ([`AppContainer::grant`]). The user's profile, the
//!    keychain (Credential Manager) and other apps' data are not granted, so they stay closed.
//! 3. **Network** by capability SIDs ([`capabilities`]): `Any` gets `internetClient` and
//!    `privateNetworkClientServer`; `None` gets none. An AppContainer cannot reach loopback
//!    unless an administrator exempts it (`CheckNetIsolation LoopbackExempt`), so `Loopback` is
//!    `None` here, and the card says so.
//! 4. **The process** is created by `CreateProcessW` with an extended startup info holding
//!    `PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES` ([`AppContainer::capabilities`]), then
//!    assigned to the Job Object. `std::process::Command` cannot pass that attribute on stable
//!    Rust, so this spawn is the part still to write, together with the rest of Windows
//!    supervision.
#![allow(unsafe_code)]

use std::os::windows::ffi::OsStrExt;
use std::path::Path;

use windows_sys::Win32::Foundation::{LocalFree, ERROR_SUCCESS, HLOCAL};
use windows_sys::Win32::Security::Authorization::{
    GetNamedSecurityInfoW, SetEntriesInAclW, SetNamedSecurityInfoW, EXPLICIT_ACCESS_W,
    GRANT_ACCESS, SE_FILE_OBJECT, TRUSTEE_IS_SID, TRUSTEE_IS_WELL_KNOWN_GROUP, TRUSTEE_W,
};
use windows_sys::Win32::Security::Isolation::{
    CreateAppContainerProfile, DeriveAppContainerSidFromAppContainerName,
};
use windows_sys::Win32::Security::{
    CreateWellKnownSid, FreeSid, WinCapabilityInternetClientSid,
    WinCapabilityPrivateNetworkClientServerSid, ACL, DACL_SECURITY_INFORMATION, PSID,
    SECURITY_CAPABILITIES, SID_AND_ATTRIBUTES, SUB_CONTAINERS_AND_OBJECTS_INHERIT,
    WELL_KNOWN_SID_TYPE,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ALL_ACCESS, FILE_GENERIC_EXECUTE, FILE_GENERIC_READ,
};
use windows_sys::Win32::System::SystemServices::SE_GROUP_ENABLED;

use crate::{Confinement, Network, SandboxError};

/// The AppContainer profile name of a server.
pub fn container_name(server: &str) -> String {
    format!("Toolgate.Server.{server}")
}

/// The capability SIDs a network mode asks for.
pub fn capabilities(network: Network) -> Vec<WELL_KNOWN_SID_TYPE> {
    match network {
        Network::Any => vec![
            WinCapabilityInternetClientSid,
            WinCapabilityPrivateNetworkClientServerSid,
        ],
        // Loopback needs an administrator's exemption: closed instead.
        Network::None | Network::Loopback | Network::Proxy(_) => Vec::new(),
    }
}

fn wide(text: &std::ffi::OsStr) -> Vec<u16> {
    text.encode_wide().chain(std::iter::once(0)).collect()
}

/// One server's AppContainer: its SID and the capability SIDs its process gets.
pub struct AppContainer {
    sid: PSID,
    capabilities: Vec<Vec<u8>>,
    attributes: Vec<SID_AND_ATTRIBUTES>,
}

impl Drop for AppContainer {
    fn drop(&mut self) {
        // SAFETY: the SID was allocated by the AppContainer API, which documents FreeSid.
        unsafe { FreeSid(self.sid) };
    }
}

impl AppContainer {
    /// Creates (or finds) the server's profile and grants it the confinement's folders.
    pub fn prepare(server: &str, confinement: &Confinement) -> Result<Self, SandboxError> {
        let name = wide(std::ffi::OsStr::new(&container_name(server)));
        let display = wide(std::ffi::OsStr::new(&format!("Toolgate server {server}")));
        let mut sid: PSID = std::ptr::null_mut();
        // SAFETY: the strings are NUL-terminated and outlive the calls; `sid` is written by them.
        let created = unsafe {
            CreateAppContainerProfile(
                name.as_ptr(),
                display.as_ptr(),
                display.as_ptr(),
                std::ptr::null(),
                0,
                &mut sid,
            )
        };
        if created < 0 {
            // Most often it exists already (HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)).
            // SAFETY: as above.
            let derived =
                unsafe { DeriveAppContainerSidFromAppContainerName(name.as_ptr(), &mut sid) };
            if derived < 0 {
                return Err(SandboxError::Prepare(format!(
                    "no AppContainer profile for {server} (HRESULT {created:#x})"
                )));
            }
        }
        let mut container = Self {
            sid,
            capabilities: Vec::new(),
            attributes: Vec::new(),
        };
        for kind in capabilities(confinement.network) {
            let mut size = 68u32; // SECURITY_MAX_SID_SIZE
            let mut buffer = vec![0u8; size as usize];
            // SAFETY: `buffer` has `size` bytes for the SID.
            let ok = unsafe {
                CreateWellKnownSid(
                    kind,
                    std::ptr::null_mut(),
                    buffer.as_mut_ptr().cast(),
                    &mut size,
                )
            };
            if ok == 0 {
                return Err(SandboxError::Prepare("a capability SID".to_owned()));
            }
            container.capabilities.push(buffer);
        }
        container.attributes = container
            .capabilities
            .iter_mut()
            .map(|sid| SID_AND_ATTRIBUTES {
                Sid: sid.as_mut_ptr().cast(),
                Attributes: SE_GROUP_ENABLED as u32,
            })
            .collect();
        for path in &confinement.read {
            container.grant(path, FILE_GENERIC_READ | FILE_GENERIC_EXECUTE)?;
        }
        for path in &confinement.write {
            container.grant(path, FILE_ALL_ACCESS)?;
        }
        Ok(container)
    }

    /// Adds an inheritable ACE granting `rights` on `path` to the container's SID. A path that
    /// does not exist is skipped, as on Linux.
    pub fn grant(&self, path: &Path, rights: u32) -> Result<(), SandboxError> {
        if !path.exists() {
            return Ok(());
        }
        let name = wide(path.as_os_str());
        let mut old: *mut ACL = std::ptr::null_mut();
        let mut descriptor = std::ptr::null_mut();
        // SAFETY: `name` is NUL-terminated; the out-pointers are ours; the descriptor is freed
        // with LocalFree below, as the API documents.
        unsafe {
            let read = GetNamedSecurityInfoW(
                name.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut old,
                std::ptr::null_mut(),
                &mut descriptor,
            );
            if read != ERROR_SUCCESS {
                return Err(SandboxError::Prepare(format!(
                    "reading the permissions of {} failed ({read})",
                    path.display()
                )));
            }
            let access = EXPLICIT_ACCESS_W {
                grfAccessPermissions: rights,
                grfAccessMode: GRANT_ACCESS,
                grfInheritance: SUB_CONTAINERS_AND_OBJECTS_INHERIT,
                Trustee: TRUSTEE_W {
                    TrusteeForm: TRUSTEE_IS_SID,
                    TrusteeType: TRUSTEE_IS_WELL_KNOWN_GROUP,
                    ptstrName: self.sid.cast(),
                    ..TRUSTEE_W::default()
                },
            };
            let mut new: *mut ACL = std::ptr::null_mut();
            let merged = SetEntriesInAclW(1, &access, old, &mut new);
            let written = if merged == ERROR_SUCCESS {
                SetNamedSecurityInfoW(
                    name.as_ptr(),
                    SE_FILE_OBJECT,
                    DACL_SECURITY_INFORMATION,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    new,
                    std::ptr::null(),
                )
            } else {
                merged
            };
            LocalFree(new as HLOCAL);
            LocalFree(descriptor as HLOCAL);
            if written != ERROR_SUCCESS {
                return Err(SandboxError::Prepare(format!(
                    "granting {} to the server's AppContainer failed ({written})",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// The value of `PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES` for the server's process; it
    /// points into `self`, which must outlive the `CreateProcessW` call.
    pub fn capabilities(&mut self) -> SECURITY_CAPABILITIES {
        SECURITY_CAPABILITIES {
            AppContainerSid: self.sid,
            Capabilities: self.attributes.as_mut_ptr(),
            CapabilityCount: u32::try_from(self.attributes.len()).unwrap_or(0),
            Reserved: 0,
        }
    }
}
