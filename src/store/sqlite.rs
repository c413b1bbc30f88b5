//! SQLite store (placeholder).
use super::{StoreError, StoreResult};

pub struct SqliteStore;

impl SqliteStore {
    pub async fn connect(_url: &str) -> StoreResult<Self> {
        Err(StoreError::UnsupportedUrl(
            "sqlite store under construction".into(),
        ))
    }
}
