//! Targets: the URL a user submits, validated and put in one canonical form.
//!
//! Two submissions that differ only in case, a default port, a fragment or a
//! trailing slash name the same server, so they must dedup to the same target
//! and share one badge.

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
}

/// A validated, canonical target URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalUrl(Url);

impl CanonicalUrl {
    /// Validates `input` and returns its canonical form: lower-case scheme and host
    /// (the URL parser does both for http and https), no default port, no fragment,
    /// and no trailing slash except on the root path.
    pub fn parse(input: &str) -> Result<Self, UrlError> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err(UrlError::Empty);
        }
        if trimmed.len() > MAX_URL_BYTES {
            return Err(UrlError::TooLong(trimmed.len()));
        }
        let mut url = Url::parse(trimmed).map_err(|e| UrlError::Malformed(e.to_string()))?;
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(UrlError::Scheme(other.to_owned())),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Credentials);
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(UrlError::NoHost);
        }
        url.set_fragment(None);
        let path = url.path().to_owned();
        if path.len() > 1 && path.ends_with('/') {
            url.set_path(path.trim_end_matches('/'));
            if url.path().is_empty() {
                url.set_path("/");
            }
        }
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
    fn canonical_forms_agree() {
        assert_eq!(
            canon("HTTP://Example.COM:80/rcp/#frag"),
            "http://example.com/rcp"
        );
        assert_eq!(canon("https://example.com:443"), "https://example.com/");
        assert_eq!(canon("https://example.com/"), "https://example.com/");
        assert_eq!(
            canon("https://example.com:8443/a//"),
            "https://example.com:8443/a"
        );
        assert_eq!(
            canon("  http://127.0.0.1:9000/mcp?x=1  "),
            "http://127.0.0.1:9000/mcp?x=1"
        );
        assert_eq!(
            CanonicalUrl::parse("http://EXAMPLE.com/rcp/")
                .map(|u| u.key())
                .ok(),
            CanonicalUrl::parse("http://example.com:80/rcp")
                .map(|u| u.key())
                .ok()
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
        let long = format!("http://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(matches!(
            CanonicalUrl::parse(&long),
            Err(UrlError::TooLong(_))
        ));
    }
}
