//! Origins that look like a loopback origin, or like the target's own, and
//! are neither: what MCP-SEC-001 (2026-07-28) and MCP25-HTP-018 (2025-11-25)
//! send beside their one plainly foreign Origin.
//!
//! Both revisions say "Servers MUST validate the `Origin` header on all
//! incoming connections to prevent DNS rebinding attacks. If the `Origin`
//! header is present and invalid, servers MUST respond with HTTP 403
//! Forbidden." They do not say which origins are valid, so a server may allow
//! its own origin, any port or scheme of a loopback name (the official Python
//! SDK allows `http://localhost:*`), or any origin it is configured for. The
//! origins here are invalid for every server all the same: each names a host
//! no page can be served from as a loopback or the target host (a name under
//! the reserved `.invalid` TLD of RFC 2606, or one that only ends in
//! `localhost`), or is `null`, which RFC 6454 §7.3 has a browser send when it
//! hides the origin (any page can send it from a sandboxed frame), so no server
//! can tell who sent it. A server that accepts one of them matches Origin by
//! prefix or suffix, the commonest real Origin bug (issue #25). Beside them,
//! for a target on an explicit port, a foreign host on that very port: the
//! origin of a DNS rebinding page, which a check of the port alone lets in.
//!
//! What is left out, and why: another port or scheme of the same host (a
//! careful server may allow it, see above); a prefix of an IP literal
//! (`http://evil127.0.0.1` is no valid URL host: a host ending in a number is
//! parsed as IPv4, so no browser sends it); a suffix of `[::1]` (no valid
//! host continues an IPv6 literal); a prefix of a domain target host
//! (`evilmcp.example.com` is a sibling under a domain its owner controls and
//! may allow).

use url::{Host, Url};

/// The reserved domain the suffix look-alikes end in (RFC 2606 `.invalid`):
/// never resolvable, so never a page's origin anyone could mean to allow.
const SUFFIX: &str = "protocheck.invalid";

/// The foreign host sent on the target's own port (under [`SUFFIX`]).
const REBINDING_HOST: &str = "rebinding.protocheck.invalid";

/// The loopback names servers allow from a fixed list, taken over `http`, as
/// a prefix match spells them (`[::1]` has no look-alike, see above).
const LOOPBACK: [&str; 2] = ["localhost", "127.0.0.1"];

/// Look-alike origins for a server at `target`, each a syntactically valid
/// serialised origin (RFC 6454 §6.2) or the literal `null`, in a fixed order
/// (so the same server gets the same verdict every run).
pub(crate) fn lookalikes(target: &Url) -> Vec<String> {
    // (scheme, host) pairs to derive from: the loopback names over http,
    // and the target's own host over the target's scheme.
    let mut bases: Vec<(String, String)> = LOOPBACK
        .iter()
        .map(|name| ("http".to_owned(), (*name).to_owned()))
        .collect();
    let own = match target.host() {
        Some(Host::Domain(d)) => Some(d.to_ascii_lowercase()),
        Some(Host::Ipv4(ip)) => Some(ip.to_string()),
        Some(Host::Ipv6(_)) | None => None,
    };
    if let Some(host) = own {
        let pair = (target.scheme().to_ascii_lowercase(), host);
        if !bases.contains(&pair) {
            bases.push(pair);
        }
    }
    let mut out = vec!["null".to_owned()];
    // A foreign host on the target's own explicit port: the origin of a DNS
    // rebinding page, which is served from the port it then reaches the
    // server on. A check of the port alone lets it in.
    if let Some(port) = target.port() {
        out.push(format!(
            "{}://{REBINDING_HOST}:{port}",
            target.scheme().to_ascii_lowercase()
        ));
    }
    for (scheme, host) in &bases {
        // `http://localhost` followed by anything: what a prefix match lets in.
        out.push(format!("{scheme}://{host}.{SUFFIX}"));
        // Ends in `localhost`: what a suffix match on the host lets in. Only
        // for `localhost` itself (see the module comment).
        if host == "localhost" {
            out.push(format!("{scheme}://attacker-{host}"));
        }
    }
    out
}

/// Why `lookalike` (one of [`lookalikes`]) is invalid for every server, for
/// a finding.
pub(crate) fn why_invalid(lookalike: &str) -> &'static str {
    if lookalike.contains(&format!("://{REBINDING_HOST}:")) {
        "it is a foreign host on the server's own port, where a DNS rebinding page is served \
         from: a check of the port alone lets it in"
    } else if lookalike == "null" {
        "`null` is what a browser sends for an origin it hides, as from a sandboxed frame, so \
         any page can send it and no server can tell which did"
    } else if lookalike.ends_with(SUFFIX) {
        "its host only starts with a loopback name or the server's own host and lies under the \
         reserved `.invalid` domain: a prefix match lets it in"
    } else {
        "its host only ends in `localhost`: a suffix match lets it in"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(url: &str) -> Vec<String> {
        lookalikes(&Url::parse(url).expect("test url"))
    }

    #[test]
    fn loopback_target_gets_the_loopback_lookalikes() {
        assert_eq!(
            list("http://127.0.0.1:8080/mcp"),
            [
                "null",
                "http://rebinding.protocheck.invalid:8080",
                "http://localhost.protocheck.invalid",
                "http://attacker-localhost",
                "http://127.0.0.1.protocheck.invalid",
            ]
        );
        assert_eq!(list("http://LOCALHOST:1/mcp"), list("http://[::1]:1/mcp"));
        assert_eq!(
            list("http://127.0.0.1/mcp")[1],
            "http://localhost.protocheck.invalid"
        );
    }

    #[test]
    fn a_remote_or_https_target_adds_its_own_host() {
        assert_eq!(
            list("https://mcp.example.com/mcp")[4..],
            ["https://mcp.example.com.protocheck.invalid".to_owned()]
        );
        assert_eq!(
            list("https://localhost:8443/mcp")[5..],
            [
                "https://localhost.protocheck.invalid".to_owned(),
                "https://attacker-localhost".to_owned(),
            ]
        );
    }

    #[test]
    fn every_lookalike_is_a_valid_origin_and_no_loopback() {
        for target in [
            "http://127.0.0.1:1/mcp",
            "https://mcp.example.com/mcp",
            "http://10.0.0.7:9/mcp",
            "http://[::1]:2/mcp",
        ] {
            for origin in list(target).into_iter().filter(|o| o != "null") {
                let url = Url::parse(&origin).expect("valid origin");
                // A serialised origin: scheme://host[:port], nothing more.
                assert_eq!(url.origin().ascii_serialization(), origin);
                let host = url.host_str().unwrap_or_default();
                assert!(!["localhost", "127.0.0.1", "[::1]"].contains(&host));
            }
        }
    }
}
