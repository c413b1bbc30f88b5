//! Reference target servers, correct by default, with a fault switch per rule.
//! They prove each rule can fail, and give users a demo target.

pub mod mcp;
pub mod mcp2025;
pub mod rcp;
pub mod registry;
