//! The built-in authorization server of `--auth`, enough for an OAuth 2.1
//! public client to sign in as the MCP authorization spec describes:
//!
//! - `POST {issuer}/register`: dynamic client registration (RFC 7591) of
//!   public clients (`token_endpoint_auth_method: none`);
//! - `GET {issuer}/authorize`: checks the request (registered client and
//!   redirect URI, PKCE with S256, `resource` naming this server's `/mcp`,
//!   known scopes) and shows a login page carrying it in hidden fields;
//! - `POST {issuer}/authorize`: the login form's target; checks the user
//!   (`--auth-user`, `alice:wonderland` by default) and redirects (303) to the
//!   client with a one-time code bound to the request;
//! - `POST {issuer}/token`: exchanges the code for a bearer token the `/mcp`
//!   endpoint accepts (audience: the `resource`; scope: the one granted) and
//!   a refresh token, which is rotated: each is good for one refresh, which
//!   may narrow the scope.
//!
//! Errors found before the redirect URI is known to be registered are shown
//! as a page, never redirected; later ones go back to the client (RFC 6749
//! §4.1.2.1). Clients and codes live in memory, bounded; bodies are small.
//!
//! A `client_id` that is a URL names a Client ID Metadata Document (the
//! metadata says `client_id_metadata_document_supported`): it is fetched at
//! each authorization request (https; plain http to a loopback host too, for
//! tests), without redirects, bounded in time and size, and must name itself
//! as `client_id` and list the redirect URI.

use super::auth::{self, ISSUER_PATH, SCOPE_READ, SCOPE_TOOLS, base_url, json_response};
use super::{Inner, Shared};
use crate::suite::mcp::aut;
use crate::suite::mcp::wire::base64url_encode;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use url::Url;

/// Largest body of a registration, login or token request.
pub(super) const MAX_FORM: usize = 16 * 1024;
/// Largest query string of an authorization request.
const MAX_QUERY: usize = 8 * 1024;
/// Most clients remembered; the oldest is forgotten first.
const MAX_CLIENTS: usize = 1024;
/// Most outstanding authorization codes; the oldest is forgotten first.
const MAX_CODES: usize = 1024;
/// Most redirect URIs per client, and their longest.
const MAX_REDIRECT_URIS: usize = 8;
const MAX_URI_LEN: usize = 2048;
/// How long an authorization code can be exchanged.
const CODE_LIFETIME: Duration = Duration::from_secs(60);
/// Most outstanding refresh tokens, and how long one lives.
const MAX_REFRESH: usize = 1024;
const REFRESH_LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// How long an issued access token lives.
const TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// Largest Client ID Metadata Document, and how long its fetch may take.
const MAX_CIMD: usize = 64 * 1024;
const CIMD_TIMEOUT: Duration = Duration::from_secs(5);

/// A registered public client, or one known by its metadata document.
#[derive(Debug, Clone)]
struct Client {
    redirect_uris: Vec<String>,
    name: Option<String>,
}

/// What an authorization code was issued for.
#[derive(Debug, Clone)]
struct Grant {
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    resource: String,
    scope: String,
    expires: Instant,
}

/// What a refresh token stands for.
#[derive(Debug, Clone)]
struct Refresh {
    client_id: String,
    resource: String,
    scope: String,
    expires: Instant,
}

/// A map that forgets its oldest entries beyond `cap`.
#[derive(Debug)]
struct Bounded<T> {
    entries: HashMap<String, T>,
    order: VecDeque<String>,
    cap: usize,
}

impl<T> Bounded<T> {
    fn new(cap: usize) -> Self {
        Self {
            entries: HashMap::new(),
            order: VecDeque::new(),
            cap,
        }
    }

    fn insert(&mut self, key: String, value: T) {
        if let Some(slot) = self.entries.get_mut(&key) {
            *slot = value;
            return;
        }
        while self.entries.len() >= self.cap {
            match self.order.pop_front() {
                Some(old) => {
                    self.entries.remove(&old);
                }
                None => break,
            }
        }
        // Keys already taken out stay in `order` until they reach its front.
        if self.order.len() >= self.cap.saturating_mul(2) {
            let entries = &self.entries;
            self.order.retain(|k| entries.contains_key(k));
        }
        self.order.push_back(key.clone());
        self.entries.insert(key, value);
    }
}

