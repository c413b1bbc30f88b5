//! Attestations and signing keys ([`SigningStore`]) on the SQL store.

use crate::store::rows::{attestation_from_row, public_key_from_row};
use crate::store::{PublicKeyRecord, SigningStore, StoreError, StoreResult, StoredAttestation};
use uuid::Uuid;

/// Stores attestation `$2`/`$3` of run `$1` at `$4` unless the run has one:
/// the first stays (a run is attested once).
pub(super) const INSERT_ATTESTATION: &str =
    "INSERT INTO attestations (run_id, key_id, envelope, created_at_ms)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (run_id) DO NOTHING";

impl_sql_store!(SigningStore {
    async fn put_attestation(
        &self,
        attestation: &StoredAttestation,
    ) -> StoreResult<StoredAttestation> {
        let done = sqlx::query(INSERT_ATTESTATION)
        .bind(attestation.run_id.to_string())
        .bind(&attestation.key_id)
        .bind(&attestation.envelope)
        .bind(attestation.created_at_ms)
        .execute(self.db())
        .await?;
        if DB::rows_affected(&done) == 1 {
            // Stored as given: no need to read it back.
            return Ok(attestation.clone());
        }
        self.get_attestation(attestation.run_id)
            .await?
            .ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "attestation of run `{}` vanished after insert",
                    attestation.run_id
                ))
            })
    }

    async fn get_attestation(&self, run_id: Uuid) -> StoreResult<Option<StoredAttestation>> {
        let row = sqlx::query(
            "SELECT run_id, key_id, envelope, created_at_ms FROM attestations WHERE run_id = $1",
        )
        .bind(run_id.to_string())
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(attestation_from_row).transpose()
    }

    async fn put_public_key(&self, key: &PublicKeyRecord) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO signing_keys (key_id, algorithm, public_key, created_at_ms)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (key_id) DO NOTHING",
        )
        .bind(&key.key_id)
        .bind(&key.algorithm)
        .bind(&key.public_key)
        .bind(key.created_at_ms)
        .execute(self.db())
        .await?;
        Ok(())
    }

    async fn public_keys(&self) -> StoreResult<Vec<PublicKeyRecord>> {
        let rows = sqlx::query(
            "SELECT key_id, algorithm, public_key, created_at_ms FROM signing_keys
             ORDER BY created_at_ms, key_id",
        )
        .fetch_all(self.db())
        .await?;
        rows.iter().map(public_key_from_row).collect()
    }

});
