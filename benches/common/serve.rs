//! Waiting for a `protocheck serve` a benchmark started; shared by the
//! benchmarks that start one (`#[path]`-included).

use std::time::{Duration, Instant};

/// Waits until `{base}/readyz` answers with success; a service that is not
/// ready within `patience` stops the benchmark.
pub async fn wait_ready(base: &str, patience: Duration) {
    let client = reqwest::Client::new();
    let ready = format!("{base}/readyz");
    let deadline = Instant::now() + patience;
    while !client
        .get(&ready)
        .send()
        .await
        .is_ok_and(|a| a.status().is_success())
    {
        assert!(
            Instant::now() < deadline,
            "protocheck serve never got ready"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
