//! "Sign in to check this server": protocheck as an OAuth 2.1 public client
//! of a protected MCP server's authorization server, for a person on the web
//! form, as the MCP authorization spec describes it (both revisions):
//!
//! 1. `POST /runs/{id}/sign-in` (from the page of a run whose server asked
//!    for authorization): an unauthenticated request for the challenge, the
//!    protected resource metadata (RFC 9728), the authorization server's
//!    metadata (RFC 8414 or OpenID Connect discovery, path-insertion forms
//!    first), then client registration: protocheck's Client ID Metadata
//!    Document (`GET /sign-in/client.json`) where the metadata advertises
//!    `client_id_metadata_document_supported`, dynamic registration (RFC 7591)
//!    otherwise. The browser is sent (303) to the authorization endpoint with
//!    a PKCE S256 challenge, the `resource` parameter (RFC 8707) and the
//!    challenge's scopes.
//! 2. The person signs in at the authorization server, which sends the
//!    browser back to `GET /sign-in/callback` with a code. protocheck checks
//!    the `state` and the browser (a cookie set at step 1), the `iss`
//!    parameter (RFC 9207), exchanges the code and the verifier for a token
//!    at the token endpoint, and queues a run of the server with it under the
//!    rules of `credentials` (sealed, used for that run only, wiped when it
//!    ends).
//!
//! Each step is recorded ([`crate::suite::sign_in`]) and judged by the
//! authorization rule it bears on. A step that the server or its
//! authorization server got wrong ends the sign-in: the run is queued
//! without a token and its report says where the sign-in stopped. Pending
//! sign-ins live in memory, bounded and for ten minutes: a restart of the
//! service forgets them, and the person starts again from the run page.
//! Every request goes through the address guard; the token is sent only
//! with the run, to the target's own origin.

use crate::credentials::Credentials;
use crate::submit::Submission;
use crate::suite::mcp::aut_survey;
use crate::suite::mcp::client::McpClient;
use crate::suite::sign_in::{SignIn, SignInStep, redact};
use crate::suite::{BearerToken, Exchange, Outcome, RunOptions, SuiteChoice};
use crate::transport::{AddressPolicy, HttpClient, HttpRequest, Limits};
use crate::web::AppState;
use crate::web::error::{PageResult, WebError};
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use url::Url;
use uuid::Uuid;
use zeroize::Zeroizing;

/// Most sign-ins waiting for their callback; the oldest is dropped first.
const MAX_PENDING: usize = 1024;
/// How long a person has to sign in.
const PENDING_LIFETIME: Duration = Duration::from_secs(600);
/// The cookie that ties a callback to the browser that started the sign-in.
/// `SameSite=Lax`: the callback is a top-level navigation from another site,
/// on which a `Strict` cookie is not sent.
const SIGN_IN_COOKIE: &str = "pc_sign_in";
/// Per-request time for discovery, registration and the token request.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest value of an endpoint URL taken from metadata.
const MAX_ENDPOINT_LEN: usize = 2048;

struct StepView {
    step: String,
    outcome: &'static str,
    message: String,
}

#[derive(askama::Template)]
#[template(path = "sign_in.html")]
struct ContinuePage {
    url: String,
    run_id: Uuid,
    steps: Vec<StepView>,
    authorization_host: String,
    location: String,
}

/// A sign-in that has sent its browser to the authorization server.
struct Pending {
    created: Instant,
    /// The value of [`SIGN_IN_COOKIE`] in the browser that started it.
    browser: String,
    url: String,
    suite: SuiteChoice,
    options: RunOptions,
    issuer: String,
    /// Whether the metadata advertises `authorization_response_iss_parameter_supported`.
    iss_advertised: bool,
    token_endpoint: Url,
    client_id: String,
    redirect_uri: String,
    resource: String,
    verifier: Zeroizing<String>,
    registration: &'static str,
    steps: Vec<SignInStep>,
    /// Who started it (see `ratelimit::submitter_of`).
    submitter: String,
}

/// The sign-ins under way and the guarded client they use.
pub struct SignInFlows {
    http: HttpClient,
    pending: Mutex<HashMap<String, Pending>>,
}

