//! The MCP 2025-11-25 reference server over real HTTP on loopback and over
//! stdio through the real binary: the lifecycle, sessions, pagination, SSE
//! answers, the GET stream and its resumption, the header checks, and one
//! probe per fault switch showing that the switch changes what it must
//! (in `faults`).

mod faults;
mod misc_faults;

use crate::common::cli::{output, protocheck, show};
use protocheck::reference::mcp2025::{Mcp25ReferenceConfig, serve_mcp25_reference};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long a test waits for one thing the server should send.
const WAIT: Duration = Duration::from_secs(5);

async fn start(config: Mcp25ReferenceConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = serve_mcp25_reference(listener, config).await;
    });
    format!("http://{addr}/mcp")
}

/// The `data:` payloads of an SSE body that parse as JSON.
fn sse_messages(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// The `id:` fields of an SSE body.
fn sse_ids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("id:"))
        .map(|i| i.trim().to_owned())
        .collect()
}

struct Client {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
}

impl Client {
    fn new(url: &str) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: url.to_owned(),
            session: None,
        }
    }

    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut req = self
            .http
            .request(method, &self.url)
            .header("accept", "application/json, text/event-stream")
            .timeout(WAIT);
        if let Some(sid) = &self.session {
            req = req
                .header("mcp-session-id", sid)
                .header("mcp-protocol-version", "2025-11-25");
        }
        req
    }

    async fn post(&self, body: &Value) -> reqwest::Response {
        self.request(reqwest::Method::POST)
            .json(body)
            .send()
            .await
            .expect("POST")
    }

    /// Sends a request; returns its answer, read from JSON or SSE.
    async fn rpc(&self, id: i64, method: &str, params: Value) -> Value {
        let resp = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        answer(resp, id).await
    }

    /// `initialize` then `notifications/initialized`, keeping the session.
    async fn initialized(url: &str) -> Self {
        let mut client = Self::new(url);
        let resp = client.post(&initialize("2025-11-25")).await;
        assert_eq!(resp.status(), StatusCode::OK);
        client.session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body: Value = resp.json().await.expect("initialize result");
        assert!(body["result"].is_object(), "{body}");
        let resp = client
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert!(resp.status().is_success());
        client
    }
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "protocheck-tests", "version": "0"}}})
}

async fn answer(resp: reqwest::Response, id: i64) -> Value {
    let sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let text = resp.text().await.expect("body");
    if !sse {
        return serde_json::from_str(&text).expect("a JSON body");
    }
    sse_messages(&text)
        .into_iter()
        .find(|m| m["id"] == id)
        .unwrap_or(Value::Null)
}

/// Reads an open SSE response until `done` holds for the text so far, or
/// [`WAIT`] passes; returns the text.
async fn read_until(resp: &mut reqwest::Response, done: impl Fn(&str) -> bool) -> String {
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done(&text) {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            _ => break,
        }
    }
    text
}

#[tokio::test]
async fn initialize_negotiates_the_version_and_issues_a_session() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::new(&url);
    for (asked, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let resp = client.post(&initialize(asked)).await;
        assert_eq!(resp.status(), StatusCode::OK);
        let sid = resp.headers().get("mcp-session-id").cloned();
        let sid = sid
            .expect("a session id")
            .to_str()
            .expect("text")
            .to_owned();
        assert!(sid.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{sid}");
        let body: Value = resp.json().await.expect("JSON");
        let result = &body["result"];
        assert_eq!(result["protocolVersion"], answered, "{body}");
        assert_eq!(result["serverInfo"]["name"], "protocheck-reference-mcp");
        assert!(result["serverInfo"]["version"].is_string());
        assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
        assert_eq!(result["capabilities"]["resources"]["subscribe"], true);
        assert!(result["capabilities"]["logging"].is_object());
        assert!(result["capabilities"]["completions"].is_object());
        assert!(result["instructions"].is_string());
    }
    let body: Value = client
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .await
        .json()
        .await
        .expect("JSON");
    assert_eq!(body["error"]["code"], -32602, "{body}");
}

