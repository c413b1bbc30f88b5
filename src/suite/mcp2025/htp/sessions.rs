//! The checks of the session and header rules (MCP25-HTP-012…018).

use super::{Raw, Read, frame, no_sessions, own_session, send, set_header, shaped, target};
use crate::suite::mcp::client::clip;
use crate::suite::mcp::origin;
use crate::suite::mcp::wire::{H_PROTOCOL_VERSION, H_SESSION_ID};
use crate::suite::mcp2025::client::{PROTOCOL_VERSION, client_info};
use crate::suite::mcp2025::session::{Judgement, Session};
use crate::transport::HttpRequest;
use serde_json::json;
use std::time::Duration;

fn is_2xx(status: u16) -> bool {
    (200..300).contains(&status)
}

pub(super) async fn session_ascii(s: &Session) -> Judgement {
    let header = s.init.exchange.response.as_ref().and_then(|r| {
        r.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(H_SESSION_ID))
            .map(|(_, v)| v.clone())
    });
    let j = match (&s.init.session_id, header) {
        (None, None) => return no_sessions(),
        // The header was there but could not be read as visible ASCII.
        (None, Some(value)) => Judgement::fail(format!(
            "the MCP-Session-Id of the initialize answer holds bytes outside visible ASCII: \
             `{}`",
            clip(&value, 80)
        )),
        (Some(sid), _) => {
            let bad: Vec<String> = sid
                .chars()
                .filter(|c| !('\u{21}'..='\u{7e}').contains(c))
                .map(|c| format!("U+{:04X}", u32::from(c)))
                .collect();
            if bad.is_empty() {
                Judgement::pass(format!(
                    "the session id ({} characters) is visible ASCII",
                    sid.chars().count()
                ))
            } else {
                Judgement::fail(format!(
                    "the session id `{}` holds characters outside 0x21–0x7E: {}",
                    clip(sid, 80),
                    bad.join(", ")
                ))
            }
        }
    };
    j.reply(&s.init)
}

pub(super) async fn session_unique(s: &Session) -> Judgement {
    let Some(first) = s.init.session_id.clone() else {
        return no_sessions();
    };
    let conn = match s.fresh().await {
        Ok(conn) => conn,
        Err(j) => return j,
    };
    let second = conn.initialize(PROTOCOL_VERSION).await;
    let j = match &second.session_id {
        None => Judgement::skip(format!(
            "not verified: the second initialize was answered {} without an MCP-Session-Id",
            second.describe()
        )),
        Some(id) if *id == first => Judgement::fail(format!(
            "two initializations got the same session id `{}`",
            clip(id, 80)
        )),
        Some(_) => Judgement::pass("two initializations got two different session ids"),
    };
    // A DELETE of an id the run's own session shares would end it too.
    if second.session_id.as_deref() != Some(first.as_str()) {
        conn.close().await;
    }
    j.reply(&s.init).reply(&second)
}

/// A `ping` (or `tools/list`, when tools are advertised) POSTed in the
/// run's session, shaped by `bend`, read up to its answer.
async fn bent(
    s: &Session,
    bend: impl FnOnce(HttpRequest) -> HttpRequest,
) -> Result<Raw, Judgement> {
    let (http, url) = target(s)?;
    let method = if s.advertises("tools") {
        "tools/list"
    } else {
        "ping"
    };
    let id = json!(s.client.next_id());
    let body = frame(&id, method, json!({}));
    let sid = s.main.session_id();
    let req = bend(shaped(
        s,
        url,
        ::http::Method::POST,
        Some(&body),
        sid.as_deref(),
    ));
    let read = Read::Answer {
        id,
        hard: s.client.timeout(),
        linger: Duration::ZERO,
    };
    Ok(send(s, http, req, read).await)
}

