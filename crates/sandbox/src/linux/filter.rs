//! The seccomp filters for each network mode, compiled (by `seccompiler`) before the fork.
//!
//! Four small filters are stacked, because a seccompiler filter has one action for every rule
//! it matches; the kernel runs them all and the strictest answer wins:
//!
//! 1. `x32`: on x86_64, system calls of the x32 ABI (numbers with bit 30 set) would not match
//!    the numbers below, so they are refused outright. Five instructions, written by hand:
//!    seccompiler has no way to match a range of numbers.
//! 2. `refused` (`EACCES`, the permission error programs expect): socket families the mode does
//!    not allow; the kernel keyring (`keyctl`, `add_key`, `request_key`) in every mode; in
//!    loopback mode, TCP Fast Open sends, which connect without a `connect` call.
//! 3. `io_uring` (`ENOSYS`, so runtimes fall back to ordinary calls): its operations would reach
//!    `socket` and `connect` without passing this filter.
//! 4. `notify` (loopback only): every `connect` and `bind` goes to Toolgate's supervisor
//!    ([`super::loopback`]), which checks the address.

use std::collections::BTreeMap;

use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use crate::Network;

/// The compiled filters, in the order they are installed.
pub(crate) struct Filters {
    /// Filters whose action is to refuse.
    pub refuse: Vec<BpfProgram>,
    /// The filter that sends `connect` and `bind` to the supervisor (loopback only).
    pub notify: Option<BpfProgram>,
}

/// seccompiler has no user-notification action: the notify filter is compiled with this trace
/// value, and its return instructions rewritten to `SECCOMP_RET_USER_NOTIF`.
const NOTIFY_MARK: u32 = 0x7ead;

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// The obsolete packet socket type (libc marks its constant deprecated), refused all the same.
const SOCK_PACKET: i32 = 10;

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

fn compile(rules: Rules, action: SeccompAction) -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, action, arch).map_err(|e| e.to_string())?;
    BpfProgram::try_from(filter).map_err(|e| e.to_string())
}

/// `socket(domain, type, …)` calls the mode refuses.
fn socket_rules(network: Network) -> Result<Vec<SeccompRule>, String> {
    let domain = |op, value: i32| condition(0, op, value as u64);
    Ok(match network {
        // Netlink stays: it only describes this computer (interfaces, routes).
        Network::None => vec![rule(vec![domain(SeccompCmpOp::Ne, libc::AF_NETLINK)?])?],
        Network::Loopback | Network::Proxy(_) => {
            let mut rules = vec![rule(vec![
                domain(SeccompCmpOp::Ne, libc::AF_NETLINK)?,
                domain(SeccompCmpOp::Ne, libc::AF_INET)?,
                domain(SeccompCmpOp::Ne, libc::AF_INET6)?,
            ])?];
            // TCP only: UDP would carry DNS queries, and the supervisor sees no `sendto`.
            for family in [libc::AF_INET, libc::AF_INET6] {
                for kind in [
                    libc::SOCK_DGRAM,
                    libc::SOCK_RAW,
                    libc::SOCK_RDM,
                    libc::SOCK_SEQPACKET,
                    libc::SOCK_DCCP,
                    SOCK_PACKET,
                ] {
                    rules.push(rule(vec![
                        domain(SeccompCmpOp::Eq, family)?,
                        condition(1, SeccompCmpOp::MaskedEq(0xf), kind as u64)?,
                    ])?);
                }
            }
            rules
        }
        // Unix sockets stay closed in every mode: the desktop session's D-Bus is one, and the
        // keyring answers any program of the user's that connects to it.
        Network::Any => vec![rule(vec![domain(SeccompCmpOp::Eq, libc::AF_UNIX)?])?],
    })
}

