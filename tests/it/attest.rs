//! Attestations: signing, tamper detection, key publication and rotation,
//! verification through the API and through `protocheck verify`'s library
//! function, on both backends with real HTTP on loopback.

use crate::common;

use common::app::{TestApp, rcp_reference, worker_config};
use protocheck::attest::dsse::{self, Envelope, PAYLOAD_TYPE};
use protocheck::attest::keys::SigningKeyPair;
use protocheck::attest::statement::Statement;
use protocheck::attest::{Attestor, Jwks, KeySet, VerifyArgs, VerifyError, verify_command};
use protocheck::store::{Inserted, NewRun, RunEnd, RunStatus, Store};
use protocheck::suite::{Counts, RunOptions, SuiteChoice, SuiteId, Verdict, VerdictDetail};
use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::Duration;
use uuid::Uuid;

const FINISH: Duration = Duration::from_secs(60);

fn verdict() -> Verdict {
    Verdict {
        suite: SuiteId::Rcp,
        suite_version: "0.1.0".into(),
        spec_revision: "RCP/1 1.0".into(),
        passed: true,
        summary: "L0".into(),
        counts: Counts {
            pass: 3,
            ..Counts::default()
        },
        detail: VerdictDetail::Rcp {
            profile: "spec".into(),
            certified_level: "L0".into(),
            declared_level: Some("L0".into()),
            honest: Some(true),
            protocol_observed: true,
            report: Default::default(),
        },
    }
}

/// Stores a run of `url` that ended with `end`, as a worker would, and returns its id.
async fn stored_run(store: &dyn Store, url: &str, end: RunEnd) -> Uuid {
    let key = protocheck::target::target_key(url);
    store.upsert_target(&key, url, 1).await.expect("target");
    let new = NewRun {
        id: Uuid::now_v7(),
        target_id: key.clone(),
        suite: SuiteChoice::Rcp,
        options: RunOptions::default(),
        webhook_url: None,
        dedup_key: format!("{key}-{}", Uuid::new_v4()),
        max_attempts: 3,
        created_at_ms: 1_000,
    };
    let Ok(Inserted::New(run)) = store.insert_run(&new).await else {
        panic!("a new run");
    };
    let claimed = store.claim_run("w", 1_000, 60_000).await.expect("claim");
    assert_eq!(claimed.map(|r| r.id), Some(run.id));
    assert!(
        store
            .finish_run(run.id, "w", &end, "0.1.0", 2_000)
            .await
            .expect("finish")
    );
    run.id
}

/// An envelope signed by `key` over exactly `payload`.
fn sign_raw(key: &SigningKeyPair, payload_type: &str, payload: &[u8]) -> Envelope {
    let sig = key.sign(&dsse::pae(payload_type, payload));
    Envelope {
        payload: dsse::encode(payload),
        payload_type: payload_type.to_owned(),
        signatures: vec![dsse::EnvelopeSignature {
            keyid: key.key_id().to_owned(),
            sig: dsse::encode(&sig.to_bytes()),
        }],
    }
}

fn keyset(keys: &[&SigningKeyPair]) -> KeySet {
    let mut set = KeySet::default();
    for k in keys {
        set.insert(k.key_id(), k.verifying_key());
    }
    set
}

