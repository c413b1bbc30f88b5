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
    // Run-wide: every initialization of the run, the rules' own sessions
    // included.
    let issued = s.client.issued();
    if issued.is_empty() {
        return no_sessions();
    }
    let mut bad = Vec::new();
    let mut evidence = Vec::new();
    for one in &issued {
        let problem = match &one.id {
            None => Some(format!(
                "an MCP-Session-Id holds bytes outside visible ASCII: `{}`",
                clip(&one.header, 80)
            )),
            Some(sid) => {
                let outside: Vec<String> = sid
                    .chars()
                    .filter(|c| !('\u{21}'..='\u{7e}').contains(c))
                    .map(|c| format!("U+{:04X}", u32::from(c)))
                    .collect();
                (!outside.is_empty()).then(|| {
                    format!(
                        "the session id `{}` holds characters outside 0x21–0x7E: {}",
                        clip(sid, 80),
                        outside.join(", ")
                    )
                })
            }
        };
        if let Some(problem) = problem {
            bad.push(problem);
            evidence.push(one.exchange.clone());
        }
    }
    let j = if bad.is_empty() {
        evidence.push(issued[0].exchange.clone());
        Judgement::pass(format!(
            "each of the {} session ids the run's initializations got is visible ASCII",
            issued.len()
        ))
    } else {
        Judgement::fail(bad.join("; "))
    };
    evidence.iter().fold(j, Judgement::with)
}

pub(super) async fn session_unique(s: &Session) -> Judgement {
    if s.init.session_id.is_none() {
        return no_sessions();
    }
    // Every id the run got (run-wide); when the run opened no second
    // session, one of the rule's own, so that two ids are compared.
    let mut opened = None;
    if s.client.issued().len() < 2 {
        let conn = match s.fresh().await {
            Ok(conn) => conn,
            Err(j) => return j,
        };
        let second = conn.initialize(PROTOCOL_VERSION).await;
        opened = Some((conn, second));
    }
    let issued = s.client.issued();
    let ids: Vec<(&str, &crate::suite::Exchange)> = issued
        .iter()
        .filter_map(|i| i.id.as_deref().map(|id| (id, &i.exchange)))
        .collect();
    let repeated = ids.iter().enumerate().find_map(|(n, (id, ex))| {
        ids[..n]
            .iter()
            .find(|(other, _)| other == id)
            .map(|(_, first)| (*id, *first, *ex))
    });
    let j = match repeated {
        Some((id, first, again)) => Judgement::fail(format!(
            "two initializations got the same session id `{}` ({} initializations of the run \
             compared)",
            clip(id, 80),
            ids.len()
        ))
        .with(first)
        .with(again),
        None if ids.len() < 2 => Judgement::skip(format!(
            "not verified: the run got {} usable MCP-Session-Id{}",
            ids.len(),
            match &opened {
                Some((_, second)) =>
                    format!("; the second initialize was answered {}", second.describe()),
                None => String::new(),
            }
        ))
        .reply(&s.init),
        None => Judgement::pass(format!(
            "the {} initializations of the run got {} different session ids",
            ids.len(),
            ids.len()
        ))
        .with(ids[0].1)
        .with(ids[ids.len() - 1].1),
    };
    if let Some((conn, second)) = opened {
        // A DELETE of an id the run's own session shares would end it too.
        if second.session_id.is_some() && second.session_id != s.init.session_id {
            conn.close().await;
        }
    }
    j
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

/// The other kinds of HTTP request a client sends after `initialize`, which
/// the session and header sentences speak of as well as of a POSTed request
/// ("requests", "all incoming connections").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// A POSTed notification (`notifications/cancelled` for a request id
    /// never sent, which a server ignores when it accepts it).
    Notification,
    /// A GET accepting `text/event-stream` (the stream a server may offer).
    Get,
    /// A DELETE (ending a session).
    Delete,
}

impl Form {
    fn label(self) -> &'static str {
        match self {
            Form::Notification => "a notification POST",
            Form::Get => "a GET",
            Form::Delete => "a DELETE",
        }
    }

    /// Whether 405 to this form says the server offers no such request at
    /// all (GET and DELETE may be refused so; transports, "Listening for
    /// Messages" and "Session Management"), so that it shows nothing of
    /// the header the rule is about.
    fn may_be_405(self) -> bool {
        self != Form::Notification
    }
}

