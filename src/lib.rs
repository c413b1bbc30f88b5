//! protocheck: conformance-as-a-service for protocol servers.
//!
//! The crate is one library with one binary. The parts follow `DESIGN.md`:
//! [`suite`] (the engine, no database, no router), [`transport`] (hostile-network
//! HTTP and stdio), [`reference`] (reference target servers with fault switches),
//! [`store`] (one trait, Postgres and SQLite), [`queue`] and [`worker`] (lease-based
//! run queue), [`attest`] (signed verdicts), and [`web`] (the axum router).

pub mod attest;
pub mod client;
pub mod config;
pub mod events;
pub mod keys;
pub mod metrics;
pub mod queue;
pub mod reference;
pub mod report;
pub mod store;
pub mod suite;
pub mod target;
pub mod transport;
pub mod web;
pub mod webhook;
pub mod worker;

/// Milliseconds since the Unix epoch, the one time unit the store uses.
pub fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}
