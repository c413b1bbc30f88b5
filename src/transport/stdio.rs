//! Child processes speaking newline-delimited JSON (CLI only).
