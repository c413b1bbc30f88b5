//! A bearer token goes to the target's own origin and nowhere else: not to
//! the host of a metadata document the server names, not to where a redirect
//! points (issue #27, limits: "a token is never sent to any URL other than
//! the target's own origin (not to a redirect, not to a metadata document's
//! host)").
//!
//! The target is the reference MCP server with `--auth`, behind a layer that
//! moves its protected-resource metadata to another loopback origin and
//! answers every authenticated `prompts/list` with a redirect there. That other
//! origin records what reaches it.

use crate::common;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use protocheck::reference::mcp::{McpReferenceConfig, SCOPE_READ, SCOPE_TOOLS, mcp_router};
use protocheck::suite::runner::Endpoint;
use protocheck::suite::{BearerToken, Finding, Outcome, RunOptions, SuiteChoice};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use url::Url;

/// What reached the other origin: method, path, and the `Authorization`
/// header if one came.
type Seen = Arc<Mutex<Vec<(String, String, Option<String>)>>>;

/// The other origin: records every request, serves metadata documents that
/// keep pointing at itself, and answers anything else 404.
fn elsewhere(seen: Seen, base: Arc<Mutex<String>>) -> axum::Router {
    axum::Router::new().fallback(move |req: axum::extract::Request| {
        let seen = seen.clone();
        let base = base.clone();
        async move {
            let auth = req
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let path = req.uri().path().to_owned();
            seen.lock()
                .expect("lock")
                .push((req.method().to_string(), path.clone(), auth));
            let me = base.lock().expect("lock").clone();
            if path.starts_with("/.well-known/oauth-protected-resource") {
                let doc = json!({
                    "resource": format!("{me}/mcp"),
                    "authorization_servers": [format!("{me}/issuer")],
                    "scopes_supported": [SCOPE_READ, SCOPE_TOOLS],
                });
                return axum::Json(doc).into_response();
            }
            if path.starts_with("/.well-known/") {
                let doc = json!({
                    "issuer": format!("{me}/issuer"),
                    "authorization_endpoint": format!("{me}/issuer/authorize"),
                    "token_endpoint": format!("{me}/issuer/token"),
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                });
                return axum::Json(doc).into_response();
            }
            StatusCode::NOT_FOUND.into_response()
        }
    })
}

/// The layer in front of the target: a challenge's `resource_metadata` is
/// moved to `other`, and an authenticated `prompts/list` is redirected there.
async fn divert(
    axum::extract::State((other, redirected)): axum::extract::State<(String, Arc<AtomicUsize>)>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let authenticated = req.headers().contains_key(header::AUTHORIZATION);
    let lists_prompts = req
        .headers()
        .get("mcp-method")
        .is_some_and(|v| v.as_bytes() == b"prompts/list");
    if authenticated && lists_prompts {
        redirected.fetch_add(1, Ordering::SeqCst);
        let mut resp = StatusCode::TEMPORARY_REDIRECT.into_response();
        if let Ok(v) = HeaderValue::from_str(&format!("{other}/mcp")) {
            resp.headers_mut().insert(header::LOCATION, v);
        }
        return resp;
    }
    let mut resp = next.run(req).await;
    let challenge = resp
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(challenge) = challenge
        && let Some(start) = challenge.find("resource_metadata=\"")
    {
        let from = start + "resource_metadata=\"".len();
        if let Some(len) = challenge[from..].find('"') {
            let moved = format!(
                "{}{other}/.well-known/oauth-protected-resource/mcp{}",
                &challenge[..from],
                &challenge[from + len..]
            );
            if let Ok(v) = HeaderValue::from_str(&moved) {
                resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
            }
        }
    }
    resp
}

#[tokio::test]
async fn the_token_never_leaves_the_targets_origin() {
    let seen = Seen::default();
    let other_base = Arc::new(Mutex::new(String::new()));
    let other = common::app::serve(elsewhere(seen.clone(), other_base.clone())).await;
    *other_base.lock().expect("lock") = other.clone();

    let config = McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_auth();
    let redirected = Arc::new(AtomicUsize::new(0));
    let router = mcp_router(config.clone()).layer(axum::middleware::from_fn_with_state(
        (other.clone(), redirected.clone()),
        divert,
    ));
    let base = common::app::serve(router).await;
    let url = Url::parse(&format!("{base}/mcp")).expect("url");
    let token = config
        .mint_token(
            url.as_str(),
            &format!("{SCOPE_READ} {SCOPE_TOOLS}"),
            Duration::from_secs(600),
        )
        .expect("an --auth server mints tokens");
    let options = RunOptions {
        bearer_token: Some(BearerToken::new(token.clone())),
        ..RunOptions::default()
    };
    let (verdict, findings) = common::suite::run(
        SuiteChoice::Mcp,
        &Endpoint::Http(url),
        &common::suite::loopback(options),
    )
    .await;
    let report = common::suite::dump(&findings);
    assert!(verdict.is_ok(), "{verdict:?}\n{report}");

    let seen = seen.lock().expect("lock").clone();
    // Not vacuous: the metadata the target named was fetched from the other
    // origin, and the redirects were answered (so the run did send requests
    // that a careless client would have followed with its token).
    assert!(
        seen.iter()
            .any(|(_, path, _)| path.starts_with("/.well-known/oauth-protected-resource")),
        "the moved metadata was never fetched: {seen:?}\n{report}"
    );
    assert!(
        redirected.load(Ordering::SeqCst) > 0,
        "no authenticated `prompts/list` was sent:\n{report}"
    );
    for (method, path, auth) in &seen {
        assert!(
            auth.is_none(),
            "{method} {path} on another origin carried `Authorization`"
        );
    }
    assert!(
        !seen.iter().any(|(_, path, _)| path == "/mcp"),
        "a redirect was followed: {seen:?}"
    );
}

