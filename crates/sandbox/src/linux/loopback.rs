//! "Loopback only": Toolgate decides each `connect` and `bind` of a confined server.
//!
//! The server's seccomp filter turns these calls into user notifications on a listener that
//! the server's process handed to Toolgate at start ([`super::Prepared::arm`]). For each one,
//! this supervisor thread:
//!
//! 1. copies the address from the server's memory (`process_vm_readv`);
//! 2. refuses (`EACCES`) anything but 127.0.0.0/8, `::1` (and `::ffff:127.0.0.0/104`), or an
//!    `AF_UNSPEC` disconnect; in "hosts" mode ([`Network::Proxy`]) a `connect` only to
//!    127.0.0.1 at the proxy's port; and any port Toolgate keeps for itself ([`Reserved`]:
//!    other servers' proxies, the HTTP door), to `connect` or to `bind`, on any loopback
//!    address;
//! 3. otherwise takes a duplicate of the server's socket (`pidfd_getfd`) and performs the
//!    `connect` or `bind` itself, with its own copy of the address, returning the result as the
//!    server's.
//!
//! Step 3 is what makes the check hold: letting the kernel continue the server's own call would
//! re-read an address another of the server's threads may have changed since step 1. The
//! notification's id is checked again after each read of the server's memory, so a process
//! that died (and a pid that was reused) is never acted on.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::{Network, Reserved, SandboxError};

/// The largest socket address (`sockaddr_storage`).
const MAX_ADDRESS: usize = 128;

/// Stops the supervisor when dropped (it also ends by itself with the server's last process).
pub struct Guard {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // The thread wakes within one poll interval; not joined, so a drop never waits.
        drop(self.thread.take());
    }
}

pub(crate) fn start(
    listener: OwnedFd,
    server: &str,
    network: Network,
    reserved: Reserved,
) -> Result<Guard, SandboxError> {
    let only = match network {
        Network::Proxy(port) => Some(port),
        _ => None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let name = format!("loopback-{server}");
    let thread = std::thread::Builder::new()
        .name(name.chars().take(15).collect())
        .spawn(move || supervise(&listener, &flag, only, &reserved))
        .map_err(|e| SandboxError::Supervisor(e.to_string()))?;
    Ok(Guard {
        stop,
        thread: Some(thread),
    })
}

fn supervise(listener: &OwnedFd, stop: &AtomicBool, only: Option<u16>, reserved: &Reserved) {
    let fd = listener.as_raw_fd();
    while !stop.load(Ordering::Relaxed) {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, 250) };
        if ready < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
        if poll.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            return; // every process under this filter has exited
        }
        if poll.revents & libc::POLLIN == 0 {
            continue;
        }
        // SAFETY: the kernel requires a zeroed buffer of exactly this type.
        let mut request: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: `request` is a valid seccomp_notif for the kernel to fill.
        if unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut request) } != 0 {
            continue; // the caller died in between (ENOENT), or a signal
        }
        let (value, errno) = answer(fd, &request, only, reserved);
        let response = libc::seccomp_notif_resp {
            id: request.id,
            val: value,
            error: -errno,
            flags: 0,
        };
        // SAFETY: a valid response for the kernel to read; an answer to a caller that died
        // fails with ENOENT, which needs nothing done.
        unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &response) };
    }
}

/// Whether the notification is still pending: its caller is alive and waiting.
fn still_valid(listener: RawFd, id: u64) -> bool {
    // SAFETY: `id` lives until the call returns.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
}

/// The call's return value and errno (0 when it succeeded). `only`: the one port of 127.0.0.1
/// a `connect` may reach; `reserved`: the ports no `connect` (but that one) nor `bind` may use.
fn answer(
    listener: RawFd,
    request: &libc::seccomp_notif,
    only: Option<u16>,
    reserved: &Reserved,
) -> (i64, i32) {
    let refused = (0, libc::EACCES);
    let call = i64::from(request.data.nr);
    if call != libc::SYS_connect && call != libc::SYS_bind {
        return refused;
    }
    let [fd, pointer, length, ..] = request.data.args;
    let Ok(length) = usize::try_from(length) else {
        return (0, libc::EINVAL);
    };
    if length > MAX_ADDRESS {
        return (0, libc::EINVAL);
    }
    let mut address = [0u8; MAX_ADDRESS];
    if read_memory(request.pid, pointer, &mut address[..length]).is_err() {
        return refused;
    }
    if !still_valid(listener, request.id) {
        return refused;
    }
    if !permitted(
        call == libc::SYS_connect,
        &address[..length],
        only,
        reserved,
    ) {
        tracing::debug!(
            pid = request.pid,
            "a confined server tried to reach beyond this computer; refused"
        );
        return refused;
    }
    let Ok(fd) = RawFd::try_from(fd) else {
        return (0, libc::EBADF);
    };
    let socket = match duplicate(request.pid, fd) {
        Ok(socket) => socket,
        Err(e) => return (0, e.raw_os_error().unwrap_or(libc::EACCES)),
    };
    if !still_valid(listener, request.id) {
        return refused;
    }
    let length = libc::socklen_t::try_from(length).unwrap_or(0);
    let target = address.as_ptr().cast::<libc::sockaddr>();
    // SAFETY: `socket` is our own descriptor; `target` points to `length` bytes we own.
    let result = unsafe {
        if call == libc::SYS_connect {
            libc::connect(socket.as_raw_fd(), target, length)
        } else {
            libc::bind(socket.as_raw_fd(), target, length)
        }
    };
    if result == 0 {
        (0, 0)
    } else {
        (
            -1,
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EACCES),
        )
    }
}

