//! Windows has no login shell: a program started from the Start menu gets the PATH Explorer
//! read from the registry when the user logged in. A PATH edited since (an installer adding
//! Node or Python) is only in the registry, so servers get the registry's current value: the
//! machine's `Path`, then the user's, with `%VARIABLES%` expanded, ahead of the app's own.

use std::path::PathBuf;

/// The folders of the machine's PATH followed by the user's, each once, as Windows joins them.
#[cfg_attr(not(windows), allow(dead_code))]
pub(crate) fn joined(machine: Option<&str>, user: Option<&str>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for part in machine
        .into_iter()
        .chain(user)
        .flat_map(|value| value.split(';'))
    {
        let part = part.trim().trim_matches('"');
        if part.is_empty() {
            continue;
        }
        let dir = PathBuf::from(part);
        if !dirs
            .iter()
            .any(|d| d.as_os_str().eq_ignore_ascii_case(dir.as_os_str()))
        {
            dirs.push(dir);
        }
    }
    dirs
}

/// The registry's PATH now: machine, then user.
#[cfg(windows)]
pub(crate) fn path() -> Vec<PathBuf> {
    use windows_sys::Win32::System::Registry::{HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE};
    let machine = read(
        HKEY_LOCAL_MACHINE,
        r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment",
    );
    let user = read(HKEY_CURRENT_USER, "Environment");
    joined(machine.as_deref(), user.as_deref())
}

/// One key's `Path` value, expanded; `None` when it is not there.
#[cfg(windows)]
#[allow(unsafe_code)]
fn read(root: windows_sys::Win32::System::Registry::HKEY, key: &str) -> Option<String> {
    use windows_sys::Win32::System::Registry::{RegGetValueW, RRF_RT_ANY};
    let wide = |s: &str| -> Vec<u16> { s.encode_utf16().chain(Some(0)).collect() };
    let (key, value) = (wide(key), wide("Path"));
    let mut size = 0u32;
    // SAFETY: NUL-terminated names; the first call only sizes, the second writes at most `size`
    // bytes into a buffer of that size. A REG_EXPAND_SZ is expanded by the call (no
    // RRF_NOEXPAND).
    unsafe {
        let flags = RRF_RT_ANY;
        let sized = RegGetValueW(
            root,
            key.as_ptr(),
            value.as_ptr(),
            flags,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut size,
        );
        if sized != 0 || size == 0 {
            return None;
        }
        let mut buffer = vec![0u16; (size as usize).div_ceil(2)];
        let read = RegGetValueW(
            root,
            key.as_ptr(),
            value.as_ptr(),
            flags,
            std::ptr::null_mut(),
            buffer.as_mut_ptr().cast(),
            &mut size,
        );
        if read != 0 {
            return None;
        }
        let len = buffer.iter().position(|c| *c == 0).unwrap_or(buffer.len());
        Some(String::from_utf16_lossy(&buffer[..len]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_path_comes_first_and_each_folder_once() {
        let dirs = joined(
            Some(r"C:\Windows\system32;C:\Windows;;C:\Program Files\nodejs\"),
            Some(r#"C:\Users\u\AppData\Roaming\npm;c:\windows\SYSTEM32;"C:\Tools""#),
        );
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        assert_eq!(
            dirs,
            [
                r"C:\Windows\system32",
                r"C:\Windows",
                r"C:\Program Files\nodejs\",
                r"C:\Users\u\AppData\Roaming\npm",
                r"C:\Tools",
            ]
        );
        assert!(joined(None, None).is_empty());
    }

    #[cfg(windows)]
    #[test]
    fn the_registry_path_holds_the_system_folder() {
        let dirs = path();
        assert!(
            dirs.iter().any(|d| d
                .to_string_lossy()
                .to_ascii_lowercase()
                .ends_with(r"\system32")),
            "{dirs:?}"
        );
    }
}
