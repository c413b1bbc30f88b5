//! A token a target repeats across the excerpt's cut (#54 item 1). Evidence
//! is cut (bodies at 4096 bytes, header values at 512) before the run's
//! token is hidden, so a copy the cut falls inside is no whole copy: every
//! run of the token's characters 8 long is hidden too. A loopback target
//! echoes the token it was sent in every body and header, shifted by one
//! character per answer so that the cuts fall at every offset of the token;
//! nothing protocheck shows or stores keeps 8 characters of it in a row.
//! Each answer also carries one header per offset of the token, so that the
//! header cut falls at every offset within every answer kept as evidence.

use crate::common;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::IntoResponse;
use common::TestDb;
use common::app::{TestApp, serve, worker_config};
use protocheck::api_keys::{self, Rate};
use protocheck::credentials::Keyring;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The run's evidence excerpt of a body, and of a header value.
const BODY_CUT: usize = 4096;
const HEADER_CUT: usize = 512;
/// The run of a token's characters that must not survive anywhere.
const RUN: usize = protocheck::transport::evidence::SECRET_RUN;

/// What the echoing target saw: where each answer's body cut fell in the token.
#[derive(Default)]
struct Echoes {
    answers: usize,
    body_offsets: BTreeSet<usize>,
}

/// A target that answers every request with the bearer token it was sent,
/// repeated past both cuts, in a JSON-RPC error's message and in a header.
/// Answer `n` starts the repetition `n` characters later, so the cuts fall at
/// offset `n mod len` of a copy.
async fn echoing_target() -> (String, Arc<Mutex<Echoes>>) {
    let seen = Arc::new(Mutex::new(Echoes::default()));
    let echoes = seen.clone();
    let router = Router::new().fallback(move |headers: HeaderMap| {
        let echoes = echoes.clone();
        async move {
            let token = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default()
                .to_owned();
            if token.is_empty() {
                return (StatusCode::UNAUTHORIZED, "no token").into_response();
            }
            let n = {
                let mut e = echoes.lock().expect("lock");
                e.answers += 1;
                e.answers
            };
            let shift = "x".repeat(n % token.len());
            let copies = token.repeat(BODY_CUT / token.len() + 4);
            let head = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":""#;
            let body = format!("{head}{shift}{copies}\"}}}}");
            echoes
                .lock()
                .expect("lock")
                .body_offsets
                .insert((BODY_CUT - head.len() - shift.len()) % token.len());
            let mut resp =
                (StatusCode::OK, [("content-type", "application/json")], body).into_response();
            // `x-echo-{k}`: cut at 512 bytes, `k` characters into a copy.
            let copies = token.repeat(HEADER_CUT / token.len() + 2);
            for k in 0..token.len() {
                let filler = "x".repeat((HEADER_CUT - k) % token.len());
                let name = axum::http::HeaderName::from_bytes(format!("x-echo-{k}").as_bytes());
                let value = HeaderValue::from_str(&format!("{filler}{copies}"));
                if let (Ok(name), Ok(value)) = (name, value) {
                    resp.headers_mut().insert(name, value);
                }
            }
            resp
        }
    });
    (format!("{}/mcp", serve(router).await), seen)
}

/// Every `RUN`-long piece of `token` found in `text`.
fn pieces_in(text: &str, token: &str) -> Vec<String> {
    token
        .as_bytes()
        .windows(RUN)
        .filter(|w| text.as_bytes().windows(RUN).any(|t| t == *w))
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

/// Every row of every table of `db`, as text.
async fn database_text(db: &TestDb) -> String {
    let mut out = String::new();
    match db.name() {
        "sqlite" => {
            let path = db.url.trim_start_matches("sqlite://");
            for suffix in ["", "-wal", "-shm"] {
                if let Ok(bytes) = std::fs::read(format!("{path}{suffix}")) {
                    out.push_str(&String::from_utf8_lossy(&bytes));
                }
            }
        }
        _ => {
            use sqlx::{Connection, Row};
            let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables
                 WHERE table_schema = 'public'",
            )
            .fetch_all(&mut conn)
            .await
            .expect("tables");
            assert!(tables.iter().any(|t| t == "findings"), "{tables:?}");
            for table in tables {
                let rows = sqlx::query(&format!("SELECT t::text FROM \"{table}\" t"))
                    .fetch_all(&mut conn)
                    .await
                    .expect("rows");
                for row in rows {
                    out.push_str(&row.get::<String, _>(0));
                    out.push('\n');
                }
            }
        }
    }
    out
}

