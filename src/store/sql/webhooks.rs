//! Webhook deliveries ([`WebhookStore`]) on the SQL store.

use crate::store::rows::{
    WEBHOOK_DELIVERY_COLUMNS, webhook_attempt_from_row, webhook_delivery_from_row,
};
use crate::store::{AttemptOutcome, StoreResult, WebhookAttempt, WebhookDelivery, WebhookStore};
use uuid::Uuid;

impl_sql_store!(WebhookStore {
    async fn claim_webhook_delivery(
        &self,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<WebhookDelivery>> {
        let sql = format!(
            "UPDATE webhook_deliveries SET lease_expires_at_ms = $2
             WHERE id = (SELECT id FROM webhook_deliveries
                         WHERE state = 'pending' AND next_attempt_at_ms <= $1
                           AND (lease_expires_at_ms IS NULL OR lease_expires_at_ms < $1)
                         ORDER BY next_attempt_at_ms, id
                         LIMIT 1{skip_locked})
             RETURNING {WEBHOOK_DELIVERY_COLUMNS}",
            skip_locked = DB::SKIP_LOCKED,
        );
        let row = sqlx::query(&sql)
            .bind(now_ms)
            .bind(now_ms.saturating_add(lease_ms))
            .fetch_optional(self.db())
            .await?;
        row.as_ref().map(webhook_delivery_from_row).transpose()
    }

    async fn record_webhook_attempt(
        &self,
        delivery_id: &str,
        attempt: &WebhookAttempt,
        outcome: AttemptOutcome,
    ) -> StoreResult<bool> {
        let (state, next) = outcome.columns();
        let mut tx = self.begin().await?;
        let done = sqlx::query(
            "UPDATE webhook_deliveries
             SET attempts = $2, state = $3, next_attempt_at_ms = $4, lease_expires_at_ms = NULL
             WHERE id = $1 AND state = 'pending' AND attempts = $2 - 1",
        )
        .bind(delivery_id)
        .bind(attempt.attempt)
        .bind(state)
        .bind(next)
        .execute(self.statements.on(&mut *tx))
        .await?;
        if DB::rows_affected(&done) != 1 {
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO webhook_attempts
                 (delivery_id, attempt, at_ms, status_code, error, next_attempt_at_ms)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(delivery_id)
        .bind(attempt.attempt)
        .bind(attempt.at_ms)
        .bind(attempt.status_code)
        .bind(&attempt.error)
        .bind(attempt.next_attempt_at_ms)
        .execute(self.statements.on(&mut *tx))
        .await?;
        self.commit(tx).await?;
        Ok(true)
    }

    async fn run_webhook(
        &self,
        run_id: Uuid,
    ) -> StoreResult<Option<(WebhookDelivery, Vec<WebhookAttempt>)>> {
        let sql =
            format!("SELECT {WEBHOOK_DELIVERY_COLUMNS} FROM webhook_deliveries WHERE run_id = $1 AND event = 'run.finished'");
        let row = sqlx::query(&sql)
            .bind(run_id.to_string())
            .fetch_optional(self.db())
            .await?;
        let Some(delivery) = row.as_ref().map(webhook_delivery_from_row).transpose()? else {
            return Ok(None);
        };
        let rows = sqlx::query(
            "SELECT attempt, at_ms, status_code, error, next_attempt_at_ms
             FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt",
        )
        .bind(&delivery.id)
        .fetch_all(self.db())
        .await?;
        let attempts = rows
            .iter()
            .map(webhook_attempt_from_row)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Some((delivery, attempts)))
    }

});
