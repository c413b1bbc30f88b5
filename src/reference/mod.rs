//! Reference target servers, correct by default, with a fault switch per rule.
pub mod mcp;
pub mod rcp;