/// The verdict of the 2026-07-28 reference server with `--auth`, checked
/// with a token of `scope`.
async fn judged_with_scope(scope: &str) -> (protocheck::suite::Verdict, Vec<Finding>) {
    let config = McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_auth();
    let base = common::app::serve(mcp_router(config.clone())).await;
    let url = Url::parse(&format!("{base}/mcp")).expect("url");
    let token = config
        .mint_token(url.as_str(), scope, Duration::from_secs(600))
        .expect("an --auth server mints tokens");
    let options = RunOptions {
        bearer_token: Some(BearerToken::new(token)),
        ..RunOptions::default()
    };
    let (verdict, findings) = common::suite::run(
        SuiteChoice::Mcp,
        &Endpoint::Http(url),
        &common::suite::loopback(options),
    )
    .await;
    let report = common::suite::dump(&findings);
    (
        verdict.unwrap_or_else(|e| panic!("{e:?}\n{report}")),
        findings,
    )
}

/// A token that reaches `server/discover` and the lists but not `tools/call`
/// (the reference answers that with 403 `insufficient_scope`, before it looks
/// at the headers, which the spec allows): no rule fails on those refusals;
/// the rules whose every probe was refused are "not verified", naming the
/// method and the scope asked, and the verdict names them with the advice.
#[tokio::test]
async fn a_token_without_the_scope_of_a_method_leaves_its_rules_unjudged() {
    let (verdict, findings) = judged_with_scope(SCOPE_READ).await;
    let report = common::suite::dump(&findings);
    let failing: Vec<&Finding> = findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Warn))
        .collect();
    assert!(
        failing.is_empty(),
        "{}: {failing:?}\n{report}",
        verdict.summary
    );
    let asked =
        format!("the token lacks the scope for `tools/call` (`{SCOPE_READ} {SCOPE_TOOLS}` asked)");
    let unjudged: Vec<&str> = findings
        .iter()
        .filter(|f| f.outcome == Outcome::Skip && f.message == format!("not verified: {asked}"))
        .map(|f| f.rule_id.as_str())
        .collect();
    // The Mcp-Param rules probe `tools/call` alone.
    for id in ["MCP-HDR-008", "MCP-HDR-009"] {
        assert!(unjudged.contains(&id), "{id} not left unjudged:\n{report}");
    }
    // A rule probing several methods is judged on the others, and says which
    // it could not judge.
    let header = findings
        .iter()
        .find(|f| f.rule_id == "MCP-HDR-001")
        .expect("MCP-HDR-001");
    assert_eq!(header.outcome, Outcome::Pass, "{report}");
    assert!(header.message.contains(&asked), "{}", header.message);
    assert!(verdict.passed, "{}\n{report}", verdict.summary);
    assert!(
        verdict
            .summary
            .starts_with("strict; the token's scope left ")
            && verdict.summary.contains("MCP-HDR-008")
            && verdict.summary.contains("a token whose scope reaches"),
        "{}",
        verdict.summary
    );
}

/// The same server with a token of every scope it names: strict, and the
/// verdict says nothing of a scope.
#[tokio::test]
async fn a_token_of_every_scope_is_judged_strict() {
    let (verdict, findings) = judged_with_scope(&format!("{SCOPE_READ} {SCOPE_TOOLS}")).await;
    let report = common::suite::dump(&findings);
    assert_eq!(verdict.summary, "strict", "{report}");
    assert!(
        !findings
            .iter()
            .any(|f| f.message.contains("lacks the scope")),
        "{report}"
    );
}