/// The authorization server's memory: registered clients, outstanding codes.
#[derive(Debug)]
pub(super) struct Store {
    clients: Mutex<Bounded<Client>>,
    codes: Mutex<Bounded<Grant>>,
    /// Refresh tokens, each good for one use (rotated, OAuth 2.1 §4.3.1).
    refresh: Mutex<Bounded<Refresh>>,
    /// Fetches Client ID Metadata Documents.
    http: std::sync::OnceLock<reqwest::Client>,
}

impl Default for Store {
    fn default() -> Self {
        Self {
            clients: Mutex::new(Bounded::new(MAX_CLIENTS)),
            codes: Mutex::new(Bounded::new(MAX_CODES)),
            refresh: Mutex::new(Bounded::new(MAX_REFRESH)),
            http: std::sync::OnceLock::new(),
        }
    }
}

impl Store {
    fn client(&self, id: &str) -> Option<Client> {
        self.clients.lock().ok()?.entries.get(id).cloned()
    }

    fn remember(&self, id: &str, client: Client) {
        if let Ok(mut clients) = self.clients.lock() {
            clients.insert(id.to_owned(), client);
        }
    }

    fn http(&self) -> &reqwest::Client {
        self.http.get_or_init(|| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .timeout(CIMD_TIMEOUT)
                .build()
                .unwrap_or_default()
        })
    }

    /// Takes the code out: it is good for one exchange, even a failed one.
    fn take_code(&self, code: &str) -> Option<Grant> {
        self.codes.lock().ok()?.entries.remove(code)
    }
}

/// The issuer URL as the client addressed this server.
fn issuer(state: &Inner, headers: &HeaderMap) -> String {
    format!("{}{ISSUER_PATH}", base_url(state, headers))
}

/// Parses `application/x-www-form-urlencoded` text, refusing a repeated
/// parameter (RFC 6749 §3.1, §3.2).
fn parse_form(bytes: &[u8]) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(bytes) {
        if out.insert(k.to_string(), v.into_owned()).is_some() {
            return Err(format!("parameter `{k}` is repeated"));
        }
    }
    Ok(out)
}

/// An RFC 6749 §5.2 error (RFC 7591 §3.2.2 for registration), 400.
fn oauth_error(error: &str, description: &str) -> Response {
    let mut resp = json_response(
        StatusCode::BAD_REQUEST,
        &json!({"error": error, "error_description": description}),
    );
    no_store(&mut resp);
    resp
}

fn no_store(resp: &mut Response) {
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp.headers_mut()
        .insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

/// Whether `uri` may be registered: absolute, http(s), no fragment, and
/// plain http only to a loopback host (RFC 8252 §7.3).
fn redirect_uri_problem(uri: &str) -> Option<String> {
    url_problem(uri, "a redirect URI").err()
}

/// `uri` parsed when it is an absolute http(s) URL without fragment or
/// credentials, plain http only to a loopback host; `what` names it in the
/// reason otherwise.
fn url_problem(uri: &str, what: &str) -> Result<Url, String> {
    if uri.len() > MAX_URI_LEN {
        return Err(format!("{what} is longer than {MAX_URI_LEN} bytes"));
    }
    let Ok(url) = Url::parse(uri) else {
        return Err(format!("{what} is not an absolute URL"));
    };
    if url.fragment().is_some() {
        return Err(format!("{what} has a fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{what} carries credentials"));
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" => match url.host() {
            Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => Ok(url),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(url),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(url),
            _ => Err(format!("{what} over http must point to a loopback address")),
        },
        _ => Err(format!(
            "{what} must be https (or http to a loopback address)"
        )),
    }
}