pub(super) async fn session_required(s: &Session) -> Judgement {
    if s.main.session_id().is_none() {
        return no_sessions();
    }
    let raw = match bent(s, |req| set_header(req, H_SESSION_ID, None)).await {
        Ok(raw) => raw,
        Err(j) => return j,
    };
    let j = match raw.status {
        None => Judgement::skip(format!("not verified: the request got {}", raw.describe())),
        Some(400) => Judgement::pass("a request without MCP-Session-Id was refused with 400"),
        Some(status) if is_2xx(status) => Judgement::info(format!(
            "a request without MCP-Session-Id got {}: the server issues session ids but does \
             not require them, which the 400 sentence (for servers that require one) does not \
             cover",
            raw.describe()
        )),
        Some(_) => Judgement::fail(format!(
            "a request without MCP-Session-Id got {}, not 400 Bad Request",
            raw.describe()
        )),
    };
    j.with(&raw.exchange)
}

pub(super) async fn deleted_404(s: &Session) -> Judgement {
    if s.main.session_id().is_none() {
        return no_sessions();
    }
    let (conn, sid) = match own_session(s).await {
        Ok(own) => own,
        Err(j) => return j,
    };
    let Some(sid) = sid else {
        conn.close().await;
        return Judgement::skip("not verified: a second initialize issued no session id");
    };
    let deleted = conn.delete().await;
    let j = match deleted.status {
        Some(405) => {
            Judgement::pass("DELETE answered 405: the server does not let clients end sessions")
        }
        Some(status) if is_2xx(status) => {
            let after = match bent(s, |req| set_header(req, H_SESSION_ID, Some(&sid))).await {
                Ok(raw) => raw,
                Err(j) => return j,
            };
            let j = match after.status {
                Some(404) => {
                    Judgement::pass(format!("after DELETE ({status}), the session id got 404"))
                }
                None => Judgement::skip(format!(
                    "not verified: the request after DELETE got {}",
                    after.describe()
                )),
                Some(_) => Judgement::fail(format!(
                    "DELETE answered {status}, yet a request naming the ended session got {}, \
                     not 404",
                    after.describe()
                )),
            };
            return j.reply(&deleted).with(&after.exchange);
        }
        _ => Judgement::skip(format!(
            "not verified: DELETE got {} (only 2xx and 405 are judged)",
            deleted.describe()
        )),
    };
    j.reply(&deleted)
}

pub(super) async fn unknown_404(s: &Session) -> Judgement {
    if s.main.session_id().is_none() {
        return no_sessions();
    }
    let unknown = format!("protocheck-unknown-{:016x}", rand::random::<u64>());
    let raw = match bent(s, |req| set_header(req, H_SESSION_ID, Some(&unknown))).await {
        Ok(raw) => raw,
        Err(j) => return j,
    };
    let j = match raw.status {
        None => Judgement::skip(format!("not verified: the request got {}", raw.describe())),
        Some(404) => Judgement::pass("a session id never issued got 404"),
        Some(400) => Judgement::pass(
            "a session id never issued got 400 (the 404 sentence speaks of terminated \
             sessions; 400 for no valid session is a reading a careful server author can take)",
        ),
        Some(_) => Judgement::fail(format!(
            "a request naming a session id the server never issued got {}, not 404",
            raw.describe()
        )),
    };
    j.with(&raw.exchange)
}

pub(super) async fn version_header(s: &Session) -> Judgement {
    let mut bad = Vec::new();
    let mut unsent = Vec::new();
    let mut exchanges = Vec::new();
    for version in ["not-a-version", "1999-01-01"] {
        let raw = match bent(s, |req| set_header(req, H_PROTOCOL_VERSION, Some(version))).await {
            Ok(raw) => raw,
            Err(j) => return j,
        };
        match raw.status {
            Some(400) => {}
            None => unsent.push(format!("`{version}`: {}", raw.describe())),
            Some(_) => bad.push(format!("`{version}` got {}", raw.describe())),
        }
        exchanges.push(raw.exchange);
    }
    let j = if !bad.is_empty() {
        Judgement::fail(format!(
            "MCP-Protocol-Version {} (not 400 Bad Request)",
            bad.join("; ")
        ))
    } else if !unsent.is_empty() {
        Judgement::skip(format!("not verified: {}", unsent.join("; ")))
    } else {
        Judgement::pass("MCP-Protocol-Version `not-a-version` and `1999-01-01` each got 400")
    };
    exchanges.iter().fold(j, Judgement::with)
}

