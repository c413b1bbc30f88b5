//! Evidence: what protocheck sent a target and what came back, as the
//! transport records it (bounded, credentials redacted) and findings carry it.

use serde::{Deserialize, Serialize};

/// A request as recorded for evidence: bounded and with credentials redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RequestRecord {
    /// `POST http://host/rcp/info`, or `stdin` for the stdio transport.
    pub line: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
}

/// A response as recorded for evidence: bounded excerpt, never the whole body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ResponseRecord {
    /// HTTP status, absent on stdio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// True when `body` is an excerpt of a longer body.
    #[serde(default)]
    pub truncated: bool,
    pub elapsed_ms: u64,
}

/// One request and what came back (or why nothing did).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Exchange {
    pub request: RequestRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Longest run of a secret's characters a text may keep: evidence is cut
/// (bodies at [`super::Limits::evidence_bytes`], header values at 512 bytes)
/// before it is redacted, so a copy of a token a target repeats across the cut
/// survives as a piece that no whole-token search finds; every run of the
/// token's characters this long is hidden too, wherever it sits.
pub const SECRET_RUN: usize = 8;

/// `text` with `secret` hidden: every whole copy, and every run of its
/// characters at least [`SECRET_RUN`] long (half a shorter secret, but never
/// under 4 bytes), each replaced by `shown`. `None` when nothing was hidden.
pub fn hide_secret(text: &str, secret: &str, shown: &str) -> Option<String> {
    if secret.is_empty() {
        return None;
    }
    let whole = text.contains(secret).then(|| text.replace(secret, shown));
    let current = whole.as_deref().unwrap_or(text);
    let run = (secret.len() / 2).clamp(4, SECRET_RUN);
    if secret.len() <= run || current.len() < run {
        return whole;
    }
    let pieces: std::collections::HashSet<&[u8]> = secret.as_bytes().windows(run).collect();
    let bytes = current.as_bytes();
    // Maximal byte ranges covered by pieces of the secret: overlapping or
    // adjacent pieces are one range, so a long run becomes one `shown`.
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for (at, window) in bytes.windows(run).enumerate() {
        if !pieces.contains(window) {
            continue;
        }
        let end = at + run;
        match ranges.last_mut() {
            Some((_, last_end)) if *last_end >= at => *last_end = end,
            _ => ranges.push((at, end)),
        }
    }
    if ranges.is_empty() {
        return whole;
    }
    let mut out = String::with_capacity(current.len());
    let mut kept = 0;
    for (mut start, mut end) in ranges {
        // A secret with multibyte characters can match across one: hide
        // whole characters.
        while !current.is_char_boundary(start) {
            start -= 1;
        }
        while !current.is_char_boundary(end) {
            end += 1;
        }
        if start < kept {
            start = kept;
        }
        out.push_str(&current[kept..start]);
        // A piece right after a copy already hidden is the same copy.
        if !out.ends_with(shown) {
            out.push_str(shown);
        }
        kept = end.max(kept);
    }
    out.push_str(&current[kept..]);
    Some(out)
}

impl Exchange {
    /// Hides `secret` with `shown` wherever it appears (see [`hide_secret`]):
    /// the request line, headers and body, the response headers and body, and
    /// the error.
    pub fn replace_secret(&mut self, secret: &str, shown: &str) {
        if secret.is_empty() {
            return;
        }
        let hide = |text: &mut String| {
            if let Some(hidden) = hide_secret(text, secret, shown) {
                *text = hidden;
            }
        };
        hide(&mut self.request.line);
        hide(&mut self.request.body);
        for (_, value) in &mut self.request.headers {
            hide(value);
        }
        if let Some(response) = &mut self.response {
            hide(&mut response.body);
            for (_, value) in &mut response.headers {
                hide(value);
            }
        }
        if let Some(error) = &mut self.error {
            hide(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "tok-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";

    /// Every substring of `secret` `run` bytes long found in `text`.
    fn leaked_runs(text: &str, secret: &str, run: usize) -> Vec<String> {
        secret
            .as_bytes()
            .windows(run)
            .filter_map(|w| std::str::from_utf8(w).ok())
            .filter(|w| text.contains(w))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_token_cut_at_any_offset_leaves_no_run_of_it() {
        for offset in 0..TOKEN.len() + 4 {
            // The token repeated, an excerpt of it cut at every offset, and
            // the other end: a copy whose start was cut away.
            let repeated = format!("{}{TOKEN}{TOKEN}", "x".repeat(offset));
            for text in [
                repeated[..offset + TOKEN.len() / 2].to_owned(),
                repeated[..(offset + 3).min(repeated.len())].to_owned(),
                repeated[offset.min(repeated.len())..].to_owned(),
                TOKEN[offset.min(TOKEN.len())..].to_owned(),
                TOKEN[..offset.min(TOKEN.len())].to_owned(),
            ] {
                let hidden = hide_secret(&text, TOKEN, "[redacted]").unwrap_or(text.clone());
                let leaked = leaked_runs(&hidden, TOKEN, SECRET_RUN);
                assert!(leaked.is_empty(), "{text:?} -> {hidden:?}: {leaked:?}");
            }
        }
    }

    #[test]
    fn hiding_keeps_what_is_not_the_secret() {
        let text = format!("before {TOKEN} middle {} after", &TOKEN[..20]);
        assert_eq!(
            hide_secret(&text, TOKEN, "[redacted]").as_deref(),
            Some("before [redacted] middle [redacted] after")
        );
        // A run shorter than the limit is not the secret's to hide.
        assert_eq!(hide_secret("tok-012 and more", TOKEN, "[r]"), None);
        assert_eq!(hide_secret("nothing here", TOKEN, "[r]"), None);
        // A short secret is hidden whole, and by its halves.
        assert_eq!(
            hide_secret("a s3cr3tpw b s3cr", "s3cr3tpw", "#").as_deref(),
            Some("a # b #")
        );
        // Multibyte text around and in the secret stays valid UTF-8.
        let secret = "ééééééééé";
        let hidden = hide_secret("xéééééy", secret, "#").expect("hidden");
        assert_eq!(hidden, "x#y");
    }

    #[test]
    fn secrets_are_hidden_in_every_part_of_an_exchange() {
        let cut = &TOKEN[..30];
        let mut x = Exchange {
            request: RequestRecord {
                line: format!("POST http://h/?t={cut}"),
                headers: vec![("x".into(), cut.into())],
                body: TOKEN.into(),
            },
            response: Some(ResponseRecord {
                status: Some(200),
                headers: vec![("echo".into(), format!("Bearer {cut}"))],
                body: format!("{TOKEN}{cut}"),
                truncated: true,
                elapsed_ms: 1,
            }),
            error: Some(format!("bad token {}", &TOKEN[10..])),
        };
        x.replace_secret(TOKEN, "[redacted]");
        let text = serde_json::to_string(&x).expect("json");
        assert!(leaked_runs(&text, TOKEN, SECRET_RUN).is_empty(), "{text}");
        assert_eq!(
            x.response.as_ref().map(|r| r.body.as_str()),
            Some("[redacted]")
        );
    }
}
