//! Every message the MCP reference server sends, and every request protocheck
//! sends it, checked against the JSON Schema published with MCP 2026-07-28.
//!
//! The schema is not part of protocheck: it is read from the shared spec folder
//! beside the repository (`../shared/spec/schemas/`, or the path in
//! `PROTOCHECK_MCP_SCHEMA`). Without it the test says so and checks nothing.
//! Everything runs on loopback.

use protocheck::reference::mcp::{McpReferenceConfig, serve_mcp_reference};
use protocheck::suite::mcp::client::{McpClient, Probe, Reply};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

fn schema_path() -> PathBuf {
    std::env::var_os("PROTOCHECK_MCP_SCHEMA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/spec/schemas/mcp-2026-07-28.schema.json")
        })
}

/// Validates instances against one `$defs` entry of the published schema.
struct Published {
    defs: Value,
}

impl Published {
    fn load() -> Option<Self> {
        let text = std::fs::read_to_string(schema_path()).ok()?;
        let doc: Value = serde_json::from_str(&text).expect("the published schema is JSON");
        Some(Self {
            defs: doc.get("$defs").cloned().expect("$defs"),
        })
    }

    /// The problems of `instance` as a `def`, one line each.
    fn check(&self, def: &str, instance: &Value) -> Vec<String> {
        assert!(self.defs.get(def).is_some(), "no $defs/{def} in the schema");
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": self.defs,
            "$ref": format!("#/$defs/{def}")
        });
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        validator
            .iter_errors(instance)
            .map(|e| format!("{def}: {e} at {}", e.instance_path))
            .collect()
    }
}

struct Case {
    what: &'static str,
    request_def: &'static str,
    probe: Probe,
    response_def: &'static str,
    notification_def: Option<&'static str>,
}