#[tokio::test]
async fn sessions_are_required_known_and_end_with_delete() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let mut client = Client::initialized(&url).await;
    let ping = client.rpc(1, "ping", json!({})).await;
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let sid = client.session.clone().expect("session");

    client.session = None;
    let resp = client
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    client.session = Some("not-a-session".into());
    let resp = client
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);

    client.session = Some(sid.clone());
    let resp = client
        .request(reqwest::Method::DELETE)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    let resp = client
        .post(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);

    // A second initialize inside a live session is refused.
    let client = Client::initialized(&url).await;
    let again = answer(client.post(&initialize("2025-11-25")).await, 0).await;
    assert_eq!(again["error"]["code"], -32600, "{again}");
}

#[tokio::test]
async fn notifications_and_responses_get_202_without_a_body() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::initialized(&url).await;
    for message in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}),
        json!({"jsonrpc": "2.0", "id": "s-1", "result": {}}),
    ] {
        let resp = client.post(&message).await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        assert!(resp.bytes().await.expect("body").is_empty());
    }
}

#[tokio::test]
async fn tools_are_paginated_two_per_page() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::initialized(&url).await;
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    for page in 0.. {
        assert!(page < 5, "pagination does not end");
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let body = client.rpc(page, "tools/list", params).await;
        let tools = body["result"]["tools"].as_array().expect("tools").clone();
        assert!(tools.len() <= 2, "{body}");
        for tool in &tools {
            assert_eq!(tool["inputSchema"]["type"], "object");
            assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
            names.push(tool["name"].as_str().expect("name").to_owned());
        }
        cursor = body["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(names, ["get_forecast", "divide", "count", "slow"]);
    let bad = client
        .rpc(9, "tools/list", json!({"cursor": "nonsense"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[tokio::test]
async fn methods_answer_as_the_spec_says() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::initialized(&url).await;
    let forecast = client
        .rpc(
            1,
            "tools/call",
            json!({"name": "get_forecast", "arguments": {"region": "eu"}}),
        )
        .await;
    assert_eq!(
        forecast["result"]["structuredContent"]["region"], "eu",
        "{forecast}"
    );
    assert_eq!(forecast["result"]["isError"], false);
    let divide = client
        .rpc(
            2,
            "tools/call",
            json!({"name": "divide", "arguments": {"a": 1, "b": 0}}),
        )
        .await;
    assert_eq!(divide["result"]["isError"], true, "{divide}");
    let unknown = client.rpc(3, "tools/call", json!({"name": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let read = client
        .rpc(4, "resources/read", json!({"uri": "ref://docs/readme"}))
        .await;
    assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");
    let missing = client
        .rpc(5, "resources/read", json!({"uri": "ref://nope"}))
        .await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    let templates = client.rpc(6, "resources/templates/list", json!({})).await;
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "ref://docs/{name}"
    );
    let sub = client
        .rpc(
            7,
            "resources/subscribe",
            json!({"uri": "ref://docs/readme"}),
        )
        .await;
    assert_eq!(sub["result"], json!({}), "{sub}");
    let prompt = client
        .rpc(
            8,
            "prompts/get",
            json!({"name": "summarize", "arguments": {"topic": "x"}}),
        )
        .await;
    assert_eq!(prompt["result"]["messages"][0]["role"], "user", "{prompt}");
    let no_arg = client
        .rpc(9, "prompts/get", json!({"name": "summarize"}))
        .await;
    assert_eq!(no_arg["error"]["code"], -32602, "{no_arg}");
    let no_prompt = client.rpc(10, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(no_prompt["error"]["code"], -32602, "{no_prompt}");
    let completion = client
        .rpc(
            11,
            "completion/complete",
            json!({
            "ref": {"type": "ref/prompt", "name": "summarize"},
            "argument": {"name": "topic", "value": "s"}}),
        )
        .await;
    assert_eq!(
        completion["result"]["completion"]["values"],
        json!(["sessions"])
    );
    let level = client
        .rpc(12, "logging/setLevel", json!({"level": "debug"}))
        .await;
    assert_eq!(level["result"], json!({}), "{level}");
    let bad_level = client
        .rpc(13, "logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(bad_level["error"]["code"], -32602);
    let unknown = client.rpc(14, "no/such/method", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
}

#[tokio::test]
async fn framing_errors_and_batches_are_refused() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::initialized(&url).await;
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]);
    let cases = [
        (
            client
                .request(reqwest::Method::POST)
                .body("{")
                .header("content-type", "application/json"),
            -32700,
        ),
        (client.request(reqwest::Method::POST).json(&batch), -32600),
        (
            client
                .request(reqwest::Method::POST)
                .json(&json!({"jsonrpc": "2.0", "id": null, "method": "ping"})),
            -32600,
        ),
        (
            client
                .request(reqwest::Method::POST)
                .json(&json!({"jsonrpc": "2.0", "id": 1})),
            -32600,
        ),
    ];
    for (req, code) in cases {
        let resp = req.send().await.expect("POST");
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let body: Value = resp.json().await.expect("JSON error");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(body.get("result").is_none());
    }
}

#[tokio::test]
async fn progress_comes_over_sse_before_the_answer() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::initialized(&url).await;
    let resp = client
        .post(
            &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "count", "arguments": {"to": 3}, "_meta": {"progressToken": "p1"}}}),
        )
        .await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = resp.text().await.expect("stream ends after the answer");
    let messages = sse_messages(&text);
    let progress: Vec<i64> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            assert_eq!(m["params"]["progressToken"], "p1");
            m["params"]["progress"].as_i64().expect("progress")
        })
        .collect();
    assert_eq!(progress, [0, 1, 2, 3], "{text}");
    assert_eq!(
        messages.last().map(|m| m["id"].clone()),
        Some(json!(5)),
        "{text}"
    );
    // The stream's first event primes resumption: an id and empty data.
    assert!(text.starts_with("id: "), "{text}");
}

