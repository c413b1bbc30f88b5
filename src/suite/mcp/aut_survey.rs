//! The authorization survey the AUT rules judge: every family probe sent
//! without a token and again with a made-up one, side by side, with their
//! `WWW-Authenticate` challenges; the protected resource metadata (RFC 9728)
//! and each authorization server's metadata (RFC 8414, OpenID Connect
//! discovery). It needs the client, the endpoint's URL and the run's survey
//! (which families the server serves). Its requests go around the client's
//! log and never carry the run's token.

use super::client::{McpClient, Probe};
use super::survey::{self, Survey};
use crate::suite::Exchange;
use crate::transport::{HttpRequest, evidence::ResponseRecord, redact_headers};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use url::Url;

/// Most authorization servers of one PRM document that are probed: the spec
/// gives no number; the finding names the servers left.
pub(crate) const MAX_AUTH_SERVERS: usize = 16;
/// Most distinct `resource_metadata` URLs (of the challenges of every
/// method) that are fetched.
const MAX_METADATA_URLS: usize = 8;
/// A parsed `Bearer` challenge: parameter names lower-cased (RFC 9110 §11.2).
#[derive(Debug, Clone, Default)]
pub(crate) struct Challenge {
    pub(crate) params: BTreeMap<String, String>,
}

impl Challenge {
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    pub(crate) fn scopes(&self) -> Vec<&str> {
        self.get("scope")
            .map(|s| s.split_ascii_whitespace().collect())
            .unwrap_or_default()
    }
}

/// The `Bearer` challenge of a `WWW-Authenticate` value, if it has one.
pub(crate) fn parse_bearer_challenge(header: &str) -> Option<Challenge> {
    let lower = header.to_ascii_lowercase();
    let start = lower.match_indices("bearer").map(|(i, _)| i).find(|&i| {
        (i == 0 || header[..i].trim_end().ends_with(',') || header[..i].ends_with(' '))
            && header[i + 6..]
                .chars()
                .next()
                .is_none_or(|c| c == ' ' || c == ',')
    })?;
    let mut rest = header[start + 6..].trim_start();
    let mut params = BTreeMap::new();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some(eq) = rest.find('=') else { break };
        let name = rest[..eq].trim();
        // A bare word before `=` with a space in it starts the next challenge.
        if name.is_empty() || name.contains(' ') {
            break;
        }
        let after = rest[eq + 1..].trim_start();
        let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, next)) = chars.next() {
                            value.push(next);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &quoted[end.min(quoted.len())..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].trim().to_owned(), &after[end..])
        };
        params.insert(name.to_ascii_lowercase(), value);
        rest = tail;
    }
    Some(Challenge { params })
}

/// The protected resource metadata document, where it was found.
#[derive(Debug, Clone)]
pub(crate) struct Prm {
    pub(crate) url: String,
    pub(crate) via: &'static str,
    pub(crate) doc: Value,
    pub(crate) exchange: Exchange,
}

/// One authorization server of the PRM document and its discovery metadata.
#[derive(Debug, Clone)]
pub(crate) struct AuthServer {
    pub(crate) issuer: String,
    /// The metadata URL and document, when one answered with a JSON object.
    pub(crate) metadata: Option<(String, Value)>,
    pub(crate) tried: Vec<String>,
    pub(crate) exchanges: Vec<Exchange>,
    /// The first document found that named another `issuer` (or none).
    pub(crate) wrong_issuer: Option<(String, Value)>,
}

/// One request of the survey and its answer.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    pub(crate) method: String,
    pub(crate) status: Option<u16>,
    pub(crate) www_authenticate: Option<String>,
    pub(crate) challenge: Option<Challenge>,
    pub(crate) exchange: Exchange,
}

/// A `resource_metadata` URL named by a challenge that served no document.
#[derive(Debug, Clone)]
pub(crate) struct DeadLink {
    pub(crate) url: String,
    pub(crate) why: String,
    pub(crate) exchange: Option<Exchange>,
}

