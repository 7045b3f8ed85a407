//! Windows: a named pipe, `\\.\pipe\toolgate-<user>-<folder>`, whose security descriptor
//! admits the current user only (a protected DACL with one entry: the user's SID, full access),
//! remote clients refused. A new instance is created as each client connects, so the next one
//! never finds the name missing.
//!
//! A pipe has no half-close: when the host closes the shim's stdin the shim closes the whole
//! connection, and the gateway cancels what that client still had running, as it does for a
//! client that leaves. The shim's I/O is overlapped (tokio's client), since synchronous
//! reads and writes on one pipe handle would wait for each other.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeServer, ServerOptions};
use tokio_util::sync::CancellationToken;
use windows_sys::Win32::Foundation::{CloseHandle, LocalFree, HANDLE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, TokenUser, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY,
    TOKEN_USER,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
use windows_sys::Win32::System::WindowsProgramming::GetUserNameW;

use super::{folder_key, Ended, Opened, Transport};
use crate::{GatewayError, Hello};

/// `ERROR_PIPE_BUSY`: every instance is taken for the moment.
const PIPE_BUSY: i32 = 231;
/// `ERROR_ACCESS_DENIED`: creating a first instance of a name another process holds.
const ACCESS_DENIED: i32 = 5;

pub(crate) struct NamedPipe;

/// The pipe's name, its security descriptor, and the instance waiting for the next client
/// (made at the first accept, inside the runtime that serves it).
pub(crate) struct Listener {
    name: PathBuf,
    security: Security,
    next: Option<NamedPipeServer>,
}

/// A security descriptor allocated by the system, freed with `LocalFree`.
struct Security(PSECURITY_DESCRIPTOR);

// SAFETY: the descriptor is plain memory the system allocated; it is read (by CreateNamedPipeW)
// and freed, never mutated, and those calls may come from any thread.
#[allow(unsafe_code)]
unsafe impl Send for Security {}

impl Drop for Security {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW, freed once.
        unsafe {
            LocalFree(self.0);
        }
    }
}

/// Text from a NUL-terminated wide string the system allocated, which is then freed.
#[allow(unsafe_code)]
unsafe fn take_wide(text: *mut u16) -> String {
    let mut len = 0;
    // SAFETY (caller): `text` is a valid NUL-terminated string from LocalAlloc.
    unsafe {
        while *text.add(len) != 0 {
            len += 1;
        }
        let out = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
        LocalFree(text.cast());
        out
    }
}

/// The current user's SID, as text (`S-1-5-21-…`).
#[allow(unsafe_code)]
fn user_sid() -> std::io::Result<String> {
    // SAFETY: the token handle is checked and closed; the buffer is sized by the first call
    // and aligned for TOKEN_USER (u64 storage); the SID string is freed by `take_wide`.
    unsafe {
        let mut token: HANDLE = std::ptr::null_mut();
        if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) == 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut needed = 0u32;
        GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut needed);
        let mut buffer = vec![0u64; (needed as usize).div_ceil(8).max(1)];
        let ok = GetTokenInformation(
            token,
            TokenUser,
            buffer.as_mut_ptr().cast(),
            needed,
            &mut needed,
        );
        let error = std::io::Error::last_os_error();
        CloseHandle(token);
        if ok == 0 {
            return Err(error);
        }
        let user = &*buffer.as_ptr().cast::<TOKEN_USER>();
        let mut text: *mut u16 = std::ptr::null_mut();
        if ConvertSidToStringSidW(user.User.Sid, &mut text) == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(take_wide(text))
    }
}

/// The descriptor of a pipe only `sid` may open: a protected DACL (nothing inherited) with
/// one entry granting that user everything.
fn sddl_for(sid: &str) -> String {
    format!("D:P(A;;GA;;;{sid})")
}

#[allow(unsafe_code)]
fn security() -> std::io::Result<Security> {
    let sddl: Vec<u16> = sddl_for(&user_sid()?)
        .encode_utf16()
        .chain(Some(0))
        .collect();
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: a NUL-terminated string and an out pointer; the result is owned by `Security`.
    let ok = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl.as_ptr(),
            SDDL_REVISION_1,
            &mut descriptor,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Security(descriptor))
}

/// The user's name as the system knows it, kept to characters a pipe name takes as they are.
#[allow(unsafe_code)]
fn user_name() -> String {
    let mut buffer = [0u16; 257];
    let mut len = u32::try_from(buffer.len()).unwrap_or(0);
    // SAFETY: the buffer and its length in characters, as GetUserNameW takes them.
    let ok = unsafe { GetUserNameW(buffer.as_mut_ptr(), &mut len) };
    let name = if ok == 0 {
        std::env::var("USERNAME").unwrap_or_default()
    } else {
        // `len` counts the terminating NUL.
        String::from_utf16_lossy(&buffer[..(len as usize).saturating_sub(1)])
    };
    pipe_safe(&name)
}

/// A name's letters, digits, `.`, `_` and `-`; anything else becomes `_`.
pub(crate) fn pipe_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "user".to_owned()
    } else {
        safe
    }
}

impl Listener {
    /// A new instance of the pipe; the first one must be the name's first.
    #[allow(unsafe_code)]
    fn instance(&self, first: bool) -> std::io::Result<NamedPipeServer> {
        let mut attributes = SECURITY_ATTRIBUTES {
            nLength: u32::try_from(std::mem::size_of::<SECURITY_ATTRIBUTES>()).unwrap_or(0),
            lpSecurityDescriptor: self.security.0,
            bInheritHandle: 0,
        };
        // SAFETY: the attributes point at a descriptor that lives as long as `self`, and are
        // only read during the call.
        unsafe {
            ServerOptions::new()
                .first_pipe_instance(first)
                .reject_remote_clients(true)
                .create_with_security_attributes_raw(
                    &self.name,
                    std::ptr::from_mut(&mut attributes).cast::<c_void>(),
                )
        }
    }
}

