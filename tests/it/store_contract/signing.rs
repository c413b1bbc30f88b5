//! The runs a badge shows, attestations and signing keys.

use super::*;

/// Queues a run asking for `suite`, claims it and ends it, with no other run queued meanwhile.
async fn finished_suite_run(
    store: &dyn Store,
    target_id: &str,
    suite: &str,
    end: RunEnd,
    at_ms: i64,
) -> Run {
    let mut new = new_run(target_id, &format!("{target_id}-{suite}-{at_ms}"), at_ms);
    new.suite = SuiteChoice::parse(suite).expect("a suite name");
    let Ok(Inserted::New(queued)) = store.insert_run(&new).await else {
        panic!("expected a new run");
    };
    let claimed = claim(store, "w-suite", at_ms).await.expect("a queued run");
    assert_eq!(claimed.id, queued.id);
    assert!(
        store
            .finish_run(queued.id, "w-suite", &end, "1.0.0", at_ms + 10)
            .await
            .expect("finish")
    );
    run(store, queued.id).await
}

fn mcp_verdict() -> Verdict {
    Verdict {
        suite: SuiteId::Mcp,
        suite_version: "1.0.0".to_string(),
        spec_revision: "2026-07-28".to_string(),
        passed: true,
        summary: "strict".to_string(),
        counts: Counts::default(),
        detail: VerdictDetail::mcp("strict"),
    }
}

contract!(latest_runs_for_suite_follow_the_verdicts_suite);
async fn latest_runs_for_suite_follow_the_verdicts_suite(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let other = target(s, "other").await;
    assert_eq!(
        s.latest_runs_for_suite(&t, "rcp").await.unwrap(),
        Default::default(),
        "no runs"
    );

    let passed = finished_suite_run(s, &t, "rcp", RunEnd::Verdict(verdict(true)), 1_000).await;
    // Another target's newer run and an MCP verdict do not count for this RCP badge.
    finished_suite_run(s, &other, "rcp", RunEnd::Verdict(verdict(false)), 2_000).await;
    let mcp = finished_suite_run(s, &t, "auto", RunEnd::Verdict(mcp_verdict()), 3_000).await;
    let runs = s.latest_runs_for_suite(&t, "rcp").await.unwrap();
    assert_eq!(runs.finished.map(|r| r.id), Some(passed.id));
    assert_eq!(runs.active, None);
    let runs = s.latest_runs_for_suite(&t, "mcp").await.unwrap();
    assert_eq!(
        runs.finished.map(|r| r.id),
        Some(mcp.id),
        "an auto run counts for the suite that judged it"
    );

    // A run that ended in error was judged by no suite: it counts for the suite it
    // asked for, and an `auto` one for every suite.
    let errored =
        finished_suite_run(s, &t, "rcp", RunEnd::Error("unreachable".into()), 4_000).await;
    let runs = s.latest_runs_for_suite(&t, "rcp").await.unwrap();
    assert_eq!(runs.finished.map(|r| r.id), Some(errored.id));
    let runs = s.latest_runs_for_suite(&t, "mcp").await.unwrap();
    assert_eq!(runs.finished.map(|r| r.id), Some(mcp.id));
    let auto_err =
        finished_suite_run(s, &t, "auto", RunEnd::Error("unreachable".into()), 5_000).await;
    for suite in ["rcp", "mcp"] {
        let runs = s.latest_runs_for_suite(&t, suite).await.unwrap();
        assert_eq!(runs.finished.map(|r| r.id), Some(auto_err.id), "{suite}");
    }

    // Active runs: the newest queued or running one asking for the suite or `auto`.
    let mut new = new_run(&t, "active-mcp", 6_000);
    new.suite = SuiteChoice::Mcp;
    s.insert_run(&new).await.unwrap();
    assert_eq!(
        s.latest_runs_for_suite(&t, "rcp").await.unwrap().active,
        None,
        "an MCP run is not an RCP badge's business"
    );
    let queued = queue(s, &t, "active-rcp", 7_000).await;
    let runs = s.latest_runs_for_suite(&t, "rcp").await.unwrap();
    assert_eq!(runs.active.map(|r| r.id), Some(queued.id));
    assert_eq!(runs.finished.map(|r| r.id), Some(auto_err.id));
    let runs = s.latest_runs_for_suite(&t, "mcp").await.unwrap();
    assert_eq!(runs.active.map(|r| r.suite), Some(SuiteChoice::Mcp));
}

contract!(attestations_keep_the_first_one_stored);
async fn attestations_keep_the_first_one_stored(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let done = finished_run(s, &t, "k", 100, RunEnd::Verdict(verdict(true)), 200).await;
    assert_eq!(s.get_attestation(done.id).await.unwrap(), None);

    let first = StoredAttestation {
        run_id: done.id,
        key_id: "kid-1".to_string(),
        envelope:
            r#"{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[]}"#
                .to_string(),
        created_at_ms: 300,
    };
    assert_eq!(s.put_attestation(&first).await.unwrap(), first);
    let second = StoredAttestation {
        key_id: "kid-2".to_string(),
        envelope: "{}".to_string(),
        created_at_ms: 400,
        ..first.clone()
    };
    assert_eq!(
        s.put_attestation(&second).await.unwrap(),
        first,
        "a run is attested once"
    );
    assert_eq!(
        s.get_attestation(done.id).await.unwrap(),
        Some(first.clone())
    );

    let orphan = StoredAttestation {
        run_id: Uuid::new_v4(),
        ..first
    };
    assert!(
        s.put_attestation(&orphan).await.is_err(),
        "an attestation belongs to a stored run"
    );
}

contract!(public_keys_are_never_replaced);
async fn public_keys_are_never_replaced(db: TestDb) {
    let s = db.store.as_ref();
    assert_eq!(s.public_keys().await.unwrap(), vec![]);
    let old = PublicKeyRecord {
        key_id: "old".to_string(),
        algorithm: "Ed25519".to_string(),
        public_key: "b2xk".to_string(),
        created_at_ms: 100,
    };
    let new = PublicKeyRecord {
        key_id: "new".to_string(),
        public_key: "bmV3".to_string(),
        created_at_ms: 200,
        ..old.clone()
    };
    s.put_public_key(&new).await.unwrap();
    s.put_public_key(&old).await.unwrap();
    s.put_public_key(&PublicKeyRecord {
        public_key: "changed".to_string(),
        ..old.clone()
    })
    .await
    .unwrap();
    assert_eq!(
        s.public_keys().await.unwrap(),
        vec![old, new],
        "oldest first, the first record of an id kept"
    );
}
