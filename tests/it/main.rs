//! The integration tests, one binary: each module was once its own test
//! target. One binary links the crate once instead of once per file.
//! Run one module with `cargo test --test it -- <module>::`.

mod common;

mod abuse;
mod api;
mod api_credentials;
mod api_keys;
mod architecture;
mod attest;
mod badges;
mod book;
mod browser;
mod ca_cert;
mod cli;
mod connections;
mod db_outage;
mod gates;
mod host_limits;
mod interop_mcp;
mod interop_rcp;
mod mcp25_faults;
mod mcp25_reference;
mod mcp25_suite;
mod mcp_catalogue;
mod mcp_client;
mod mcp_reference_as;
mod mcp_routing;
mod mcp_rules;
mod mcp_schema;
mod mcp_stdio;
mod mcp_verdicts;
mod metrics_labels;
mod openapi;
mod outage;
mod oversized;
mod pages;
mod queue;
mod rcp_history;
mod rcp_l0;
mod rcp_levels;
mod rcp_reference;
mod rcp_stdio;
mod redaction;
mod reports;
mod rule_pages;
mod run_deadline;
mod scheduler;
mod sign_in;
mod store_contract;
mod store_findings;
mod submit;
mod token_scope;
mod transport;
mod watches;
mod webhooks;
