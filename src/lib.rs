//! protocheck: conformance-as-a-service for protocol servers.
//!
//! The crate is one library with one binary. The parts follow `DESIGN.md`:
//! [`suite`] (the engine, no database, no router), [`transport`] (hostile-network
//! HTTP and stdio), [`reference`] (reference target servers with fault switches),
//! [`store`] (one trait, Postgres and SQLite), [`submit`] and [`worker`] (lease-based
//! run queue), [`attest`] (signed verdicts), and [`web`] (the axum router).

pub mod api_client;
pub mod api_keys;
pub mod attest;
pub mod config;
pub mod credentials;
pub mod directory;
pub mod events;
pub mod metrics;
pub mod reference;
pub mod report;
pub mod scheduler;
pub mod store;
pub mod submit;
pub mod suite;
pub mod target;
pub mod transport;
pub mod web;
pub mod webhook;
pub mod worker;

/// RFC 3339 UTC time with milliseconds, as the API, reports, attestations and
/// webhooks write the store's epoch milliseconds (a negative time reads as the
/// epoch).
pub fn rfc3339(ms: i64) -> String {
    let t =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(t).to_string()
}

/// Milliseconds since the Unix epoch, the one time unit the store uses.
pub fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    duration_ms(since)
}

/// A duration in the store's unit, milliseconds (saturating: no duration the
/// service handles comes near the limit).
pub fn duration_ms(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
