//! "Sign in to check this server", driven over real HTTP on loopback as a
//! browser would (cookies by hand, every redirect read): the web form's run
//! of a protected reference server ends `not judged: authorization
//! required`, its page offers the sign-in, the person signs in at the
//! reference server's authorization server, and the run that follows is
//! judged with the token, the sign-in's steps in its report; a sign-in the
//! authorization server gets wrong stops and says where.
//! `browser.rs` plays the same path in Chromium.

use crate::common;

use common::app::{TestApp, mcp_reference_with, worker_config};
use protocheck::credentials::Keyring;
use protocheck::reference::mcp::McpReferenceConfig;
use reqwest::header::{COOKIE, HOST, LOCATION, SET_COOKIE};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;
use url::Url;

fn keyring() -> Keyring {
    Keyring::parse(&hex::encode(rand::random::<[u8; 32]>())).expect("key")
}

/// A browser's cookie jar, enough for one site and its paths.
#[derive(Default)]
struct Jar(BTreeMap<String, String>);

impl Jar {
    fn take(&mut self, resp: &reqwest::Response) {
        for v in resp.headers().get_all(SET_COOKIE) {
            let v = v.to_str().expect("ascii cookie");
            let pair = v.split(';').next().expect("pair");
            let (k, val) = pair.split_once('=').expect("k=v");
            self.0.insert(k.trim().to_owned(), val.trim().to_owned());
        }
    }