/// `form` sent in `session` (none: no `MCP-Session-Id`), shaped by `bend`,
/// read up to its status (an SSE stream is left at once).
async fn bent_form(
    s: &Session,
    form: Form,
    session: Option<&str>,
    bend: impl FnOnce(HttpRequest) -> HttpRequest,
) -> Result<Raw, Judgement> {
    let (http, url) = target(s)?;
    let req = match form {
        Form::Notification => {
            let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": format!("protocheck-never-sent-{}", s.client.next_id()),
                           "reason": "protocheck: a request never sent"}});
            shaped(s, url, ::http::Method::POST, Some(&body), session)
        }
        Form::Get => shaped(s, url, ::http::Method::GET, None, session),
        Form::Delete => shaped(s, url, ::http::Method::DELETE, None, session),
    };
    Ok(send(s, http, bend(req), Read::Window(Duration::ZERO)).await)
}

/// How `forms` answered a bent request that must get `want` (or, for a GET
/// or DELETE, 405): what was wrong, what could not be sent, and the
/// exchanges.
#[derive(Default)]
struct FormsSeen {
    bad: Vec<String>,
    unsent: Vec<String>,
    refused_405: Vec<&'static str>,
    exchanges: Vec<crate::suite::Exchange>,
}

impl FormsSeen {
    fn judge(&mut self, form: Form, raw: Raw, want: &[u16]) {
        match raw.status {
            None => self
                .unsent
                .push(format!("{}: {}", form.label(), raw.describe())),
            Some(405) if form.may_be_405() && !want.contains(&405) => {
                self.refused_405.push(form.label());
            }
            Some(status) if want.contains(&status) => {}
            Some(_) => self
                .bad
                .push(format!("{} got {}", form.label(), raw.describe())),
        }
        self.exchanges.push(raw.exchange);
    }

    /// The note on forms refused with 405, for a pass message.
    fn note_405(&self) -> String {
        if self.refused_405.is_empty() {
            String::new()
        } else {
            format!(
                "; {} got 405 (the server offers no such request, which the spec allows)",
                self.refused_405.join(" and ")
            )
        }
    }

    fn attach(self, j: Judgement) -> Judgement {
        self.exchanges.iter().fold(j, Judgement::with)
    }
}

/// Sends each of `forms` in `session`, bent by `bend`, side by side.
async fn send_forms(
    s: &Session,
    forms: &[Form],
    session: Option<&str>,
    bend: impl Fn(HttpRequest) -> HttpRequest + Copy,
) -> Result<Vec<(Form, Raw)>, Judgement> {
    let sends = forms.iter().map(|&form| async move {
        bent_form(s, form, session, bend)
            .await
            .map(|raw| (form, raw))
    });
    futures::future::join_all(sends).await.into_iter().collect()
}

/// The forms besides the POSTed request sent to a session that is not the
/// run's own (none, an unknown one, an ended one): a DELETE there can end
/// nothing the run uses.
const OTHER_FORMS: [Form; 3] = [Form::Notification, Form::Get, Form::Delete];

