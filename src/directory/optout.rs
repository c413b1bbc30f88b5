//! A server owner's way out of the directory: a text file at
//! `{origin}/.well-known/protocheck-optout` that names this service.
//!
//! The file is plain text, one entry a line; blank lines and lines starting
//! with `#` are ignored. A line `*` names every protocheck service; a line
//! holding this service's public URL (`https://protocheck.example.com`, a
//! trailing `/` and the case of the scheme and host aside) names this one.
//! A file that names the service takes every URL of that origin out of the
//! directory for good.
//!
//! The file is fetched like any target: through the service's address guard,
//! at most [`MAX_OPTOUT_BYTES`], within [`OPTOUT_TIMEOUT`], with the
//! directory's User-Agent and no credentials. An answer other than 200 (a
//! 404, an error, a timeout) is no opt-out; it is asked again at the next
//! sync.

use crate::transport::{HttpClient, HttpRequest, Limits};
use std::time::Duration;
use url::Url;

/// Where the file is served on the server's origin.
pub const OPTOUT_PATH: &str = "/.well-known/protocheck-optout";
/// Largest file read; a larger one is no opt-out.
pub const MAX_OPTOUT_BYTES: usize = 16 * 1024;
/// Longest a fetch may take, a `Retry-After` waited out included.
pub const OPTOUT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the owner's file says of this service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptOut {
    /// The file names this service (or every service): leave for good.
    Named,
    /// No file, or one that does not name this service.
    No,
    /// The file could not be read (the reason); asked again next time.
    Unknown(String),
}

/// The client opt-out files are read with: `http`'s address policy, the
/// file's size and time bounds.
pub fn client(http: &HttpClient) -> Result<HttpClient, String> {
    HttpClient::new(
        http.policy(),
        Limits {
            max_body_bytes: MAX_OPTOUT_BYTES,
            request_timeout: OPTOUT_TIMEOUT,
            ..Limits::default()
        },
    )
    .map_err(|e| e.to_string())
}

/// The opt-out file's URL for the server at `url`, or `None` when `url`
/// has no origin protocheck can reach.
pub fn file_url(url: &str) -> Option<Url> {
    let parsed = Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let origin = parsed.origin();
    if !origin.is_tuple() {
        return None;
    }
    Url::parse(&format!("{}{OPTOUT_PATH}", origin.ascii_serialization())).ok()
}

fn normalise(u: &str) -> String {
    u.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// Whether the file's `body` names the service at `public_url` (or every
/// service).
pub fn names_service(body: &str, public_url: Option<&str>) -> bool {
    let me = public_url.map(normalise);
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .any(|l| l == "*" || me.as_deref().is_some_and(|m| normalise(l) == m))
}

/// Reads the opt-out file of `url`'s origin with `optout_client` (see
/// [`client`]).
pub async fn check(
    optout_client: &HttpClient,
    url: &str,
    public_url: Option<&str>,
    user_agent: &str,
) -> OptOut {
    let Some(file) = file_url(url) else {
        return OptOut::Unknown("no origin to ask".into());
    };
    let req = HttpRequest::get(file)
        .header("accept", "text/plain")
        .header("user-agent", user_agent)
        .timeout(OPTOUT_TIMEOUT);
    let resp = match tokio::time::timeout(OPTOUT_TIMEOUT, optout_client.send(&req)).await {
        Ok(Ok(resp)) => resp,
        Ok(Err(e)) => return OptOut::Unknown(e.to_string()),
        Err(_) => return OptOut::Unknown("timed out".into()),
    };
    match resp.status {
        200 => match std::str::from_utf8(&resp.body) {
            Ok(body) if names_service(body, public_url) => OptOut::Named,
            Ok(_) => OptOut::No,
            Err(_) => OptOut::Unknown("not UTF-8 text".into()),
        },
        404 | 410 => OptOut::No,
        other => OptOut::Unknown(format!("HTTP {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_names_this_service_or_every_service() {
        let me = Some("https://protocheck.example.com");
        assert!(names_service(
            "# leave me out\nHTTPS://Protocheck.example.com/\n",
            me
        ));
        assert!(names_service("\n*\n", me));
        assert!(names_service("*", None));
        assert!(!names_service("https://other.example\n# *\n", me));
        assert!(!names_service("", me));
        assert!(!names_service("https://protocheck.example.com", None));
    }

    #[test]
    fn the_file_sits_at_the_origin() {
        assert_eq!(
            file_url("https://mcp.example.com:8443/a/mcp?x=1").map(String::from),
            Some("https://mcp.example.com:8443/.well-known/protocheck-optout".to_owned())
        );
        assert_eq!(file_url("not a URL"), None);
        assert_eq!(file_url("mailto:owner@example.com"), None);
        assert_eq!(file_url("ftp://example.com/"), None);
    }
}
