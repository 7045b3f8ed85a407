//! The Linux sandbox: Landlock for files, seccomp for the network (see the crate's docs).
//!
//! Everything that can fail or allocate happens in Toolgate before the fork ([`prepare`]): the
//! Landlock ruleset with a file descriptor for each allowed folder, and the compiled seccomp
//! filters. Between fork and exec the child only makes system calls ([`Prepared::arm`]), which
//! is all a multi-threaded program may do there. This is one of the workspace's audited
//! `unsafe` places.
#![allow(unsafe_code)]

mod filter;
pub mod loopback;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, ABI,
};
use seccompiler::BpfProgram;

use crate::{
    Confinement, Network, Reserved, SandboxError, Support, LANDLOCK_NET_ABI, LANDLOCK_SCOPE_ABI,
};

/// The Landlock ABI whose rights are asked for: the newest one this was tested on. A kernel
/// that knows less enforces what it knows, and [`Support::gaps`] says what it does not.
const ABI_USED: ABI = ABI::V7;

/// The error a spawn fails with when the sandbox could not be applied in the new process
/// (`ENOTRECOVERABLE`, which `exec` itself never returns), so the caller can say so.
pub const SETUP_FAILED: i32 = libc::ENOTRECOVERABLE;

pub(crate) fn probe() -> Support {
    // SAFETY: these calls only ask the kernel what it supports; they take no pointers (or
    // pointers to locals that outlive the call) and change nothing.
    let landlock = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    let available = |action: u32| {
        // SAFETY: as above; `action` lives until the call returns.
        unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_GET_ACTION_AVAIL,
                0,
                &action as *const u32,
            ) == 0
        }
    };
    let seccomp = available(libc::SECCOMP_RET_ERRNO);
    // pidfd_getfd on a bad pidfd answers EBADF where it exists, ENOSYS where it does not.
    // SAFETY: no pointers; fd -1 is never valid.
    let getfd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, -1, 0, 0) } == -1
        && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
    // The loopback guard reads a server's memory and takes its sockets, which Yama's
    // ptrace_scope 2 and 3 forbid even to the server's own parent.
    let yama_allows = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .map_or(true, |v| v.trim().parse::<u32>().map_or(true, |n| n < 2));
    Support {
        landlock_abi: u32::try_from(landlock).unwrap_or(0),
        seccomp,
        notify: seccomp && available(libc::SECCOMP_RET_USER_NOTIF) && getfd && yama_allows,
        verified: true,
    }
}

/// A sandbox made ready before the fork.
pub struct Prepared {
    network: Network,
    ruleset: Option<RulesetCreated>,
    refuse: Vec<BpfProgram>,
    notify: Option<BpfProgram>,
    warnings: Vec<String>,
}

/// Builds the Landlock ruleset and the seccomp filters for `confinement` on a kernel that
/// offers `support`. Folders that do not exist are left out (a runtime folder the user does not
/// have).
pub fn prepare(confinement: &Confinement, support: &Support) -> Result<Prepared, SandboxError> {
    let fail = |e: &dyn std::fmt::Display| SandboxError::Prepare(e.to_string());
    let ruleset = if support.files() {
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(ABI_USED))
            .map_err(|e| fail(&e))?;
        if confinement.network == Network::None && support.landlock_abi >= LANDLOCK_NET_ABI {
            // Belt and braces with the seccomp filter: no TCP port may be bound or reached.
            ruleset = ruleset
                .handle_access(AccessNet::from_all(ABI_USED))
                .map_err(|e| fail(&e))?;
        }
        if support.landlock_abi >= LANDLOCK_SCOPE_ABI {
            ruleset = ruleset
                .scope(Scope::from_all(ABI_USED))
                .map_err(|e| fail(&e))?;
        }
        let created = ruleset
            .create()
            .map_err(|e| fail(&e))?
            .add_rules(path_beneath_rules(
                &confinement.read,
                AccessFs::from_read(ABI_USED),
            ))
            .map_err(|e| fail(&e))?
            .add_rules(path_beneath_rules(
                &confinement.write,
                AccessFs::from_all(ABI_USED),
            ))
            .map_err(|e| fail(&e))?;
        Some(created)
    } else {
        None
    };
    let (refuse, notify) = if support.seccomp {
        let filters = filter::filters(confinement.network, support.notify)
            .map_err(|e| SandboxError::Prepare(format!("the seccomp filter: {e}")))?;
        (filters.refuse, filters.notify)
    } else {
        (Vec::new(), None)
    };
    Ok(Prepared {
        network: confinement.network,
        ruleset,
        refuse,
        notify,
        warnings: support.gaps(confinement.network),
    })
}

