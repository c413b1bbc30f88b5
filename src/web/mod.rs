//! The axum router: REST API, health, metrics.
