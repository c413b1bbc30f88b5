//! Bounded reader for server-sent events.