#[tokio::test]
async fn a_cancelled_call_gets_no_answer() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::initialized(&url).await;
    let slow = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 3000}}});
    let call = client.post(&slow);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        client
            .post(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 7, "reason": "test"}}),
            )
            .await
            .status()
    };
    let started = tokio::time::Instant::now();
    let (resp, cancelled) = tokio::join!(call, cancel);
    assert_eq!(cancelled, StatusCode::ACCEPTED);
    let text = resp.text().await.expect("the stream ends");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "the call ran on"
    );
    assert!(
        sse_messages(&text).iter().all(|m| m.get("id").is_none()),
        "{text}"
    );
}

#[tokio::test]
async fn the_get_stream_sends_events_and_resumes_after_last_event_id() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::initialized(&url).await;
    let mut resp = client
        .request(reqwest::Method::GET)
        .send()
        .await
        .expect("GET");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = read_until(&mut resp, |t| !sse_messages(t).is_empty()).await;
    let messages = sse_messages(&text);
    assert_eq!(
        messages.first().map(|m| m["method"].clone()),
        Some(json!("notifications/message")),
        "{text}"
    );
    let ids = sse_ids(&text);
    assert_eq!(ids.len(), 2, "priming event and the message: {text}");
    drop(resp);

    let mut resumed = client
        .request(reqwest::Method::GET)
        .header("last-event-id", &ids[0])
        .send()
        .await
        .expect("GET");
    let replay = read_until(&mut resumed, |t| !sse_messages(t).is_empty()).await;
    assert_eq!(sse_ids(&replay).first(), Some(&ids[1]), "{replay}");
    assert_eq!(sse_messages(&replay), messages);
}