#[tokio::test]
async fn a_fresh_attestation_verifies_and_any_change_or_other_key_fails() {
    let db = common::sqlite().await;
    let store = db.store.as_ref();
    let run_id = stored_run(store, "http://example.com/rcp", RunEnd::Verdict(verdict())).await;
    let key = SigningKeyPair::generate().unwrap();
    let kid = key.key_id().to_owned();
    let attestor = Attestor::new(SigningKeyPair::parse(&key.to_pkcs8_pem().unwrap()).unwrap());
    let stored = protocheck::attest::attest_run(store, &attestor, run_id)
        .await
        .expect("attest");
    let envelope: Envelope = serde_json::from_str(&stored.envelope).unwrap();
    let keys = keyset(&[&key]);

    let verified = protocheck::attest::verify_envelope(&envelope, &keys).expect("verifies");
    assert_eq!(verified.key_id, kid);
    let p = &verified.statement.predicate;
    assert_eq!(p.run_id, run_id.to_string());
    assert_eq!(p.suite, "rcp");
    assert_eq!(p.verdict.certified_level.as_deref(), Some("L0"));
    assert_eq!(p.counts.pass, 3);
    assert_eq!(p.finished_at, "1970-01-01T00:00:02.000Z");
    assert_eq!(
        verified.statement.target_url(),
        Some("http://example.com/rcp")
    );
    // Asking again returns the stored attestation, byte for byte.
    let again = protocheck::attest::attest_run(store, &attestor, run_id)
        .await
        .unwrap();
    assert_eq!(again.envelope, stored.envelope);

    // Every byte of the payload and of the signature matters.
    let payload = dsse::decode(&envelope.payload).unwrap();
    for i in 0..payload.len() {
        let mut bad = payload.clone();
        bad[i] ^= 0x01;
        let mut e = envelope.clone();
        e.payload = dsse::encode(&bad);
        assert_eq!(
            protocheck::attest::verify_envelope(&e, &keys).map(|_| ()),
            Err(VerifyError::BadSignature),
            "payload byte {i}"
        );
    }
    let sig = dsse::decode(&envelope.signatures[0].sig).unwrap();
    for i in 0..sig.len() {
        let mut bad = sig.clone();
        bad[i] ^= 0x80;
        let mut e = envelope.clone();
        e.signatures[0].sig = dsse::encode(&bad);
        assert!(
            protocheck::attest::verify_envelope(&e, &keys).is_err(),
            "signature byte {i}"
        );
    }
    let mut e = envelope.clone();
    e.payload_type = "application/json".into();
    assert_eq!(
        protocheck::attest::verify_envelope(&e, &keys).map(|_| ()),
        Err(VerifyError::BadSignature),
        "the payload type is signed too"
    );

    // Another key: unknown by kid, and no match when it poses under the right kid.
    let other = SigningKeyPair::generate().unwrap();
    assert_eq!(
        protocheck::attest::verify_envelope(&envelope, &keyset(&[&other])).map(|_| ()),
        Err(VerifyError::UnknownKey(kid.clone()))
    );
    let mut impostor = KeySet::default();
    impostor.insert(&kid, other.verifying_key());
    assert_eq!(
        protocheck::attest::verify_envelope(&envelope, &impostor).map(|_| ()),
        Err(VerifyError::BadSignature)
    );
    let forged = sign_raw(&other, PAYLOAD_TYPE, &payload);
    let mut forged_as_kid = forged.clone();
    forged_as_kid.signatures[0].keyid = kid.clone();
    assert_eq!(
        protocheck::attest::verify_envelope(&forged_as_kid, &keys).map(|_| ()),
        Err(VerifyError::BadSignature),
        "a signature by another key under our kid"
    );

    // A good signature over a payload that is not canonical JSON, or not ours.
    let run = store.get_run(run_id).await.unwrap().unwrap();
    let findings = store.findings(run_id, -1).await.unwrap();
    let statement = Statement::of_run(&run, &verdict(), 2_000, &findings).unwrap();
    let pretty = serde_json::to_vec_pretty(&statement).unwrap();
    assert_eq!(
        protocheck::attest::verify_envelope(&sign_raw(&key, PAYLOAD_TYPE, &pretty), &keys)
            .map(|_| ()),
        Err(VerifyError::NotCanonical)
    );
    assert!(matches!(
        protocheck::attest::verify_envelope(&sign_raw(&key, PAYLOAD_TYPE, b"{}"), &keys),
        Err(VerifyError::NotAStatement(_))
    ));
    let canonical = statement.canonical_bytes().unwrap();
    assert_eq!(
        canonical, payload,
        "the statement rebuilds to the signed bytes"
    );

    // Malformed envelopes are told apart from failed checks.
    let mut e = envelope.clone();
    e.payload = "%%%".into();
    assert!(
        protocheck::attest::verify_envelope(&e, &keys)
            .unwrap_err()
            .is_malformed()
    );
    let mut e = envelope.clone();
    e.signatures.clear();
    assert!(
        protocheck::attest::verify_envelope(&e, &keys)
            .unwrap_err()
            .is_malformed()
    );
}

#[tokio::test]
async fn only_verdicts_are_attested() {
    let db = common::sqlite().await;
    let store = db.store.as_ref();
    let attestor = Attestor::new(SigningKeyPair::generate().unwrap());
    let errored = stored_run(
        store,
        "http://example.com/rcp",
        RunEnd::Error("unreachable".into()),
    )
    .await;
    let e = protocheck::attest::attest_run(store, &attestor, errored)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("error"), "{e}");
    assert!(
        protocheck::attest::attest_run(store, &attestor, Uuid::new_v4())
            .await
            .is_err()
    );
    assert_eq!(store.get_attestation(errored).await.unwrap(), None);
}

/// `verify_command` on files, offline.
async fn verify_files(dir: &std::path::Path, envelope: &str, jwks: &str) -> ExitCode {
    let att = dir.join("attestation.json");
    let keys = dir.join("keys.json");
    std::fs::write(&att, envelope).unwrap();
    std::fs::write(&keys, jwks).unwrap();
    verify_command(VerifyArgs {
        attestation: att.display().to_string(),
        keys: Some(keys.display().to_string()),
        json: true,
    })
    .await
    .expect("verify runs")
}

