//! The built-in authorization server of the MCP reference server (`--auth`),
//! driven as an OAuth 2.1 public client would over real HTTP on loopback:
//! registration, the login page, the code with PKCE S256, the token, then a
//! request to `/mcp` with it; and the refusals along the way.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use protocheck::reference::mcp::{
    McpReferenceConfig, SCOPE_READ, SCOPE_TOOLS, serve_mcp_reference,
};
use protocheck::suite::mcp::wire::{
    META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
use reqwest::StatusCode;
use reqwest::header::LOCATION;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use tokio::task::JoinHandle;
use url::Url;

const REDIRECT: &str = "http://127.0.0.1:9/callback";
const VERIFIER: &str = "a-code-verifier-of-more-than-forty-three-characters_0123456789";

struct Server {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    async fn start() -> Self {
        let config = McpReferenceConfig::new(BTreeSet::new())
            .expect("no faults")
            .with_auth();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let task = tokio::spawn(async move {
            let _ = serve_mcp_reference(listener, config).await;
        });
        Self { addr, task }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn resource(&self) -> String {
        self.url("/mcp")
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Registers a public client with `REDIRECT`; its `client_id`.
async fn register(server: &Server, http: &reqwest::Client) -> String {
    let resp = http
        .post(server.url("/as/register"))
        .json(&json!({
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "client_name": "protocheck test",
        }))
        .send()
        .await
        .expect("register");
    assert_eq!(resp.status(), StatusCode::CREATED);
    let doc: Value = resp.json().await.expect("json");
    assert_eq!(doc["redirect_uris"], json!([REDIRECT]));
    assert_eq!(doc["token_endpoint_auth_method"], "none");
    assert_eq!(doc["client_name"], "protocheck test");
    assert_eq!(
        doc["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    doc["client_id"].as_str().expect("client_id").to_owned()
}

/// The parameters of a good authorization request.
fn authorization(server: &Server, client_id: &str) -> Vec<(&'static str, String)> {
    vec![
        ("response_type", "code".into()),
        ("client_id", client_id.into()),
        ("redirect_uri", REDIRECT.into()),
        ("code_challenge", challenge(VERIFIER)),
        ("code_challenge_method", "S256".into()),
        ("state", "st&te<\"x\">".into()),
        ("resource", server.resource()),
        ("scope", format!("{SCOPE_READ} {SCOPE_TOOLS}")),
    ]
}

fn with(
    params: &[(&'static str, String)],
    key: &'static str,
    value: &str,
) -> Vec<(&'static str, String)> {
    let mut out: Vec<_> = params.iter().filter(|(k, _)| *k != key).cloned().collect();
    out.push((key, value.to_owned()));
    out
}

/// The query of a redirect's `Location`.
fn location_query(resp: &reqwest::Response) -> HashMap<String, String> {
    let location = resp
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .expect("a Location");
    let url = Url::parse(location).expect("an absolute Location");
    assert!(url.as_str().starts_with(REDIRECT), "{url}");
    url.query_pairs().into_owned().collect()
}

/// Signs in with `password`; the redirect's query on success.
async fn sign_in(
    server: &Server,
    http: &reqwest::Client,
    params: &[(&'static str, String)],
    password: &str,
) -> reqwest::Response {
    let mut form = params.to_vec();
    form.push(("username", "alice".into()));
    form.push(("password", password.into()));
    http.post(server.url("/as/authorize"))
        .form(&form)
        .send()
        .await
        .expect("sign in")
}

async fn code(server: &Server, http: &reqwest::Client, client_id: &str) -> String {
    let resp = sign_in(
        server,
        http,
        &authorization(server, client_id),
        "wonderland",
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let q = location_query(&resp);
    assert_eq!(q.get("state").map(String::as_str), Some("st&te<\"x\">"));
    assert_eq!(q.get("iss"), Some(&server.url("/as")));
    q.get("code").expect("a code").clone()
}

async fn exchange(
    server: &Server,
    http: &reqwest::Client,
    client_id: &str,
    code: &str,
    verifier: &str,
    resource: &str,
) -> (StatusCode, Value) {
    let resp = http
        .post(server.url("/as/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id),
            ("code_verifier", verifier),
            ("resource", resource),
        ])
        .send()
        .await
        .expect("token");
    let status = resp.status();
    (status, resp.json().await.expect("json"))
}

async fn discover(server: &Server, http: &reqwest::Client, token: &str) -> reqwest::Response {
    http.post(server.resource())
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", PROTOCOL_VERSION)
        .header("Mcp-Method", "server/discover")
        .json(&json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": {
                META_PROTOCOL_VERSION: PROTOCOL_VERSION,
                META_CLIENT_CAPABILITIES: {},
            }},
        }))
        .send()
        .await
        .expect("discover")
}

#[tokio::test]
async fn a_public_client_signs_in_and_reaches_mcp() {
    let server = Server::start().await;
    let http = client();
    let meta: Value = http
        .get(server.url("/.well-known/oauth-authorization-server/as"))
        .send()
        .await
        .expect("metadata")
        .json()
        .await
        .expect("json");
    assert_eq!(meta["registration_endpoint"], server.url("/as/register"));
    let client_id = register(&server, &http).await;

    let page = http
        .get(server.url("/as/authorize"))
        .query(&authorization(&server, &client_id))
        .send()
        .await
        .expect("login page");
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.expect("html");
    for needle in [
        "<form id=\"login\" method=\"post\"",
        "id=\"username\"",
        "id=\"password\"",
        "type=\"password\"",
        "id=\"sign-in\"",
        // The state is carried, escaped.
        "value=\"st&amp;te&lt;&quot;x&quot;&gt;\"",
    ] {
        assert!(html.contains(needle), "{needle} in {html}");
    }

    let code = code(&server, &http, &client_id).await;
    let (status, token) = exchange(
        &server,
        &http,
        &client_id,
        &code,
        VERIFIER,
        &server.resource(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert_eq!(token["token_type"], "Bearer");
    assert_eq!(token["scope"], format!("{SCOPE_READ} {SCOPE_TOOLS}"));
    assert!(token["expires_in"].as_u64().is_some_and(|s| s > 0));
    let access = token["access_token"].as_str().expect("access_token");

    let without = discover(&server, &http, "not-a-token").await;
    assert_eq!(without.status(), StatusCode::UNAUTHORIZED);
    let answered = discover(&server, &http, access).await;
    assert_eq!(answered.status(), StatusCode::OK);
    let body: Value = answered.json().await.expect("json");
    assert!(body["result"]["supportedVersions"].is_array(), "{body}");

    // The code was good once.
    let (status, again) = exchange(
        &server,
        &http,
        &client_id,
        &code,
        VERIFIER,
        &server.resource(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(again["error"], "invalid_grant");
}

#[tokio::test]
async fn a_wrong_password_gives_no_code() {
    let server = Server::start().await;
    let http = client();
    let client_id = register(&server, &http).await;
    let resp = sign_in(
        &server,
        &http,
        &authorization(&server, &client_id),
        "looking-glass",
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get(LOCATION).is_none());
    let html = resp.text().await.expect("html");
    assert!(html.contains("Wrong user name or password"), "{html}");
    assert!(html.contains("id=\"sign-in\""), "{html}");
}

#[tokio::test]
async fn the_token_endpoint_checks_the_verifier_and_the_resource() {
    let server = Server::start().await;
    let http = client();
    let client_id = register(&server, &http).await;

    let code1 = code(&server, &http, &client_id).await;
    let other = "another-code-verifier-of-more-than-forty-three-characters_xyz";
    let (status, err) = exchange(
        &server,
        &http,
        &client_id,
        &code1,
        other,
        &server.resource(),
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );

    let code2 = code(&server, &http, &client_id).await;
    let wrong = server.url("/other");
    let (status, err) = exchange(&server, &http, &client_id, &code2, VERIFIER, &wrong).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_target"))
    );

    let code3 = code(&server, &http, &client_id).await;
    let (status, err) = exchange(
        &server,
        &http,
        "unknown",
        &code3,
        VERIFIER,
        &server.resource(),
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_client"))
    );
    let (status, err) = exchange(
        &server,
        &http,
        &client_id,
        &code3,
        "short",
        &server.resource(),
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
}

#[tokio::test]
async fn bad_authorization_requests_are_refused() {
    let server = Server::start().await;
    let http = client();
    let client_id = register(&server, &http).await;
    let good = authorization(&server, &client_id);
    let get = |params: Vec<(&'static str, String)>| {
        let http = http.clone();
        let url = server.url("/as/authorize");
        async move {
            http.get(url)
                .query(&params)
                .send()
                .await
                .expect("authorize")
        }
    };

    // Before the redirect URI is known good: a page, never a redirect.
    for params in [
        with(&good, "redirect_uri", "http://127.0.0.1:9/elsewhere"),
        with(&good, "client_id", "not-registered"),
        good.iter()
            .filter(|(k, _)| *k != "redirect_uri")
            .cloned()
            .collect(),
    ] {
        let resp = get(params).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(resp.headers().get(LOCATION).is_none());
        assert!(!resp.text().await.expect("html").contains("id=\"sign-in\""));
    }

    // After: an RFC 6749 error redirect carrying the state.
    for (params, error) in [
        (
            with(&good, "code_challenge_method", "plain"),
            "invalid_request",
        ),
        (
            good.iter()
                .filter(|(k, _)| !k.starts_with("code_challenge"))
                .cloned()
                .collect(),
            "invalid_request",
        ),
        (
            with(&good, "resource", &server.url("/other")),
            "invalid_target",
        ),
        (with(&good, "scope", "mcp:read admin"), "invalid_scope"),
        (
            with(&good, "response_type", "token"),
            "unsupported_response_type",
        ),
    ] {
        let resp = get(params).await;
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let q = location_query(&resp);
        assert_eq!(q.get("error").map(String::as_str), Some(error));
        assert_eq!(q.get("state").map(String::as_str), Some("st&te<\"x\">"));
        assert!(!q.contains_key("code"));
    }

    // The form's target checks the request again: no code for `plain`.
    let resp = sign_in(
        &server,
        &http,
        &with(&good, "code_challenge_method", "plain"),
        "wonderland",
    )
    .await;
    let q = location_query(&resp);
    assert_eq!(q.get("error").map(String::as_str), Some("invalid_request"));
    assert!(!q.contains_key("code"));
}

#[tokio::test]
async fn registration_refuses_unsafe_redirect_uris_and_confidential_clients() {
    let server = Server::start().await;
    let http = client();
    for (body, error) in [
        (
            json!({"redirect_uris": ["http://client.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": ["/cb"]}), "invalid_redirect_uri"),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (json!({}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"}),
            "invalid_client_metadata",
        ),
        (json!([1, 2]), "invalid_client_metadata"),
    ] {
        let resp = http
            .post(server.url("/as/register"))
            .json(&body)
            .send()
            .await
            .expect("register");
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{body}");
        let doc: Value = resp.json().await.expect("json");
        assert_eq!(doc["error"], error, "{body}");
    }
    let big = "x".repeat(64 * 1024);
    let resp = http
        .post(server.url("/as/register"))
        .json(&json!({"redirect_uris": [REDIRECT], "client_name": big}))
        .send()
        .await
        .expect("register");
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

/// Serves `doc(own URL)` at `/client.json` on loopback; the URL and the task.
async fn serve_document(doc: impl Fn(&str) -> Value) -> (String, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let url = format!(
        "http://{}/client.json",
        listener.local_addr().expect("addr")
    );
    let body = doc(&url).to_string();
    let app = axum::Router::new().route(
        "/client.json",
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    );
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

#[tokio::test]
async fn a_client_id_metadata_document_stands_for_registration() {
    let server = Server::start().await;
    let http = client();
    let (client_id, doc_task) = serve_document(|url| {
        json!({
            "client_id": url,
            "client_name": "<b>Doc client</b>",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
        })
    })
    .await;
    let page = http
        .get(server.url("/as/authorize"))
        .query(&authorization(&server, &client_id))
        .send()
        .await
        .expect("login page");
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.expect("html");
    assert!(html.contains("&lt;b&gt;Doc client&lt;/b&gt;"), "{html}");
    assert!(html.contains("id=\"sign-in\""), "{html}");

    let code = code(&server, &http, &client_id).await;
    let (status, token) = exchange(
        &server,
        &http,
        &client_id,
        &code,
        VERIFIER,
        &server.resource(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{token}");
    let access = token["access_token"].as_str().expect("access_token");
    assert_eq!(
        discover(&server, &http, access).await.status(),
        StatusCode::OK
    );
    doc_task.abort();

    // A document naming another client, or none at all: a page, no redirect.
    let (liar, liar_task) = serve_document(
        |_| json!({"client_id": "https://client.example/client.json", "redirect_uris": [REDIRECT]}),
    )
    .await;
    for id in [liar.as_str(), "http://127.0.0.1:9/client.json"] {
        let resp = http
            .get(server.url("/as/authorize"))
            .query(&authorization(&server, id))
            .send()
            .await
            .expect("authorize");
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{id}");
        assert!(resp.headers().get(LOCATION).is_none());
    }
    liar_task.abort();
}

async fn refresh(
    server: &Server,
    http: &reqwest::Client,
    form: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut all = vec![("grant_type", "refresh_token")];
    all.extend_from_slice(form);
    let resp = http
        .post(server.url("/as/token"))
        .form(&all)
        .send()
        .await
        .expect("refresh");
    let status = resp.status();
    (status, resp.json().await.expect("json"))
}

#[tokio::test]
async fn refresh_tokens_rotate_and_may_narrow_the_scope() {
    let server = Server::start().await;
    let http = client();
    let client_id = register(&server, &http).await;
    let code = code(&server, &http, &client_id).await;
    let (_, first) = exchange(
        &server,
        &http,
        &client_id,
        &code,
        VERIFIER,
        &server.resource(),
    )
    .await;
    let old = first["refresh_token"].as_str().expect("a refresh token");
    let resource = server.resource();

    let (status, second) = refresh(
        &server,
        &http,
        &[
            ("refresh_token", old),
            ("client_id", &client_id),
            ("resource", &resource),
            ("scope", SCOPE_READ),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(second["scope"], SCOPE_READ);
    let access = second["access_token"].as_str().expect("access_token");
    assert_eq!(
        discover(&server, &http, access).await.status(),
        StatusCode::OK
    );

    // Used once: the old one is gone; a wider scope than granted is refused.
    let (status, err) = refresh(
        &server,
        &http,
        &[("refresh_token", old), ("client_id", &client_id)],
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    let newer = second["refresh_token"]
        .as_str()
        .expect("a new refresh token");
    let both = format!("{SCOPE_READ} {SCOPE_TOOLS}");
    let (status, err) = refresh(
        &server,
        &http,
        &[
            ("refresh_token", newer),
            ("client_id", &client_id),
            ("scope", &both),
        ],
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_scope"))
    );
    // That refusal left the token usable.
    let (status, third) = refresh(
        &server,
        &http,
        &[("refresh_token", newer), ("client_id", &client_id)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{third}");
    assert_eq!(third["scope"], SCOPE_READ);
}