impl SignInFlows {
    /// Sign-ins whose requests go through `policy` (the workers' own),
    /// trusting `extra_roots` (DER) beside the public roots, as the workers do.
    pub fn new(policy: AddressPolicy, extra_roots: Vec<Vec<u8>>) -> anyhow::Result<Self> {
        Ok(Self {
            http: HttpClient::with_extra_roots(policy, Limits::default(), extra_roots)?,
            pending: Mutex::new(HashMap::new()),
        })
    }

    fn keep(&self, state: String, pending: Pending) {
        let Ok(mut map) = self.pending.lock() else {
            return;
        };
        map.retain(|_, p| p.created.elapsed() < PENDING_LIFETIME);
        while map.len() >= MAX_PENDING {
            let Some(oldest) = map
                .iter()
                .min_by_key(|(_, p)| p.created)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            map.remove(&oldest);
        }
        map.insert(state, pending);
    }

    fn take(&self, state: &str) -> Option<Pending> {
        let mut map = self.pending.lock().ok()?;
        map.remove(state)
            .filter(|p| p.created.elapsed() < PENDING_LIFETIME)
    }
}

fn random_token() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

/// The URL of protocheck's Client ID Metadata Document and its redirect URI.
fn client_urls(base: &str) -> (String, String) {
    (
        format!("{base}/sign-in/client.json"),
        format!("{base}/sign-in/callback"),
    )
}

/// `GET /sign-in/client.json`: protocheck's Client ID Metadata Document.
pub async fn client_metadata(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let base = crate::web::badge::public_base(&state, &headers);
    let (client_id, redirect_uri) = client_urls(&base);
    let mut resp = axum::Json(json!({
        "client_id": client_id,
        "client_name": "protocheck",
        "client_uri": base,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }))
    .into_response();
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    resp
}

/// An endpoint of the authorization server's metadata that protocheck sends a
/// browser or a request to: https, or http to a loopback host (a test's).
fn endpoint(metadata: &Value, name: &str) -> Result<Url, String> {
    let Some(raw) = metadata.get(name).and_then(Value::as_str) else {
        return Err(format!("the metadata has no `{name}`"));
    };
    if raw.len() > MAX_ENDPOINT_LEN {
        return Err(format!("`{name}` is longer than {MAX_ENDPOINT_LEN} bytes"));
    }
    let url = Url::parse(raw).map_err(|_| format!("`{name}` is not an absolute URL"))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err(format!(
            "`{name}` ({raw}) is not an https URL (OAuth 2.1 §1.5: every endpoint but loopback redirect URIs uses TLS)"
        )),
    }
}

fn step(name: &str, rules: &[&str], outcome: Outcome, message: impl Into<String>) -> SignInStep {
    SignInStep {
        step: name.to_owned(),
        rules: rules.iter().map(|r| (*r).to_owned()).collect(),
        outcome,
        message: message.into(),
        evidence: Vec::new(),
    }
}