#[tokio::test]
async fn a_run_against_the_reference_is_attested_and_verifies_by_api_and_cli() {
    let target = rcp_reference(&[], Duration::ZERO).await;
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let resp = app
            .post_json("/api/v1/runs", &json!({"url": target, "suite": "rcp"}))
            .await;
        let id = resp.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let run = app.wait_finished(&id, FINISH).await;
        assert_eq!(run["status"], "passed", "{b}: {run}");
        pool.shutdown().await;
        // The worker signed it as the run finished.
        let stored = db
            .store
            .get_attestation(id.parse().unwrap())
            .await
            .unwrap()
            .expect("signed when the run finished");
        assert_eq!(stored.key_id, app.attestor.key_id(), "{b}");

        let resp = app
            .http
            .get(app.url(&format!("/api/v1/runs/{id}/attestation")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{b}");
        let envelope_text = resp.text().await.unwrap();
        assert_eq!(envelope_text, stored.envelope, "{b}: served byte for byte");

        // The published key set has the signing key, and verifies it in the library.
        let resp = app
            .http
            .get(app.url("/.well-known/protocheck/keys.json"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(
            resp.headers()["content-type"],
            "application/jwk-set+json",
            "{b}"
        );
        let jwks_text = resp.text().await.unwrap();
        let jwks: Jwks = serde_json::from_str(&jwks_text).unwrap();
        assert_eq!(jwks.keys.len(), 1, "{b}");
        let jwk = &jwks.keys[0];
        assert_eq!(
            (jwk.kty.as_str(), jwk.crv.as_deref(), jwk.alg.as_deref()),
            ("OKP", Some("Ed25519"), Some("EdDSA"))
        );
        assert_eq!(jwk.kid.as_deref(), Some(app.attestor.key_id()));
        let keys = KeySet::from_jwks(&jwks).unwrap();
        let verified =
            protocheck::attest::verify::verify_json(envelope_text.as_bytes(), &keys).unwrap();
        let p = &verified.statement.predicate;
        assert_eq!(p.run_id, id, "{b}");
        assert_eq!(p.verdict.certified_level.as_deref(), Some("L2"));
        assert_eq!(
            p.counts,
            serde_json::from_value(run["verdict"]["counts"].clone()).unwrap()
        );
        assert_eq!(verified.statement.target_url(), run["url"].as_str());
        // Anyone can recompute the findings digest from the report.
        let findings: Vec<Value> = run["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let mut f = f.clone();
                let obj = f.as_object_mut().unwrap();
                obj.remove("seq");
                obj.remove("created_at");
                f
            })
            .collect();
        let digest = {
            use sha2::Digest;
            hex::encode(sha2::Sha256::digest(serde_jcs::to_vec(&findings).unwrap()))
        };
        assert_eq!(p.findings_sha256, digest, "{b}");

        // Through the API.
        let resp = app
            .http
            .post(app.url("/api/v1/verify"))
            .header("content-type", "application/json")
            .body(envelope_text.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let answer: Value = resp.json().await.unwrap();
        assert_eq!(answer["valid"], true, "{b}: {answer}");
        assert_eq!(answer["key_id"], app.attestor.key_id());
        assert_eq!(answer["matches_stored_attestation"], true);
        assert_eq!(answer["statement"]["predicate"]["run_id"], id.as_str());
        assert_eq!(answer["links"]["run"], format!("/runs/{id}"));

        let mut tampered: Value = serde_json::from_str(&envelope_text).unwrap();
        let mut payload = dsse::decode(tampered["payload"].as_str().unwrap()).unwrap();
        let at = payload.len() / 2;
        payload[at] ^= 0x20;
        tampered["payload"] = json!(dsse::encode(&payload));
        let answer: Value = app
            .post_json("/api/v1/verify", &tampered)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(answer["valid"], false, "{b}: {answer}");
        assert!(answer["reason"].as_str().unwrap().contains("signature"));

        // Through `protocheck verify`: offline with files, and by URL.
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            verify_files(dir.path(), &envelope_text, &jwks_text).await,
            ExitCode::SUCCESS,
            "{b}"
        );
        assert_eq!(
            verify_files(dir.path(), &tampered.to_string(), &jwks_text).await,
            ExitCode::from(1),
            "{b}"
        );
        let other = json!({"keys": [{
            "kty": "OKP", "crv": "Ed25519", "kid": app.attestor.key_id(),
            "x": base64_url(SigningKeyPair::generate().unwrap().verifying_key().as_bytes()),
        }]});
        assert_eq!(
            verify_files(dir.path(), &envelope_text, &other.to_string()).await,
            ExitCode::from(1),
            "{b}: another key under the same kid"
        );
        let by_url = verify_command(VerifyArgs {
            attestation: app.url(&format!("/api/v1/runs/{id}/attestation")),
            keys: None,
            json: false,
        })
        .await
        .expect("verify by URL");
        assert_eq!(by_url, ExitCode::SUCCESS, "{b}");
        assert!(
            verify_command(VerifyArgs {
                attestation: dir.path().join("attestation.json").display().to_string(),
                keys: None,
                json: false,
            })
            .await
            .is_err(),
            "a file needs --keys"
        );
    }
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn bad_requests_get_problems_and_unsigned_verdicts_are_signed_on_demand() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        // A verdict stored with no signing worker is signed when first asked for.
        let id = stored_run(
            db.store.as_ref(),
            "http://example.com/rcp",
            RunEnd::Verdict(verdict()),
        )
        .await;
        assert_eq!(db.store.get_attestation(id).await.unwrap(), None);
        let (status, envelope) = app
            .get_json(&format!("/api/v1/runs/{id}/attestation"))
            .await;
        assert_eq!(status, 200, "{b}: {envelope}");
        assert!(db.store.get_attestation(id).await.unwrap().is_some());
        let answer: Value = app
            .post_json("/api/v1/verify", &envelope)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(answer["valid"], true, "{b}: {answer}");

        // Runs with nothing to attest.
        let errored = stored_run(
            db.store.as_ref(),
            "http://example.org/rcp",
            RunEnd::Error("unreachable".into()),
        )
        .await;
        for path in [
            format!("/api/v1/runs/{errored}/attestation"),
            format!("/api/v1/runs/{}/attestation", Uuid::new_v4()),
            "/api/v1/runs/not-a-uuid/attestation".to_owned(),
        ] {
            let resp = app.http.get(app.url(&path)).send().await.unwrap();
            assert_eq!(resp.status(), 404, "{b} {path}");
            assert_eq!(resp.headers()["content-type"], "application/problem+json");
        }

        // Not JSON: 400. Not an envelope, or undecodable base64: 422.
        let resp = app
            .http
            .post(app.url("/api/v1/verify"))
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{b}");
        for body in [
            json!({"hello": "world"}),
            json!([1, 2, 3]),
            json!({"payload": "%%%", "payloadType": PAYLOAD_TYPE, "signatures": [{"sig": "AA=="}]}),
            json!({"payload": "e30=", "payloadType": PAYLOAD_TYPE, "signatures": []}),
        ] {
            let resp = app.post_json("/api/v1/verify", &body).await;
            assert_eq!(resp.status(), 422, "{b}: {body}");
            assert_eq!(resp.headers()["content-type"], "application/problem+json");
        }
    }
}

#[tokio::test]
async fn a_rotated_key_stays_published_and_its_attestations_verify() {
    for db in common::all_backends().await {
        let b = db.name();
        let before = TestApp::start(&db, 100).await;
        let id = stored_run(
            db.store.as_ref(),
            "http://example.com/rcp",
            RunEnd::Verdict(verdict()),
        )
        .await;
        let (status, old_envelope) = before
            .get_json(&format!("/api/v1/runs/{id}/attestation"))
            .await;
        assert_eq!(status, 200, "{b}");

        // The service restarts with a new key.
        let after = TestApp::start(&db, 100).await;
        assert_ne!(after.attestor.key_id(), before.attestor.key_id());
        let (_, jwks) = after.get_json("/.well-known/protocheck/keys.json").await;
        let kids: Vec<&str> = jwks["keys"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|k| k["kid"].as_str())
            .collect();
        assert!(kids.contains(&before.attestor.key_id()), "{b}: {jwks}");
        assert!(kids.contains(&after.attestor.key_id()), "{b}: {jwks}");
        let answer: Value = after
            .post_json("/api/v1/verify", &old_envelope)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(answer["valid"], true, "{b}: {answer}");
        assert_eq!(answer["key_id"], before.attestor.key_id());

        // New verdicts are signed with the new key; the old one is kept as it was.
        let newer = stored_run(
            db.store.as_ref(),
            "http://example.net/rcp",
            RunEnd::Verdict(verdict()),
        )
        .await;
        let (_, new_envelope) = after
            .get_json(&format!("/api/v1/runs/{newer}/attestation"))
            .await;
        assert_eq!(
            new_envelope["signatures"][0]["keyid"],
            after.attestor.key_id()
        );
        let (_, again) = after
            .get_json(&format!("/api/v1/runs/{id}/attestation"))
            .await;
        assert_eq!(again, old_envelope, "{b}");
        assert_eq!(
            db.store.get_run(id).await.unwrap().unwrap().status,
            RunStatus::Passed
        );
    }
}