/// Whether `client_id` names a Client ID Metadata Document.
fn is_document_url(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

/// Fetches and checks the Client ID Metadata Document at `client_id`.
async fn fetch_client(store: &Store, client_id: &str) -> Result<Client, String> {
    let url = url_problem(client_id, "the client_id")?;
    if url.path() == "/" || url.path().is_empty() {
        return Err("a client_id URL must have a path".to_owned());
    }
    let mut resp = store
        .http()
        .get(url)
        .header(header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|_| "the client's metadata document could not be fetched".to_owned())?;
    if resp.status() != reqwest::StatusCode::OK {
        return Err(format!(
            "the client's metadata document was answered {}",
            resp.status().as_u16()
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|_| "the client's metadata document could not be read".to_owned())?
    {
        if body.len() + chunk.len() > MAX_CIMD {
            return Err(format!(
                "the client's metadata document is larger than {MAX_CIMD} bytes"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    let Ok(Value::Object(meta)) = serde_json::from_slice::<Value>(&body) else {
        return Err("the client's metadata document is not a JSON object".to_owned());
    };
    if meta.get("client_id").and_then(Value::as_str) != Some(client_id) {
        return Err("the client's metadata document names another client_id".to_owned());
    }
    if meta
        .get("token_endpoint_auth_method")
        .is_some_and(|m| m.as_str() != Some("none"))
        || meta.contains_key("client_secret")
    {
        return Err(
            "only public clients are served: token_endpoint_auth_method must be none".to_owned(),
        );
    }
    let redirect_uris = match meta.get("redirect_uris") {
        Some(Value::Array(list)) if !list.is_empty() && list.len() <= MAX_REDIRECT_URIS => list
            .iter()
            .map(|v| match v.as_str() {
                Some(s) if redirect_uri_problem(s).is_none() => Ok(s.to_owned()),
                _ => Err("the client's metadata document lists a bad redirect URI".to_owned()),
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => {
            return Err(format!(
                "the client's metadata document must list 1 to {MAX_REDIRECT_URIS} redirect_uris"
            ));
        }
    };
    let name = meta
        .get("client_name")
        .and_then(Value::as_str)
        .map(|n| n.chars().take(200).collect());
    Ok(Client {
        redirect_uris,
        name,
    })
}

/// `POST {issuer}/register`: RFC 7591 registration of a public client.
pub(super) async fn register(State(state): State<Shared>, body: Bytes) -> Response {
    if state.config.auth.is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let Ok(Value::Object(meta)) = serde_json::from_slice::<Value>(&body) else {
        return oauth_error(
            "invalid_client_metadata",
            "the body must be a JSON object of client metadata",
        );
    };
    let uris: Vec<String> = match meta.get("redirect_uris") {
        Some(Value::Array(list)) if !list.is_empty() && list.len() <= MAX_REDIRECT_URIS => {
            let mut uris = Vec::new();
            for v in list {
                let Some(s) = v.as_str() else {
                    return oauth_error("invalid_redirect_uri", "redirect URIs must be strings");
                };
                if let Some(problem) = redirect_uri_problem(s) {
                    return oauth_error("invalid_redirect_uri", &problem);
                }
                uris.push(s.to_owned());
            }
            uris
        }
        _ => {
            return oauth_error(
                "invalid_redirect_uri",
                &format!("redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs"),
            );
        }
    };
    if let Some(method) = meta.get("token_endpoint_auth_method")
        && method.as_str() != Some("none")
    {
        return oauth_error(
            "invalid_client_metadata",
            "only public clients are registered: token_endpoint_auth_method must be none",
        );
    }
    let strings = |key: &str| -> Result<Option<Vec<&str>>, ()> {
        match meta.get(key) {
            None => Ok(None),
            Some(Value::Array(l)) => l
                .iter()
                .map(|v| v.as_str().ok_or(()))
                .collect::<Result<_, _>>()
                .map(Some),
            Some(_) => Err(()),
        }
    };
    // Every client gets refresh tokens; the answer says so.
    let grant_types = match strings("grant_types") {
        Ok(None) => vec!["authorization_code", "refresh_token"],
        Ok(Some(g))
            if g.contains(&"authorization_code")
                && g.iter()
                    .all(|g| ["authorization_code", "refresh_token"].contains(g)) =>
        {
            vec!["authorization_code", "refresh_token"]
        }
        _ => {
            return oauth_error(
                "invalid_client_metadata",
                "grant_types must include authorization_code and name no other grant than refresh_token",
            );
        }
    };
    match strings("response_types") {
        Ok(None) => {}
        Ok(Some(r)) if r == ["code"] => {}
        _ => {
            return oauth_error(
                "invalid_client_metadata",
                "response_types must be [\"code\"]",
            );
        }
    }
    let client_name = match meta.get("client_name") {
        None => None,
        Some(Value::String(n)) if n.chars().count() <= 200 => Some(n.clone()),
        Some(_) => {
            return oauth_error(
                "invalid_client_metadata",
                "client_name must be a string of at most 200 characters",
            );
        }
    };
    let client_id = uuid::Uuid::new_v4().to_string();
    if let Ok(mut clients) = state.oauth.clients.lock() {
        clients.insert(
            client_id.clone(),
            Client {
                redirect_uris: uris.clone(),
                name: client_name.clone(),
            },
        );
    } else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let issued_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut doc = json!({
        "client_id": client_id,
        "client_id_issued_at": issued_at,
        "redirect_uris": uris,
        "token_endpoint_auth_method": "none",
        "grant_types": grant_types,
        "response_types": ["code"],
    });
    if let Some(name) = client_name {
        doc["client_name"] = Value::String(name);
    }
    let mut resp = json_response(StatusCode::CREATED, &doc);
    no_store(&mut resp);
    resp
}

/// A checked authorization request.
struct AuthRequest {
    client_id: String,
    /// How the login page names the client.
    client_label: String,
    redirect_uri: String,
    code_challenge: String,
    state: Option<String>,
    resource: String,
    scope: String,
}

/// Why an authorization request is refused.
enum Refusal {
    /// Shown to the user: the redirect URI is not known to be the client's.
    Page(String),
    /// Sent back to the client's registered redirect URI.
    Redirect {
        redirect_uri: String,
        error: &'static str,
        description: String,
        state: Option<String>,
    },
}

/// Checks the parameters of an authorization request (RFC 6749 §4.1.1,
/// RFC 7636, RFC 8707, the MCP authorization spec).
async fn check_request(
    state: &Inner,
    headers: &HeaderMap,
    p: &HashMap<String, String>,
) -> Result<AuthRequest, Refusal> {
    let get = |k: &str| p.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let Some(client_id) = get("client_id") else {
        return Err(Refusal::Page("the request names no client_id".into()));
    };
    let client = if is_document_url(client_id) {
        if state.breaks(&aut::CIMD) {
            return Err(Refusal::Page(
                "this server does not accept Client ID Metadata Documents; register the client \
                 at the registration endpoint"
                    .into(),
            ));
        }
        let client = fetch_client(&state.oauth, client_id)
            .await
            .map_err(Refusal::Page)?;
        state.oauth.remember(client_id, client.clone());
        client
    } else {
        let Some(client) = state.oauth.client(client_id) else {
            return Err(Refusal::Page("the client_id is not registered here".into()));
        };
        client
    };
    let Some(redirect_uri) = get("redirect_uri") else {
        return Err(Refusal::Page("the request names no redirect_uri".into()));
    };
    if !client.redirect_uris.iter().any(|u| u == redirect_uri) {
        return Err(Refusal::Page(
            "the redirect_uri is not one registered for this client".into(),
        ));
    }
    let st = get("state").map(str::to_owned);
    let refuse = |error: &'static str, description: &str| Refusal::Redirect {
        redirect_uri: redirect_uri.to_owned(),
        error,
        description: description.to_owned(),
        state: st.clone(),
    };
    if get("response_type") != Some("code") {
        return Err(refuse(
            "unsupported_response_type",
            "response_type must be code",
        ));
    }
    let Some(challenge) = get("code_challenge") else {
        return Err(refuse(
            "invalid_request",
            "PKCE is required: no code_challenge",
        ));
    };
    if get("code_challenge_method") != Some("S256") {
        return Err(refuse(
            "invalid_request",
            "code_challenge_method must be S256",
        ));
    }
    // BASE64URL of a SHA-256 digest, without padding: 43 characters.
    if challenge.len() != 43
        || !challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(refuse(
            "invalid_request",
            "code_challenge is not an S256 challenge (43 base64url characters)",
        ));
    }
    let own_resource = format!("{}/mcp", base_url(state, headers));
    match get("resource") {
        None => {
            return Err(refuse(
                "invalid_request",
                "the resource parameter is required (RFC 8707)",
            ));
        }
        Some(r) if r != own_resource => {
            return Err(refuse(
                "invalid_target",
                &format!("this server issues tokens for {own_resource} only"),
            ));
        }
        Some(_) => {}
    }
    let scope = match get("scope") {
        None => format!("{SCOPE_READ} {SCOPE_TOOLS}"),
        Some(s) => {
            let asked: Vec<&str> = s.split(' ').filter(|s| !s.is_empty()).collect();
            if asked.is_empty() || asked.iter().any(|s| ![SCOPE_READ, SCOPE_TOOLS].contains(s)) {
                return Err(refuse(
                    "invalid_scope",
                    &format!("the scopes offered are {SCOPE_READ} and {SCOPE_TOOLS}"),
                ));
            }
            asked.join(" ")
        }
    };
    if st.as_ref().is_some_and(|s| s.len() > 1024) {
        return Err(refuse("invalid_request", "state is longer than 1024 bytes"));
    }
    let client_label = match (&client.name, is_document_url(client_id)) {
        (Some(name), true) => format!("{name} ({client_id})"),
        (Some(name), false) => name.clone(),
        (None, _) => client_id.to_owned(),
    };
    Ok(AuthRequest {
        client_id: client_id.to_owned(),
        client_label,
        redirect_uri: redirect_uri.to_owned(),
        code_challenge: challenge.to_owned(),
        state: st,
        resource: own_resource,
        scope,
    })
}

/// A 303 to the client's redirect URI with `params` (and `iss`, RFC 9207).
fn back_to_client(
    state: &Inner,
    headers: &HeaderMap,
    redirect_uri: &str,
    params: &[(&str, &str)],
) -> Response {
    let Ok(mut url) = Url::parse(redirect_uri) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Sign-in refused",
            "the redirect URI is not a URL",
            None,
        );
    };
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in params {
            q.append_pair(k, v);
        }
        if !state.breaks(&aut::ISS_PARAMETER) {
            q.append_pair("iss", &issuer(state, headers));
        }
    }
    let Ok(location) = HeaderValue::from_str(url.as_str()) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Sign-in refused",
            "the redirect URI is not a URL",
            None,
        );
    };
    let mut resp = StatusCode::SEE_OTHER.into_response();
    resp.headers_mut().insert(header::LOCATION, location);
    no_store(&mut resp);
    resp
}

fn refused(state: &Inner, headers: &HeaderMap, refusal: Refusal) -> Response {
    match refusal {
        Refusal::Page(why) => page(StatusCode::BAD_REQUEST, "Sign-in refused", &why, None),
        Refusal::Redirect {
            redirect_uri,
            error,
            description,
            state: st,
        } => {
            let mut params = vec![
                ("error", error),
                ("error_description", description.as_str()),
            ];
            if let Some(s) = st.as_deref() {
                params.push(("state", s));
            }
            back_to_client(state, headers, &redirect_uri, &params)
        }
    }
}

/// Escapes for HTML text and attribute values alike.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The fields an authorization request carries through the login form.
const CARRIED: &[&str] = &[
    "response_type",
    "client_id",
    "redirect_uri",
    "code_challenge",
    "code_challenge_method",
    "state",
    "resource",
    "scope",
];

/// The login form: where it posts, the client it signs in for, and the
/// authorization request it carries.
struct LoginForm<'a> {
    action: &'a str,
    client: &'a str,
    params: &'a HashMap<String, String>,
}

/// A small HTML page; with `form`, the login form carrying its parameters.
fn page(status: StatusCode, title: &str, message: &str, form: Option<LoginForm<'_>>) -> Response {
    let mut body = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{title}</title></head><body><main>\n<h1>{title}</h1>\n",
        title = escape(title)
    );
    if !message.is_empty() {
        body.push_str(&format!("<p id=\"message\">{}</p>\n", escape(message)));
    }
    if let Some(LoginForm {
        action,
        client,
        params,
    }) = form
    {
        body.push_str(&format!(
            "<p>Signing in for <strong id=\"client\">{}</strong>.</p>\n\
             <form id=\"login\" method=\"post\" action=\"{}\">\n",
            escape(client),
            escape(action)
        ));
        for name in CARRIED {
            if let Some(value) = params.get(*name) {
                body.push_str(&format!(
                    "<input type=\"hidden\" name=\"{name}\" value=\"{}\">\n",
                    escape(value)
                ));
            }
        }
        body.push_str(
            "<p><label for=\"username\">User name</label> \
             <input id=\"username\" name=\"username\" autocomplete=\"username\" required></p>\n\
             <p><label for=\"password\">Password</label> \
             <input id=\"password\" name=\"password\" type=\"password\" \
             autocomplete=\"current-password\" required></p>\n\
             <p><button id=\"sign-in\" type=\"submit\">Sign in</button></p>\n</form>\n",
        );
    }
    body.push_str("</main></body></html>\n");
    let mut resp = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    no_store(&mut resp);
    resp
}

