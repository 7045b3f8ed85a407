//! Whether an address is on the public internet: what a listed name must resolve to unless
//! the server may reach private addresses.
//!
//! Written here from IANA's special-purpose address registries (IPv4 and IPv6, as of 2026):
//! the standard library's `is_global` is still unstable. Everything private, loopback,
//! link-local (where cloud metadata services answer), shared (carrier NAT), documentation,
//! benchmarking, multicast, reserved or unspecified is not public; an IPv4-mapped or NAT64
//! address is judged by the IPv4 address inside it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `address` is a public one.
pub fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => public_v6(v6),
    }
}

fn in_v4(address: Ipv4Addr, network: [u8; 4], bits: u32) -> bool {
    let mask = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    u32::from(address) & mask == u32::from(Ipv4Addr::from(network)) & mask
}

const NOT_PUBLIC_V4: &[([u8; 4], u32)] = &[
    ([0, 0, 0, 0], 8),
    ([10, 0, 0, 0], 8),
    ([100, 64, 0, 0], 10),
    ([127, 0, 0, 0], 8),
    ([169, 254, 0, 0], 16),
    ([172, 16, 0, 0], 12),
    ([192, 0, 0, 0], 24),
    ([192, 0, 2, 0], 24),
    ([192, 88, 99, 0], 24),
    ([192, 168, 0, 0], 16),
    ([198, 18, 0, 0], 15),
    ([198, 51, 100, 0], 24),
    ([203, 0, 113, 0], 24),
    ([224, 0, 0, 0], 4),
    ([240, 0, 0, 0], 4),
];

fn public_v4(address: Ipv4Addr) -> bool {
    !NOT_PUBLIC_V4
        .iter()
        .any(|(network, bits)| in_v4(address, *network, *bits))
}

fn public_v6(address: Ipv6Addr) -> bool {
    let s = address.segments();
    if let Some(v4) = address.to_ipv4_mapped() {
        return public_v4(v4);
    }
    // NAT64's well-known prefix, 64:ff9b::/96.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = s[6].to_be_bytes();
        let [c, d] = s[7].to_be_bytes();
        return public_v4(Ipv4Addr::new(a, b, c, d));
    }
    // Only global unicast (2000::/3) is public, less its special-purpose blocks: IETF
    // protocol assignments and Teredo (2001::/23), documentation (2001:db8::/32, 3fff::/20).
    let global_unicast = s[0] & 0xe000 == 0x2000;
    let ietf = s[0] == 0x2001 && s[1] < 0x0200;
    let documentation = (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && s[1] < 0x1000);
    global_unicast && !ietf && !documentation
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for (address, public) in [
            ("93.184.216.34", true),
            ("8.8.8.8", true),
            ("127.0.0.1", false),
            ("10.1.2.3", false),
            ("172.16.0.1", false),
            ("172.32.0.1", true),
            ("192.168.1.1", false),
            ("169.254.169.254", false),
            ("100.100.100.200", false),
            ("0.0.0.0", false),
            ("224.0.0.1", false),
            ("255.255.255.255", false),
            ("198.18.0.1", false),
            ("2606:4700::1111", true),
            ("::1", false),
            ("::", false),
            ("fe80::1", false),
            ("fd00:ec2::254", false),
            ("ff02::1", false),
            ("2001:db8::1", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:93.184.216.34", true),
            ("64:ff9b::a00:1", false),
            ("64:ff9b::5db8:d822", true),
        ] {
            let parsed: IpAddr = address.parse().expect(address);
            assert_eq!(is_public(parsed), public, "{address}");
        }
    }
}
