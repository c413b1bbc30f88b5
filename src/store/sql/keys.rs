//! API keys ([`KeyStore`]) on the SQL store.

use crate::store::rows::api_key_from_row;
use crate::store::{ApiKey, KeyStore, NewApiKey, StoreResult};
use uuid::Uuid;

impl_sql_store!(KeyStore {
    async fn create_api_key(&self, key: &NewApiKey) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!(
            "INSERT INTO api_keys (id, name, owner, token_hash, rate_count, rate_period_s,
                                   webhook_secret, created_at_ms, watch_quota)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (name) WHERE revoked_at_ms IS NULL DO NOTHING
             RETURNING ",
            api_key_columns!()
        ))
        .bind(key.id.to_string())
        .bind(&key.name)
        .bind(&key.owner)
        .bind(&key.token_hash)
        .bind(key.rate_count)
        .bind(key.rate_period_s)
        .bind(&key.webhook_secret)
        .bind(key.created_at_ms)
        .bind(key.watch_quota)
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(api_key_from_row).transpose()
    }

    async fn api_keys(&self) -> StoreResult<Vec<ApiKey>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            api_key_columns!(),
            " FROM api_keys ORDER BY created_at_ms, id"
        ))
        .fetch_all(self.db())
        .await?;
        rows.iter().map(api_key_from_row).collect()
    }

    async fn get_api_key(&self, id: Uuid) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            api_key_columns!(),
            " FROM api_keys WHERE id = $1"
        ))
        .bind(id.to_string())
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(api_key_from_row).transpose()
    }

    async fn api_key_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            api_key_columns!(),
            " FROM api_keys WHERE token_hash = $1"
        ))
        .bind(token_hash)
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(api_key_from_row).transpose()
    }

    async fn revoke_api_key(&self, id_or_name: &str, now_ms: i64) -> StoreResult<Option<ApiKey>> {
        // An id wins over a name, should a name ever spell another key's id.
        let mut tx = self.begin().await?;
        let row = sqlx::query(concat!(
            "UPDATE api_keys SET revoked_at_ms = $2
             WHERE id = (SELECT id FROM api_keys
                         WHERE revoked_at_ms IS NULL AND (id = $1 OR name = $1)
                         ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END
                         LIMIT 1)
             RETURNING ",
            api_key_columns!()
        ))
        .bind(id_or_name)
        .bind(now_ms)
        .fetch_optional(self.statements.on(&mut *tx))
        .await?;
        let key = row.as_ref().map(api_key_from_row).transpose()?;
        // A revoked key's watches end with it: nothing of the key keeps
        // scheduling runs or holds a place (#54).
        if let Some(key) = &key {
            sqlx::query("DELETE FROM watches WHERE api_key_id = $1")
                .bind(key.id.to_string())
                .execute(self.statements.on(&mut *tx))
                .await?;
        }
        self.commit(tx).await?;
        Ok(key)
    }

    async fn touch_api_key(&self, id: Uuid, now_ms: i64) -> StoreResult<()> {
        sqlx::query("UPDATE api_keys SET last_used_at_ms = $2 WHERE id = $1")
            .bind(id.to_string())
            .bind(now_ms)
            .execute(self.db())
            .await?;
        Ok(())
    }

    async fn api_key_webhook_secret(&self, id: Uuid) -> StoreResult<Option<String>> {
        let secret: Option<String> =
            sqlx::query_scalar("SELECT webhook_secret FROM api_keys WHERE id = $1")
                .bind(id.to_string())
                .fetch_optional(self.db())
                .await?;
        Ok(secret)
    }

    async fn run_api_key(&self, run_id: Uuid) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            api_key_columns!(),
            " FROM api_keys JOIN runs ON runs.api_key_id = api_keys.id WHERE runs.id = $1"
        ))
        .bind(run_id.to_string())
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(api_key_from_row).transpose()
    }

});