#[tokio::test]
async fn a_token_echoed_across_the_excerpt_cut_leaves_no_piece_anywhere() {
    for db in common::all_backends().await {
        let b = db.name();
        let (target, echoes) = echoing_target().await;
        let keyring = Keyring::parse(&hex::encode(rand::random::<[u8; 32]>())).expect("key");
        let app = TestApp::start_with_keyring(&db, 1000, keyring).await;
        let key = api_keys::create_key(
            db.store.as_ref(),
            "ci",
            None,
            "600/m".parse::<Rate>().expect("rate"),
            protocheck::now_ms(),
        )
        .await
        .expect("API key");
        // 52 characters, as the token that was found cut in two.
        let token = format!("tok-{}Zq8Wp3Lk0Mn5Rt7V", uuid::Uuid::new_v4().simple());
        assert_eq!(token.len(), 52);
        let resp = app
            .http
            .post(app.url("/api/v1/runs"))
            .bearer_auth(&key.token)
            .json(&json!({"url": target, "suite": "mcp",
                          "credentials": {"bearer_token": token}}))
            .send()
            .await
            .expect("POST");
        assert_eq!(resp.status().as_u16(), 202, "{b}");
        let run: Value = resp.json().await.expect("json");
        let id = run["id"].as_str().expect("id").to_owned();
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let run = app.wait_finished(&id, Duration::from_secs(120)).await;
        pool.shutdown().await;
        assert!(
            matches!(run["status"].as_str(), Some("failed" | "passed")),
            "{b}: {run}"
        );

        // The target was answered with the token, cut at many offsets, and
        // the findings kept cut bodies and headers as evidence.
        let (answers, body_offsets) = {
            let e = echoes.lock().expect("lock");
            (e.answers, e.body_offsets.len())
        };
        assert!(answers >= 2, "{b}: {answers} answers");
        let report = app
            .get_text(&format!("/api/v1/runs/{id}/report.json"))
            .await;
        let report_doc: Value = serde_json::from_str(&report).expect("report");
        let mut cut_bodies = 0;
        let mut echoed_headers = BTreeSet::new();
        for finding in report_doc["findings"].as_array().expect("findings") {
            for exchange in finding["evidence"].as_array().into_iter().flatten() {
                let response = &exchange["response"];
                if response["truncated"] == true {
                    cut_bodies += 1;
                }
                for header in response["headers"].as_array().into_iter().flatten() {
                    if let Some(k) = header[0].as_str().and_then(|n| n.strip_prefix("x-echo-")) {
                        echoed_headers.insert(k.to_owned());
                    }
                }
            }
        }
        assert!(cut_bodies > 0, "{b}: no cut body in evidence: {report}");
        assert_eq!(
            echoed_headers.len(),
            token.len(),
            "{b}: evidence holds a header cut at every offset of the token"
        );
        eprintln!(
            "{b}: {answers} answers (body cuts at {body_offsets} offsets of the token), \
             {cut_bodies} cut bodies in evidence, header cuts at all {} offsets",
            echoed_headers.len()
        );

        // Everything that shows the run, and the database under it.
        let mut places = vec![("report.json".to_owned(), report)];
        for path in [
            format!("/api/v1/runs/{id}"),
            format!("/api/v1/runs/{id}/events"),
            format!("/api/v1/runs/{id}/report.junit.xml"),
            format!("/api/v1/runs/{id}/report.sarif"),
            format!("/api/v1/runs/{id}/attestation"),
            format!("/runs/{id}"),
        ] {
            let body = app.get_text(&path).await;
            if path.ends_with("/attestation") {
                let envelope: Value = serde_json::from_str(&body).expect("envelope");
                let statement = base64::Engine::decode(
                    &base64::engine::general_purpose::STANDARD,
                    envelope["payload"].as_str().expect("payload"),
                )
                .expect("base64");
                places.push((
                    "signed statement".to_owned(),
                    String::from_utf8_lossy(&statement).into_owned(),
                ));
            }
            places.push((path, body));
        }
        places.push(("database".to_owned(), database_text(&db).await));
        for (place, text) in &places {
            let found = pieces_in(text, &token);
            assert!(
                found.is_empty(),
                "{b}: {place} keeps {} pieces of the token, as {:?}",
                found.len(),
                found.first()
            );
        }
    }
}