/// `GET {issuer}/authorize`: the login page, or a refusal.
pub(super) async fn authorize_page(
    State(state): State<Shared>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if state.config.auth.is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let query = query.unwrap_or_default();
    if query.len() > MAX_QUERY {
        return page(
            StatusCode::URI_TOO_LONG,
            "Sign-in refused",
            "the request is too long",
            None,
        );
    }
    let params = match parse_form(query.as_bytes()) {
        Ok(p) => p,
        Err(why) => return page(StatusCode::BAD_REQUEST, "Sign-in refused", &why, None),
    };
    match check_request(&state, &headers, &params).await {
        Ok(request) => {
            let action = format!("{}/authorize", issuer(&state, &headers));
            page(
                StatusCode::OK,
                "Sign in to the protocheck reference MCP server",
                "",
                Some(LoginForm {
                    action: &action,
                    client: &request.client_label,
                    params: &params,
                }),
            )
        }
        Err(refusal) => refused(&state, &headers, refusal),
    }
}

/// Compares two secrets without stopping at the first differing byte.
fn same_secret(a: &str, b: &str) -> bool {
    let (x, y) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    x.iter()
        .zip(y.iter())
        .fold(0u8, |acc, (p, q)| acc | (p ^ q))
        == 0
}

/// `POST {issuer}/authorize`: the login form's target.
pub(super) async fn authorize_submit(
    State(state): State<Shared>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if state.config.auth.is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let params = match parse_form(&body) {
        Ok(p) => p,
        Err(why) => return page(StatusCode::BAD_REQUEST, "Sign-in refused", &why, None),
    };
    let request = match check_request(&state, &headers, &params).await {
        Ok(r) => r,
        Err(refusal) => return refused(&state, &headers, refusal),
    };
    let (name, password) = &state.config.user;
    let given = |k: &str| params.get(k).map(String::as_str).unwrap_or_default();
    let good_name = same_secret(given("username"), name);
    let good_password = same_secret(given("password"), password);
    if !(good_name && good_password) {
        let action = format!("{}/authorize", issuer(&state, &headers));
        return page(
            StatusCode::OK,
            "Sign in to the protocheck reference MCP server",
            "Wrong user name or password.",
            Some(LoginForm {
                action: &action,
                client: &request.client_label,
                params: &params,
            }),
        );
    }
    let code = base64url_encode(&rand::random::<[u8; 32]>());
    let grant = Grant {
        client_id: request.client_id,
        redirect_uri: request.redirect_uri.clone(),
        code_challenge: request.code_challenge,
        resource: request.resource,
        scope: request.scope,
        expires: Instant::now() + CODE_LIFETIME,
    };
    match state.oauth.codes.lock() {
        Ok(mut codes) => codes.insert(code.clone(), grant),
        Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
    let mut params = vec![("code", code.as_str())];
    if let Some(s) = request.state.as_deref() {
        params.push(("state", s));
    }
    back_to_client(&state, &headers, &request.redirect_uri, &params)
}

/// `POST {issuer}/token`: the authorization code grant with PKCE.
pub(super) async fn token(State(state): State<Shared>, body: Bytes) -> Response {
    let Some(key) = state.config.auth.as_deref() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let params = match parse_form(&body) {
        Ok(p) => p,
        Err(why) => return oauth_error("invalid_request", &why),
    };
    let get = |k: &str| params.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let granted = match get("grant_type") {
        Some("authorization_code") => code_grant(&state, &params),
        Some("refresh_token") => refresh_grant(&state, &params),
        None => return oauth_error("invalid_request", "grant_type is missing"),
        Some(_) => {
            return oauth_error(
                "unsupported_grant_type",
                "the grants served are authorization_code and refresh_token",
            );
        }
    };
    let refresh = match granted {
        Ok(r) => r,
        Err(resp) => return *resp,
    };
    let access_token = auth::mint(key, &refresh.resource, &refresh.scope, TOKEN_LIFETIME);
    let refresh_token = base64url_encode(&rand::random::<[u8; 32]>());
    let scope = refresh.scope.clone();
    match state.oauth.refresh.lock() {
        Ok(mut tokens) => tokens.insert(refresh_token.clone(), refresh),
        Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
    let mut resp = json_response(
        StatusCode::OK,
        &json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": TOKEN_LIFETIME.as_secs(),
            "scope": scope,
            "refresh_token": refresh_token,
        }),
    );
    no_store(&mut resp);
    resp
}