pub(super) async fn session_required(s: &Session) -> Judgement {
    if s.main.session_id().is_none() {
        return no_sessions();
    }
    let strip = |req| set_header(req, H_SESSION_ID, None);
    let (raw, forms) = tokio::join!(bent(s, strip), send_forms(s, &OTHER_FORMS, None, strip));
    let raw = match raw {
        Ok(raw) => raw,
        Err(j) => return j,
    };
    let forms = match forms {
        Ok(forms) => forms,
        Err(j) => return j,
    };
    let mut seen = FormsSeen::default();
    let status = raw.status;
    let described = raw.describe();
    seen.exchanges.push(raw.exchange);
    let j = match status {
        None => Judgement::skip(format!("not verified: the request got {described}")),
        Some(400) => {
            for (form, raw) in forms {
                seen.judge(form, raw, &[400]);
            }
            if !seen.bad.is_empty() {
                Judgement::fail(format!(
                    "a POSTed request without MCP-Session-Id was refused with 400, so the server \
                     requires the session id, yet without it {}, not 400 Bad Request",
                    seen.bad.join("; ")
                ))
            } else if !seen.unsent.is_empty() {
                Judgement::skip(format!("not verified: {}", seen.unsent.join("; ")))
            } else {
                Judgement::pass(format!(
                    "without MCP-Session-Id, a POSTed request, a notification POST, a GET and a \
                     DELETE were each refused with 400{}",
                    seen.note_405()
                ))
            }
        }
        Some(status) if is_2xx(status) => Judgement::info(format!(
            "a request without MCP-Session-Id got {described}: the server issues session ids but \
             does not require them, which the 400 sentence (for servers that require one) does \
             not cover"
        )),
        Some(_) => Judgement::fail(format!(
            "a request without MCP-Session-Id got {described}, not 400 Bad Request"
        )),
    };
    seen.attach(j)
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
            let name = |req| set_header(req, H_SESSION_ID, Some(&sid));
            let (after, forms) =
                tokio::join!(bent(s, name), send_forms(s, &OTHER_FORMS, Some(&sid), name));
            let after = match after {
                Ok(raw) => raw,
                Err(j) => return j,
            };
            let forms = match forms {
                Ok(forms) => forms,
                Err(j) => return j,
            };
            let mut seen = FormsSeen::default();
            match after.status {
                Some(404) => {}
                None => seen
                    .unsent
                    .push(format!("a POSTed request: {}", after.describe())),
                Some(_) => seen
                    .bad
                    .push(format!("a POSTed request got {}", after.describe())),
            }
            seen.exchanges.push(after.exchange);
            for (form, raw) in forms {
                seen.judge(form, raw, &[404]);
            }
            let j = if !seen.bad.is_empty() {
                Judgement::fail(format!(
                    "DELETE answered {status}, yet naming the ended session {}, not 404",
                    seen.bad.join("; ")
                ))
            } else if !seen.unsent.is_empty() {
                Judgement::skip(format!(
                    "not verified: after DELETE, {}",
                    seen.unsent.join("; ")
                ))
            } else {
                Judgement::pass(format!(
                    "after DELETE ({status}), a POSTed request, a notification POST, a GET and a \
                     second DELETE naming the ended session each got 404{}",
                    seen.note_405()
                ))
            };
            return seen.attach(j.reply(&deleted));
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
    let name = |req| set_header(req, H_SESSION_ID, Some(&unknown));
    let (raw, forms) = tokio::join!(
        bent(s, name),
        send_forms(s, &OTHER_FORMS, Some(&unknown), name)
    );
    let raw = match raw {
        Ok(raw) => raw,
        Err(j) => return j,
    };
    let forms = match forms {
        Ok(forms) => forms,
        Err(j) => return j,
    };
    let mut seen = FormsSeen::default();
    match raw.status {
        Some(404 | 400) => {}
        None => seen
            .unsent
            .push(format!("a POSTed request: {}", raw.describe())),
        Some(_) => seen
            .bad
            .push(format!("a POSTed request got {}", raw.describe())),
    }
    let saw_400 = raw.status == Some(400);
    seen.exchanges.push(raw.exchange);
    let mut any_400 = saw_400;
    for (form, raw) in forms {
        any_400 |= raw.status == Some(400);
        seen.judge(form, raw, &[404, 400]);
    }
    let j = if !seen.bad.is_empty() {
        Judgement::fail(format!(
            "naming a session id the server never issued, {}, not 404",
            seen.bad.join("; ")
        ))
    } else if !seen.unsent.is_empty() {
        Judgement::skip(format!("not verified: {}", seen.unsent.join("; ")))
    } else {
        Judgement::pass(format!(
            "a session id never issued got 404 on a POSTed request, a notification POST, a GET \
             and a DELETE{}{}",
            if any_400 {
                " (or 400: the 404 sentence speaks of terminated sessions; 400 for no valid \
                 session is a reading a careful server author can take)"
            } else {
                ""
            },
            seen.note_405()
        ))
    };
    seen.attach(j)
}

/// The `MCP-Protocol-Version` values that must get 400: one malformed, one
/// a well-formed revision no server supports.
const BAD_VERSIONS: [&str; 2] = ["not-a-version", "1999-01-01"];

pub(super) async fn version_header(s: &Session) -> Judgement {
    let sid = s.main.session_id();
    let sid = sid.as_deref();
    let in_session = [Form::Notification, Form::Get];
    let posts = BAD_VERSIONS.map(|version| async move {
        let bend = move |req| set_header(req, H_PROTOCOL_VERSION, Some(version));
        let (post, forms) = tokio::join!(bent(s, bend), send_forms(s, &in_session, sid, bend));
        (version, post, forms)
    });
    let (sent, deletes) = tokio::join!(
        futures::future::join_all(posts),
        delete_bent(s, &BAD_VERSIONS, |req, version| {
            set_header(req, H_PROTOCOL_VERSION, Some(version))
        })
    );
    let mut seen = FormsSeen::default();
    for (version, post, forms) in sent {
        let post = match post {
            Ok(raw) => raw,
            Err(j) => return j,
        };
        match post.status {
            Some(400) => {}
            None => seen.unsent.push(format!(
                "`{version}`: a POSTed request: {}",
                post.describe()
            )),
            Some(_) => seen.bad.push(format!(
                "`{version}`: a POSTed request got {}",
                post.describe()
            )),
        }
        seen.exchanges.push(post.exchange);
        let forms = match forms {
            Ok(forms) => forms,
            Err(j) => return j,
        };
        for (form, raw) in forms {
            let before = (seen.bad.len(), seen.unsent.len());
            seen.judge(form, raw, &[400]);
            prefix_new(&mut seen, before, version);
        }
    }
    let deletes = match deletes {
        Ok(deletes) => deletes,
        Err(j) => return j,
    };
    for (version, raw) in deletes {
        let before = (seen.bad.len(), seen.unsent.len());
        seen.judge(Form::Delete, raw, &[400]);
        prefix_new(&mut seen, before, version);
    }
    seen.refused_405.dedup();
    let j = if !seen.bad.is_empty() {
        Judgement::fail(format!(
            "MCP-Protocol-Version {} (not 400 Bad Request)",
            seen.bad.join("; ")
        ))
    } else if !seen.unsent.is_empty() {
        Judgement::skip(format!("not verified: {}", seen.unsent.join("; ")))
    } else {
        Judgement::pass(format!(
            "MCP-Protocol-Version `not-a-version` and `1999-01-01` each got 400 on a POSTed \
             request, a notification POST and a GET in the run's session, and on a DELETE of a \
             session of the rule's own{}",
            seen.note_405()
        ))
    };
    seen.attach(j)
}