/// An Origin no server serves.
const BAD_ORIGIN: &str = "http://protocheck-invalid-origin.example";

pub(super) async fn origin(s: &Session) -> Judgement {
    let Ok((http, url)) = target(s) else {
        return Judgement::skip("not applicable: the target is not an HTTP endpoint");
    };
    let id = json!(s.client.next_id());
    let init = frame(
        &id,
        "initialize",
        json!({"protocolVersion": PROTOCOL_VERSION,
               "capabilities": {}, "clientInfo": client_info()}),
    );
    // The first POST of a session carries no MCP-Protocol-Version (D1).
    let req = set_header(
        shaped(s, url, ::http::Method::POST, Some(&init), None),
        H_PROTOCOL_VERSION,
        None,
    )
    .header("origin", BAD_ORIGIN);
    let read = Read::Answer {
        id,
        hard: s.client.timeout(),
        linger: Duration::ZERO,
    };
    let first = send(s, http, req, read).await;
    let second = match bent(s, |req| req.header("origin", BAD_ORIGIN)).await {
        Ok(raw) => raw,
        Err(j) => return j,
    };
    let mut bad = Vec::new();
    let mut unsent = Vec::new();
    for (label, raw) in [("`initialize`", &first), ("a request in session", &second)] {
        match raw.status {
            Some(403) => {}
            None => unsent.push(format!("{label}: {}", raw.describe())),
            Some(_) => bad.push(format!("{label} got {}", raw.describe())),
        }
    }
    let j = if !bad.is_empty() {
        Judgement::fail(format!(
            "with Origin `{BAD_ORIGIN}`, {} (not 403 Forbidden)",
            bad.join("; ")
        ))
    } else if !unsent.is_empty() {
        Judgement::skip(format!("not verified: {}", unsent.join("; ")))
    } else {
        let lookalikes = origin::lookalikes(url);
        match lookalikes_refused(s, &lookalikes).await {
            Ok(()) => Judgement::pass(format!(
                "`initialize` and a request in session with Origin `{BAD_ORIGIN}` each got 403, \
                 and so did a request in session with each look-alike Origin ({}); another port \
                 or scheme of the same host is not sent: the spec leaves it to the server, which \
                 may allow it",
                lookalikes.join(", ")
            )),
            Err(j) => j,
        }
    };
    j.with(&first.exchange).with(&second.exchange)
}

/// Sends the request in session once with each of `lookalikes` (shared with
/// 2026-07-28's MCP-SEC-001, see `suite::mcp::origin`), side by side: a
/// server that refused a plainly foreign Origin there, yet lets one of these
/// in, compares Origins by prefix or suffix. The request in session alone, not
/// `initialize` too: one request per look-alike, and no session is opened
/// when the server wrongly lets one in.
async fn lookalikes_refused(s: &Session, lookalikes: &[String]) -> Result<(), Judgement> {
    let sends = lookalikes.iter().map(|lookalike| async move {
        let raw = bent(s, |req| req.header("origin", lookalike.as_str())).await;
        (lookalike, raw)
    });
    for (lookalike, raw) in futures::future::join_all(sends).await {
        let raw = raw?;
        let why = match raw.status {
            Some(403) => continue,
            None => {
                return Err(Judgement::skip(format!(
                    "not verified: a request in session with Origin `{lookalike}` got {}",
                    raw.describe()
                ))
                .with(&raw.exchange));
            }
            // The foreign Origin got 403 on the same request, so the Origin
            // check comes before authorization on it.
            Some(401) => {
                " (an inference: the 401 means the Origin check let it through to \
                 authorization, since a foreign Origin got 403 on the same request)"
            }
            Some(_) => "",
        };
        return Err(Judgement::fail(format!(
            "a request in session with Origin `{lookalike}` got {}, though Origin \
             `{BAD_ORIGIN}` got 403; that Origin is invalid for every server ({}), and a \
             present, invalid Origin MUST get 403 Forbidden{why}",
            raw.describe(),
            origin::why_invalid(lookalike)
        ))
        .with(&raw.exchange));
    }
    Ok(())
}