/// What a granted token request stands for, or the error to answer.
type Granted = Result<Refresh, Box<Response>>;

fn refused_grant(error: &str, description: &str) -> Granted {
    Err(Box::new(oauth_error(error, description)))
}

/// `grant_type=refresh_token`: the token is used up, a new one issued.
fn refresh_grant(state: &Inner, params: &HashMap<String, String>) -> Granted {
    let get = |k: &str| params.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let (Some(token), Some(client_id)) = (get("refresh_token"), get("client_id")) else {
        return refused_grant(
            "invalid_request",
            "refresh_token and client_id are required",
        );
    };
    if state.oauth.client(client_id).is_none() {
        return refused_grant("invalid_client", "the client_id is not known here");
    }
    let Ok(mut tokens) = state.oauth.refresh.lock() else {
        return Err(Box::new(StatusCode::INTERNAL_SERVER_ERROR.into_response()));
    };
    // A token that is expired or presented by another client is used up;
    // a request the grant cannot serve (resource, scope) leaves it usable.
    let Some(found) = tokens.entries.get(token) else {
        return refused_grant(
            "invalid_grant",
            "the refresh token is unknown, expired or already used",
        );
    };
    if found.expires <= Instant::now() || found.client_id != client_id {
        tokens.entries.remove(token);
        return refused_grant(
            "invalid_grant",
            "the refresh token is expired or was issued to another client",
        );
    }
    if get("resource").is_some_and(|r| r != found.resource) {
        return refused_grant("invalid_target", "resource differs from the grant's");
    }
    let mut scope = found.scope.clone();
    if let Some(asked) = get("scope") {
        let granted: Vec<&str> = found.scope.split(' ').collect();
        let asked: Vec<&str> = asked.split(' ').filter(|s| !s.is_empty()).collect();
        if asked.is_empty() || asked.iter().any(|s| !granted.contains(s)) {
            return refused_grant("invalid_scope", "scope exceeds the one granted");
        }
        scope = asked.join(" ");
    }
    let Some(mut refresh) = tokens.entries.remove(token) else {
        return refused_grant("invalid_grant", "the refresh token is already used");
    };
    refresh.scope = scope;
    refresh.expires = Instant::now() + REFRESH_LIFETIME;
    Ok(refresh)
}