/// What the authorization probes found.
#[derive(Debug, Clone)]
pub(crate) struct AuthSurvey {
    /// 401 when any request without a token got 401; else the status of
    /// the first one answered (`server/discover` comes first).
    pub(crate) status: Option<u16>,
    /// The challenge the metadata was looked up from: of the first 401
    /// (in the order of [`Self::unauthenticated`]) with a Bearer challenge,
    /// else of the first 401.
    pub(crate) www_authenticate: Option<String>,
    pub(crate) challenge: Option<Challenge>,
    pub(crate) challenge_exchange: Exchange,
    /// The family probes, `server/discover` first.
    pub(crate) probes: Vec<Probe>,
    /// Each of [`Self::probes`] sent without a token, in their order.
    pub(crate) unauthenticated: Vec<Asked>,
    /// The same requests carrying [`INVALID_TOKEN_PREFIX`] and random text
    /// as a bearer token.
    pub(crate) invalid: Vec<Asked>,
    /// The same requests carrying the run's limited token
    /// (`--limited-token`), when one was given.
    pub(crate) limited: Vec<Asked>,
    /// The `resource_metadata` URLs that served no document.
    pub(crate) dead_links: Vec<DeadLink>,
    pub(crate) prm: Option<Prm>,
    pub(crate) prm_tried: Vec<String>,
    pub(crate) prm_exchanges: Vec<Exchange>,
    pub(crate) servers: Vec<AuthServer>,
    /// The authorization servers listed past [`MAX_AUTH_SERVERS`], not probed.
    pub(crate) servers_left: usize,
}

/// The made-up bearer token's start (random hex follows): opaque text no
/// authorization server issued.
pub(crate) const INVALID_TOKEN_PREFIX: &str = "protocheck-invalid-";

impl AuthSurvey {
    pub(crate) fn prm_doc(&self) -> Option<&Value> {
        self.prm.as_ref().map(|p| &p.doc)
    }

    /// `authorization_servers` as strings, at most [`MAX_AUTH_SERVERS`].
    pub(crate) fn issuers(&self) -> Vec<String> {
        let mut all = self.all_issuers();
        all.truncate(MAX_AUTH_SERVERS);
        all
    }

