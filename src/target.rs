//! Targets: the URL a user submits, validated and put in one canonical form.
//!
//! Two submissions that differ only in case, a default port or a fragment
//! name the same server, so they must dedup to the same target and share one
//! badge. The path and query are kept as given, a trailing slash included:
//! `/mcp/` and `/mcp` are two resources (RFC 3986 §6.2.3 normalises an empty
//! path alone), and a server mounted at one may refuse the other with 404.

use sha2::{Digest, Sha256};
use url::Url;

/// URLs longer than this are refused before parsing: nothing legitimate needs more.
pub const MAX_URL_BYTES: usize = 2048;

/// Why a submitted URL was refused. Each message is shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("the URL is empty")]
    Empty,
    #[error("the URL is {0} bytes long; the limit is {MAX_URL_BYTES}")]
    TooLong(usize),
    #[error("the URL could not be parsed: {0}")]
    Malformed(String),
    #[error("the scheme `{0}` is not supported; use http or https")]
    Scheme(String),
    #[error("the URL carries credentials; pass credentials as run options, never in the URL")]
    Credentials,
    #[error("the URL has no host")]
    NoHost,
    #[error("port 0 cannot be connected to; give the server's port")]
    PortZero,
    #[error(
        "the URL contains {0}, which a URL parser would drop or rewrite into a different URL; remove it"
    )]
    HiddenCharacter(String),
    #[error(
        "the URL must start with `{0}://` followed by the host; extra or missing slashes, and backslashes, would be rewritten into a different URL"
    )]
    Slashes(String),
    #[error(
        "the URL contains `{0}`, which is not a percent-escape (`%` and two hexadecimal digits); write a literal `%` as `%25`"
    )]
    PercentEscape(String),
    /// An IP literal the service's address policy refuses, found before the
    /// run is queued (and counted against its host).
    #[error("the host {host} is a {reason}, which this service does not connect to")]
    Forbidden { host: String, reason: String },
}

/// A validated, canonical target URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalUrl(Url);

