//! The SSRF guard: which addresses a target may resolve to.
//!
//! The check runs on resolved addresses, inside the HTTP client's resolver, so
//! the address that is checked is the address that is connected to: a name that
//! resolves to a public address once and to 127.0.0.1 the next time (DNS
//! rebinding) is checked both times.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Which target addresses are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressPolicy {
    /// Only globally routable unicast addresses. The default for a service that
    /// listens on anything other than loopback.
    PublicOnly,
    /// Private, loopback and link-local targets too (a service on loopback, or an
    /// operator's explicit `PROTOCHECK_ALLOW_PRIVATE_TARGETS=1`). Cloud metadata
    /// endpoints stay refused: nobody tests a conformance suite against them.
    AllowPrivate,
}

/// Cloud instance-metadata addresses, refused under every policy.
const METADATA_V4: &[Ipv4Addr] = &[
    Ipv4Addr::new(169, 254, 169, 254), // AWS, GCP, Azure, OpenStack
    Ipv4Addr::new(169, 254, 170, 2),   // AWS ECS task metadata
    Ipv4Addr::new(100, 100, 100, 200), // Alibaba Cloud
    Ipv4Addr::new(192, 0, 0, 192),     // Oracle Cloud
];
const METADATA_V6: &[Ipv6Addr] = &[Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)];

impl AddressPolicy {
    /// `Ok` when `ip` may be connected to, else the reason it may not.
    pub fn check(self, ip: IpAddr) -> Result<(), &'static str> {
        let ip = canonical(ip);
        if is_metadata(ip) {
            return Err("cloud metadata address");
        }
        match self {
            Self::AllowPrivate => Ok(()),
            Self::PublicOnly => match classify(ip) {
                None => Ok(()),
                Some(reason) => Err(reason),
            },
        }
    }
}

/// The machine an address belongs to, as the per-host limits count it (#31
/// item 1): every spelling of one address gives the same key. IPv4 carried
/// inside IPv6 (mapped, NAT64, 6to4) is its IPv4 address; every loopback
/// address (`127.0.0.0/8`, `::1`) is this one machine, `127.0.0.1`; any other
/// IPv6 address counts by its /64, the block one subscriber (one machine, or
/// one customer's machines) is given, so that walking the addresses of a /64
/// is not a new host each time.
pub fn machine_of(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V4(v4) if v4.is_loopback() => Ipv4Addr::LOCALHOST.to_string(),
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) if v6.is_loopback() => Ipv4Addr::LOCALHOST.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let net = Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
            format!("{net}/64")
        }
    }
}

/// The machine a URL's host names, as far as it can be told without a DNS
/// lookup: an IP literal's [`machine_of`]; `localhost` and names under it
/// (RFC 6761: they always resolve to loopback) are this machine; any other
/// name is itself, lower case, without the trailing dot that names the same
/// name fully qualified.
pub fn machine_of_host(host: &url::Host<&str>) -> String {
    match host {
        url::Host::Ipv4(v4) => machine_of(IpAddr::V4(*v4)),
        url::Host::Ipv6(v6) => machine_of(IpAddr::V6(*v6)),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if name == "localhost" || name.ends_with(".localhost") {
                Ipv4Addr::LOCALHOST.to_string()
            } else {
                name
            }
        }
    }
}

/// IPv4 addresses carried inside IPv6 (mapped, NAT64, 6to4) are judged as IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            // 64:ff9b::/96, the well-known NAT64 prefix.
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                return IpAddr::V4(embedded_v4(s[6], s[7]));
            }
            // 2002::/16, 6to4: the IPv4 address sits in the next 32 bits.
            if s[0] == 0x2002 {
                return IpAddr::V4(embedded_v4(s[1], s[2]));
            }
            IpAddr::V6(v6)
        }
        v4 => v4,
    }
}

fn embedded_v4(hi: u16, lo: u16) -> Ipv4Addr {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

fn is_metadata(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => METADATA_V4.contains(&v4),
        IpAddr::V6(v6) => METADATA_V6.contains(&v6),
    }
}