/// The verdict of the 2025-11-25 reference server with `--auth`, checked on
/// that revision with a token of `scope` and, when given, a limited token of
/// `limited` (MCP25-AUT-007).
async fn judged_2025_with_scope(
    scope: &str,
    limited: Option<&str>,
) -> (protocheck::suite::Verdict, Vec<Finding>) {
    use protocheck::reference::mcp2025::{Mcp25ReferenceConfig, mcp25_router};
    use protocheck::suite::McpRevision;
    let config = Mcp25ReferenceConfig::new().with_auth();
    let base = common::app::serve(mcp25_router(config.clone())).await;
    let url = Url::parse(&format!("{base}/mcp")).expect("url");
    let mint = |scope: &str| {
        config
            .mint_token(url.as_str(), scope, Duration::from_secs(600))
            .map(BearerToken::new)
            .expect("an --auth server mints tokens")
    };
    let options = RunOptions {
        bearer_token: Some(mint(scope)),
        limited_token: limited.map(mint),
        mcp_revision: Some(McpRevision::V2025_11_25),
        ..RunOptions::default()
    };
    let (verdict, findings) = common::suite::run(
        SuiteChoice::Mcp,
        &Endpoint::Http(url),
        &common::suite::loopback(options),
    )
    .await;
    let report = common::suite::dump(&findings);
    (
        verdict.unwrap_or_else(|e| panic!("{e:?}\n{report}")),
        findings,
    )
}

/// The 2025-11-25 reference server with `--auth`, checked on that revision
/// with a token of `mcp:read` only: `tools/call` meets 403
/// `insufficient_scope` before the server looks at it. No rule fails or warns
/// on that refusal; each finding it leaves unjudged names the method and the
/// scope asked, and the verdict names those rules with the advice: the tool
/// rules, and the cancellation rule (its calls could not show progress); the
/// progress rules judged on the `ping` say which calls they could not judge.
#[tokio::test]
async fn a_2025_11_25_token_without_the_scope_of_a_method_leaves_its_rules_unjudged() {
    let (verdict, findings) = judged_2025_with_scope(SCOPE_READ, None).await;
    let report = common::suite::dump(&findings);
    let failing: Vec<&Finding> = findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Warn))
        .collect();
    assert!(
        failing.is_empty(),
        "{}: {failing:?}\n{report}",
        verdict.summary
    );
    let asked =
        format!("the token lacks the scope for `tools/call` (`{SCOPE_READ} {SCOPE_TOOLS}` asked)");
    let unjudged: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.outcome == Outcome::Skip && f.message.contains(&asked))
        .collect();
    assert!(
        !unjudged.is_empty(),
        "no finding names the scope:\n{report}"
    );
    for f in &unjudged {
        assert!(
            f.message.starts_with("not verified: "),
            "{}: {}",
            f.rule_id,
            f.message
        );
        assert!(
            verdict.summary.contains(&f.rule_id),
            "{} is not named by the verdict {:?}\n{report}",
            f.rule_id,
            verdict.summary
        );
    }
    let finding = |id: &str| {
        findings
            .iter()
            .find(|f| f.rule_id == id)
            .unwrap_or_else(|| panic!("{id} missing:\n{report}"))
    };
    // Every call the cancellation rule tried was refused: not verified, not
    // "not applicable".
    let cancel = finding("MCP25-UTL-003");
    assert_eq!(
        (cancel.outcome, cancel.message.as_str()),
        (Outcome::Skip, format!("not verified: {asked}").as_str()),
        "{report}"
    );
    for id in ["MCP25-TOL-009", "MCP25-TOL-010", "MCP25-UTL-003"] {
        assert!(
            unjudged.iter().any(|f| f.rule_id == id),
            "{id} is not left unjudged:\n{report}"
        );
    }
    // The passive progress probe's `ping` was answered: the rule is judged on
    // it and names the calls it could not judge.
    let after = finding("MCP25-UTL-006");
    assert_eq!(after.outcome, Outcome::Pass, "{report}");
    assert!(
        after.message.ends_with(&format!("; not judged: {asked}")),
        "{}",
        after.message
    );
    assert!(verdict.passed, "{}\n{report}", verdict.summary);
    assert!(
        verdict
            .summary
            .starts_with("strict; the token's scope left ")
            && verdict.summary.contains("MCP25-UTL-006")
            && verdict.summary.contains(" on part of their probes")
            && verdict.summary.contains("a token whose scope reaches"),
        "{}",
        verdict.summary
    );
    // The rule about that very refusal is not counted as left unjudged.
    assert!(
        !verdict.summary.contains("MCP25-AUT-007"),
        "{}",
        verdict.summary
    );
}

/// The same server with a token of every scope, and the `mcp:read` token as
/// the limited one: MCP25-AUT-007 passes on the 403 `insufficient_scope` it
/// provoked, which leaves nothing unjudged, so the run is `strict` and the
/// verdict says nothing of a scope.
#[tokio::test]
async fn a_2025_11_25_token_of_every_scope_is_judged_strict() {
    let (verdict, findings) =
        judged_2025_with_scope(&format!("{SCOPE_READ} {SCOPE_TOOLS}"), Some(SCOPE_READ)).await;
    let report = common::suite::dump(&findings);
    assert_eq!(verdict.summary, "strict", "{report}");
    let limited = findings
        .iter()
        .find(|f| f.rule_id == "MCP25-AUT-007")
        .expect("MCP25-AUT-007");
    assert_eq!(limited.outcome, Outcome::Pass, "{report}");
    assert!(
        !findings
            .iter()
            .any(|f| f.message.contains("lacks the scope")),
        "{report}"
    );
}
