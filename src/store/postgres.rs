//! Postgres store (placeholder).
use super::{StoreError, StoreResult};

pub struct PgStore;

impl PgStore {
    pub async fn connect(_url: &str) -> StoreResult<Self> {
        Err(StoreError::UnsupportedUrl(
            "postgres store under construction".into(),
        ))
    }
}