/// Names `value` on the findings `seen` gained since `before`.
fn prefix_new(seen: &mut FormsSeen, before: (usize, usize), value: &str) {
    for item in seen.bad.iter_mut().skip(before.0) {
        *item = format!("`{value}`: {item}");
    }
    for item in seen.unsent.iter_mut().skip(before.1) {
        *item = format!("`{value}`: {item}");
    }
}

/// DELETEs bent by `bend` with each of `values`, one after another, on a
/// session of the rule's own (opened for them: a DELETE the server wrongly
/// accepts ends that session, never the run's); a DELETE accepted ends the
/// rest, the session being gone. On a server that issues no session id they
/// name none (there is no session to end).
async fn delete_bent(
    s: &Session,
    values: &[&'static str],
    bend: impl Fn(HttpRequest, &str) -> HttpRequest,
) -> Result<Vec<(&'static str, Raw)>, Judgement> {
    let own = if s.main.session_id().is_some() {
        let (conn, sid) = own_session(s).await?;
        match sid {
            Some(sid) => Some((conn, sid)),
            None => {
                conn.close().await;
                return Ok(Vec::new());
            }
        }
    } else {
        None
    };
    let sid = own.as_ref().map(|(_, sid)| sid.as_str());
    let mut out = Vec::new();
    let mut ended = false;
    for &value in values {
        let raw = bent_form(s, Form::Delete, sid, |req| bend(req, value)).await?;
        ended = raw.status.is_some_and(is_2xx);
        out.push((value, raw));
        if ended {
            break;
        }
    }
    if let Some((conn, _)) = own
        && !ended
    {
        conn.close().await;
    }
    Ok(out)
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
    let foreign = |req: HttpRequest| req.header("origin", BAD_ORIGIN);
    let sid = s.main.session_id();
    let (first, second, forms, deletes) = tokio::join!(
        send(s, http, req, read),
        bent(s, foreign),
        send_forms(s, &[Form::Notification, Form::Get], sid.as_deref(), foreign),
        delete_bent(s, &[BAD_ORIGIN], |req, origin| req.header("origin", origin)),
    );
    let second = match second {
        Ok(raw) => raw,
        Err(j) => return j,
    };
    let mut seen = FormsSeen::default();
    for (label, raw) in [("`initialize`", &first), ("a request in session", &second)] {
        match raw.status {
            Some(403) => {}
            None => seen.unsent.push(format!("{label}: {}", raw.describe())),
            Some(_) => seen.bad.push(format!("{label} got {}", raw.describe())),
        }
    }
    let forms = match forms {
        Ok(forms) => forms,
        Err(j) => return j,
    };
    for (form, raw) in forms {
        seen.judge(form, raw, &[403]);
    }
    let deletes = match deletes {
        Ok(deletes) => deletes,
        Err(j) => return j,
    };
    for (_, raw) in deletes {
        seen.judge(Form::Delete, raw, &[403]);
    }
    let (bad, unsent) = (seen.bad.clone(), seen.unsent.clone());
    let note = seen.note_405();
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
                "`initialize`, a request, a notification POST and a GET in session, and a DELETE \
                 of a session of the rule's own, with Origin `{BAD_ORIGIN}` each got 403{note}, \
                 and so did a request in session with each look-alike Origin ({}); another port \
                 or scheme of the same host is not sent: the spec leaves it to the server, which \
                 may allow it",
                lookalikes.join(", ")
            )),
            Err(j) => j,
        }
    };
    seen.attach(j.with(&first.exchange).with(&second.exchange))
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