/// Whether a `connect` (else a `bind`) to `address` is let through: see the module's docs.
pub(crate) fn permitted(
    connect: bool,
    address: &[u8],
    only: Option<u16>,
    reserved: &Reserved,
) -> bool {
    match only {
        // Its own proxy's port is reserved too (from every other server): this is the one
        // `connect` that may use it.
        Some(port) if connect => to_proxy(address, port),
        _ => allowed(address) && !port_of(address).is_some_and(|p| reserved.contains(p)),
    }
}

/// Whether a socket address (as the server passed it) is on this computer.
pub(crate) fn allowed(address: &[u8]) -> bool {
    if address.len() < 2 {
        return false;
    }
    let family = i32::from(u16::from_ne_bytes([address[0], address[1]]));
    match family {
        libc::AF_UNSPEC => true,
        // Netlink describes this computer only.
        libc::AF_NETLINK => true,
        libc::AF_INET => address.len() >= 8 && address[4] == 127,
        libc::AF_INET6 if address.len() >= 24 => {
            let ip = &address[8..24];
            let loopback = ip[..15].iter().all(|b| *b == 0) && ip[15] == 1;
            let mapped = ip[..10].iter().all(|b| *b == 0) && ip[10..12] == [0xff, 0xff];
            loopback || (mapped && ip[12] == 127)
        }
        _ => false,
    }
}

/// The port of an IPv4 or IPv6 socket address (the same place in both).
pub(crate) fn port_of(address: &[u8]) -> Option<u16> {
    if address.len() < 4 {
        return None;
    }
    let family = i32::from(u16::from_ne_bytes([address[0], address[1]]));
    matches!(family, libc::AF_INET | libc::AF_INET6)
        .then(|| u16::from_be_bytes([address[2], address[3]]))
}

/// Whether a socket address is 127.0.0.1 at `port` (or a disconnect): the proxy of a server in
/// "hosts" mode, and nothing else of this computer.
pub(crate) fn to_proxy(address: &[u8], port: u16) -> bool {
    if address.len() < 2 {
        return false;
    }
    let family = i32::from(u16::from_ne_bytes([address[0], address[1]]));
    let port_of = |a: &[u8]| u16::from_be_bytes([a[2], a[3]]);
    match family {
        libc::AF_UNSPEC => true,
        libc::AF_INET => {
            address.len() >= 8 && address[4..8] == [127, 0, 0, 1] && port_of(address) == port
        }
        libc::AF_INET6 if address.len() >= 24 => {
            let ip = &address[8..24];
            let mapped = ip[..10].iter().all(|b| *b == 0) && ip[10..12] == [0xff, 0xff];
            mapped && ip[12..16] == [127, 0, 0, 1] && port_of(address) == port
        }
        _ => false,
    }
}

