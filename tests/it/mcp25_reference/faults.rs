//! One probe per fault switch of the 2025-11-25 reference server: each
//! observes the behaviour its rule judges, on a correct server and on one
//! with the switch on, and the two must differ.

use super::{Client, Stdio, WAIT, initialize, read_until, sse_ids, sse_messages, start};
use protocheck::reference::mcp2025::{Mcp25ReferenceConfig, supported_faults_2025};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

/// How long a probe watches for something a correct server never sends.
const QUIET: Duration = Duration::from_millis(400);

fn msg(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Everything in a body: one JSON value, or the messages of an SSE stream.
async fn body_of(resp: reqwest::Response) -> (u16, String, Vec<Value>) {
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = resp.text().await.unwrap_or_default();
    let messages = if content_type.starts_with("text/event-stream") {
        sse_messages(&text)
    } else {
        serde_json::from_str(&text)
            .map(|v| vec![v])
            .unwrap_or_default()
    };
    (status, text, messages)
}

/// Reads an SSE response for at most `limit`; the text and whether it ended.
async fn read_for(mut resp: reqwest::Response, limit: Duration) -> (String, bool) {
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(_) => return (text, true),
            Err(_) => return (text, false),
        }
    }
}

fn count_with_progress(id: i64) -> Value {
    msg(
        id,
        "tools/call",
        json!({"name": "count", "arguments": {"to": 2}, "_meta": {"progressToken": "tok"}}),
    )
}

/// The first answer a fresh HTTP session gets to `method`.
async fn http_rpc(url: &str, method: &str, params: Value) -> Value {
    Client::initialized(url).await.rpc(1, method, params).await
}

async fn init_result(url: &str, version: &str) -> Value {
    let resp = Client::new(url).post(&initialize(version)).await;
    let body: Value = resp.json().await.unwrap_or_default();
    body["result"].clone()
}

async fn stdio_after(faults: &[&str], init: bool, lines: &[&str]) -> Vec<String> {
    let mut server = Stdio::spawn(faults);
    if init {
        server.initialize().await;
    }
    for line in lines {
        server.send(line).await;
    }
    // The first line may take a process start; the rest come at once.
    let mut seen = Vec::new();
    let mut wait = WAIT;
    while let Ok(Some(line)) = tokio::time::timeout(wait, server.line()).await {
        seen.push(line);
        wait = QUIET;
    }
    seen
}