impl CanonicalUrl {
    /// Validates `input` and returns its canonical form: lower-case scheme and host
    /// (the URL parser does both for http and https), no default port and no
    /// fragment. The path and query stay as given: every request of a run goes
    /// to this URL, so a trailing slash or a `?key=…` the server needs is kept.
    ///
    /// Only what cannot change the meaning is normalised. Input that a URL
    /// parser would silently turn into a different URL is refused instead:
    /// control characters (the parser drops tabs and line breaks anywhere),
    /// invisible characters (IDNA maps a soft hyphen in a host to nothing),
    /// backslashes and missing or extra slashes after the scheme (`http:///x`
    /// would become `http://x/`). Spaces around the URL are trimmed.
    pub fn parse(input: &str) -> Result<Self, UrlError> {
        let trimmed = input.trim_matches(' ');
        if trimmed.is_empty() {
            return Err(UrlError::Empty);
        }
        if trimmed.len() > MAX_URL_BYTES {
            return Err(UrlError::TooLong(trimmed.len()));
        }
        if let Some(c) = trimmed.chars().find(|&c| is_hidden(c)) {
            return Err(UrlError::HiddenCharacter(describe(c)));
        }
        if let Some(bad) = bad_percent_escape(trimmed) {
            return Err(UrlError::PercentEscape(bad));
        }
        let mut url = Url::parse(trimmed).map_err(|e| UrlError::Malformed(e.to_string()))?;
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(UrlError::Scheme(other.to_owned())),
        }
        // The scheme is ASCII, so its length in the input is its length here.
        let after_scheme = &trimmed[url.scheme().len()..];
        if trimmed.contains('\\')
            || !after_scheme.starts_with("://")
            || after_scheme[3..].starts_with('/')
        {
            return Err(UrlError::Slashes(url.scheme().to_owned()));
        }
        if url.port() == Some(0) {
            return Err(UrlError::PortZero);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Credentials);
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(UrlError::NoHost);
        }
        url.set_fragment(None);
        // A URL that was within the limit can grow when the parser percent-encodes it.
        if url.as_str().len() > MAX_URL_BYTES {
            return Err(UrlError::TooLong(url.as_str().len()));
        }
        Ok(Self(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    pub fn url(&self) -> &Url {
        &self.0
    }

    /// The stable, URL-safe key of this target: the first 12 bytes of the SHA-256
    /// of the canonical URL, in hex. Badges and target pages are addressed by it.
    pub fn key(&self) -> String {
        target_key(self.as_str())
    }
}

/// Characters no one means to put in a URL and a parser drops or rewrites:
/// controls (C0, DEL, C1), whitespace other than the ASCII space (which the
/// parser percent-encodes), and Unicode's default-ignorable code points, which
/// render as nothing (zero-width spaces and joiners, bidi controls, the soft
/// hyphen, variation selectors, tags).
fn is_hidden(c: char) -> bool {
    use icu_properties::{CodePointSetData, props::DefaultIgnorableCodePoint};
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
}

/// The first `%` not followed by two hexadecimal digits, with what follows it
/// (up to two characters). The URL parser keeps such a `%` as it is, but
/// decoders disagree on it (some drop it, some decode `%4` with the next
/// character), so the URL would not name one resource for every client.
fn bad_percent_escape(input: &str) -> Option<String> {
    input.match_indices('%').find_map(|(at, _)| {
        let after = &input[at + 1..];
        let digits = after.bytes().take(2).filter(u8::is_ascii_hexdigit).count();
        (digits < 2).then(|| format!("%{}", after.chars().take(2).collect::<String>()))
    })
}

/// A hidden character as the user can find it again: its code point.
fn describe(c: char) -> String {
    format!("the invisible or control character U+{:04X}", u32::from(c))
}

/// The target key of an already canonical URL (see [`CanonicalUrl::key`]).
pub fn target_key(canonical: &str) -> String {
    let digest = Sha256::digest(canonical.as_bytes());
    hex::encode(&digest[..12])
}

impl std::fmt::Display for CanonicalUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        CanonicalUrl::parse(s)
            .map(|u| u.to_string())
            .unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn broken_percent_escapes_are_refused() {
        for bad in [
            "http://h/%zz",
            "http://h/%4",
            "http://h/a%",
            "http://h/?q=%g1",
        ] {
            assert!(
                matches!(CanonicalUrl::parse(bad), Err(UrlError::PercentEscape(_))),
                "{bad}: {}",
                canon(bad)
            );
        }
        assert_eq!(
            CanonicalUrl::parse("http://h/%zz").err().map(|e| e.to_string()),
            Some("the URL contains `%zz`, which is not a percent-escape (`%` and two hexadecimal digits); write a literal `%` as `%25`".to_owned())
        );
        assert_eq!(canon("http://h/a%2Fb%25"), "http://h/a%2Fb%25");
    }

    #[test]
    fn canonical_forms_agree() {
        assert_eq!(
            canon("HTTP://Example.COM:80/rcp/#frag"),
            "http://example.com/rcp/"
        );
        assert_eq!(canon("https://example.com:443"), "https://example.com/");
        assert_eq!(canon("https://example.com/"), "https://example.com/");
        assert_eq!(
            canon("https://example.com:8443/a//"),
            "https://example.com:8443/a//"
        );
        assert_eq!(canon("http://h/mcp/?key=a%2Fb"), "http://h/mcp/?key=a%2Fb");
        assert_eq!(
            canon("  http://127.0.0.1:9000/mcp?x=1  "),
            "http://127.0.0.1:9000/mcp?x=1"
        );
        let key = |s: &str| CanonicalUrl::parse(s).map(|u| u.key()).ok();
        assert_eq!(
            key("http://EXAMPLE.com/rcp#top"),
            key("http://example.com:80/rcp")
        );
        // A server mounted at `/rcp/` may refuse `/rcp`: two targets.
        assert_ne!(
            key("http://example.com/rcp/"),
            key("http://example.com/rcp")
        );
    }

    #[test]
    fn bad_urls_are_refused_with_a_reason() {
        assert_eq!(CanonicalUrl::parse(""), Err(UrlError::Empty));
        assert!(matches!(
            CanonicalUrl::parse("not a url"),
            Err(UrlError::Malformed(_))
        ));
        assert_eq!(
            CanonicalUrl::parse("ftp://example.com/"),
            Err(UrlError::Scheme("ftp".into()))
        );
        assert_eq!(
            CanonicalUrl::parse("file:///etc/passwd"),
            Err(UrlError::Scheme("file".into()))
        );
        assert_eq!(
            CanonicalUrl::parse("http://u:p@example.com/"),
            Err(UrlError::Credentials)
        );
        assert_eq!(
            CanonicalUrl::parse("http://u@example.com/"),
            Err(UrlError::Credentials)
        );
        assert_eq!(
            CanonicalUrl::parse("http://example.com:0/mcp"),
            Err(UrlError::PortZero)
        );
        let long = format!("http://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(matches!(
            CanonicalUrl::parse(&long),
            Err(UrlError::TooLong(_))
        ));
    }

    /// Each of these would parse, into another URL than the one typed.
    #[test]
    fn input_that_a_parser_would_rewrite_is_refused() {
        for input in [
            "http://exam\rple.com/mcp",
            "http://example.com/m\ncp",
            "http://example.com/mcp\0",
            "http://exa\tmple.com/",
            "\nhttp://example.com/",
            "http://ex\u{AD}ample.com/",
            "http://example\u{200B}.com/",
            "http://example.com/\u{202E}pcm",
            "\u{FEFF}http://example.com/",
            "http://example.com/\u{1B}[31m",
            "http://example.com/\u{85}",
            "http://example.com/\u{A0}",
        ] {
            assert!(
                matches!(
                    CanonicalUrl::parse(input),
                    Err(UrlError::HiddenCharacter(_))
                ),
                "{input:?} -> {:?}",
                CanonicalUrl::parse(input)
            );
        }
        for input in [
            "http:///example.com/mcp",
            "http:example.com/mcp",
            "http:/example.com/mcp",
            "https:\\\\example.com/mcp",
            "http://example.com\\mcp",
            "HTTP:////example.com",
        ] {
            assert!(
                matches!(CanonicalUrl::parse(input), Err(UrlError::Slashes(_))),
                "{input:?} -> {:?}",
                CanonicalUrl::parse(input)
            );
        }
        // Still accepted: spaces around, upper-case schemes, non-ASCII hosts.
        assert_eq!(canon(" HTTPS://Example.com/x "), "https://example.com/x");
        assert_eq!(
            canon("http://bücher.example/"),
            "http://xn--bcher-kva.example/"
        );
    }
}
