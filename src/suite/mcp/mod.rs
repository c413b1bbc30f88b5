//! The MCP suite: revision 2026-07-28 over Streamable HTTP.

pub mod client;
pub mod wire;