/// What the rule of `fault` judges, as the server at `url` (started with
/// `faults`) shows it.
async fn observe(fault: &str, faults: &[&str]) -> Value {
    if let Some(seen) = super::misc_faults::observe(fault, faults).await {
        return seen;
    }
    let url = start(Mcp25ReferenceConfig::new().with_faults(faults)).await;
    let url = url.as_str();
    let tools_list = || http_rpc(url, "tools/list", json!({}));
    let initialized = || Client::initialized(url);
    match fault.trim_start_matches("MCP25-") {
        "LIF-001" => init_result(url, "2025-11-25").await["serverInfo"]["version"].clone(),
        "LIF-002" => init_result(url, "2025-11-25").await["protocolVersion"].clone(),
        "LIF-003" | "LIF-004" => init_result(url, "1999-01-01").await["protocolVersion"].clone(),
        "TOL-001" | "RES-001" | "PRM-001" | "CPL-001" | "LOG-001" | "LIF-008" => {
            init_result(url, "2025-11-25").await["capabilities"].clone()
        }
        "LIF-005" | "RPC-009" => {
            let client = initialized().await;
            let method = if fault.ends_with("LIF-005") {
                "notifications/initialized"
            } else {
                "notifications/protocheck_unknown"
            };
            let (status, text, _) = body_of(
                client
                    .post(&json!({"jsonrpc": "2.0", "method": method}))
                    .await,
            )
            .await;
            json!([status, text])
        }
        "LIF-006" => json!(
            stdio_after(faults, true, &[r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#]).await
        ),
        "LIF-007" => json!(
            stdio_after(faults, false, &[r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#])
                .await
        ),
        "LIF-009" => {
            let (_, _, messages) = body_of(initialized().await.post(&msg(1, "tools/list", json!({}))).await).await;
            json!(messages.iter().map(|m| m["method"].clone()).collect::<Vec<_>>())
        }
        "RPC-001" => http_rpc(url, "ping", json!({})).await["id"].clone(),
        "RPC-002" | "UTL-001" => http_rpc(url, "ping", json!({})).await,
        "RPC-003" => http_rpc(url, "no/such", json!({})).await["error"].clone(),
        "RPC-007" => http_rpc(url, "no/such", json!({})).await["error"]["code"].clone(),
        "RPC-004" | "RPC-005" | "RPC-006" | "RPC-008" => {
            let body = match fault.trim_start_matches("MCP25-") {
                "RPC-004" => "{".to_owned(),
                "RPC-005" => r#"{"jsonrpc":"2.0","id":1}"#.to_owned(),
                "RPC-006" => r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_owned(),
                _ => r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_owned(),
            };
            let client = initialized().await;
            let resp = client
                .request(Method::POST)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .expect("POST");
            let (status, text, _) = body_of(resp).await;
            json!([status, text])
        }
        "RPC-010" => {
            let params = json!({"_meta": {"dev.protocheck/probe": 1, "progressToken": "t"}});
            http_rpc(url, "tools/list", params).await.get("error").is_some().into()
        }
        "RPC-011" => {
            let client = initialized().await;
            let resp = client.post(&count_with_progress(1)).await;
            let bytes = resp.bytes().await.expect("body");
            std::str::from_utf8(&bytes).is_ok().into()
        }
        "HTP-001" => {
            let resp = initialized().await.post(&msg(1, "ping", json!({}))).await;
            json!(resp.headers().get("content-type").and_then(|v| v.to_str().ok()))
        }
        "HTP-002" => {
            let client = initialized().await;
            let resp = client
                .post(&json!({"jsonrpc": "2.0", "method": "notifications/protocheck_unknown"}))
                .await;
            json!(resp.status().as_u16())
        }
        "HTP-003" => {
            let client = initialized().await;
            let (status, text, _) = body_of(
                client
                    .post(&json!({"jsonrpc": "2.0", "id": "pc-none", "result": {}}))
                    .await,
            )
            .await;
            json!([status, text])
        }
        "HTP-004" | "HTP-005" | "HTP-006" | "HTP-007" | "UTL-004" | "UTL-005" | "UTL-006" => {
            let resp = initialized().await.post(&count_with_progress(5)).await;
            let (text, ended) = read_for(resp, Duration::from_secs(2)).await;
            let messages = sse_messages(&text);
            let answered = messages.iter().position(|m| m["id"] == 5);
            match fault.trim_start_matches("MCP25-") {
                "HTP-004" => json!(text.split("\n\n").next()),
                "HTP-005" => json!(answered.is_some()),
                "HTP-006" => json!(ended),
                "HTP-007" => json!(messages.len()),
                "UTL-004" => json!(messages.iter().map(|m| m["params"]["progressToken"].clone()).collect::<Vec<_>>()),
                "UTL-005" => json!(messages.iter().map(|m| m["params"]["progress"].clone()).collect::<Vec<_>>()),
                _ => json!(answered.map(|i| messages.len() - i - 1)),
            }
        }
        "HTP-008" | "HTP-009" => {
            let client = initialized().await;
            let resp = client.request(Method::GET).send().await.expect("GET");
            let content_type = json!(resp.headers().get("content-type").and_then(|v| v.to_str().ok()));
            let mut resp = resp;
            let text = if fault.ends_with("HTP-008") {
                String::new()
            } else {
                read_until(&mut resp, |t| !sse_messages(t).is_empty()).await
            };
            if fault.ends_with("HTP-008") {
                content_type
            } else {
                json!(sse_messages(&text).iter().any(|m| m.get("result").is_some()))
            }
        }
        "HTP-010" => {
            let client = initialized().await;
            let mut ids = Vec::new();
            for id in [1, 2] {
                let text = client.post(&count_with_progress(id)).await.text().await.unwrap_or_default();
                ids.extend(sse_ids(&text));
            }
            let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
            json!(unique.len() == ids.len())
        }
        "HTP-011" => {
            let client = initialized().await;
            let mut get = client.request(Method::GET).send().await.expect("GET");
            let text = read_until(&mut get, |t| !sse_ids(t).is_empty()).await;
            let first = sse_ids(&text).first().cloned().unwrap_or_default();
            let _ = client.post(&count_with_progress(3)).await.text().await;
            let resumed = client
                .request(Method::GET)
                .header("last-event-id", first)
                .send()
                .await
                .expect("GET");
            let (replay, _) = read_for(resumed, Duration::from_secs(1)).await;
            json!(sse_messages(&replay).iter().any(|m| m["method"] == "notifications/progress"))
        }
        "HTP-012" | "HTP-013" => {
            let mut ids = Vec::new();
            for _ in 0..2 {
                ids.push(initialized().await.session.unwrap_or_default());
            }
            if fault.ends_with("HTP-012") {
                json!(ids[0].bytes().all(|b| (0x21..=0x7e).contains(&b)))
            } else {
                json!(ids[0] == ids[1])
            }
        }
        "HTP-014" | "HTP-015" | "HTP-016" | "HTP-017" | "HTP-018" | "UTL-002" => {
            let mut client = initialized().await;
            let mut req = client.request(Method::POST);
            match fault.trim_start_matches("MCP25-") {
                "HTP-014" => {
                    client.session = None;
                    req = client.request(Method::POST);
                }
                "HTP-015" => {
                    let _ = client.request(Method::DELETE).send().await;
                    req = client.request(Method::POST);
                }
                "HTP-016" => {
                    client.session = Some("never-issued".into());
                    req = client.request(Method::POST);
                }
                "HTP-017" => {
                    req = client
                        .http
                        .post(url)
                        .header("accept", "application/json, text/event-stream")
                        .header("mcp-session-id", client.session.clone().unwrap_or_default())
                        .header("mcp-protocol-version", "1999-01-01");
                }
                "HTP-018" => req = req.header("origin", "https://evil.example"),
                _ => {
                    let _ = client.rpc(1, "ping", json!({})).await;
                    let _ = client
                        .post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 1}}))
                        .await;
                }
            }
            let resp = req.json(&msg(2, "ping", json!({}))).send().await.expect("POST");
            json!(resp.status().as_u16())
        }
        "STD-001" | "STD-002" => json!(stdio_after(faults, false, &[r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#]).await),
        "STD-003" => {
            let mut server = Stdio::spawn(faults);
            server.stdin = None;
            let exited = tokio::time::timeout(Duration::from_secs(2), server.child.wait()).await;
            json!(exited.is_ok())
        }
        "UTL-003" => {
            let client = initialized().await;
            let slow = msg(7, "tools/call", json!({"name": "slow", "arguments": {"ms": 1500}}));
            let call = client.post(&slow);
            let cancel = async {
                tokio::time::sleep(Duration::from_millis(150)).await;
                client
                    .post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 7}}))
                    .await
            };
            let (resp, _) = tokio::join!(call, cancel);
            let text = resp.text().await.unwrap_or_default();
            json!(sse_messages(&text).iter().any(|m| m["id"] == 7))
        }
        "TOL-002" | "TOL-005" => tools_list().await["result"]["tools"].clone(),
        "TOL-003" | "TOL-004" | "TOL-006" | "TOL-007" => {
            let client = initialized().await;
            let mut tools = Vec::new();
            let mut cursor = Value::Null;
            for page in 0..4 {
                let params = if cursor.is_null() { json!({}) } else { json!({"cursor": cursor}) };
                let body = client.rpc(page, "tools/list", params).await;
                if body.get("error").is_some() {
                    tools.push(body["error"]["code"].clone());
                    break;
                }
                tools.extend(body["result"]["tools"].as_array().cloned().unwrap_or_default());
                cursor = body["result"]["nextCursor"].clone();
                if cursor.is_null() {
                    break;
                }
            }
            json!(tools)
        }
        "TOL-008" => http_rpc(url, "tools/list", json!({"cursor": "bogus"})).await,
        "TOL-009" => http_rpc(url, "tools/call", json!({"name": "nope"})).await,
        "TOL-010" => {
            http_rpc(url, "tools/call", json!({"name": "divide", "arguments": {"a": 1, "b": 2}})).await
        }
        "TOL-011" => http_rpc(url, "tools/call", json!({"name": "get_forecast", "arguments": {}})).await,
        "TOL-014" => {
            let caps = init_result(url, "2025-11-25").await["capabilities"].clone();
            let call = http_rpc(url, "tools/call", json!({"name": "get_forecast", "arguments": {"region": "eu"}}))
                .await;
            let embeds = call["result"]["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "resource"));
            json!([caps.get("resources").is_some() || !embeds])
        }
        "RPC-012" => {
            let call = http_rpc(url, "tools/call", json!({"name": "get_forecast", "arguments": {"region": "eu"}}))
                .await;
            call["result"]["_meta"].clone()
        }
        "TOL-012" | "TOL-013" => {
            http_rpc(url, "tools/call", json!({"name": "get_forecast", "arguments": {"region": "eu"}}))
                .await
        }
        "RES-002" | "RES-003" => http_rpc(url, "resources/list", json!({})).await,
        "RES-004" => http_rpc(url, "resources/templates/list", json!({})).await,
        "RES-005" => http_rpc(url, "resources/read", json!({"uri": "ref://docs/readme"})).await,
        "RES-006" => http_rpc(url, "resources/read", json!({"uri": "ref://docs/logo"})).await,
        "RES-007" => http_rpc(url, "resources/read", json!({"uri": "ref://nope"})).await,
        "RES-008" => http_rpc(url, "resources/subscribe", json!({"uri": "ref://docs/logo"})).await,
        "PRM-002" => http_rpc(url, "prompts/list", json!({})).await,
        "PRM-003" | "PRM-004" | "PRM-005" => {
            http_rpc(url, "prompts/get", json!({"name": "summarize", "arguments": {"topic": "x"}}))
                .await
        }
        "PRM-006" => http_rpc(url, "prompts/get", json!({"name": "nope"})).await,
        "PRM-007" => http_rpc(url, "prompts/get", json!({"name": "summarize"})).await,
        "CPL-002" | "CPL-003" | "CPL-004" => {
            let name = if fault.ends_with("CPL-004") { "nope" } else { "summarize" };
            http_rpc(url, "completion/complete", json!({
                "ref": {"type": "ref/prompt", "name": name},
                "argument": {"name": "topic", "value": ""}}))
            .await
        }
        "LOG-002" => http_rpc(url, "logging/setLevel", json!({"level": "warning"})).await,
        "LOG-003" => http_rpc(url, "logging/setLevel", json!({"level": "loud"})).await,
        "LOG-004" => json!(
            stdio_after(faults, true, &[r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}"#])
                .await
        ),
        other => panic!("no probe for {other}"),
    }
}

async fn shows(fault: &str) {
    let correct = observe(fault, &[]).await;
    let broken = observe(fault, &[fault]).await;
    assert_ne!(
        correct, broken,
        "{fault} changes nothing its rule sees: {correct}"
    );
}

macro_rules! fault_tests {
    ($($name:ident => $id:literal,)*) => {
        $(
            #[tokio::test]
            async fn $name() {
                shows($id).await;
            }
        )*

        #[test]
        fn every_fault_has_a_test() {
            let tested = [$($id),*];
            assert_eq!(supported_faults_2025(), tested);
        }
    };
}

fault_tests! {
    lif_001 => "MCP25-LIF-001",
    lif_002 => "MCP25-LIF-002",
    lif_003 => "MCP25-LIF-003",
    lif_004 => "MCP25-LIF-004",
    lif_005 => "MCP25-LIF-005",
    lif_006 => "MCP25-LIF-006",
    lif_007 => "MCP25-LIF-007",
    lif_008 => "MCP25-LIF-008",
    lif_009 => "MCP25-LIF-009",
    rpc_001 => "MCP25-RPC-001",
    rpc_002 => "MCP25-RPC-002",
    rpc_003 => "MCP25-RPC-003",
    rpc_004 => "MCP25-RPC-004",
    rpc_005 => "MCP25-RPC-005",
    rpc_006 => "MCP25-RPC-006",
    rpc_007 => "MCP25-RPC-007",
    rpc_008 => "MCP25-RPC-008",
    rpc_009 => "MCP25-RPC-009",
    rpc_010 => "MCP25-RPC-010",
    rpc_011 => "MCP25-RPC-011",
    rpc_012 => "MCP25-RPC-012",
    htp_001 => "MCP25-HTP-001",
    htp_002 => "MCP25-HTP-002",
    htp_003 => "MCP25-HTP-003",
    htp_004 => "MCP25-HTP-004",
    htp_005 => "MCP25-HTP-005",
    htp_006 => "MCP25-HTP-006",
    htp_007 => "MCP25-HTP-007",
    htp_008 => "MCP25-HTP-008",
    htp_009 => "MCP25-HTP-009",
    htp_010 => "MCP25-HTP-010",
    htp_011 => "MCP25-HTP-011",
    htp_012 => "MCP25-HTP-012",
    htp_013 => "MCP25-HTP-013",
    htp_014 => "MCP25-HTP-014",
    htp_015 => "MCP25-HTP-015",
    htp_016 => "MCP25-HTP-016",
    htp_017 => "MCP25-HTP-017",
    htp_018 => "MCP25-HTP-018",
    std_001 => "MCP25-STD-001",
    std_002 => "MCP25-STD-002",
    std_003 => "MCP25-STD-003",
    utl_001 => "MCP25-UTL-001",
    utl_002 => "MCP25-UTL-002",
    utl_003 => "MCP25-UTL-003",
    utl_004 => "MCP25-UTL-004",
    utl_005 => "MCP25-UTL-005",
    utl_006 => "MCP25-UTL-006",
    tol_001 => "MCP25-TOL-001",
    tol_002 => "MCP25-TOL-002",
    tol_003 => "MCP25-TOL-003",
    tol_004 => "MCP25-TOL-004",
    tol_005 => "MCP25-TOL-005",
    tol_006 => "MCP25-TOL-006",
    tol_007 => "MCP25-TOL-007",
    tol_008 => "MCP25-TOL-008",
    tol_009 => "MCP25-TOL-009",
    tol_010 => "MCP25-TOL-010",
    tol_011 => "MCP25-TOL-011",
    tol_012 => "MCP25-TOL-012",
    tol_013 => "MCP25-TOL-013",
    tol_014 => "MCP25-TOL-014",
    res_001 => "MCP25-RES-001",
    res_002 => "MCP25-RES-002",
    res_003 => "MCP25-RES-003",
    res_004 => "MCP25-RES-004",
    res_005 => "MCP25-RES-005",
    res_006 => "MCP25-RES-006",
    res_007 => "MCP25-RES-007",
    res_008 => "MCP25-RES-008",
    prm_001 => "MCP25-PRM-001",
    prm_002 => "MCP25-PRM-002",
    prm_003 => "MCP25-PRM-003",
    prm_004 => "MCP25-PRM-004",
    prm_005 => "MCP25-PRM-005",
    prm_006 => "MCP25-PRM-006",
    prm_007 => "MCP25-PRM-007",
    cpl_001 => "MCP25-CPL-001",
    cpl_002 => "MCP25-CPL-002",
    cpl_003 => "MCP25-CPL-003",
    cpl_004 => "MCP25-CPL-004",
    log_001 => "MCP25-LOG-001",
    log_002 => "MCP25-LOG-002",
    log_003 => "MCP25-LOG-003",
    log_004 => "MCP25-LOG-004",
    aut_001 => "MCP25-AUT-001",
    aut_002 => "MCP25-AUT-002",
    aut_003 => "MCP25-AUT-003",
    aut_004 => "MCP25-AUT-004",
    aut_005 => "MCP25-AUT-005",
    aut_006 => "MCP25-AUT-006",
    aut_007 => "MCP25-AUT-007",
    aut_008 => "MCP25-AUT-008",
    tsk_001 => "MCP25-TSK-001",
    tsk_002 => "MCP25-TSK-002",
    tsk_003 => "MCP25-TSK-003",
    tsk_004 => "MCP25-TSK-004",
    tsk_005 => "MCP25-TSK-005",
    tsk_006 => "MCP25-TSK-006",
}