pub(crate) fn filters(network: Network, notify: bool) -> Result<Filters, String> {
    let mut refused: Rules = BTreeMap::new();
    refused.insert(libc::SYS_socket, socket_rules(network)?);
    for call in [libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key] {
        refused.insert(call, Vec::new());
    }
    if network.supervised() {
        let fast_open = u64::try_from(libc::MSG_FASTOPEN).map_err(|e| e.to_string())?;
        let flags = |arg| -> Result<Vec<SeccompRule>, String> {
            Ok(vec![rule(vec![condition(
                arg,
                SeccompCmpOp::MaskedEq(fast_open),
                fast_open,
            )?])?])
        };
        refused.insert(libc::SYS_sendto, flags(3)?);
        refused.insert(libc::SYS_sendmsg, flags(2)?);
        refused.insert(libc::SYS_sendmmsg, flags(3)?);
        if !notify {
            // No supervisor to check addresses: closed rather than open.
            refused.insert(libc::SYS_connect, Vec::new());
            refused.insert(libc::SYS_bind, Vec::new());
        }
    }
    let mut uring: Rules = BTreeMap::new();
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        uring.insert(call, Vec::new());
    }
    let eacces = u32::try_from(libc::EACCES).map_err(|e| e.to_string())?;
    let enosys = u32::try_from(libc::ENOSYS).map_err(|e| e.to_string())?;
    let mut refuse = Vec::new();
    if let Some(x32) = x32_guard() {
        refuse.push(x32);
    }
    refuse.push(compile(refused, SeccompAction::Errno(eacces))?);
    refuse.push(compile(uring, SeccompAction::Errno(enosys))?);
    let notify = if network.supervised() && notify {
        let mut rules: Rules = BTreeMap::new();
        rules.insert(libc::SYS_connect, Vec::new());
        rules.insert(libc::SYS_bind, Vec::new());
        let mut program = compile(rules, SeccompAction::Trace(NOTIFY_MARK))?;
        to_user_notify(&mut program)?;
        Some(program)
    } else {
        None
    };
    Ok(Filters { refuse, notify })
}

const BPF_RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

/// Turns the notify filter's trace returns into user notifications.
fn to_user_notify(program: &mut BpfProgram) -> Result<(), String> {
    let marked = libc::SECCOMP_RET_TRACE | NOTIFY_MARK;
    let mut rewritten = 0;
    for instruction in program.iter_mut() {
        if instruction.code == BPF_RET_K && instruction.k == marked {
            instruction.k = libc::SECCOMP_RET_USER_NOTIF;
            rewritten += 1;
        }
    }
    if rewritten == 0 {
        return Err("the notify filter has no action to rewrite".to_owned());
    }
    Ok(())
}

/// Refuses x32 system calls on x86_64 (see the module's docs).
fn x32_guard() -> Option<BpfProgram> {
    if std::env::consts::ARCH != "x86_64" {
        return None;
    }
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let op = |code: u32| code as u16;
    let load = |offset| sock_filter {
        code: op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS),
        jt: 0,
        jf: 0,
        k: offset,
    };
    let ret = |k| sock_filter {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k,
    };
    Some(vec![
        // seccomp_data: nr at offset 0, arch at offset 4.
        load(4),
        sock_filter {
            code: op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K),
            jt: 0,
            jf: 3,
            k: AUDIT_ARCH_X86_64,
        },
        load(0),
        sock_filter {
            code: op(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K),
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        ret(libc::SECCOMP_RET_ALLOW),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_compiles_and_only_loopback_notifies() {
        for network in [Network::None, Network::Loopback, Network::Any] {
            let f = filters(network, true).expect("compiles");
            assert!(f.refuse.len() >= 2);
            assert_eq!(
                f.notify.is_some(),
                network == Network::Loopback,
                "{network}"
            );
        }
        let f = filters(Network::Loopback, false).expect("compiles");
        assert!(f.notify.is_none(), "without notifications nothing waits");
    }

    #[test]
    fn the_notify_filter_returns_user_notifications_and_nothing_traces() {
        let program = filters(Network::Loopback, true)
            .expect("compiles")
            .notify
            .expect("loopback notifies");
        let returns: Vec<u32> = program
            .iter()
            .filter(|i| i.code == BPF_RET_K)
            .map(|i| i.k)
            .collect();
        assert!(returns.contains(&libc::SECCOMP_RET_USER_NOTIF));
        assert!(returns
            .iter()
            .all(|k| k & libc::SECCOMP_RET_ACTION_FULL != libc::SECCOMP_RET_TRACE));
    }
}