impl Prepared {
    /// What this kernel leaves open of what was asked, in words.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Makes `command`'s child confine itself between fork and exec: Landlock first (which
    /// also sets `no_new_privs`), then the seccomp filters; in loopback mode the child hands
    /// the notification listener to Toolgate over a socket pair. Call [`Armed::started`] after
    /// the spawn.
    pub fn arm(self, command: &mut std::process::Command) -> Result<Armed, SandboxError> {
        let (parent, child) = if self.notify.is_some() {
            let (parent, child) =
                socket_pair().map_err(|e| SandboxError::Prepare(format!("a socket pair: {e}")))?;
            (Some(parent), Some(child))
        } else {
            (None, None)
        };
        let Prepared {
            network,
            mut ruleset,
            refuse,
            notify,
            warnings,
        } = self;
        // Owned by the closure (and so by the command): the parent's copy closes with it.
        let child_end: Option<OwnedFd> = child;
        let setup_failed = || io::Error::from_raw_os_error(SETUP_FAILED);
        // SAFETY: the closure runs in the child between fork and exec. It allocates nothing
        // and only makes system calls (landlock_restrict_self, prctl, seccomp, sendmsg,
        // close), all async-signal-safe; every buffer it passes was made before the fork.
        unsafe {
            command.pre_exec(move || {
                if let Some(ruleset) = ruleset.take() {
                    ruleset.restrict_self().map_err(|_| setup_failed())?;
                }
                // seccomp needs it without CAP_SYS_ADMIN; Landlock set it already when used.
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(setup_failed());
                }
                for program in &refuse {
                    seccompiler::apply_filter(program).map_err(|_| setup_failed())?;
                }
                if let (Some(program), Some(channel)) = (&notify, &child_end) {
                    let listener = install_listener(program)?;
                    let sent = send_fd(channel.as_raw_fd(), listener);
                    libc::close(listener);
                    sent?;
                }
                Ok(())
            });
        }
        Ok(Armed {
            network,
            from_child: parent,
            warnings,
        })
    }
}

/// A command armed with a sandbox, before or just after its spawn.
pub struct Armed {
    network: Network,
    from_child: Option<OwnedFd>,
    warnings: Vec<String>,
}

impl Armed {
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Once the spawn returned (so the child ran its set-up and exec'd): takes the loopback
    /// listener from the child and starts its supervisor, which ends with the server's last
    /// process or when the returned guard is dropped. `reserved`: Toolgate's own ports, which
    /// the server may neither reach nor bind.
    pub fn started(
        self,
        server: &str,
        reserved: &Reserved,
    ) -> Result<Option<loopback::Guard>, SandboxError> {
        let Some(channel) = self.from_child else {
            return Ok(None);
        };
        let listener = receive_fd(channel.as_raw_fd())
            .map_err(|e| SandboxError::Supervisor(format!("no listener from the server: {e}")))?;
        loopback::start(listener, server, self.network, reserved.clone()).map(Some)
    }
}

fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1; 2];
    // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Installs the notify filter, returning its listener. Runs in the child: no allocation.
unsafe fn install_listener(program: &BpfProgram) -> io::Result<RawFd> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len())
            .map_err(|_| io::Error::from_raw_os_error(SETUP_FAILED))?,
        // seccompiler's `sock_filter` is `#[repr(C)]` with the kernel's layout.
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    let fd = libc::syscall(
        libc::SYS_seccomp,
        libc::SECCOMP_SET_MODE_FILTER,
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
        &fprog as *const libc::sock_fprog,
    );
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(SETUP_FAILED));
    }
    RawFd::try_from(fd).map_err(|_| io::Error::from_raw_os_error(SETUP_FAILED))
}

/// Room for one `SCM_RIGHTS` message with one descriptor, aligned for `cmsghdr`.
type ControlBuffer = [u64; 8];

/// Sends `fd` over the socket `channel`. Runs in the child: stack buffers only.
unsafe fn send_fd(channel: RawFd, fd: RawFd) -> io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control: ControlBuffer = [0; 8];
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
    let cmsg = libc::CMSG_FIRSTHDR(&msg);
    if cmsg.is_null() {
        return Err(io::Error::from_raw_os_error(SETUP_FAILED));
    }
    (*cmsg).cmsg_level = libc::SOL_SOCKET;
    (*cmsg).cmsg_type = libc::SCM_RIGHTS;
    (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
    std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
    if libc::sendmsg(channel, &msg, 0) < 0 {
        return Err(io::Error::from_raw_os_error(SETUP_FAILED));
    }
    Ok(())
}

/// Receives the descriptor the child sent, without waiting: the spawn has returned, so it was
/// sent already or never will be.
fn receive_fd(channel: RawFd) -> io::Result<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control: ControlBuffer = [0; 8];
    // SAFETY: every pointer in `msg` points to a local that outlives the call; the control
    // buffer is aligned for `cmsghdr` and its length is given.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of::<ControlBuffer>();
        if libc::recvmsg(
            channel,
            &mut msg,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        ) < 0
        {
            return Err(io::Error::last_os_error());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::other("the message carried no descriptor"));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(OwnedFd::from_raw_fd(fd))
    }
}