/// `None` for a public unicast address, else what kind of non-public address it is.
fn classify(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) => Some("unspecified address (0.0.0.0/8)"),
        (127, _, _) => Some("loopback address"),
        (10, _, _) | (192, 168, _) => Some("private address"),
        (172, 16..=31, _) => Some("private address"),
        (100, 64..=127, _) => Some("carrier-grade NAT address (100.64.0.0/10)"),
        (169, 254, _) => Some("link-local address"),
        (192, 0, 0) => Some("IETF protocol assignment (192.0.0.0/24)"),
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Some("documentation address"),
        (198, 18..=19, _) => Some("benchmarking address (198.18.0.0/15)"),
        (224..=239, _, _) => Some("multicast address"),
        (240..=255, _, _) => Some("reserved or broadcast address"),
        _ => None,
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_unspecified() {
        Some("unspecified address (::)")
    } else if ip.is_loopback() {
        Some("loopback address")
    } else if s[0] & 0xfe00 == 0xfc00 {
        Some("unique-local address (fc00::/7)")
    } else if s[0] & 0xffc0 == 0xfe80 || s[0] & 0xffc0 == 0xfec0 {
        Some("link-local or site-local address")
    } else if s[0] & 0xff00 == 0xff00 {
        Some("multicast address")
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Some("documentation address (2001:db8::/32)")
    } else if s[0] == 0x2001 && s[1] == 0 {
        // Teredo tunnels reach arbitrary IPv4 hosts, private ones included.
        Some("Teredo address (2001::/32)")
    } else if s[0..4] == [0x100, 0, 0, 0] {
        Some("discard-only address (100::/64)")
    } else if s[0..6] == [0, 0, 0, 0, 0, 0] {
        // ::a.b.c.d, the deprecated IPv4-compatible form.
        Some("IPv4-compatible address (::/96)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        AddressPolicy::PublicOnly
            .check(s.parse().expect("test literal"))
            .is_ok()
    }

    #[test]
    fn public_only_refuses_every_non_public_range() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.254",
            "169.254.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "240.0.0.1",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "2001:db8::1",
            "fd00:ec2::254",
        ] {
            assert!(!public(ip), "{ip} must be refused");
        }
    }

    #[test]
    fn public_only_allows_public_unicast() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
        ] {
            assert!(public(ip), "{ip} must be allowed");
        }
    }

    #[test]
    fn every_spelling_of_one_address_is_one_machine() {
        let machine = |s: &str| machine_of(s.parse().expect("test literal"));
        for spelling in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(machine(spelling), "127.0.0.1", "{spelling}");
        }
        assert_eq!(machine("::ffff:8.8.8.8"), "8.8.8.8");
        assert_eq!(machine("64:ff9b::808:808"), "8.8.8.8");
        assert_eq!(machine("2002:808:808::1"), "8.8.8.8");
        assert_eq!(machine("2606:4700:1:2:3:4:5:6"), "2606:4700:1:2::/64");
        assert_eq!(
            machine("2606:4700:1:2::9"),
            machine("2606:4700:1:2:ffff::1"),
            "one /64"
        );
        assert_ne!(machine("2606:4700:1:2::1"), machine("2606:4700:1:3::1"));
        assert_ne!(machine("8.8.8.8"), machine("8.8.4.4"));
    }

    #[test]
    fn names_that_are_this_machine_without_a_lookup() {
        let host = |s: &str| {
            let url = url::Url::parse(&format!("http://{s}:9/")).expect("url");
            machine_of_host(&url.host().expect("host"))
        };
        for spelling in [
            "localhost",
            "LOCALHOST.",
            "app.localhost",
            "127.0.0.1",
            "[::ffff:127.0.0.1]",
            "[::1]",
        ] {
            assert_eq!(host(spelling), "127.0.0.1", "{spelling}");
        }
        assert_eq!(host("Example.COM."), "example.com");
        assert_eq!(host("example.com"), "example.com");
    }

    #[test]
    fn allow_private_still_refuses_metadata() {
        let p = AddressPolicy::AllowPrivate;
        assert!(p.check("127.0.0.1".parse().expect("ip")).is_ok());
        assert!(p.check("10.0.0.1".parse().expect("ip")).is_ok());
        assert!(p.check("169.254.169.254".parse().expect("ip")).is_err());
        assert!(
            p.check("::ffff:169.254.169.254".parse().expect("ip"))
                .is_err()
        );
        assert!(p.check("fd00:ec2::254".parse().expect("ip")).is_err());
    }
}