    fn header(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn get(&self, name: &str) -> String {
        self.0.get(name).cloned().unwrap_or_default()
    }
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

fn location(resp: &reqwest::Response) -> String {
    resp.headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .expect("Location")
        .to_owned()
}

/// The value of the attribute `attr` of the element with `id` in `html`,
/// with askama's escapes undone.
fn attribute(html: &str, id: &str, attr: &str) -> String {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in {html}"));
    let tag_start = html[..at].rfind('<').expect("tag");
    let tag_end = at + html[at..].find('>').expect("tag end");
    let tag = &html[tag_start..tag_end];
    let key = format!("{attr}=\"");
    let v = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {attr} in {tag}"))
        + key.len();
    let raw = &tag[v..v + tag[v..].find('"').expect("quote")];
    unescape(raw)
}

/// `text` with HTML character references (`&#38;`, `&#x2f;`, `&amp;`) undone.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(end) = tail.find(';') else {
            out.push_str(tail);
            return out;
        };
        let name = &tail[1..end];
        let c = match name {
            "amp" => Some('&'),
            "quot" => Some('"'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "apos" => Some('\''),
            _ => name
                .strip_prefix("#x")
                .or_else(|| name.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match c {
            Some(c) => out.push(c),
            None => out.push_str(&tail[..=end]),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The hidden anti-forgery value of the first form on a page.
fn csrf(html: &str) -> String {
    let key = "name=\"csrf\" value=\"";
    let at = html.find(key).expect("csrf field") + key.len();
    html[at..at + html[at..].find('"').expect("quote")].to_owned()
}

struct Flow {
    app: TestApp,
    _pool: protocheck::worker::WorkerPool,
    http: reqwest::Client,
    jar: Jar,
    target: String,
    _db: common::TestDb,
}

impl Flow {
    async fn start(config: McpReferenceConfig) -> Self {
        let target = mcp_reference_with(config).await;
        let db = common::sqlite().await;
        let app = TestApp::start_with_keyring(&db, 1000, keyring()).await;
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        Self {
            app,
            _pool: pool,
            http: no_redirects(),
            jar: Jar::default(),
            target,
            _db: db,
        }
    }

    async fn get(&mut self, url: &str) -> reqwest::Response {
        let resp = self
            .http
            .get(url)
            .header(COOKIE, self.jar.header())
            .send()
            .await
            .expect("GET");
        self.jar.take(&resp);
        resp
    }

    async fn post(&mut self, url: &str, form: &[(&str, String)]) -> reqwest::Response {
        let resp = self
            .http
            .post(url)
            .header(COOKIE, self.jar.header())
            .form(form)
            .send()
            .await
            .expect("POST");
        self.jar.take(&resp);
        resp
    }

    /// Submits the form with `suite: auto` and waits for the run.
    async fn form_run(&mut self) -> (String, Value) {
        let home = self.get(&self.app.url("/")).await;
        assert_eq!(home.status(), 200);
        let token = self.jar.get("pc_csrf");
        let resp = self
            .post(
                &self.app.url("/"),
                &[
                    ("url", self.target.clone()),
                    ("suite", "auto".into()),
                    ("csrf", token),
                ],
            )
            .await;
        assert_eq!(resp.status(), 303, "{:?}", resp.text().await);
        let run_page = location(&resp);
        let id = run_page.trim_start_matches("/runs/").to_owned();
        let run = self.app.wait_finished(&id, Duration::from_secs(120)).await;
        (id, run)
    }

    /// From the run page to the authorization server's login page: the
    /// continue page's link.
    async fn open_login(&mut self, run_id: &str) -> Url {
        let page = self.get(&self.app.url(&format!("/runs/{run_id}"))).await;
        assert_eq!(page.status(), 200);
        let html = page.text().await.expect("html");
        assert!(
            html.contains("id=\"sign-in\""),
            "the page offers the sign-in: {html}"
        );
        let token = csrf(&html);
        let resp = self
            .post(
                &self.app.url(&format!("/runs/{run_id}/sign-in")),
                &[("csrf", token)],
            )
            .await;
        let status = resp.status();
        let html = resp.text().await.expect("html");
        assert_eq!(status, 200, "{html}");
        assert!(
            !self.jar.get("pc_sign_in").is_empty(),
            "the sign-in cookie is set"
        );
        let href = attribute(&html, "continue-sign-in", "href");
        Url::parse(&href).expect("authorization URL")
    }

    /// Signs in as alice at the login page `login` (its form posts the
    /// request's parameters back to the same path); `host` replaces the Host
    /// header. Returns the callback URL the authorization server sent back.
    async fn sign_in_at(&mut self, login: &Url, host: Option<String>) -> Url {
        let page = self
            .http
            .get(login.clone())
            .send()
            .await
            .expect("login page");
        assert_eq!(page.status(), 200, "{:?}", page.text().await);
        let mut form: Vec<(String, String)> = login
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        form.push(("username".into(), "alice".into()));
        form.push(("password".into(), "wonderland".into()));
        let mut action = login.clone();
        action.set_query(None);
        let mut req = self.http.post(action).form(&form);
        if let Some(host) = host {
            req = req.header(HOST, host);
        }
        let resp = req.send().await.expect("sign in");
        assert_eq!(resp.status(), 303, "{:?}", resp.text().await);
        Url::parse(&location(&resp)).expect("callback URL")
    }

    /// Follows the callback into the new run; returns its id and the run.
    async fn back(&mut self, callback: &Url) -> (String, Value) {
        let resp = self.get(callback.as_str()).await;
        let status = resp.status();
        assert_eq!(status, 303, "{:?}", resp.text().await);
        let id = location(&resp).trim_start_matches("/runs/").to_owned();
        let run = self.app.wait_finished(&id, Duration::from_secs(120)).await;
        (id, run)
    }

    async fn findings(&self, id: &str) -> Vec<Value> {
        let (status, report) = self
            .app
            .get_json(&format!("/api/v1/runs/{id}/report.json"))
            .await;
        assert_eq!(status, 200, "{report}");
        report["findings"].as_array().expect("findings").clone()
    }
}

fn finding<'a>(findings: &'a [Value], rule: &str) -> &'a Value {
    findings
        .iter()
        .find(|f| f["rule_id"] == rule)
        .unwrap_or_else(|| panic!("no {rule} finding"))
}

impl Flow {
    /// A flow against the protected reference server over HTTPS, its
    /// certificate issued by a CA of the test's own, which the workers and
    /// the test's browser trust. The service's sign-in client trusts it only
    /// when `sign_in_trusts` is set: `serve` gives it the workers' roots
    /// (`PROTOCHECK_CA_CERT`), and without them the sign-in cannot start.
    async fn start_tls(sign_in_trusts: bool) -> Self {
        use protocheck::reference::mcp::{
            CertificateFault, TestCertificate, serve_mcp_reference_tls,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let certificate = TestCertificate::generate(CertificateFault::None).expect("certificate");
        let ca_der = certificate.ca_der.clone();
        tokio::spawn(async move {
            let _ = serve_mcp_reference_tls(listener, protected(), certificate).await;
        });
        let db = common::sqlite().await;
        let web_roots = if sign_in_trusts {
            vec![ca_der.clone()]
        } else {
            Vec::new()
        };
        let app = TestApp::start_with_keyring_tuned(&db, 1000, keyring(), move |o| {
            o.sign_in_roots = web_roots;
        })
        .await;
        let mut cfg = worker_config(1, Duration::from_secs(30));
        cfg.extra_roots = vec![ca_der.clone()];
        let pool = app.workers(cfg);
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .add_root_certificate(reqwest::Certificate::from_der(&ca_der).expect("CA"))
            .build()
            .expect("client");
        Self {
            app,
            _pool: pool,
            http,
            jar: Jar::default(),
            target: format!("https://127.0.0.1:{}/mcp", addr.port()),
            _db: db,
        }
    }
}

#[tokio::test]
async fn a_server_behind_an_internal_ca_is_signed_in_to_when_the_service_trusts_that_ca() {
    let mut flow = Flow::start_tls(true).await;
    let (first, run) = flow.form_run().await;
    assert_eq!(run["verdict"]["grade"], "not judged", "{run}");
    let login = flow.open_login(&first).await;
    assert_eq!(login.scheme(), "https", "{login}");
    let callback = flow.sign_in_at(&login, None).await;
    let (_, run) = flow.back(&callback).await;
    assert_eq!(run["status"], "passed", "{run}");
    assert_eq!(run["verdict"]["grade"], "strict", "{run}");
}

#[tokio::test]
async fn a_sign_in_client_without_that_ca_cannot_reach_the_server_and_says_so() {
    let mut flow = Flow::start_tls(false).await;
    let (first, run) = flow.form_run().await;
    assert_eq!(run["verdict"]["grade"], "not judged", "{run}");
    let page = flow.get(&flow.app.url(&format!("/runs/{first}"))).await;
    let html = page.text().await.expect("html");
    let token = csrf(&html);
    let resp = flow
        .post(
            &flow.app.url(&format!("/runs/{first}/sign-in")),
            &[("csrf", token)],
        )
        .await;
    let status = resp.status();
    let html = resp.text().await.expect("html");
    assert_eq!(status, 409, "{html}");
    assert!(
        html.contains("certificate") && html.contains("PROTOCHECK_CA_CERT"),
        "the page names the certificate and the setting that trusts its CA: {html}"
    );
}

fn protected() -> McpReferenceConfig {
    McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_auth()
}

#[tokio::test]
async fn a_person_signs_in_from_the_run_page_and_gets_the_whole_suite_judged() {
    let mut flow = Flow::start(protected()).await;
    let (first, run) = flow.form_run().await;
    assert_eq!(run["verdict"]["grade"], "not judged", "{run}");

    let login = flow.open_login(&first).await;
    let params: BTreeMap<String, String> = login.query_pairs().into_owned().collect();
    assert_eq!(params["response_type"], "code");
    assert_eq!(params["code_challenge_method"], "S256");
    assert_eq!(params["resource"], flow.target);
    // The reference advertises Client ID Metadata Documents: protocheck's
    // client id is its own document's URL.
    assert_eq!(params["client_id"], flow.app.url("/sign-in/client.json"));
    let (status, doc) = flow.app.get_json("/sign-in/client.json").await;
    assert_eq!(status, 200);
    assert_eq!(doc["client_id"], params["client_id"].as_str());
    assert_eq!(doc["token_endpoint_auth_method"], "none");

    let callback = flow.sign_in_at(&login, None).await;
    let code: String = callback
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("code");
    let (second, run) = flow.back(&callback).await;
    assert_eq!(run["status"], "passed", "{run}");
    assert_eq!(run["verdict"]["grade"], "strict", "{run}");
    assert_eq!(run["credentials"], "bearer", "{run}");

    // The badge follows the run judged with the token (docs/src/using/protected-servers.md: "Badges").
    let target_id = run["target_id"].as_str().expect("target id");
    let svg = flow
        .app
        .get_text(&format!("/badge/{target_id}/mcp.svg"))
        .await;
    assert!(svg.contains("strict"), "{svg}");
    assert!(!svg.contains("authorization required"), "{svg}");

    let findings = flow.findings(&second).await;
    let judged = findings.iter().filter(|f| f["outcome"] != "skip").count();
    assert!(
        judged > 60,
        "the whole suite was judged: {judged} findings not skipped"
    );
    for (rule, says) in [
        ("MCP-AUT-011", "client_id_metadata_document_supported"),
        ("MCP-AUT-005", "with iss="),
        ("MCP-AUT-010", "the token endpoint answered HTTP 200"),
    ] {
        let f = finding(&findings, rule);
        assert_eq!(f["outcome"], "pass", "{f}");
        let message = f["message"].as_str().unwrap_or_default();
        assert!(message.contains("During sign-in at"), "{f}");
        assert!(message.contains(says), "{rule}: {f}");
    }
    let (_, report) = flow
        .app
        .get_json(&format!("/api/v1/runs/{second}/report.json"))
        .await;
    let note = report["run"]["credentials"]["note"]
        .as_str()
        .unwrap_or_default();
    assert!(note.contains("signed in at"), "{note}");
    // The run page tells how it was judged and lists the steps; the code
    // (spent, but a secret until then) is in no output.
    let page = flow
        .get(&flow.app.url(&format!("/runs/{second}")))
        .await
        .text()
        .await
        .expect("html");
    assert!(page.contains("signed in at"), "{page}");
    assert!(page.contains("id=\"sign-in-steps\""), "{page}");
    assert!(
        !page.contains("id=\"sign-in\""),
        "no second offer on a judged run"
    );
    for path in [
        format!("/api/v1/runs/{second}"),
        format!("/api/v1/runs/{second}/report.json"),
        format!("/api/v1/runs/{second}/report.sarif"),
        format!("/api/v1/runs/{second}/report.junit.xml"),
        format!("/runs/{second}"),
    ] {
        let body = flow.app.get_text(&path).await;
        assert!(!body.contains(&code), "{path} shows the authorization code");
    }
    // The token's sealed copy is gone with the run's end.
    let left = flow
        .app
        .deps
        .store
        .count_run_credentials()
        .await
        .expect("count");
    assert_eq!(left, 0);

    // A callback is good once.
    let again = flow.get(callback.as_str()).await;
    assert_eq!(again.status(), 409);
}

#[tokio::test]
async fn a_redirect_whose_iss_is_not_the_issuer_stops_the_sign_in_and_says_so() {
    let mut flow = Flow::start(protected()).await;
    let (first, _) = flow.form_run().await;
    let login = flow.open_login(&first).await;
    // The reference names its issuer by the Host it is asked at: asked as
    // `localhost`, it sends back an `iss` other than the metadata's
    // 127.0.0.1 issuer, as a mixed-up authorization server would.
    let port = login.port().expect("port");
    let callback = flow
        .sign_in_at(&login, Some(format!("localhost:{port}")))
        .await;
    assert!(
        callback
            .query_pairs()
            .any(|(k, v)| k == "iss" && v.contains("localhost")),
        "{callback}"
    );
    let (second, run) = flow.back(&callback).await;
    assert_eq!(
        run["credentials"],
        Value::Null,
        "no token was obtained: {run}"
    );
    assert_eq!(run["verdict"]["grade"], "not judged", "{run}");
    let findings = flow.findings(&second).await;
    let f = finding(&findings, "MCP-AUT-005");
    let page = flow.app.get_text(&format!("/runs/{second}")).await;
    let steps = page.find("sign-in-steps").map_or("", |at| &page[at..]);
    assert_eq!(
        f["outcome"],
        "warn",
        "{f}\n{}",
        &steps[..steps.len().min(3000)]
    );
    let message = f["message"].as_str().unwrap_or_default();
    assert!(message.contains("RFC 9207"), "{f}");
    assert!(message.contains("no code was exchanged"), "{f}");
    let page = flow.app.get_text(&format!("/runs/{second}")).await;
    assert!(page.contains("id=\"sign-in-steps\""), "{page}");
}

#[tokio::test]
async fn an_authorization_server_without_s256_ends_the_sign_in_before_the_browser_leaves() {
    let config = McpReferenceConfig::new(["MCP-AUT-010".to_owned()].into_iter().collect())
        .expect("known fault")
        .with_auth();
    let mut flow = Flow::start(config).await;
    let (first, run) = flow.form_run().await;
    assert_eq!(run["verdict"]["grade"], "non-compliant", "{run}");
    // A failing run still offers the sign-in: the rest of its suite was not
    // judged.
    let page = flow.get(&flow.app.url(&format!("/runs/{first}"))).await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains("id=\"sign-in\""), "{html}");
    let token = flow.jar.get("pc_csrf");
    let token = if token.is_empty() {
        let home = flow.get(&flow.app.url("/")).await;
        assert_eq!(home.status(), 200);
        flow.jar.get("pc_csrf")
    } else {
        token
    };
    let resp = flow
        .post(
            &flow.app.url(&format!("/runs/{first}/sign-in")),
            &[("csrf", token)],
        )
        .await;
    assert_eq!(resp.status(), 303, "stopped: straight to the run");
    let id = location(&resp).trim_start_matches("/runs/").to_owned();
    let run = flow.app.wait_finished(&id, Duration::from_secs(120)).await;
    assert_eq!(run["credentials"], Value::Null, "{run}");
    let findings = flow.findings(&id).await;
    let f = finding(&findings, "MCP-AUT-010");
    assert_eq!(f["outcome"], "fail", "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or_default()
            .contains("MUST refuse to proceed"),
        "{f}"
    );
}

#[tokio::test]
async fn sign_in_posts_without_the_page_token_or_from_elsewhere_are_refused() {
    let mut flow = Flow::start(protected()).await;
    let (first, _) = flow.form_run().await;
    let path = flow.app.url(&format!("/runs/{first}/sign-in"));
    let resp = flow.post(&path, &[("csrf", "forged".into())]).await;
    assert_eq!(resp.status(), 403);
    let resp = flow
        .http
        .post(&path)
        .header("sec-fetch-site", "cross-site")
        .form(&[("csrf", "x")])
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status(), 403);
    // A callback with an unknown state, or from another browser, does nothing.
    let resp = flow
        .get(&flow.app.url("/sign-in/callback?state=nothing&code=x"))
        .await;
    assert_eq!(resp.status(), 409);
    let resp = flow.get(&flow.app.url("/sign-in/callback")).await;
    assert_eq!(resp.status(), 400);
}

/// The official MCP Python SDK's own authorization server (its combined
/// mode: metadata, dynamic registration, authorize, token with PKCE) in
/// front of an SDK server, `tests/interop/mcp/sdk_oauth_server.py`; the
/// verdict is adjudicated in tests/interop/EXPECTED.md ("The sign-in against
/// the SDK's authorization server").
#[tokio::test]
async fn the_python_sdks_authorization_server_signs_protocheck_in() {
    let python = std::env::var("PROTOCHECK_INTEROP_PYTHON").unwrap_or_default();
    if python.is_empty() {
        assert!(
            std::env::var("PROTOCHECK_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_INTEROP_PYTHON is unset"
        );
        eprintln!(
            "SKIPPED: the SDK sign-in; set PROTOCHECK_INTEROP_PYTHON (see scripts/test-all.sh)"
        );
        return;
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/mcp/sdk_oauth_server.py"
    );
    let mut child = tokio::process::Command::new(&python)
        .arg(script)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the SDK server");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let port = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.expect("read stdout") {
            if let Some(port) = line.strip_prefix("PORT ") {
                return port.trim().parse::<u16>().expect("port");
            }
        }
        panic!("the SDK server ended before it printed its port");
    })
    .await
    .expect("the SDK server starts (a liveness bound)");