    /// Every string of `authorization_servers`.
    fn all_issuers(&self) -> Vec<String> {
        self.prm_doc()
            .and_then(|d| d.get("authorization_servers"))
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The requests without a token that got 401.
    pub(crate) fn refused(&self) -> impl Iterator<Item = &Asked> {
        self.unauthenticated
            .iter()
            .filter(|a| a.status == Some(401))
    }
}

/// GETs a public discovery document: no token, no canary, not logged.
async fn fetch_json(client: &McpClient, url: &Url) -> (Exchange, Result<Value, String>) {
    let req = HttpRequest::get(url.clone())
        .header("accept", "application/json")
        .timeout(client.timeout());
    let (exchange, result) = client.http().exchange(&req).await;
    let value = match result {
        Err(e) => Err(format!("no answer ({e})")),
        Ok(resp) if resp.status != 200 => Err(format!("HTTP {}", resp.status)),
        Ok(resp) => match resp.json() {
            Some(v @ Value::Object(_)) => Ok(v),
            _ => Err("HTTP 200 without a JSON object".to_owned()),
        },
    };
    (exchange, value)
}

/// The well-known PRM locations for `endpoint` (RFC 9728 §3.1), path-inserted first.
pub(crate) fn prm_well_known(endpoint: &Url) -> Vec<Url> {
    let mut out = Vec::new();
    let path = endpoint.path().trim_end_matches('/');
    let mut base = endpoint.clone();
    base.set_query(None);
    base.set_fragment(None);
    if !path.is_empty() {
        base.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
        out.push(base.clone());
    }
    base.set_path("/.well-known/oauth-protected-resource");
    out.push(base);
    out
}

/// The metadata URLs of an issuer in the spec's probe order
/// (authorization-server-discovery: RFC 8414 first, then OpenID Connect).
pub(crate) fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |p: String| {
        let mut u = issuer.clone();
        u.set_query(None);
        u.set_fragment(None);
        u.set_path(&p);
        u
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// The family probes sent without a token: those of the families the run's
/// survey found, or of every family when its `server/discover` got no
/// capabilities (the run has no token and was refused).
fn probes(client: &McpClient, found: &Survey) -> Vec<Probe> {
    if found.capabilities.is_object() {
        return survey::family_probes(client, found);
    }
    let assumed = Survey {
        capabilities: json!({"tools": {}, "resources": {}, "prompts": {}, "completions": {}}),
        ..Survey::default()
    };
    survey::family_probes(client, &assumed)
}

/// Sends `probe` without the run's token, with `token` as a bearer token
/// when given; a `subscriptions/listen` is read up to its head only (its
/// status and headers are what is judged).
async fn ask(client: &McpClient, probe: &Probe, token: Option<&str>) -> Asked {
    let mut req = client.plain_request(probe);
    if let Some(token) = token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let max = client.http().limits().evidence_bytes;
    let (exchange, status, www_authenticate) = if probe.method == "subscriptions/listen" {
        match client.http().send_streaming(&req).await {
            Ok(resp) => {
                let www = resp
                    .headers
                    .get("www-authenticate")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let record = ResponseRecord {
                    status: Some(resp.status),
                    headers: redact_headers(
                        resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
                    ),
                    body: String::new(),
                    truncated: true,
                    elapsed_ms: u64::try_from(resp.started.elapsed().as_millis())
                        .unwrap_or(u64::MAX),
                };
                let exchange = Exchange {
                    request: req.record(max),
                    response: Some(record),
                    error: None,
                };
                (exchange, Some(resp.status), www)
            }
            Err(e) => {
                let exchange = Exchange {
                    request: req.record(max),
                    response: None,
                    error: Some(e.to_string()),
                };
                (exchange, None, None)
            }
        }
    } else {
        let (exchange, result) = client.http().exchange(&req).await;
        match &result {
            Ok(resp) => {
                let www = resp.header("www-authenticate").map(str::to_owned);
                (exchange, Some(resp.status), www)
            }
            Err(_) => (exchange, None, None),
        }
    };
    let challenge = www_authenticate.as_deref().and_then(parse_bearer_challenge);
    Asked {
        method: probe.method.clone(),
        status,
        www_authenticate,
        challenge,
        exchange,
    }
}

/// The discovery metadata of one listed authorization server: the URLs in
/// the spec's order until one serves a document naming exactly `issuer`
/// (a document with another `issuer` is kept as tried, and the next URL is
/// asked: a client MUST NOT use it, and goes on).
async fn authorization_server(client: &McpClient, issuer: String) -> AuthServer {
    let mut server = AuthServer {
        issuer: issuer.clone(),
        metadata: None,
        tried: Vec::new(),
        exchanges: Vec::new(),
        wrong_issuer: None,
    };
    let Ok(issuer_url) = Url::parse(&issuer) else {
        server
            .tried
            .push(format!("{:?} is not a URL", clip(&issuer)));
        return server;
    };
    for url in metadata_urls(&issuer_url) {
        let (exchange, doc) = fetch_json(client, &url).await;
        server.exchanges.push(exchange);
        match doc {
            Ok(doc) => {
                let named = doc.get("issuer").and_then(Value::as_str);
                if named == Some(issuer.as_str()) {
                    server.metadata = Some((url.to_string(), doc));
                    break;
                }
                let named = named.map_or_else(
                    || "no issuer".to_owned(),
                    |i| format!("issuer {:?}", clip(i)),
                );
                server.tried.push(format!("{url}: {named}"));
                if server.wrong_issuer.is_none() {
                    server.wrong_issuer = Some((url.to_string(), doc));
                }
            }
            Err(why) => server.tried.push(format!("{url}: {why}")),
        }
    }
    server
}

fn clip(text: &str) -> String {
    crate::suite::clip(text, 80)
}

/// Takes the authorization survey of the endpoint `url` through `client`
/// (once per run); `found` is the run's survey.
pub(crate) async fn take(
    client: &McpClient,
    url: &Url,
    found: &Survey,
    limited: Option<&str>,
) -> AuthSurvey {
    let probes = probes(client, found);
    // The limited token also calls each tool protocheck may call (read-only,
    // the survey's): a scope may be asked for per tool.
    let limited_probes: Vec<Probe> = if limited.is_some() {
        let calls = found.callable.iter().map(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
            client.request(
                "tools/call",
                json!({"name": name, "arguments": survey::placeholder_arguments(&schema)}),
            )
        });
        probes.iter().cloned().chain(calls).collect()
    } else {
        Vec::new()
    };
    let invalid_token = format!(
        "{INVALID_TOKEN_PREFIX}{}",
        hex::encode(rand::random::<[u8; 16]>())
    );
    let (unauthenticated, invalid, limited) = futures::future::join3(
        futures::future::join_all(probes.iter().map(|p| ask(client, p, None))),
        futures::future::join_all(probes.iter().map(|p| ask(client, p, Some(&invalid_token)))),
        futures::future::join_all(
            limited
                .into_iter()
                .flat_map(|t| limited_probes.iter().map(move |p| (p, t)))
                .map(|(p, t)| ask(client, p, Some(t))),
        ),
    )
    .await;
    let any_401 = unauthenticated.iter().any(|a| a.status == Some(401));
    let status = if any_401 {
        Some(401)
    } else {
        unauthenticated.iter().find_map(|a| a.status)
    };
    let first = unauthenticated
        .iter()
        .filter(|a| a.status == Some(401))
        .find(|a| a.challenge.is_some())
        .or_else(|| unauthenticated.iter().find(|a| a.status == Some(401)))
        .or_else(|| unauthenticated.first());
    let (www_authenticate, challenge, challenge_exchange) = match first {
        Some(a) => (
            a.www_authenticate.clone(),
            a.challenge.clone(),
            a.exchange.clone(),
        ),
        None => (
            None,
            None,
            Exchange {
                request: crate::transport::evidence::RequestRecord {
                    line: String::new(),
                    headers: Vec::new(),
                    body: String::new(),
                },
                response: None,
                error: None,
            },
        ),
    };
    let mut survey = AuthSurvey {
        status,
        www_authenticate,
        challenge,
        challenge_exchange,
        probes,
        unauthenticated,
        invalid,
        limited,
        dead_links: Vec::new(),
        prm: None,
        prm_tried: Vec::new(),
        prm_exchanges: Vec::new(),
        servers: Vec::new(),
        servers_left: 0,
    };
    if !any_401 {
        return survey;
    }
    // Every `resource_metadata` a 401 named (clients prefer it), side by
    // side; then the well-known URIs when none served a document.
    let mut named: Vec<String> = Vec::new();
    for a in survey.refused() {
        if let Some(u) = a
            .challenge
            .as_ref()
            .and_then(|c| c.get("resource_metadata"))
            && !named.iter().any(|n| n == u)
        {
            named.push(u.to_owned());
        }
    }
    named.truncate(MAX_METADATA_URLS);
    let fetched = futures::future::join_all(named.iter().map(|u| async move {
        match Url::parse(u) {
            Err(e) => (u.clone(), None, Err(format!("not a URL ({e})"))),
            Ok(parsed) => {
                let (exchange, doc) = fetch_json(client, &parsed).await;
                (u.clone(), Some(exchange), doc)
            }
        }
    }))
    .await;
    for (u, exchange, doc) in fetched {
        match doc {
            Ok(doc) if survey.prm.is_none() => {
                if let Some(exchange) = exchange {
                    survey.prm = Some(Prm {
                        url: u,
                        via: "the WWW-Authenticate resource_metadata",
                        doc,
                        exchange,
                    });
                }
            }
            Ok(_) => {}
            Err(why) => {
                survey.prm_tried.push(format!("{}: {why}", clip(&u)));
                survey.prm_exchanges.extend(exchange.clone());
                survey.dead_links.push(DeadLink {
                    url: u,
                    why,
                    exchange,
                });
            }
        }
    }
    if survey.prm.is_none() {
        for (i, candidate) in prm_well_known(url).into_iter().enumerate() {
            let via = if i == 0 && !url.path().trim_end_matches('/').is_empty() {
                "the path-inserted well-known URI"
            } else {
                "the root well-known URI"
            };
            let (exchange, doc) = fetch_json(client, &candidate).await;
            match doc {
                Ok(doc) => {
                    survey.prm = Some(Prm {
                        url: candidate.to_string(),
                        via,
                        doc,
                        exchange,
                    });
                    break;
                }
                Err(why) => {
                    survey.prm_tried.push(format!("{candidate}: {why}"));
                    survey.prm_exchanges.push(exchange);
                }
            }
        }
    }
    let issuers = survey.all_issuers();
    survey.servers_left = issuers.len().saturating_sub(MAX_AUTH_SERVERS);
    survey.servers = futures::future::join_all(
        survey
            .issuers()
            .into_iter()
            .map(|issuer| authorization_server(client, issuer)),
    )
    .await;
    survey
}

/// The [`AuthRefusal`] an HTTP answer is, if it is one: 403 whose Bearer
/// challenge says `error="insufficient_scope"`, or 401 with a Bearer
/// challenge. Any other 403 (a policy refusal, a WAF page) is an answer like
/// any other and is judged as one. `headers` are the response's, names
/// lower-cased.
pub fn auth_refusal(
    status: Option<u16>,
    headers: &[(String, String)],
) -> Option<super::wire::AuthRefusal> {
    let status = status?;
    if status != 401 && status != 403 {
        return None;
    }
    let challenges = headers
        .iter()
        .filter(|(name, _)| name == "www-authenticate")
        .filter_map(|(_, value)| parse_bearer_challenge(value));
    for challenge in challenges {
        if status == 401 {
            return Some(super::wire::AuthRefusal::Unauthorized);
        }
        if challenge.get("error") == Some("insufficient_scope") {
            let scope = challenge
                .get("scope")
                .map(|s| crate::suite::clip(s.trim(), 120))
                .filter(|s| !s.is_empty());
            return Some(super::wire::AuthRefusal::Scope(scope));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_an_insufficient_scope_403_or_a_bearer_401_is_an_auth_refusal() {
        use crate::suite::grade::left_by_authorization;
        use crate::suite::mcp::wire::{AuthRefusal, unreached_text};
        let h = |v: &str| vec![("www-authenticate".to_owned(), v.to_owned())];
        let scope = h(r#"Bearer error="insufficient_scope", scope="mcp:read mcp:tools""#);
        assert_eq!(
            auth_refusal(Some(403), &scope),
            Some(AuthRefusal::Scope(Some("mcp:read mcp:tools".into())))
        );
        assert_eq!(
            auth_refusal(Some(403), &h(r#"Bearer error="insufficient_scope""#)),
            Some(AuthRefusal::Scope(None))
        );
        // Any other 403 is an answer, judged as one.
        assert_eq!(
            auth_refusal(Some(403), &h(r#"Bearer error="invalid_token""#)),
            None
        );
        assert_eq!(auth_refusal(Some(403), &[]), None);
        assert_eq!(auth_refusal(Some(403), &h("Basic realm=\"x\"")), None);
        // A 401 with a Bearer challenge; without one it is no OAuth refusal.
        assert_eq!(
            auth_refusal(Some(401), &h(r#"Bearer resource_metadata="http://x/prm""#)),
            Some(AuthRefusal::Unauthorized)
        );
        assert_eq!(auth_refusal(Some(401), &[]), None);
        assert_eq!(auth_refusal(Some(400), &scope), None);
        assert_eq!(auth_refusal(None, &scope), None);

        let text = unreached_text(&[
            (
                "tools/call".into(),
                AuthRefusal::Scope(Some("mcp:tools".into())),
            ),
            (
                "tools/call".into(),
                AuthRefusal::Scope(Some("mcp:tools".into())),
            ),
            ("prompts/get".into(), AuthRefusal::Unauthorized),
        ]);
        assert_eq!(
            text,
            "the token lacks the scope for `tools/call` (`mcp:tools` asked); `prompts/get` needs \
             authorization (HTTP 401)"
        );
        assert_eq!(left_by_authorization(&text), Some(true));
        assert_eq!(
            left_by_authorization("not verified: `a`, `b` need authorization (HTTP 401)"),
            Some(false)
        );
        assert_eq!(
            left_by_authorization(
                "not verified: authorization required: the server requires authorization (HTTP \
                 401) and the run has no bearer token"
            ),
            None
        );
    }

    use super::*;

    #[test]
    fn bearer_challenges_are_parsed() {
        let c = parse_bearer_challenge(
            r#"Basic realm="x", Bearer resource_metadata="https://a/.well-known/x", scope="a b", error=insufficient_scope"#,
        )
        .expect("bearer");
        assert_eq!(c.get("resource_metadata"), Some("https://a/.well-known/x"));
        assert_eq!(c.scopes(), vec!["a", "b"]);
        assert_eq!(c.get("error"), Some("insufficient_scope"));
        assert!(parse_bearer_challenge("Basic realm=\"x\"").is_none());
        assert!(parse_bearer_challenge("Bearer").is_some());
    }

    #[test]
    fn metadata_urls_follow_the_probe_order() {
        let with_path = Url::parse("https://as.example/tenant1").expect("url");
        let urls: Vec<String> = metadata_urls(&with_path)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        let root = Url::parse("https://as.example").expect("url");
        assert_eq!(metadata_urls(&root).len(), 2);
    }
}