#[tokio::test]
async fn reference_messages_match_the_published_schema() {
    let Some(published) = Published::load() else {
        println!(
            "skipped: the published MCP schema is not at {} (set PROTOCHECK_MCP_SCHEMA)",
            schema_path().display()
        );
        return;
    };
    // The validator is not vacuous: a result without its required fields fails.
    assert!(
        !published
            .check(
                "DiscoverResultResponse",
                &json!({"jsonrpc": "2.0", "id": 1, "result": {}})
            )
            .is_empty()
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = McpReferenceConfig::new(Default::default()).expect("config");
    let server = tokio::spawn(async move {
        let _ = serve_mcp_reference(listener, config).await;
    });
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    let url = format!("http://{addr}/mcp").parse().expect("url");
    let c = McpClient::new(http, url, Duration::from_secs(10), 4);

    let forecast_schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}}});
    let elicitation = json!({"elicitation": {}});
    let mut cases = vec![
        Case { what: "discover", request_def: "DiscoverRequest", probe: c.request("server/discover", json!({})), response_def: "DiscoverResultResponse", notification_def: None },
        Case { what: "tools/list", request_def: "ListToolsRequest", probe: c.request("tools/list", json!({})), response_def: "ListToolsResultResponse", notification_def: None },
        Case {
            what: "get_forecast",
            request_def: "CallToolRequest",
            probe: c.request("tools/call", json!({"name": "get_forecast", "arguments": {"region": "eu-west1"}}))
                .with_param_headers(&forecast_schema),
            response_def: "CallToolResultResponse",
            notification_def: None,
        },
        Case {
            what: "count with progress (SSE)",
            request_def: "CallToolRequest",
            probe: c.request("tools/call", json!({"name": "count", "arguments": {"to": 3}}))
                .with_meta("progressToken", json!("p-1")),
            response_def: "CallToolResultResponse",
            notification_def: Some("ProgressNotification"),
        },
        Case {
            what: "ask_name, input required",
            request_def: "CallToolRequest",
            probe: c.request("tools/call", json!({"name": "ask_name", "arguments": {}})).with_capabilities(elicitation.clone()),
            response_def: "CallToolResultResponse",
            notification_def: None,
        },
        Case {
            what: "ask_name without elicitation",
            request_def: "CallToolRequest",
            probe: c.request("tools/call", json!({"name": "ask_name", "arguments": {}})),
            response_def: "MissingRequiredClientCapabilityError",
            notification_def: None,
        },
        Case { what: "resources/list", request_def: "ListResourcesRequest", probe: c.request("resources/list", json!({})), response_def: "ListResourcesResultResponse", notification_def: None },
        Case { what: "resources/templates/list", request_def: "ListResourceTemplatesRequest", probe: c.request("resources/templates/list", json!({})), response_def: "ListResourceTemplatesResultResponse", notification_def: None },
        Case { what: "read readme", request_def: "ReadResourceRequest", probe: c.request("resources/read", json!({"uri": "ref://docs/readme"})), response_def: "ReadResourceResultResponse", notification_def: None },
        Case { what: "read logo", request_def: "ReadResourceRequest", probe: c.request("resources/read", json!({"uri": "ref://docs/logo"})), response_def: "ReadResourceResultResponse", notification_def: None },
        Case { what: "read missing", request_def: "ReadResourceRequest", probe: c.request("resources/read", json!({"uri": "ref://docs/none"})), response_def: "JSONRPCErrorResponse", notification_def: None },
        Case { what: "prompts/list", request_def: "ListPromptsRequest", probe: c.request("prompts/list", json!({})), response_def: "ListPromptsResultResponse", notification_def: None },
        Case { what: "prompts/get", request_def: "GetPromptRequest", probe: c.request("prompts/get", json!({"name": "summarize", "arguments": {"topic": "caching"}})), response_def: "GetPromptResultResponse", notification_def: None },
        Case {
            what: "completion",
            request_def: "CompleteRequest",
            probe: c.request("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "topic", "value": "ca"}})),
            response_def: "CompleteResultResponse",
            notification_def: None,
        },
        Case { what: "unsupported version", request_def: "DiscoverRequest", probe: c.request("server/discover", json!({})).with_version("1900-01-01"), response_def: "UnsupportedProtocolVersionError", notification_def: None },
        Case { what: "header mismatch", request_def: "DiscoverRequest", probe: c.request("server/discover", json!({})).with_header("mcp-method", "tools/list"), response_def: "HeaderMismatchError", notification_def: None },
        Case { what: "unknown method", request_def: "JSONRPCRequest", probe: c.request("protocheck/none", json!({})), response_def: "JSONRPCErrorResponse", notification_def: None },
    ];

    let mut problems = Vec::new();
    let mut input_required: Option<Reply> = None;
    for case in cases.drain(..) {
        problems.extend(
            published
                .check(case.request_def, &case.probe.body)
                .into_iter()
                .map(|p| format!("request {}: {p}", case.what)),
        );
        let reply = c.send(&case.probe).await;
        let Some(message) = &reply.message else {
            problems.push(format!(
                "{}: no JSON-RPC message ({})",
                case.what,
                reply.describe()
            ));
            continue;
        };
        problems.extend(
            published
                .check(case.response_def, message)
                .into_iter()
                .map(|p| format!("response {}: {p}", case.what)),
        );
        if let Some(def) = case.notification_def {
            if reply.notifications.is_empty() {
                problems.push(format!("{}: no notification was streamed", case.what));
            }
            for n in &reply.notifications {
                problems.extend(
                    published
                        .check(def, n)
                        .into_iter()
                        .map(|p| format!("notification {}: {p}", case.what)),
                );
            }
        }
        if case.what == "ask_name, input required" {
            input_required = Some(reply);
        }
    }
    // Error objects of the generic error responses.
    let missing = c
        .send(&c.request("resources/read", json!({"uri": "ref://docs/none"})))
        .await;
    problems.extend(published.check(
        "InvalidParamsError",
        missing.error().unwrap_or(&Value::Null),
    ));
    let unknown = c.send(&c.request("protocheck/none", json!({}))).await;
    problems.extend(published.check(
        "MethodNotFoundError",
        unknown.error().unwrap_or(&Value::Null),
    ));

    // The MRTR retry, with the answer and the state echoed.
    let state = input_required
        .as_ref()
        .and_then(|r| r.result())
        .and_then(|r| r.get("requestState"))
        .cloned()
        .expect("ask_name returns requestState");
    let retry = c
        .request("tools/call", json!({"name": "ask_name", "arguments": {}}))
        .with_capabilities(elicitation)
        .with_params_field(
            "inputResponses",
            json!({"name": {"action": "accept", "content": {"name": "Ada"}}}),
        )
        .with_params_field("requestState", state);
    problems.extend(published.check("CallToolRequest", &retry.body));
    let done = c.send(&retry).await;
    problems.extend(published.check(
        "CallToolResultResponse",
        done.message.as_ref().unwrap_or(&Value::Null),
    ));
    assert!(
        done.result()
            .and_then(|r| r.pointer("/content/0/text"))
            .and_then(Value::as_str)
            == Some("Hello, Ada!"),
        "{}",
        done.describe()
    );

    // The listen stream's acknowledgement.
    let listen = c.request(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    problems.extend(published.check("SubscriptionsListenRequest", &listen.body));
    let reply = c.listen(&listen, Duration::from_secs(2)).await;
    match reply.notifications.first() {
        Some(ack) => problems.extend(published.check("SubscriptionsAcknowledgedNotification", ack)),
        None => problems.push(format!("listen: no acknowledgement ({})", reply.describe())),
    }

    server.abort();
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