    let target = format!("http://127.0.0.1:{port}/mcp");
    let db = common::sqlite().await;
    let app = TestApp::start_with_keyring(&db, 1000, keyring()).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let mut flow = Flow {
        app,
        _pool: pool,
        http: no_redirects(),
        jar: Jar::default(),
        target,
        _db: db,
    };
    let (first, run) = flow.form_run().await;
    assert_eq!(run["verdict"]["grade"], "not judged", "{run}");
    let authorize = flow.open_login(&first).await;
    let params: BTreeMap<String, String> = authorize.query_pairs().into_owned().collect();
    assert_eq!(
        params["scope"], "mcp",
        "the PRM's scopes_supported, as the challenge names none"
    );
    // The SDK approves at once and sends the browser straight back.
    let resp = flow
        .http
        .get(authorize.clone())
        .send()
        .await
        .expect("authorize");
    assert!(resp.status().is_redirection(), "{:?}", resp.text().await);
    let callback = Url::parse(&location(&resp)).expect("callback");
    let (second, run) = flow.back(&callback).await;
    assert_eq!(
        run["credentials"], "bearer",
        "the token was obtained: {run}"
    );
    assert_eq!(run["verdict"]["grade"], "compliant", "{run}");

    let findings = flow.findings(&second).await;
    let page = flow.app.get_text(&format!("/runs/{second}")).await;
    assert!(page.contains("dynamic registration (RFC 7591)"), "{page}");
    let f = finding(&findings, "MCP-AUT-010");
    assert_eq!(f["outcome"], "pass", "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the token endpoint answered HTTP 200"),
        "{f}"
    );
    let mut not_passed: Vec<String> = findings
        .iter()
        .filter(|f| f["outcome"] != "pass" && f["outcome"] != "skip")
        .map(|f| {
            format!(
                "{} {}",
                f["rule_id"].as_str().unwrap_or_default(),
                f["outcome"].as_str().unwrap_or_default()
            )
        })
        .collect();
    not_passed.sort();
    assert_eq!(
        not_passed,
        ["MCP-AUT-005 warn", "MCP-AUT-006 warn", "MCP-AUT-011 warn"],
        "the adjudicated warnings only"
    );
}
