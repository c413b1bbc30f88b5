//! Sealed run credentials ([`CredentialStore`]) on the SQL store. They are
//! inserted with their run (`insert_run_from`) and deleted by the
//! `runs_wipe_credentials` trigger when the run ends.

use crate::credentials::SealedCredentials;
use crate::store::{CredentialStore, StoreResult};
use sqlx::Row;
use uuid::Uuid;

impl_sql_store!(CredentialStore {
    async fn run_credentials(&self, run_id: Uuid) -> StoreResult<Option<SealedCredentials>> {
        let row = sqlx::query("SELECT key_id, sealed FROM run_credentials WHERE run_id = $1")
            .bind(run_id.to_string())
            .fetch_optional(self.db())
            .await?;
        row.map(|r| {
            Ok(SealedCredentials {
                key_id: r.try_get(0)?,
                sealed: r.try_get(1)?,
            })
        })
        .transpose()
    }

    async fn count_run_credentials(&self) -> StoreResult<i64> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM run_credentials")
            .fetch_one(self.db())
            .await?;
        Ok(count)
    }
});
