//! Whether a text is a URI as RFC 3986 defines it (section 3): a scheme,
//! then a hierarchical part, query and fragment of the allowed characters and
//! well-formed percent-encodings. Judges resource URIs (MCP25-RES-003).

use crate::suite::mcp::client::clip;

/// Why `uri` is not an RFC 3986 URI (section 3), if it is not.
pub(crate) fn uri_problem(uri: &str) -> Option<String> {
    let Some(colon) = uri.find(':') else {
        return Some("it has no scheme".to_owned());
    };
    let scheme = &uri[..colon];
    let mut chars = scheme.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return Some(format!(
            "its scheme `{}` is not a letter followed by letters, digits, `+`, `-` or `.`",
            clip(scheme, 40)
        ));
    }
    let rest = &uri[colon + 1..];
    let (rest, fragment) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    if let Some(Err(e)) = fragment.map(|f| chars_ok(f, ":@/?")) {
        return Some(format!("its fragment {e}"));
    }
    let (hier, query) = match rest.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (rest, None),
    };
    if let Some(Err(e)) = query.map(|q| chars_ok(q, ":@/?")) {
        return Some(format!("its query {e}"));
    }
    match hier.strip_prefix("//") {
        Some(after) => {
            let (authority, path) = after.split_at(after.find('/').unwrap_or(after.len()));
            authority_problem(authority)
                .or_else(|| chars_ok(path, ":@/").err().map(|e| format!("its path {e}")))
        }
        None => chars_ok(hier, ":@/").err().map(|e| format!("its path {e}")),
    }
}

fn authority_problem(authority: &str) -> Option<String> {
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if let Some(u) = userinfo
        && let Err(e) = chars_ok(u, ":")
    {
        return Some(format!("its user information {e}"));
    }
    let (host, port) = if let Some(literal) = hostport.strip_prefix('[') {
        let Some((inside, after)) = literal.split_once(']') else {
            return Some("its IP literal has no closing `]`".to_owned());
        };
        if inside.is_empty()
            || !inside
                .chars()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.' | 'v' | 'V'))
        {
            return Some(format!(
                "its IP literal `[{}]` is malformed",
                clip(inside, 60)
            ));
        }
        match after.strip_prefix(':') {
            Some(port) => ("", Some(port)),
            None if after.is_empty() => ("", None),
            None => return Some("text follows its IP literal".to_owned()),
        }
    } else {
        match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if let Err(e) = chars_ok(host, "") {
        return Some(format!("its host {e}"));
    }
    match port {
        Some(p) if !p.chars().all(|c| c.is_ascii_digit()) => {
            Some(format!("its port `{}` is not digits", clip(p, 40)))
        }
        _ => None,
    }
}

/// Checks that `text` holds only unreserved characters, sub-delimiters,
/// `extra` and well-formed percent-encodings (RFC 3986 section 2).
fn chars_ok(text: &str, extra: &str) -> Result<(), String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3);
            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return Err("has a `%` not followed by two hex digits".to_owned());
            }
            i += 3;
            continue;
        }
        let c = b as char;
        let allowed = b.is_ascii_alphanumeric()
            || "-._~!$&'()*+,;=".contains(c)
            || (b.is_ascii() && extra.contains(c));
        if !allowed {
            let shown = text[i..].chars().next().unwrap_or('?');
            return Err(format!(
                "holds {shown:?}, which RFC 3986 allows only percent-encoded"
            ));
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3986_uris() {
        for good in [
            "file:///project/src/main.rs",
            "https://example.com:8443/a/b?x=1#frag",
            "ref://docs/readme",
            "urn:isbn:0451450523",
            "git://[::1]/repo",
            "custom:%20spaced",
            "mailto:someone@example.com",
        ] {
            assert_eq!(uri_problem(good), None, "{good}");
        }
        for bad in [
            "no-scheme",
            "/just/a/path",
            "ref://docs/read me",
            "1abc:x",
            "x://host:port/",
            "x://h/%zz",
            "x:café",
            "x://[::1/",
            "x:a#b#c",
        ] {
            assert!(uri_problem(bad).is_some(), "{bad}");
        }
    }
}