/// Whether a gateway already answers at `name`.
fn answers(name: &Path) -> bool {
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name)
    {
        Ok(_) => true,
        Err(e) => e.raw_os_error() == Some(PIPE_BUSY),
    }
}

impl Transport for NamedPipe {
    type Listener = Listener;
    type Conn = NamedPipeServer;
    type Client = tokio::net::windows::named_pipe::NamedPipeClient;

    fn address(data_dir: &Path) -> PathBuf {
        PathBuf::from(format!(
            r"\\.\pipe\toolgate-{}-{}",
            user_name(),
            folder_key(data_dir)
        ))
    }

    fn bind(name: &Path) -> Result<Listener, GatewayError> {
        if answers(name) {
            return Err(GatewayError::AlreadyRunning(name.to_owned()));
        }
        let security = security().map_err(|source| GatewayError::Socket {
            path: name.to_owned(),
            source,
        })?;
        Ok(Listener {
            name: name.to_owned(),
            security,
            next: None,
        })
    }

    async fn accept(listener: &mut Listener) -> std::io::Result<Option<NamedPipeServer>> {
        let server = match listener.next.take() {
            Some(server) => server,
            None => listener.instance(true).map_err(|e| {
                if e.raw_os_error() == Some(ACCESS_DENIED) {
                    std::io::Error::other(format!(
                        "another Toolgate already serves {}",
                        listener.name.display()
                    ))
                } else {
                    e
                }
            })?,
        };
        server.connect().await?;
        // The next client finds an instance waiting.
        listener.next = Some(listener.instance(false)?);
        Ok(Some(server))
    }

    /// Windows has no handing over (a shim always relays): the pipe is the connection.
    async fn open(server: NamedPipeServer, _closed: CancellationToken) -> std::io::Result<Opened> {
        let (read, write) = tokio::io::split(server);
        Ok(Opened {
            read: Box::new(read),
            write: Box::new(write),
            ended: None,
        })
    }

    fn unbind(_name: &Path) {}

    fn dial(name: &Path) -> std::io::Result<Self::Client> {
        let _inside = shim_runtime()?.enter();
        let started = Instant::now();
        loop {
            match ClientOptions::new().open(name) {
                Ok(client) => return Ok(client),
                Err(e)
                    if e.raw_os_error() == Some(PIPE_BUSY)
                        && started.elapsed() < Duration::from_secs(5) =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn relay(client: Self::Client, hello: &Hello, _copy: bool) -> std::io::Result<Ended> {
        let runtime = shim_runtime()?;
        let hello = hello.line().into_bytes();
        // On a thread of its own: the caller may itself be inside a runtime (the CLI's).
        std::thread::scope(|scope| {
            scope
                .spawn(|| runtime.block_on(relay_on(client, hello)))
                .join()
                .unwrap_or(Ok(Ended::Gateway))
        })
    }
}

/// The shim's runtime, for its overlapped pipe I/O: one, made at the first use and kept.
fn shim_runtime() -> std::io::Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(RUNTIME.get_or_init(|| runtime))
}

async fn relay_on(
    client: tokio::net::windows::named_pipe::NamedPipeClient,
    hello: Vec<u8>,
) -> std::io::Result<Ended> {
    let (mut from_gateway, mut to_gateway) = tokio::io::split(client);
    to_gateway.write_all(&hello).await?;
    let host = async {
        let mut stdin = tokio::io::stdin();
        // tokio's copy flushes whenever the reader has nothing more for now.
        tokio::io::copy(&mut stdin, &mut to_gateway).await.map(drop)
    };
    let gateway = async {
        let mut stdout = tokio::io::stdout();
        tokio::io::copy(&mut from_gateway, &mut stdout)
            .await
            .map(drop)
    };
    tokio::select! {
        sent = host => sent.map(|()| Ended::Host),
        received = gateway => received.map(|()| Ended::Gateway),
    }
}

/// The app a shim starts is detached from the shim's console and process group: the host that
/// launched the shim may stop it, never the app.
pub(crate) fn detach(command: &mut std::process::Command) {
    use std::os::windows::process::CommandExt;
    use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS};
    command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_descriptor_admits_the_user_alone() {
        assert_eq!(
            sddl_for("S-1-5-21-1-2-3-1001"),
            "D:P(A;;GA;;;S-1-5-21-1-2-3-1001)"
        );
        let sid = user_sid().expect("the user's SID");
        assert!(sid.starts_with("S-1-"), "{sid}");
        security().expect("a descriptor is made from it");
    }

    #[test]
    fn one_folder_one_pipe_named_for_the_user() {
        let a = crate::socket_path(Path::new(
            r"C:\Users\u\AppData\Roaming\dev.toolgate.desktop",
        ));
        let b = crate::socket_path(Path::new(r"C:\Users\u\other"));
        assert_ne!(a, b);
        let name = a.to_string_lossy().into_owned();
        assert!(name.starts_with(r"\\.\pipe\toolgate-"), "{name}");
        assert_eq!(pipe_safe("Jo Smith\\x"), "Jo_Smith_x");
        assert_eq!(pipe_safe(""), "user");
    }
}
