//! The probes of the faults that need authorization or tasks on (the AUT
//! and TSK groups): what each rule judges, as a server started with `faults`
//! shows it.

use super::{Client, WAIT, initialize, start};
use protocheck::reference::mcp2025::{MCP25_SCOPE_READ, MCP25_SCOPE_TOOLS, Mcp25ReferenceConfig};
use serde_json::{Value, json};
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

/// A POST of `body` to `url` with `token` as bearer (if any).
async fn post(url: &str, token: Option<&str>, body: &Value) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .timeout(WAIT)
        .json(body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    req.send().await.expect("POST")
}

async fn get_json(url: String) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .get(url)
        .timeout(WAIT)
        .send()
        .await
        .expect("GET");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or_default())
}

fn challenge(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// What the rule of `fault` judges, for the AUT and TSK faults; `None` for
/// any other fault.
pub(super) async fn observe(fault: &str, faults: &[&str]) -> Option<Value> {
    let id = fault.trim_start_matches("MCP25-");
    if id.starts_with("AUT-") {
        let config = Mcp25ReferenceConfig::new().with_faults(faults).with_auth();
        let url = start(config.clone()).await;
        let base = url.trim_end_matches("/mcp").to_owned();
        let full = config
            .mint_token(
                &url,
                &format!("{MCP25_SCOPE_READ} {MCP25_SCOPE_TOOLS}"),
                HOUR,
            )
            .expect("token");
        let limited = config
            .mint_token(&url, MCP25_SCOPE_READ, HOUR)
            .expect("token");
        let prm = || get_json(format!("{base}/.well-known/oauth-protected-resource/mcp"));
        return Some(match id {
            "AUT-001" => {
                let resp = post(&url, None, &initialize("2025-11-25")).await;
                let named = challenge(&resp).contains("resource_metadata=");
                json!([named, prm().await.0])
            }
            "AUT-002" => prm().await.1["authorization_servers"].clone(),
            "AUT-003" => prm().await.1["resource"].clone(),
            "AUT-004" => {
                // Every listed authorization server's PKCE methods (the
                // fault breaks the fourth only).
                let mut methods = Vec::new();
                for i in ["", "-2", "-3", "-4"] {
                    let doc = get_json(format!(
                        "{base}/.well-known/oauth-authorization-server/as{i}"
                    ))
                    .await;
                    methods.push(doc.1["code_challenge_methods_supported"].clone());
                }
                json!(methods)
            }
            "AUT-005" => json!(challenge(
                &post(&url, None, &initialize("2025-11-25")).await
            )),
            "AUT-006" => {
                json!(
                    post(&url, Some("not-a-token"), &initialize("2025-11-25"))
                        .await
                        .status()
                        .as_u16()
                )
            }
            "AUT-007" => {
                let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "slow", "arguments": {"ms": 0}}});
                let resp = post(&url, Some(&limited), &call).await;
                json!([resp.status().as_u16(), challenge(&resp)])
            }
            "AUT-008" => {
                let with_query = format!("{url}?access_token={full}");
                json!(
                    post(&with_query, None, &initialize("2025-11-25"))
                        .await
                        .status()
                        .as_u16()
                )
            }
            other => panic!("no probe for {other}"),
        });
    }
    if id.starts_with("TSK-") {
        let url = start(
            Mcp25ReferenceConfig::new()
                .with_faults(faults)
                .with_tasks(true),
        )
        .await;
        let client = Client::initialized(&url).await;
        return Some(match id {
            "TSK-001" => {
                let get = client.rpc(1, "tasks/get", json!({"taskId": "nope"})).await;
                let result = client
                    .rpc(2, "tasks/result", json!({"taskId": "nope"}))
                    .await;
                json!([get["error"]["code"], result["error"]["code"]])
            }
            "TSK-002" => client
                .rpc(1, "tasks/cancel", json!({"taskId": "nope"}))
                .await["error"]["code"]
                .clone(),
            "TSK-003" => {
                // Every task on every page (the fault breaks the second
                // page's task only).
                let mut seen = Vec::new();
                let mut params = json!({});
                for id in 1..=4 {
                    let listed = client.rpc(id, "tasks/list", params.clone()).await;
                    for task in listed["result"]["tasks"].as_array().into_iter().flatten() {
                        seen.push(json!([
                            task.get("lastUpdatedAt").is_some(),
                            task.get("ttl").is_some()
                        ]));
                    }
                    match listed["result"]["nextCursor"].as_str() {
                        Some(cursor) => params = json!({"cursor": cursor}),
                        None => break,
                    }
                }
                json!(seen)
            }
            "TSK-004" => {
                client.rpc(1, "tasks/list", json!({"cursor": "bad"})).await["error"]["code"].clone()
            }
            "TSK-005" => client
                .rpc(1, "tools/call", json!({"name": "report", "arguments": {}}))
                .await["error"]["code"]
                .clone(),
            "TSK-006" => {
                let listed = client.rpc(1, "tasks/list", json!({})).await;
                let task = listed["result"]["tasks"][0]["taskId"].clone();
                let got = client.rpc(2, "tasks/get", json!({"taskId": task})).await;
                json!([listed["result"]["_meta"], got["result"]["_meta"]])
            }
            other => panic!("no probe for {other}"),
        });
    }
    None
}