#[tokio::test]
async fn origin_and_protocol_version_headers_are_checked() {
    let url = start(Mcp25ReferenceConfig::new()).await;
    let client = Client::initialized(&url).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let resp = client
        .request(reqwest::Method::POST)
        .header("origin", "https://evil.example")
        .json(&ping)
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = client
        .request(reqwest::Method::POST)
        .header("origin", "http://localhost:3000")
        .json(&ping)
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status(), StatusCode::OK);
    let resp = client
        .http
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", client.session.clone().expect("session"))
        .header("mcp-protocol-version", "2099-01-01")
        .json(&ping)
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    // No header at all: taken as 2025-03-26, which is supported.
    let resp = client
        .http
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", client.session.clone().expect("session"))
        .json(&ping)
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test]
async fn without_sessions_and_with_sse_answers() {
    let url = start(
        Mcp25ReferenceConfig::new()
            .with_sessions(false)
            .with_sse_responses(true),
    )
    .await;
    let client = Client::new(&url);
    let resp = client.post(&initialize("2025-11-25")).await;
    assert!(resp.headers().get("mcp-session-id").is_none());
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let init = answer(resp, 0).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let tools = client.rpc(1, "tools/list", json!({})).await;
    assert_eq!(
        tools["result"]["tools"].as_array().map(Vec::len),
        Some(2),
        "{tools}"
    );
    let resp = client
        .request(reqwest::Method::DELETE)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
}

/// The binary over stdio: one JSON message per line, and the lifecycle.
struct Stdio {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Stdio {
    fn spawn(faults: &[&str]) -> Self {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_protocheck"));
        cmd.args(["reference", "mcp", "--revision", "2025-11-25", "--stdio"]);
        for fault in faults {
            cmd.args(["--break", fault]);
        }
        let mut child = cmd
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the binary");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Self {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write");
        stdin.flush().await.expect("flush");
    }

    async fn line(&mut self) -> Option<String> {
        tokio::time::timeout(WAIT, self.stdout.next_line())
            .await
            .ok()?
            .ok()?
    }

    async fn message(&mut self) -> Value {
        let line = self.line().await.expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"))
    }

    async fn initialize(&mut self) {
        self.send(&initialize("2025-11-25").to_string()).await;
        let init = self.message().await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }
}

#[tokio::test]
async fn stdio_speaks_the_lifecycle_line_by_line() {
    let mut server = Stdio::spawn(&[]);
    server
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(
        server.message().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    server
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    assert_eq!(
        server.message().await["error"]["code"],
        -32600,
        "before initialize"
    );
    server.initialize().await;
    server
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#)
        .await;
    let tools = server.message().await;
    assert_eq!(tools["result"]["nextCursor"], "tools:2", "{tools}");
    server.send("{not json").await;
    assert_eq!(server.message().await["error"]["code"], -32700);
    server
        .send(r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#)
        .await;
    assert_eq!(server.message().await["error"]["code"], -32600);

    // A slow call, cancelled: no answer; the next request is answered.
    server
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"ms":3000}}}"#)
        .await;
    server
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#)
        .await;
    server
        .send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#)
        .await;
    assert_eq!(server.message().await["id"], 6);
    server
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count","arguments":{"to":2},"_meta":{"progressToken":9}}}"#)
        .await;
    let first = server.message().await;
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progress"], 0, "{first}");
    assert_eq!(server.message().await["params"]["progress"], 1);
    assert_eq!(server.message().await["params"]["progress"], 2);
    assert_eq!(server.message().await["id"], 7);

    // The end of stdin ends the server, with nothing more on stdout.
    server.stdin = None;
    assert_eq!(server.line().await, None);
    let status = tokio::time::timeout(WAIT, server.child.wait()).await;
    assert!(status.expect("exits").expect("status").success());
}

#[tokio::test]
async fn an_unknown_fault_is_a_usage_error() {
    let mut cmd = protocheck();
    cmd.args([
        "reference",
        "mcp",
        "--revision",
        "2025-11-25",
        "--stdio",
        "--break",
        "MCP25-LIF-999",
    ]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MCP25-LIF-999"), "{stderr}");
}

#[tokio::test]
async fn latency_delays_every_answer() {
    let latency = Duration::from_millis(200);
    let url = start(Mcp25ReferenceConfig::new().with_latency(latency)).await;
    let client = Client::initialized(&url).await;
    let started = tokio::time::Instant::now();
    let ping = client.rpc(1, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    assert!(started.elapsed() >= latency, "{:?}", started.elapsed());
}