/// Copies `out.len()` bytes at `pointer` in process `pid`.
fn read_memory(pid: u32, pointer: u64, out: &mut [u8]) -> io::Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    let local = libc::iovec {
        iov_base: out.as_mut_ptr().cast(),
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: pointer as *mut libc::c_void,
        iov_len: out.len(),
    };
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: `local` covers `out`, which we own; the kernel checks the remote range.
    let read = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if usize::try_from(read).ok() == Some(out.len()) {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The thread group of a thread: notifications name the calling thread, descriptors belong to
/// its process.
fn thread_group(tid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Tgid:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(tid)
}

/// Our own duplicate of descriptor `fd` of the process that thread `tid` belongs to.
fn duplicate(tid: u32, fd: RawFd) -> io::Result<OwnedFd> {
    let pid = thread_group(tid);
    // SAFETY: plain system calls on integers; each returned descriptor is owned at once.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
        if pidfd < 0 {
            return Err(io::Error::last_os_error());
        }
        let pidfd = OwnedFd::from_raw_fd(RawFd::try_from(pidfd).map_err(io::Error::other)?);
        let ours = libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0);
        if ours < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(
            RawFd::try_from(ours).map_err(io::Error::other)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: [u8; 4]) -> Vec<u8> {
        let mut b = vec![0u8; 16];
        b[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        b[2..4].copy_from_slice(&8080u16.to_be_bytes());
        b[4..8].copy_from_slice(&a);
        b
    }

    fn v6(ip: [u8; 16]) -> Vec<u8> {
        let mut b = vec![0u8; 28];
        b[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        b[8..24].copy_from_slice(&ip);
        b
    }

    #[test]
    fn only_this_computers_addresses_are_allowed() {
        assert!(allowed(&v4([127, 0, 0, 1])));
        assert!(allowed(&v4([127, 1, 2, 3])));
        assert!(!allowed(&v4([10, 0, 0, 1])));
        assert!(
            !allowed(&v4([0, 0, 0, 0])),
            "binding every interface is not loopback"
        );
        assert!(!allowed(&v4([192, 0, 2, 1])));
        let mut one = [0u8; 16];
        one[15] = 1;
        assert!(allowed(&v6(one)));
        assert!(!allowed(&v6([0; 16])), "the IPv6 any address");
        let mut mapped = [0u8; 16];
        mapped[10..12].copy_from_slice(&[0xff, 0xff]);
        mapped[12..].copy_from_slice(&[127, 0, 0, 1]);
        assert!(allowed(&v6(mapped)));
        mapped[12] = 8;
        assert!(!allowed(&v6(mapped)));
        let mut unix = vec![0u8; 20];
        unix[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
        assert!(!allowed(&unix), "a Unix socket path");
        assert!(!allowed(&v4([127, 0, 0, 1])[..3]), "cut short");
        assert!(!allowed(&[]));
    }

    fn at(mut address: Vec<u8>, port: u16) -> Vec<u8> {
        address[2..4].copy_from_slice(&port.to_be_bytes());
        address
    }

    #[test]
    fn toolgates_own_ports_are_neither_reached_nor_bound_on_any_loopback_address() {
        let reserved = Reserved::new();
        let _door = reserved.hold(8787);
        let _proxy = reserved.hold(40001);
        let mut one = [0u8; 16];
        one[15] = 1;
        let mut mapped = [0u8; 16];
        mapped[10..12].copy_from_slice(&[0xff, 0xff]);
        mapped[12..].copy_from_slice(&[127, 0, 0, 1]);
        for port in [8787, 40001] {
            for address in [
                at(v4([127, 0, 0, 1]), port),
                at(v4([127, 9, 9, 9]), port),
                at(v6(one), port),
                at(v6(mapped), port),
            ] {
                for connect in [true, false] {
                    assert!(
                        !permitted(connect, &address, None, &reserved),
                        "loopback mode, connect {connect}, port {port}: {address:?}"
                    );
                }
                assert!(
                    !permitted(false, &address, Some(40001), &reserved),
                    "hosts mode binds no reserved port either"
                );
            }
        }
        // Everything else of loopback stays open, and a hosts server reaches its own proxy.
        assert!(permitted(
            true,
            &at(v4([127, 0, 0, 1]), 8788),
            None,
            &reserved
        ));
        assert!(permitted(
            false,
            &at(v4([127, 0, 0, 1]), 0),
            None,
            &reserved
        ));
        assert!(permitted(
            true,
            &at(v4([127, 0, 0, 1]), 40001),
            Some(40001),
            &reserved
        ));
        assert!(!permitted(
            true,
            &at(v4([127, 0, 0, 1]), 8787),
            Some(40001),
            &reserved
        ));
        drop(_door);
        assert!(
            permitted(true, &at(v4([127, 0, 0, 1]), 8787), None, &reserved),
            "released: an ordinary port again"
        );
    }

    #[test]
    fn ports_are_read_from_both_families_and_nothing_else() {
        assert_eq!(port_of(&v4([127, 0, 0, 1])), Some(8080));
        let mut six = v6([0; 16]);
        six[2..4].copy_from_slice(&8787u16.to_be_bytes());
        assert_eq!(port_of(&six), Some(8787));
        let mut unix = vec![0u8; 20];
        unix[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
        unix[2..4].copy_from_slice(&8787u16.to_be_bytes());
        assert_eq!(port_of(&unix), None);
        assert_eq!(port_of(&v4([127, 0, 0, 1])[..3]), None);
    }

    #[test]
    fn in_hosts_mode_only_the_proxys_port_of_127_0_0_1_is_reached() {
        assert!(to_proxy(&v4([127, 0, 0, 1]), 8080));
        assert!(!to_proxy(&v4([127, 0, 0, 1]), 8081), "another local port");
        assert!(
            !to_proxy(&v4([127, 0, 0, 2]), 8080),
            "another loopback address"
        );
        assert!(!to_proxy(&v4([93, 184, 216, 34]), 8080));
        let mut mapped = v6([0; 16]);
        mapped[2..4].copy_from_slice(&8080u16.to_be_bytes());
        mapped[18..20].copy_from_slice(&[0xff, 0xff]);
        mapped[20..24].copy_from_slice(&[127, 0, 0, 1]);
        assert!(to_proxy(&mapped, 8080));
        let mut one = v6([0; 16]);
        one[23] = 1;
        one[2..4].copy_from_slice(&8080u16.to_be_bytes());
        assert!(!to_proxy(&one, 8080), "::1 is not where the proxy listens");
        assert!(!to_proxy(&[], 8080));
    }
}