/// `grant_type=authorization_code` with PKCE (RFC 6749 §4.1.3, RFC 7636 §4.6).
fn code_grant(state: &Inner, params: &HashMap<String, String>) -> Granted {
    let get = |k: &str| params.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let missing = [
        "code",
        "redirect_uri",
        "client_id",
        "code_verifier",
        "resource",
    ]
    .into_iter()
    .find(|k| get(k).is_none());
    if let Some(k) = missing {
        return refused_grant("invalid_request", &format!("{k} is missing"));
    }
    let field = |k: &str| get(k).unwrap_or_default();
    let client_id = field("client_id");
    if state.oauth.client(client_id).is_none() {
        return refused_grant("invalid_client", "the client_id is not registered here");
    }
    let verifier = field("code_verifier");
    // RFC 7636 §4.1: 43 to 128 unreserved characters.
    if !(43..=128).contains(&verifier.len())
        || !verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
    {
        return refused_grant(
            "invalid_request",
            "code_verifier must be 43 to 128 unreserved characters",
        );
    }
    let Some(grant) = state.oauth.take_code(field("code")) else {
        return refused_grant(
            "invalid_grant",
            "the code is unknown, expired or already used",
        );
    };
    if grant.expires <= Instant::now() {
        return refused_grant("invalid_grant", "the code has expired");
    }
    if grant.client_id != client_id {
        return refused_grant("invalid_grant", "the code was issued to another client");
    }
    if grant.redirect_uri != field("redirect_uri") {
        return refused_grant(
            "invalid_grant",
            "redirect_uri differs from the authorization request's",
        );
    }
    if base64url_encode(&Sha256::digest(verifier.as_bytes())) != grant.code_challenge {
        return refused_grant(
            "invalid_grant",
            "code_verifier does not match the code_challenge (S256)",
        );
    }
    if grant.resource != field("resource") {
        return refused_grant(
            "invalid_target",
            "resource differs from the authorization request's",
        );
    }
    // The audience is this server's `/mcp` as the client addressed it at
    // /authorize: the token is good wherever it addresses the server so.
    Ok(Refresh {
        client_id: grant.client_id,
        resource: grant.resource,
        scope: grant.scope,
        expires: Instant::now() + REFRESH_LIFETIME,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_https_or_loopback_http() {
        assert!(redirect_uri_problem("https://client.example/cb").is_none());
        assert!(redirect_uri_problem("http://127.0.0.1:9/cb").is_none());
        assert!(redirect_uri_problem("http://[::1]:9/cb").is_none());
        assert!(redirect_uri_problem("http://localhost/cb").is_none());
        assert!(redirect_uri_problem("http://client.example/cb").is_some());
        assert!(redirect_uri_problem("https://client.example/cb#x").is_some());
        assert!(redirect_uri_problem("/cb").is_some());
        assert!(redirect_uri_problem("javascript:alert(1)").is_some());
    }

    #[test]
    fn bounded_maps_forget_the_oldest() {
        let mut m = Bounded::new(2);
        m.insert("a".into(), 1);
        m.insert("b".into(), 2);
        m.insert("c".into(), 3);
        assert_eq!(m.entries.len(), 2);
        assert!(!m.entries.contains_key("a"));
        for i in 0..100 {
            m.entries.remove("c");
            m.insert(format!("k{i}"), i);
        }
        assert!(m.entries.len() <= 2 && m.order.len() <= 5);
    }

    #[test]
    fn pages_escape_what_they_carry() {
        assert_eq!(
            escape("\"><script>'&"),
            "&quot;&gt;&lt;script&gt;&#39;&amp;"
        );
    }
}