#[derive(Debug, Deserialize)]
pub struct StartForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /runs/{id}/sign-in`.
pub async fn start(
    State(state): State<AppState>,
    crate::web::api::ClientAddr(client): crate::web::api::ClientAddr,
    crate::web::extract::PagePath(id): crate::web::extract::PagePath<String>,
    headers: HeaderMap,
    form: Result<Form<StartForm>, axum::extract::rejection::FormRejection>,
) -> PageResult<Response> {
    let Some(flows) = state.sign_in.as_ref() else {
        return Err(WebError::NotFound(
            "This service does not sign in to servers: its operator has not given it a credentials key (PROTOCHECK_CREDENTIALS_KEY).".into(),
        )
        .into());
    };
    if !super::pages::same_origin(&headers) {
        return Err(WebError::Forbidden(
            "This form can only be submitted from protocheck's own page.".into(),
        )
        .into());
    }
    state
        .limiter
        .check_addr(client)
        .map_err(|rate| WebError::RateLimited { key: None, rate })?;
    let Form(form) = form.map_err(WebError::from)?;
    if super::pages::csrf_cookie(&headers).as_deref() != Some(form.csrf.as_str())
        || form.csrf.is_empty()
    {
        return Err(WebError::Forbidden(
            "The page has expired. Reload the run's page and sign in again.".into(),
        )
        .into());
    }
    let id = Uuid::parse_str(&id).map_err(|_| {
        WebError::NotFound(format!(
            "No run has the id `{}`.",
            id.chars().take(64).collect::<String>()
        ))
    })?;
    let run = crate::web::store_deadline(state.store.as_ref(), async {
        state.store.get_run(id).await.map_err(WebError::from)
    })
    .await?
    .ok_or_else(|| WebError::NotFound(format!("No run has the id `{id}`.")))?;
    if run.suite == SuiteChoice::Rcp {
        return Err(WebError::SignIn(
            "This run is of the RCP suite; signing in is for MCP servers that require authorization.".into(),
        )
        .into());
    }
    let url = Url::parse(&run.target_url)
        .map_err(|_| WebError::SignIn("The run's URL does not parse.".into()))?;
    let base = crate::web::badge::public_base(&state, &headers);
    let (cimd_url, redirect_uri) = client_urls(&base);

    // Discovery: the same survey the authorization rules take.
    let http = flows
        .http
        .for_target(&url)
        .map_err(|e| WebError::SignIn(format!("The server cannot be reached: {e}")))?;
    let mcp = McpClient::new(http, url.clone(), STEP_TIMEOUT, 1);
    // No run survey here: every method family is asked for without a token.
    let survey = aut_survey::take(
        &mcp,
        &url,
        &crate::suite::mcp::survey::Survey::default(),
        None,
    )
    .await;
    if survey.status != Some(401) {
        return Err(WebError::SignIn(match survey.status {
            Some(s) => format!(
                "The server did not ask for authorization: no request without a token got HTTP 401 (`server/discover` was answered HTTP {s}). There is nothing to sign in to."
            ),
            None => match survey.challenge_exchange.error.as_deref() {
                Some(e) if e.contains("certificate") => format!(
                    "The server did not answer an unauthenticated `server/discover`: {e}. A server \
                     whose certificate an internal CA issued can be signed in to once the service \
                     trusts that CA (PROTOCHECK_CA_CERT)."
                ),
                Some(e) => format!(
                    "The server did not answer an unauthenticated `server/discover`: {e}."
                ),
                None => "The server did not answer an unauthenticated `server/discover`.".into(),
            },
        })
        .into());
    }
    let Some(prm) = survey.prm.as_ref() else {
        return Err(WebError::SignIn(format!(
            "Sign-in cannot go on: no protected resource metadata was found ({}). The run's MCP-AUT-001 and MCP-AUT-002 findings show what was asked.",
            survey.prm_tried.join("; ")
        ))
        .into());
    };
    let mut steps = vec![step(
        "protected resource metadata",
        &[],
        Outcome::Pass,
        format!("found at {} (through {})", prm.url, prm.via),
    )];
    let Some((server, (metadata_url, metadata))) = survey
        .servers
        .iter()
        .find_map(|s| s.metadata.as_ref().map(|m| (s, m)))
    else {
        return Err(WebError::SignIn(
            "Sign-in cannot go on: no listed authorization server publishes metadata. The run's MCP-AUT-004 finding shows what was asked.".into(),
        )
        .into());
    };
    let issuer = metadata
        .get("issuer")
        .and_then(Value::as_str)
        .unwrap_or(&server.issuer)
        .to_owned();
    steps.push(step(
        "authorization server metadata",
        &[],
        Outcome::Pass,
        format!("found at {metadata_url}"),
    ));
    let resource = prm
        .doc
        .get("resource")
        .and_then(Value::as_str)
        .map_or_else(|| url.to_string(), str::to_owned);
    let scope = survey
        .challenge
        .as_ref()
        .map(|c| c.scopes().join(" "))
        .filter(|s| !s.is_empty())
        .or_else(|| {
            prm.doc
                .get("scopes_supported")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .filter(|s| !s.is_empty())
        });

    let mut pending = Pending {
        created: Instant::now(),
        browser: random_token(),
        url: run.target_url.clone(),
        suite: run.suite,
        options: RunOptions {
            sign_in: None,
            ..run.options.clone()
        },
        issuer: issuer.clone(),
        iss_advertised: metadata
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            == Some(true),
        token_endpoint: Url::parse("http://127.0.0.1/")
            .map_err(|e| WebError::Internal(e.to_string()))?,
        client_id: String::new(),
        redirect_uri: redirect_uri.clone(),
        resource: resource.clone(),
        verifier: Zeroizing::new(random_token()),
        registration: "",
        steps,
        submitter: super::ratelimit::submitter_of(None, client),
    };

    let endpoints = endpoint(metadata, "authorization_endpoint")
        .and_then(|a| endpoint(metadata, "token_endpoint").map(|t| (a, t)));
    let (authorize, token_endpoint) = match endpoints {
        Ok(e) => e,
        Err(why) => {
            pending.steps.push(step(
                "endpoints",
                &["MCP-AUT-004", "MCP25-AUT-004"],
                Outcome::Fail,
                format!("{why}; an authorization-code client needs both endpoints (RFC 8414 §2)"),
            ));
            return stopped(&state, pending).await;
        }
    };
    pending.token_endpoint = token_endpoint;
    let s256 = metadata
        .get("code_challenge_methods_supported")
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|m| m == "S256"));
    if !s256 {
        pending.steps.push(step(
            "PKCE",
            &["MCP-AUT-010"],
            Outcome::Fail,
            "the metadata does not list S256 in code_challenge_methods_supported; an MCP client MUST refuse to proceed without it, so protocheck stopped here",
        ));
        return stopped(&state, pending).await;
    }

    // Registration.
    let cimd = metadata
        .get("client_id_metadata_document_supported")
        .and_then(Value::as_bool)
        == Some(true);
    if cimd && endpoint(&json!({"u": cimd_url}), "u").is_ok() {
        pending.client_id = cimd_url.clone();
        pending.registration = "client-id-metadata-document";
        pending.steps.push(step(
            "client registration",
            &["MCP-AUT-011"],
            Outcome::Pass,
            format!(
                "the metadata advertises client_id_metadata_document_supported; protocheck's client_id is its metadata document's URL {cimd_url} (whether the authorization server fetched and accepted it shows at the authorization step)"
            ),
        ));
    } else if let Ok(registration) = endpoint(metadata, "registration_endpoint") {
        pending.registration = "dynamic-registration";
        let body = json!({
            "client_name": "protocheck",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        let req = HttpRequest::post_json(registration.clone(), &body).timeout(STEP_TIMEOUT);
        let (exchange, result) = match flows.http.for_target(&registration) {
            Ok(http) => http.exchange(&req).await,
            Err(e) => (no_exchange(&req, &e.to_string()), Err(e)),
        };
        let client_id = result.as_ref().ok().and_then(|r| {
            (r.status == 201 || r.status == 200)
                .then(|| r.json())
                .flatten()
                .and_then(|v| {
                    v.get("client_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .filter(|id| !id.is_empty() && id.len() <= MAX_ENDPOINT_LEN)
        });
        let mut s = match (&client_id, &result) {
            (Some(id), Ok(r)) => step(
                "client registration",
                &[],
                Outcome::Pass,
                format!(
                    "dynamic registration (RFC 7591) at {registration} answered HTTP {} with client_id {id}{}",
                    r.status,
                    if cimd {
                        " (the metadata advertises Client ID Metadata Documents, but this service's own URL is not https, so it registered instead)"
                    } else {
                        ""
                    }
                ),
            ),
            (None, Ok(r)) => step(
                "client registration",
                &[],
                Outcome::Fail,
                format!(
                    "dynamic registration (RFC 7591) at {registration} answered HTTP {} without a client_id (RFC 7591 §3.2.1: 201 with client_id)",
                    r.status
                ),
            ),
            (_, Err(e)) => step(
                "client registration",
                &[],
                Outcome::Fail,
                format!("dynamic registration at {registration} got no answer: {e}"),
            ),
        };
        s.evidence.push(exchange);
        pending.steps.push(s);
        match client_id {
            Some(id) => pending.client_id = id,
            None => return stopped(&state, pending).await,
        }
    } else {
        pending.steps.push(step(
            "client registration",
            &["MCP-AUT-011"],
            Outcome::Fail,
            "the metadata advertises neither client_id_metadata_document_supported nor a registration_endpoint, and protocheck has no client registered there in advance: it cannot sign in",
        ));
        return stopped(&state, pending).await;
    }

    // The authorization request.
    let state_value = random_token();
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(pending.verifier.as_bytes()));
    let mut location = authorize.clone();
    {
        let mut q = location.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &pending.client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("state", &state_value)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &resource);
        if let Some(scope) = &scope {
            q.append_pair("scope", scope);
        }
    }
    pending.steps.push(step(
        "authorization request",
        &[],
        Outcome::Pass,
        format!(
            "the browser was sent to {authorize} with response_type=code, client_id={}, a PKCE S256 code_challenge, resource={resource}{}",
            pending.client_id,
            scope
                .as_deref()
                .map(|s| format!(", scope={s}"))
                .unwrap_or_default()
        ),
    ));
    let browser = pending.browser.clone();
    let page = ContinuePage {
        url: pending.url.clone(),
        run_id: run.id,
        steps: pending
            .steps
            .iter()
            .map(|s| StepView {
                step: s.step.clone(),
                outcome: s.outcome.as_str(),
                message: s.message.clone(),
            })
            .collect(),
        authorization_host: authorize.host_str().unwrap_or_default().to_owned(),
        location: location.to_string(),
    };
    flows.keep(state_value, pending);
    // A page with a link, not a redirect: the pages' `form-action 'self'`
    // would stop a form's redirect to another origin, and the person sees
    // where they are sent before they go.
    let mut resp = super::pages::Page(StatusCode::OK, page).into_response();
    let cookie = format!(
        "{SIGN_IN_COOKIE}={browser}; Path=/sign-in; HttpOnly; SameSite=Lax; Max-Age={}",
        PENDING_LIFETIME.as_secs()
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    Ok(resp)
}

fn no_exchange(req: &HttpRequest, error: &str) -> Exchange {
    Exchange {
        request: req.record(4096),
        response: None,
        error: Some(error.to_owned()),
    }
}

/// Queues the run a sign-in ends with (with a token when it got one) and
/// sends the browser to it.
async fn queue_run(
    state: &AppState,
    pending: Pending,
    token: Option<BearerToken>,
) -> PageResult<Response> {
    let mut options = pending.options;
    options.sign_in = Some(SignIn {
        issuer: pending.issuer,
        registration: pending.registration.to_owned(),
        token_obtained: token.is_some(),
        steps: pending.steps,
    });
    let submission = Submission {
        url: pending.url,
        suite: pending.suite,
        options,
        webhook_url: None,
        credentials: token.map(|bearer_token| Credentials {
            bearer_token,
            limited_token: None,
        }),
        max_age_s: 0,
        force: false,
        idempotency: None,
        submitter: Some(pending.submitter),
    };
    match crate::web::store_deadline(state.store.as_ref(), async {
        state.queue.submit(submission).await.map_err(WebError::from)
    })
    .await
    {
        Ok(s) => Ok(Redirect::to(&format!("/runs/{}", s.run.id)).into_response()),
        Err(e) => Err(e.into()),
    }
}

/// A sign-in that stopped at a step the server got wrong: its run, without a token.
async fn stopped(state: &AppState, pending: Pending) -> PageResult<Response> {
    queue_run(state, pending, None).await
}

#[derive(Debug, Deserialize)]
pub struct Callback {
    state: Option<String>,
    code: Option<String>,
    iss: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

fn sign_in_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == SIGN_IN_COOKIE)
        .map(|(_, v)| v.to_owned())
}

fn clip(text: &str) -> String {
    text.chars().take(300).collect()
}

/// `GET /sign-in/callback`: where the authorization server sends the browser back.
pub async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Callback>, axum::extract::rejection::QueryRejection>,
) -> PageResult<Response> {
    let Some(flows) = state.sign_in.as_ref() else {
        return Err(WebError::NotFound("This service does not sign in to servers.".into()).into());
    };
    let Query(cb) = query.map_err(|e| WebError::MalformedQuery(e.body_text()))?;
    let expired = || {
        WebError::SignIn(
            "This sign-in has expired, was already used, or was started in another browser. Start again from the run's page.".into(),
        )
    };
    let Some(state_value) = cb.state.as_deref() else {
        return Err(WebError::MalformedQuery(
            "the authorization server sent the browser back without `state`".into(),
        )
        .into());
    };
    let mut pending = flows.take(state_value).ok_or_else(expired)?;
    if sign_in_cookie(&headers).as_deref() != Some(pending.browser.as_str()) {
        return Err(expired().into());
    }
    let mut said = vec!["the authorization server sent the browser back".to_owned()];
    // RFC 9207 §2.4: a client that knows the server sends `iss` compares it,
    // on error responses too, before it acts on the response.
    match (&cb.iss, pending.iss_advertised) {
        (Some(iss), _) if iss != &pending.issuer => {
            pending.steps.push(step(
                "authorization response",
                &["MCP-AUT-005"],
                Outcome::Fail,
                format!(
                    "the redirect carried iss={} but the metadata's issuer is {}; RFC 9207 §2.4 has the client refuse the response, so protocheck did not act on it (no code was exchanged)",
                    clip(iss),
                    pending.issuer
                ),
            ));
            return stopped(&state, pending).await;
        }
        (None, true) => {
            pending.steps.push(step(
                "authorization response",
                &["MCP-AUT-005"],
                Outcome::Fail,
                "the metadata advertises authorization_response_iss_parameter_supported, but the redirect carried no iss; RFC 9207 §2.4 has the client refuse the response, so protocheck did not act on it (no code was exchanged)",
            ));
            return stopped(&state, pending).await;
        }
        (Some(_), _) => said.push(format!(
            "with iss={}, the metadata's issuer (RFC 9207)",
            pending.issuer
        )),
        (None, false) => said.push(
            "without iss (the metadata does not advertise authorization_response_iss_parameter_supported)"
                .to_owned(),
        ),
    }
    if let Some(error) = &cb.error {
        if error == "access_denied" {
            return Err(WebError::SignIn(
                "Sign-in was declined at the authorization server (error=access_denied); nothing was run. Start again from the run's page to retry.".into(),
            )
            .into());
        }
        pending.steps.push(step(
            "authorization response",
            &[],
            Outcome::Fail,
            format!(
                "the authorization server sent the browser back with error={}{}",
                clip(error),
                cb.error_description
                    .as_deref()
                    .map(|d| format!(": {}", clip(d)))
                    .unwrap_or_default()
            ),
        ));
        return stopped(&state, pending).await;
    }
    let Some(code) = cb.code.as_deref().filter(|c| !c.is_empty()) else {
        pending.steps.push(step(
            "authorization response",
            &[],
            Outcome::Fail,
            "the authorization server sent the browser back with neither a code nor an error (RFC 6749 §4.1.2)",
        ));
        return stopped(&state, pending).await;
    };
    said.push("with a code and the state it was given".to_owned());
    let rules: &[&str] = if cb.iss.is_some() {
        &["MCP-AUT-005"]
    } else {
        &[]
    };
    pending.steps.push(step(
        "authorization response",
        rules,
        Outcome::Pass,
        said.join(" "),
    ));

    // The token request.
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", code)
        .append_pair("redirect_uri", &pending.redirect_uri)
        .append_pair("client_id", &pending.client_id)
        .append_pair("code_verifier", &pending.verifier)
        .append_pair("resource", &pending.resource)
        .finish();
    let req = HttpRequest::post_raw(
        pending.token_endpoint.clone(),
        "application/x-www-form-urlencoded",
        body.into(),
    )
    .header("accept", "application/json")
    .timeout(STEP_TIMEOUT);
    let (mut exchange, result) = match flows.http.for_target(&pending.token_endpoint) {
        Ok(http) => http.exchange(&req).await,
        Err(e) => (no_exchange(&req, &e.to_string()), Err(e)),
    };
    let answer = result.as_ref().ok().map(|r| (r.status, r.json()));
    let token = answer
        .as_ref()
        .and_then(|(_, v)| v.as_ref())
        .and_then(|v| v.get("access_token"))
        .and_then(Value::as_str)
        .map(|t| Zeroizing::new(t.to_owned()));
    let token_type = answer
        .as_ref()
        .and_then(|(_, v)| v.as_ref())
        .and_then(|v| v.get("token_type"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let refresh = answer
        .as_ref()
        .and_then(|(_, v)| v.as_ref())
        .and_then(|v| v.get("refresh_token"))
        .and_then(Value::as_str)
        .map(|t| Zeroizing::new(t.to_owned()));
    let mut secrets: Vec<&str> = vec![code, pending.verifier.as_str()];
    if let Some(t) = &token {
        secrets.push(t.as_str());
    }
    if let Some(t) = &refresh {
        secrets.push(t.as_str());
    }
    redact(&mut exchange, &secrets);
    let usable = token.as_ref().map(|t| {
        Credentials {
            bearer_token: BearerToken::new(t.as_str()),
            limited_token: None,
        }
        .validate()
        .is_ok()
    });
    let bearer = token_type
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("bearer"));
    let status = answer.as_ref().map(|(s, _)| *s);
    let mut s = match (status, usable, bearer) {
        (Some(200), Some(true), true) => step(
            "token request",
            &["MCP-AUT-010"],
            Outcome::Pass,
            format!(
                "the token endpoint answered HTTP 200 with a Bearer token for the code, its S256 code_verifier and resource={} (an inference: that it checks the verifier is not observed; a wrong one was not sent, as it could spend the code)",
                pending.resource
            ),
        ),
        (Some(200), Some(true), false) => step(
            "token request",
            &[],
            Outcome::Fail,
            format!(
                "the token endpoint answered HTTP 200 with token_type {:?}, not Bearer (OAuth 2.1 §4.1.3)",
                token_type.as_deref().map(clip).unwrap_or_default()
            ),
        ),
        (Some(200), Some(false), _) => step(
            "token request",
            &[],
            Outcome::Fail,
            "the token endpoint answered HTTP 200 with an access_token that is not 1 to 4096 visible ASCII characters (RFC 6750 §2.1)",
        ),
        (Some(status), _, _) => step(
            "token request",
            &[],
            Outcome::Fail,
            format!(
                "the token endpoint answered HTTP {status} without an access token for the code and its verifier"
            ),
        ),
        (None, _, _) => step(
            "token request",
            &[],
            Outcome::Fail,
            "the token endpoint did not answer",
        ),
    };
    s.evidence.push(exchange);
    let passed = s.outcome == Outcome::Pass;
    pending.steps.push(s);
    match (passed, token) {
        (true, Some(token)) => {
            let token = BearerToken::new(token.as_str());
            queue_run(&state, pending, Some(token)).await
        }
        _ => stopped(&state, pending).await,
    }
}

/// Whether a sign-in is offered for `run` on its page: the service can seal
/// a token, the run had none, and some of its rules were not verified for
/// want of authorization (whatever its grade: a server that fails a MUST of
/// its authorization can still have the rest of its suite judged).
pub fn offered(
    state: &AppState,
    run: &crate::store::Run,
    findings: &[crate::store::StoredFinding],
) -> bool {
    state.sign_in.is_some()
        && run.credentials.is_none()
        && run.suite != SuiteChoice::Rcp
        && findings.iter().any(|f| {
            f.finding
                .message
                .starts_with("not verified: authorization required")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_https_or_loopback_http() {
        let m = json!({
            "a": "https://as.example/authorize",
            "b": "http://127.0.0.1:9/token",
            "c": "http://as.example/token",
            "d": "javascript:alert(1)",
            "e": 3,
        });
        assert!(endpoint(&m, "a").is_ok());
        assert!(endpoint(&m, "b").is_ok());
        assert!(endpoint(&m, "c").is_err());
        assert!(endpoint(&m, "d").is_err());
        assert!(endpoint(&m, "e").is_err());
        assert!(endpoint(&m, "f").is_err());
    }

    #[test]
    fn pending_sign_ins_are_taken_once() {
        let flows = SignInFlows::new(AddressPolicy::PublicOnly, Vec::new()).expect("flows");
        let pending = Pending {
            created: Instant::now(),
            browser: "b".into(),
            url: "https://x.example/mcp".into(),
            suite: SuiteChoice::Auto,
            options: RunOptions::default(),
            issuer: "https://as.example".into(),
            iss_advertised: true,
            token_endpoint: Url::parse("https://as.example/token").expect("url"),
            client_id: "c".into(),
            redirect_uri: "https://p.example/sign-in/callback".into(),
            resource: "https://x.example/mcp".into(),
            verifier: Zeroizing::new("v".into()),
            registration: "dynamic-registration",
            steps: Vec::new(),
            submitter: "a:127.0.0.1".into(),
        };
        flows.keep("s".into(), pending);
        assert!(flows.take("s").is_some());
        assert!(
            flows.take("s").is_none(),
            "a state is good for one callback"
        );
    }
}
