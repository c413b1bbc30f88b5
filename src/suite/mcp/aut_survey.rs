//! The authorization survey the AUT rules judge: an unauthenticated
//! `server/discover` and its `WWW-Authenticate` challenge, the protected
//! resource metadata (RFC 9728) and each authorization server's metadata
//! (RFC 8414, OpenID Connect discovery). It needs only the client and the
//! endpoint's URL. Its requests go around the client's log and never carry
//! the run's token.

use super::client::McpClient;
use crate::suite::Exchange;
use crate::transport::HttpRequest;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use url::Url;

/// Most authorization servers of one PRM document that are probed.
const MAX_AUTH_SERVERS: usize = 4;
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
}

/// What the authorization probes found.
#[derive(Debug, Clone)]
pub(crate) struct AuthSurvey {
    pub(crate) status: Option<u16>,
    pub(crate) www_authenticate: Option<String>,
    pub(crate) challenge: Option<Challenge>,
    pub(crate) challenge_exchange: Exchange,
    pub(crate) prm: Option<Prm>,
    pub(crate) prm_tried: Vec<String>,
    pub(crate) prm_exchanges: Vec<Exchange>,
    pub(crate) servers: Vec<AuthServer>,
}

impl AuthSurvey {
    pub(crate) fn prm_doc(&self) -> Option<&Value> {
        self.prm.as_ref().map(|p| &p.doc)
    }

    /// `authorization_servers` as strings, at most [`MAX_AUTH_SERVERS`].
    pub(crate) fn issuers(&self) -> Vec<String> {
        self.prm_doc()
            .and_then(|d| d.get("authorization_servers"))
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .take(MAX_AUTH_SERVERS)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
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

/// Takes the authorization survey of the endpoint `url` through `client`
/// (once per run).
pub(crate) async fn take(client: &McpClient, url: &Url) -> AuthSurvey {
    let probe = client.request("server/discover", json!({}));
    let (challenge_exchange, result) = client.http().exchange(&client.plain_request(&probe)).await;
    let (status, www_authenticate) = match &result {
        Ok(resp) => (
            Some(resp.status),
            resp.header("www-authenticate").map(str::to_owned),
        ),
        Err(_) => (None, None),
    };
    let challenge = www_authenticate.as_deref().and_then(parse_bearer_challenge);
    let mut survey = AuthSurvey {
        status,
        www_authenticate,
        challenge,
        challenge_exchange,
        prm: None,
        prm_tried: Vec::new(),
        prm_exchanges: Vec::new(),
        servers: Vec::new(),
    };
    if status != Some(401) {
        return survey;
    }
    // The header first (clients prefer it), then the well-known URIs.
    let mut candidates: Vec<(Url, &'static str)> = Vec::new();
    if let Some(url) = survey
        .challenge
        .as_ref()
        .and_then(|c| c.get("resource_metadata"))
        .and_then(|u| Url::parse(u).ok())
    {
        candidates.push((url, "the WWW-Authenticate resource_metadata"));
    }
    for (i, candidate) in prm_well_known(url).into_iter().enumerate() {
        let via = if i == 0 && !url.path().trim_end_matches('/').is_empty() {
            "the path-inserted well-known URI"
        } else {
            "the root well-known URI"
        };
        candidates.push((candidate, via));
    }
    for (url, via) in candidates {
        let (exchange, doc) = fetch_json(client, &url).await;
        match doc {
            Ok(doc) => {
                survey.prm = Some(Prm {
                    url: url.to_string(),
                    via,
                    doc,
                    exchange,
                });
                break;
            }
            Err(why) => {
                survey.prm_tried.push(format!("{url}: {why}"));
                survey.prm_exchanges.push(exchange);
            }
        }
    }
    for issuer in survey.issuers() {
        let mut server = AuthServer {
            issuer: issuer.clone(),
            metadata: None,
            tried: Vec::new(),
            exchanges: Vec::new(),
        };
        let Ok(issuer_url) = Url::parse(&issuer) else {
            server.tried.push(format!("{issuer:?} is not a URL"));
            survey.servers.push(server);
            continue;
        };
        for url in metadata_urls(&issuer_url) {
            let (exchange, doc) = fetch_json(client, &url).await;
            server.exchanges.push(exchange);
            match doc {
                Ok(doc) => {
                    server.metadata = Some((url.to_string(), doc));
                    break;
                }
                Err(why) => server.tried.push(format!("{url}: {why}")),
            }
        }
        survey.servers.push(server);
    }
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
