//! Attestations: protocheck's signature over each verdict, so that a report or a
//! badge can be checked by anyone against the service's published key.
//!
//! - The statement ([`statement`]) is an in-toto Statement v1 about the target,
//!   with the verdict as its predicate, serialised as RFC 8785 canonical JSON.
//! - The envelope ([`dsse`]) is DSSE v1, signed with Ed25519 over the
//!   pre-authentication encoding of the payload type and the statement.
//! - The keys ([`keys`]) are published as a JWKS; a key's `kid` is its RFC 7638
//!   thumbprint. Every key that ever signed stays published.
//! - [`verify`] checks an envelope against a key set, in the service (`POST
//!   /api/v1/verify`) and offline (`protocheck verify`).
//!
//! A run is attested once, when it ends with a verdict. Signing never decides a
//! run's fate: a failure is logged, and [`attest_run`] creates the attestation
//! later on demand.

pub mod dsse;
pub mod keys;
pub mod statement;
pub mod verify;

use crate::store::{RunStatus, Store, StoreError, StoredAttestation};
use dsse::{Envelope, EnvelopeSignature, PAYLOAD_TYPE};
use keys::SigningKeyPair;
use statement::Statement;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;

pub use keys::{Jwk, Jwks, KeySet};
pub use verify::{Verified, VerifyArgs, VerifyError, verify_command, verify_envelope};

/// Why a run could not be attested.
#[derive(Debug, thiserror::Error)]
pub enum AttestError {
    #[error("no run has the id `{0}`")]
    UnknownRun(Uuid),
    /// Only a verdict is signed: a run that is still going, or ended as `error`
    /// or `cancelled`, has nothing to attest.
    #[error("run `{0}` is {1} and has no verdict to attest")]
    NoVerdict(Uuid, &'static str),
    #[error("building the statement: {0}")]
    Statement(#[from] serde_json::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Signs statements with the service's key. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Attestor {
    key: Arc<SigningKeyPair>,
    /// Whether the public key is known to be recorded (clones share it).
    published: Arc<AtomicBool>,
}

impl Attestor {
    pub fn new(key: SigningKeyPair) -> Self {
        Self {
            key: Arc::new(key),
            published: Arc::default(),
        }
    }

    pub fn key_id(&self) -> &str {
        self.key.key_id()
    }

    pub fn verifying_key(&self) -> ed25519_dalek::VerifyingKey {
        self.key.verifying_key()
    }

    /// Records the public key in the store, so the published key set lists it.
    pub async fn publish(&self, store: &dyn Store) -> Result<(), StoreError> {
        store
            .put_public_key(&self.key.public_record(crate::now_ms()))
            .await?;
        self.published.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// [`Attestor::publish`] unless this attestor (or a clone) already did:
    /// a recorded key stays recorded, so one write a process is enough.
    pub async fn ensure_published(&self, store: &dyn Store) -> Result<(), StoreError> {
        if self.published.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.publish(store).await
    }

    /// The DSSE envelope of `statement`.
    pub fn sign(&self, statement: &Statement) -> Result<Envelope, serde_json::Error> {
        let payload = statement.canonical_bytes()?;
        let signature = self.key.sign(&dsse::pae(PAYLOAD_TYPE, &payload));
        Ok(Envelope {
            payload: dsse::encode(&payload),
            payload_type: PAYLOAD_TYPE.to_owned(),
            signatures: vec![EnvelopeSignature {
                keyid: self.key.key_id().to_owned(),
                sig: dsse::encode(&signature.to_bytes()),
            }],
        })
    }
}

/// The service's attestor, from configuration (see [`keys::load_signing_key`]),
/// with its public key recorded in the store so the key set lists it.
pub async fn start(
    args: &crate::config::AttestArgs,
    database_url: &str,
    store: &dyn Store,
) -> anyhow::Result<Attestor> {
    use anyhow::Context;
    let attestor = Attestor::new(keys::load_signing_key(args, database_url)?);
    attestor
        .publish(store)
        .await
        .context("recording the public signing key")?;
    Ok(attestor)
}

/// The attestation of a run that ended with a verdict: the stored one, or a new
/// one signed now from the stored run and findings, then stored.
pub async fn attest_run(
    store: &dyn Store,
    attestor: &Attestor,
    run_id: Uuid,
) -> Result<StoredAttestation, AttestError> {
    if let Some(stored) = store.get_attestation(run_id).await? {
        return Ok(stored);
    }
    sign_and_store(store, attestor, run_id).await
}

/// The attestation of `run` as its end will store it: `verdict` at
/// `finished_at_ms`, after `findings` (the findings stored, in order). The
/// worker signs it before the end and stores both in one transaction; it is
/// what [`attest_run`] would sign from the stored run afterwards. The caller
/// has published the key ([`Attestor::ensure_published`]).
pub fn attest_ending(
    attestor: &Attestor,
    run: &crate::store::Run,
    verdict: &crate::suite::Verdict,
    finished_at_ms: i64,
    findings: &[crate::suite::Finding],
) -> Result<StoredAttestation, AttestError> {
    let findings: Vec<&crate::suite::Finding> = findings.iter().collect();
    let statement = Statement::of_findings(run, verdict, finished_at_ms, &findings)?;
    Ok(StoredAttestation {
        run_id: run.id,
        key_id: attestor.key_id().to_owned(),
        envelope: serde_json::to_string(&attestor.sign(&statement)?)?,
        created_at_ms: finished_at_ms,
    })
}

async fn sign_and_store(
    store: &dyn Store,
    attestor: &Attestor,
    run_id: Uuid,
) -> Result<StoredAttestation, AttestError> {
    let run = store
        .get_run(run_id)
        .await?
        .ok_or(AttestError::UnknownRun(run_id))?;
    let (Some(verdict), Some(finished_at_ms), RunStatus::Passed | RunStatus::Failed) =
        (&run.verdict, run.finished_at_ms, run.status)
    else {
        return Err(AttestError::NoVerdict(run_id, run.status.as_str()));
    };
    let findings = store.findings(run_id, -1).await?;
    let statement = Statement::of_run(&run, verdict, finished_at_ms, &findings)?;
    let envelope = serde_json::to_string(&attestor.sign(&statement)?)?;
    // Published before the attestation is stored, so no stored attestation names
    // a key that the key set lacks. The insert is a no-op once the key is known.
    attestor.ensure_published(store).await?;
    let stored = store
        .put_attestation(&StoredAttestation {
            run_id,
            key_id: attestor.key_id().to_owned(),
            envelope,
            created_at_ms: crate::now_ms(),
        })
        .await?;
    Ok(stored)
}

/// The keys the service verifies with: every recorded key, plus its own in case
/// recording it failed.
pub async fn service_keys(
    store: &dyn Store,
    attestor: Option<&Attestor>,
) -> Result<(Jwks, KeySet), StoreError> {
    let mut records = store.public_keys().await?;
    if let Some(a) = attestor
        && !records.iter().any(|r| r.key_id == a.key_id())
    {
        records.push(a.key.public_record(crate::now_ms()));
    }
    Ok((Jwks::from_records(&records), KeySet::from_records(&records)))
}
