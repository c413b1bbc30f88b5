//! `/metrics` under made-up methods and paths (#54 item 2): every label
//! comes from a known set, so a client cannot grow it without bound.

use crate::common;

use common::app::TestApp;
use futures::StreamExt;
use std::collections::BTreeSet;

/// How many requests the `/metrics` test sends: 2,000 unless
/// `PROTOCHECK_METRICS_REQUESTS` says otherwise (the abuse run sent 20,000).
fn metrics_requests() -> usize {
    std::env::var("PROTOCHECK_METRICS_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000)
}

#[tokio::test]
async fn metrics_labels_stay_bounded_under_made_up_methods_and_paths() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let known = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];
    let n = metrics_requests();
    // Made-up methods and paths all carry `zq`, which nothing protocheck
    // names does, so any of them kept as a label shows.
    let requests = futures::stream::iter(0..n).map(|i| {
        let salt = uuid::Uuid::new_v4().simple().to_string();
        let method = match i % 3 {
            0 => known[i % known.len()].to_owned(),
            _ => format!("ZQ{}", &salt[..8].to_ascii_uppercase()),
        };
        let path = match i % 4 {
            0 => format!("/zq{salt}"),
            1 => format!("/api/v1/runs/zq{salt}"),
            2 => format!("/runs/zq{salt}/x"),
            _ => format!("/api/v1/zq{salt}?q={i}"),
        };
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method token");
        let req = app.http.request(method, app.url(&path));
        async move { req.send().await.map(|r| r.status().as_u16()) }
    });
    let answered = requests
        .buffer_unordered(16)
        .filter(|r| futures::future::ready(r.is_ok()))
        .count()
        .await;
    assert_eq!(answered, n, "every request was answered");

    let text = app.get_text("/metrics").await;
    eprintln!(
        "/metrics after {n} requests with made-up methods and paths: {} bytes, {} lines",
        text.len(),
        text.lines().count()
    );
    assert!(text.len() < 1_000_000, "{} bytes", text.len());
    assert!(!text.to_ascii_lowercase().contains("zq"), "{text}");
    let mut label_sets = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("protocheck_http_request_duration_seconds_count{")
        else {
            continue;
        };
        let labels = rest.split('}').next().unwrap_or_default();
        let method = labels
            .split(',')
            .find_map(|l| l.strip_prefix("method=\""))
            .and_then(|m| m.strip_suffix('"'))
            .expect("method label");
        assert!(
            known.contains(&method) || method == "OTHER",
            "{method}: {line}"
        );
        label_sets.insert(labels.to_owned());
    }
    assert!(
        label_sets.iter().any(|l| l.contains("method=\"OTHER\"")),
        "{label_sets:?}"
    );
    assert!(
        label_sets.iter().any(|l| l.contains("route=\"unmatched\"")),
        "{label_sets:?}"
    );
    // Methods times the routes they reached times their statuses: a handful.
    assert!(label_sets.len() <= 64, "{label_sets:#?}");
}
