//! Submitting runs: validation, freshness, dedup and idempotency over the store.
