//! The `Store` contract: every body runs as two tests, `<body>::sqlite` and
//! `<body>::postgres` (see [`contract!`]), so a failure names its backend and each
//! can be run alone. The Postgres ones run when `PROTOCHECK_TEST_DATABASE_URL` is
//! set. Times are passed in, so the tests move the clock instead of sleeping.

use crate::common;

/// Declares the contract body `$name`, an `async fn(TestDb)` written right below,
/// as the tests `$name::sqlite` and `$name::postgres`; any further arguments go
/// to `#[tokio::test(…)]`. Without `PROTOCHECK_TEST_DATABASE_URL` the Postgres
/// test passes after saying once, on stderr, that it skipped (as every Postgres
/// leg of the test suite does; see `common::postgres`).
///
/// The tests live in a module named after the body (a module and a function may
/// share a name) because `macro_rules!` cannot join identifiers into
/// `$name_sqlite`.
macro_rules! contract {
    ($name:ident $(, $($test:tt)*)?) => {
        mod $name {
            #[tokio::test$(($($test)*))?]
            async fn sqlite() {
                super::$name(crate::common::sqlite().await).await;
            }

            #[tokio::test$(($($test)*))?]
            async fn postgres() {
                if let Some(db) = crate::common::postgres().await {
                    super::$name(db).await;
                }
            }
        }
    };
}
pub(crate) use contract;

use common::TestDb;
use protocheck::store::{
    Backend, DeliveryState, HistoryCursor, IdempotencyRecord, Inserted, NewRun, PublicKeyRecord,
    ReapReport, Run, RunEnd, RunStatus, Store, StoredAttestation,
};
use protocheck::suite::{Counts, RunOptions, SuiteChoice, SuiteId, Verdict, VerdictDetail};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Barrier, Notify};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

pub(crate) const LEASE_MS: i64 = 60_000;
/// Liveness bound for anything that waits on another task; never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(5);

pub(crate) async fn target(store: &dyn Store, id: &str) -> String {
    store
        .upsert_target(id, &format!("https://{id}.example/rcp"), 1)
        .await
        .expect("upsert target");
    id.to_string()
}

fn new_run(target_id: &str, dedup_key: &str, created_at_ms: i64) -> NewRun {
    NewRun {
        id: Uuid::new_v4(),
        target_id: target_id.to_string(),
        suite: SuiteChoice::Rcp,
        options: RunOptions {
            profile: Some("spec".to_string()),
            allow_writes: Some(false),
            ..RunOptions::default()
        },
        webhook_url: None,
        dedup_key: dedup_key.to_string(),
        max_attempts: 3,
        created_at_ms,
    }
}

pub(crate) async fn queue(
    store: &dyn Store,
    target_id: &str,
    dedup_key: &str,
    created_at_ms: i64,
) -> Run {
    match store
        .insert_run(&new_run(target_id, dedup_key, created_at_ms))
        .await
    {
        Ok(Inserted::New(run)) => run,
        other => panic!("expected a new run for {dedup_key}, got {other:?}"),
    }
}

pub(crate) async fn claim(store: &dyn Store, worker: &str, now_ms: i64) -> Option<Run> {
    store
        .claim_run(worker, now_ms, LEASE_MS)
        .await
        .expect("claim")
}

async fn run(store: &dyn Store, id: Uuid) -> Run {
    store
        .get_run(id)
        .await
        .expect("get run")
        .expect("run exists")
}

/// Queues, claims and ends a run, with no other run queued meanwhile.
async fn finished_run(
    store: &dyn Store,
    target_id: &str,
    dedup_key: &str,
    created_at_ms: i64,
    end: RunEnd,
    finished_at_ms: i64,
) -> Run {
    let queued = queue(store, target_id, dedup_key, created_at_ms).await;
    let claimed = claim(store, "w-finish", created_at_ms)
        .await
        .expect("a queued run");
    assert_eq!(claimed.id, queued.id);
    let ok = store
        .finish_run(queued.id, "w-finish", &end, "1.0.0", finished_at_ms)
        .await
        .expect("finish");
    assert!(ok);
    run(store, queued.id).await
}

fn verdict(passed: bool) -> Verdict {
    Verdict {
        suite: SuiteId::Rcp,
        suite_version: "1.0.0".to_string(),
        spec_revision: "RCP/1".to_string(),
        passed,
        summary: if passed { "L1" } else { "none" }.to_string(),
        counts: Counts {
            pass: 10,
            fail: u32::from(!passed),
            warn: 1,
            info: 0,
            skip: 2,
        },
        detail: VerdictDetail::Rcp {
            profile: "spec".to_string(),
            certified_level: if passed { "L1" } else { "none" }.to_string(),
            declared_level: Some("L1".to_string()),
            honest: Some(passed),
            protocol_observed: true,
            report: Default::default(),
        },
    }
}

contract!(upsert_target_is_idempotent);
async fn upsert_target_is_idempotent(db: TestDb) {
    let s = db.store.as_ref();
    let first = s
        .upsert_target("t1", "https://one.example/rcp", 100)
        .await
        .unwrap();
    assert_eq!(first.created_at_ms, 100);
    assert_eq!(first.protocol, None);
    let again = s
        .upsert_target("t1", "https://one.example/rcp", 200)
        .await
        .unwrap();
    assert_eq!(again, first, "a second upsert returns the stored target");

    s.set_target_protocol("t1", "rcp").await.unwrap();
    let stored = s.get_target("t1").await.unwrap().expect("target");
    assert_eq!(stored.protocol.as_deref(), Some("rcp"));
    assert_eq!(stored.canonical_url, "https://one.example/rcp");

    assert_eq!(s.get_target("missing").await.unwrap(), None);
    assert!(
        s.upsert_target("t2", "https://one.example/rcp", 300)
            .await
            .is_err(),
        "one canonical URL belongs to one target"
    );
}

contract!(insert_run_dedups_active_runs_only);
async fn insert_run_dedups_active_runs_only(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let first = queue(s, &t, "k", 100).await;
    assert_eq!(first.status, RunStatus::Queued);
    assert_eq!(first.target_url, "https://t.example/rcp");
    assert_eq!(first.attempts, 0);
    assert_eq!(first.available_at_ms, 100);
    assert_eq!(first.options.profile.as_deref(), Some("spec"));
    assert_eq!(
        run(s, first.id).await,
        first,
        "the returned run is the stored one"
    );

    let Inserted::Active(active) = s.insert_run(&new_run(&t, "k", 200)).await.unwrap() else {
        panic!("a queued run with the same key is returned");
    };
    assert_eq!(active.id, first.id);

    assert!(
        s.insert_run(&new_run("no-such-target", "k-orphan", 200))
            .await
            .is_err(),
        "a run needs a known target"
    );
    let other = s.insert_run(&new_run(&t, "other-key", 200)).await.unwrap();
    assert!(
        matches!(other, Inserted::New(_)),
        "another key is a new run"
    );

    let claimed = claim(s, "w1", 1_000).await.expect("claim");
    assert_eq!(claimed.id, first.id);
    let Inserted::Active(active) = s.insert_run(&new_run(&t, "k", 300)).await.unwrap() else {
        panic!("a running run with the same key is returned");
    };
    assert_eq!(active.id, first.id);
    assert_eq!(active.status, RunStatus::Running);

    let end = RunEnd::Verdict(verdict(true));
    assert!(
        s.finish_run(first.id, "w1", &end, "1.0.0", 2_000)
            .await
            .unwrap()
    );
    let Inserted::New(again) = s.insert_run(&new_run(&t, "k", 400)).await.unwrap() else {
        panic!("once the run finished, the same key queues a new run");
    };
    assert_ne!(again.id, first.id);
}

contract!(
    concurrent_inserts_with_one_key_queue_one_run,
    flavor = "multi_thread",
    worker_threads = 4
);
async fn concurrent_inserts_with_one_key_queue_one_run(db: TestDb) {
    let t = target(db.store.as_ref(), "t").await;
    let barrier = Arc::new(Barrier::new(8));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (store, barrier, t) = (db.store.clone(), barrier.clone(), t.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                store.insert_run(&new_run(&t, "same", 100)).await
            })
        })
        .collect();
    let mut new = Vec::new();
    let mut active = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(Inserted::New(r)) => new.push(r.id),
            Ok(Inserted::Active(r)) => active.push(r.id),
            Err(e) => panic!("insert failed: {e}"),
        }
    }
    assert_eq!(new.len(), 1, "exactly one insert queues a run");
    assert!(
        active.iter().all(|id| *id == new[0]),
        "the others get that run"
    );
}

contract!(latest_finished_respects_since_and_ignores_errors);
async fn latest_finished_respects_since_and_ignores_errors(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let passed = finished_run(s, &t, "k", 100, RunEnd::Verdict(verdict(true)), 1_000).await;
    finished_run(
        s,
        &t,
        "k",
        2_000,
        RunEnd::Error("target unreachable".into()),
        3_000,
    )
    .await;
    finished_run(s, &t, "other", 4_000, RunEnd::Verdict(verdict(true)), 5_000).await;

    let latest = s.latest_finished("k", 0).await.unwrap().map(|r| r.id);
    assert_eq!(latest, Some(passed.id), "error runs are not results");
    let latest = s.latest_finished("k", 1_000).await.unwrap().map(|r| r.id);
    assert_eq!(latest, Some(passed.id), "since is inclusive");
    assert_eq!(
        s.latest_finished("k", 1_001).await.unwrap(),
        None,
        "too old"
    );

    let failed = finished_run(s, &t, "k", 6_000, RunEnd::Verdict(verdict(false)), 7_000).await;
    let latest = s.latest_finished("k", 0).await.unwrap().map(|r| r.id);
    assert_eq!(
        latest,
        Some(failed.id),
        "a failed run is a result too, the newest wins"
    );
}

contract!(claim_takes_oldest_available_run);
async fn claim_takes_oldest_available_run(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let newer = queue(s, &t, "k2", 200).await;
    let older = queue(s, &t, "k1", 100).await;
    let future = queue(s, &t, "k3", 5_000).await;

    assert_eq!(
        claim(s, "w", 50).await,
        None,
        "nothing is available before it is created"
    );
    let first = claim(s, "w", 1_000).await.expect("claim");
    assert_eq!(first.id, older.id, "oldest first");

    let reason = "retry later";
    assert!(
        s.requeue_run(first.id, "w", reason, 3_000, true)
            .await
            .unwrap()
    );
    let second = claim(s, "w", 1_000).await.expect("claim");
    assert_eq!(second.id, newer.id, "a run in backoff is skipped");
    assert_eq!(
        claim(s, "w", 1_000).await,
        None,
        "nothing else is available yet"
    );

    let third = claim(s, "w", 3_000).await.expect("claim");
    assert_eq!(third.id, older.id, "available again after its backoff");
    let fourth = claim(s, "w", 5_000).await.expect("claim");
    assert_eq!(fourth.id, future.id);
    assert_eq!(claim(s, "w", 10_000).await, None, "queue empty");
}

contract!(claims_rotate_between_submitters);
/// #31 item 4: the run of the submitter with the fewest runs running goes
/// first, so one submitter's queue of many runs does not hold another's.
async fn claims_rotate_between_submitters(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let by = |who: &str| protocheck::store::RunOrigin {
        submitter: Some(who.to_owned()),
        ..protocheck::store::RunOrigin::default()
    };
    let mut flood = Vec::new();
    for n in 0..5 {
        let new = new_run(&t, &format!("a{n}"), 100 + n);
        match s
            .insert_run_from(&new, &by("a:flood"))
            .await
            .expect("insert")
        {
            Inserted::New(run) => flood.push(run.id),
            other => panic!("{other:?}"),
        }
    }
    let late = match s
        .insert_run_from(&new_run(&t, "b0", 500), &by("a:late"))
        .await
        .expect("insert")
    {
        Inserted::New(run) => run.id,
        other => panic!("{other:?}"),
    };
    let first = claim(s, "w1", 1_000).await.expect("claim");
    assert_eq!(first.id, flood[0], "the oldest first while nobody runs");
    let second = claim(s, "w2", 1_000).await.expect("claim");
    assert_eq!(
        second.id, late,
        "the submitter with nothing running goes before the one with a run running"
    );
    let third = claim(s, "w3", 1_000).await.expect("claim");
    assert_eq!(third.id, flood[1], "then the flood, oldest first");
}

contract!(claim_counts_attempts_and_sets_started_at_once);
async fn claim_counts_attempts_and_sets_started_at_once(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let queued = queue(s, &t, "k", 100).await;
    assert_eq!(queued.started_at_ms, None);

    let first = claim(s, "w1", 1_000).await.expect("claim");
    assert_eq!(first.status, RunStatus::Running);
    assert_eq!(first.attempts, 1);
    assert_eq!(first.locked_by.as_deref(), Some("w1"));
    assert_eq!(first.lease_expires_at_ms, Some(1_000 + LEASE_MS));
    assert_eq!(first.started_at_ms, Some(1_000));
    assert_eq!(
        run(s, queued.id).await,
        first,
        "the claim returns the stored run"
    );

    assert!(
        s.requeue_run(queued.id, "w1", "crashed", 1_500, true)
            .await
            .unwrap()
    );
    let second = claim(s, "w2", 2_000).await.expect("claim");
    assert_eq!(second.attempts, 2);
    assert_eq!(second.locked_by.as_deref(), Some("w2"));
    assert_eq!(
        second.started_at_ms,
        Some(1_000),
        "started_at is the first claim"
    );
    assert_eq!(
        second.error.as_deref(),
        Some("crashed"),
        "why it was retried"
    );
}

contract!(
    concurrent_claimers_never_share_a_run,
    flavor = "multi_thread",
    worker_threads = 4
);
async fn concurrent_claimers_never_share_a_run(db: TestDb) {
    let t = target(db.store.as_ref(), "t").await;
    let mut queued = HashSet::new();
    for i in 0..5 {
        queued.insert(
            queue(db.store.as_ref(), &t, &format!("k{i}"), 100 + i)
                .await
                .id,
        );
    }
    let barrier = Arc::new(Barrier::new(8));
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (store, barrier) = (db.store.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                store.claim_run(&format!("w{i}"), 1_000, LEASE_MS).await
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(Some(run)) => claimed.push(run),
            Ok(None) => {}
            Err(e) => panic!("claim failed: {e}"),
        }
    }
    let ids: HashSet<_> = claimed.iter().map(|r| r.id).collect();
    assert_eq!(claimed.len(), 5, "every run is claimed once");
    assert_eq!(ids, queued, "no run is claimed twice");
    for r in &claimed {
        let stored = run(db.store.as_ref(), r.id).await;
        assert_eq!(
            stored.locked_by, r.locked_by,
            "the stored holder is the claimer"
        );
        assert_eq!(stored.attempts, 1);
    }
}

contract!(heartbeat_extends_only_the_holders_lease);
async fn heartbeat_extends_only_the_holders_lease(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let queued = queue(s, &t, "k", 100).await;
    claim(s, "w1", 1_000).await.expect("claim");

    assert!(
        !s.heartbeat(queued.id, "w2", 2_000, LEASE_MS).await.unwrap(),
        "not w2's"
    );
    assert_eq!(
        run(s, queued.id).await.lease_expires_at_ms,
        Some(1_000 + LEASE_MS)
    );
    assert!(s.heartbeat(queued.id, "w1", 2_000, LEASE_MS).await.unwrap());
    assert_eq!(
        run(s, queued.id).await.lease_expires_at_ms,
        Some(2_000 + LEASE_MS)
    );
    assert!(
        !s.heartbeat(Uuid::new_v4(), "w1", 2_000, LEASE_MS)
            .await
            .unwrap(),
        "unknown run"
    );

    let end = RunEnd::Verdict(verdict(true));
    assert!(
        s.finish_run(queued.id, "w1", &end, "1.0.0", 3_000)
            .await
            .unwrap()
    );
    assert!(
        !s.heartbeat(queued.id, "w1", 4_000, LEASE_MS).await.unwrap(),
        "a finished run has no lease"
    );
}

contract!(finish_run_records_the_end);
async fn finish_run_records_the_end(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;

    let passed = finished_run(s, &t, "k1", 100, RunEnd::Verdict(verdict(true)), 1_000).await;
    assert_eq!(passed.status, RunStatus::Passed);
    assert_eq!(
        passed.verdict,
        Some(verdict(true)),
        "the verdict round-trips"
    );
    assert_eq!(passed.suite_version.as_deref(), Some("1.0.0"));
    assert_eq!(passed.finished_at_ms, Some(1_000));
    assert_eq!(passed.locked_by, None);
    assert_eq!(passed.lease_expires_at_ms, None);
    assert_eq!(passed.error, None);

    let failed = finished_run(s, &t, "k2", 200, RunEnd::Verdict(verdict(false)), 2_000).await;
    assert_eq!(failed.status, RunStatus::Failed);
    assert_eq!(failed.verdict, Some(verdict(false)));

    let reason = "target closed every connection";
    let errored = finished_run(s, &t, "k3", 300, RunEnd::Error(reason.into()), 3_000).await;
    assert_eq!(errored.status, RunStatus::Error);
    assert_eq!(errored.error.as_deref(), Some(reason));
    assert_eq!(errored.verdict, None);

    let end = RunEnd::Verdict(verdict(true));
    assert!(
        !s.finish_run(passed.id, "w-finish", &end, "1.0.0", 4_000)
            .await
            .unwrap(),
        "a finished run cannot end twice"
    );
    let id = queue(s, &t, "k4", 400).await.id;
    claim(s, "w1", 1_000).await.expect("claim");
    assert!(
        !s.finish_run(id, "w2", &end, "1.0.0", 4_000).await.unwrap(),
        "not w2's"
    );
    assert_eq!(run(s, id).await.status, RunStatus::Running);
}

contract!(requeue_run_counts_or_gives_back_the_attempt);
async fn requeue_run_counts_or_gives_back_the_attempt(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let id = queue(s, &t, "k", 100).await.id;
    claim(s, "w1", 1_000).await.expect("claim");

    assert!(
        !s.requeue_run(id, "w2", "x", 2_000, true).await.unwrap(),
        "not w2's"
    );
    assert!(
        s.requeue_run(id, "w1", "probe timed out", 2_000, true)
            .await
            .unwrap()
    );
    let requeued = run(s, id).await;
    assert_eq!(requeued.status, RunStatus::Queued);
    assert_eq!(requeued.attempts, 1, "the attempt counts");
    assert_eq!(requeued.available_at_ms, 2_000);
    assert_eq!(requeued.error.as_deref(), Some("probe timed out"));
    assert_eq!(requeued.locked_by, None);
    assert_eq!(requeued.lease_expires_at_ms, None);
    assert!(
        !s.requeue_run(id, "w1", "again", 2_000, true).await.unwrap(),
        "a queued run is held by no one"
    );

    assert_eq!(claim(s, "w2", 2_000).await.expect("claim").attempts, 2);
    assert!(
        s.requeue_run(id, "w2", "shutting down", 2_000, false)
            .await
            .unwrap()
    );
    let given_back = run(s, id).await;
    assert_eq!(
        given_back.attempts, 1,
        "a graceful shutdown gives the attempt back"
    );
    assert_eq!(given_back.error.as_deref(), Some("shutting down"));
    assert_eq!(claim(s, "w3", 2_000).await.expect("claim").attempts, 2);
}

contract!(reap_expired_requeues_then_ends_as_error);
async fn reap_expired_requeues_then_ends_as_error(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let mut doomed = new_run(&t, "k", 100);
    doomed.max_attempts = 2;
    let Inserted::New(doomed) = s.insert_run(&doomed).await.unwrap() else {
        panic!("new run");
    };
    claim(s, "w1", 1_000).await.expect("claim");
    let healthy = queue(s, &t, "k-healthy", 200).await.id;
    claim(s, "w-healthy", 1_000).await.expect("claim");
    let expiry = 1_000 + LEASE_MS;
    assert!(
        s.heartbeat(healthy, "w-healthy", expiry, LEASE_MS)
            .await
            .unwrap()
    );

    let none = s.reap_expired(expiry, 500).await.unwrap();
    assert_eq!(
        none,
        ReapReport::default(),
        "a lease is good until it expires"
    );

    let first = s.reap_expired(expiry + 1, 500).await.unwrap();
    assert_eq!(
        first,
        ReapReport {
            requeued: 1,
            errored: 0
        }
    );
    let requeued = run(s, doomed.id).await;
    assert_eq!(requeued.status, RunStatus::Queued);
    assert_eq!(
        requeued.available_at_ms,
        expiry + 1 + 500,
        "after the backoff"
    );
    assert_eq!(requeued.locked_by, None);
    assert_eq!(
        requeued.error.as_deref(),
        Some("lease expired (worker w1 stopped responding); retrying")
    );
    assert_eq!(
        run(s, healthy).await.status,
        RunStatus::Running,
        "heartbeat kept it"
    );

    assert_eq!(claim(s, "w2", expiry + 1).await, None, "still backing off");
    let second = claim(s, "w2", expiry + 501).await.expect("claim");
    assert_eq!((second.id, second.attempts), (doomed.id, 2));

    let last = s
        .reap_expired(expiry + 501 + LEASE_MS + 1, 500)
        .await
        .unwrap();
    assert_eq!(last.errored, 1, "out of attempts");
    let errored = run(s, doomed.id).await;
    assert_eq!(errored.status, RunStatus::Error);
    assert_eq!(errored.finished_at_ms, Some(expiry + 501 + LEASE_MS + 1));
    assert_eq!(errored.locked_by, None);
    assert_eq!(
        errored.error.as_deref(),
        Some("lease expired after 2 attempts; last worker w2 stopped responding")
    );
    let quiet = s
        .reap_expired(expiry + 501 + LEASE_MS + 2, 500)
        .await
        .unwrap();
    assert_eq!(quiet.errored, 0, "an ended run is not reaped again");
}

contract!(target_runs_paginate_newest_first);
async fn target_runs_paginate_newest_first(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let other = target(s, "other").await;
    let mut runs = Vec::new();
    // Two runs share a creation time: the id breaks the tie.
    for (i, created) in [100, 200, 300, 300, 400, 500].into_iter().enumerate() {
        runs.push(queue(s, &t, &format!("k{i}"), created).await);
    }
    queue(s, &other, "elsewhere", 250).await;
    runs.sort_by(|x, y| {
        (y.created_at_ms, y.id.to_string()).cmp(&(x.created_at_ms, x.id.to_string()))
    });
    let expected: Vec<Uuid> = runs.iter().map(|r| r.id).collect();

    let mut seen = Vec::new();
    let mut cursor: Option<HistoryCursor> = None;
    let mut pages = 0;
    loop {
        let page = s.target_runs(&t, cursor.as_ref(), 4).await.unwrap();
        pages += 1;
        assert!(page.len() <= 4, "at most limit");
        let Some(last) = page.last() else { break };
        cursor = Some(HistoryCursor {
            created_at_ms: last.created_at_ms,
            id: last.id,
        });
        assert!(
            page.iter()
                .all(|r| r.target_id == t && r.target_url.contains("t."))
        );
        seen.extend(page.iter().map(|r| r.id));
    }
    assert_eq!(seen, expected, "every run once, newest first");
    assert_eq!(pages, 3, "4 + 2 + an empty page");
    assert!(s.target_runs("nobody", None, 10).await.unwrap().is_empty());
}

contract!(count_by_status_groups_runs);
async fn count_by_status_groups_runs(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    assert!(
        s.count_by_status()
            .await
            .unwrap()
            .iter()
            .all(|(_, n)| *n == 0),
        "empty"
    );

    finished_run(s, &t, "p1", 100, RunEnd::Verdict(verdict(true)), 1_000).await;
    finished_run(s, &t, "p2", 100, RunEnd::Verdict(verdict(true)), 1_000).await;
    finished_run(s, &t, "f", 100, RunEnd::Verdict(verdict(false)), 1_000).await;
    finished_run(s, &t, "e", 100, RunEnd::Error("boom".into()), 1_000).await;
    queue(s, &t, "r", 100).await;
    claim(s, "w", 1_000).await.expect("claim");
    queue(s, &t, "q1", 100).await;
    queue(s, &t, "q2", 100).await;

    let counts: HashMap<_, _> = s.count_by_status().await.unwrap().into_iter().collect();
    let expected = HashMap::from([
        (RunStatus::Queued, 2),
        (RunStatus::Running, 1),
        (RunStatus::Passed, 2),
        (RunStatus::Failed, 1),
        (RunStatus::Error, 1),
    ]);
    let counts: HashMap<_, _> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
    assert_eq!(counts, expected);
}

contract!(idempotency_keeps_the_first_record);
async fn idempotency_keeps_the_first_record(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let run_id = queue(s, &t, "k", 100).await.id;
    assert_eq!(s.get_idempotency("key-1").await.unwrap(), None);

    let first = IdempotencyRecord {
        key: "key-1".into(),
        request_hash: "aaaa".into(),
        run_id,
    };
    assert_eq!(s.put_idempotency(&first, 1_000).await.unwrap(), first);
    let second = IdempotencyRecord {
        key: "key-1".into(),
        request_hash: "bbbb".into(),
        run_id: Uuid::new_v4(),
    };
    assert_eq!(
        s.put_idempotency(&second, 2_000).await.unwrap(),
        first,
        "the key keeps what it was first stored with"
    );
    assert_eq!(s.get_idempotency("key-1").await.unwrap(), Some(first));
}

contract!(migrations_are_reversible);
async fn migrations_are_reversible(db: TestDb) {
    let s = db.store.as_ref();
    s.migrate().await.expect("migrating twice is a no-op");
    s.ping().await.unwrap();
    target(s, "t").await;

    s.migrate_down_all().await.expect("down to zero");
    assert!(s.get_target("t").await.is_err(), "the tables are gone");
    assert!(s.public_keys().await.is_err(), "the key table too");
    s.ping().await.expect("the database itself is still there");

    s.migrate().await.expect("up again");
    assert_eq!(s.get_target("t").await.unwrap(), None, "a fresh schema");
    let t = target(s, "t").await;
    let run = queue(s, &t, "k", 100).await;
    assert_eq!(claim(s, "w", 1_000).await.map(|r| r.id), Some(run.id));
}

/// Waits out any wake-ups already delivered (and the permit a wake may leave).
async fn drain(notify: &Notify) {
    while tokio::time::timeout(Duration::from_millis(200), notify.notified())
        .await
        .is_ok()
    {}
}

/// Cuts the work listener's connection from the server side, as a failover would.
async fn terminate_listener(url: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
    let terminated: i64 = sqlx::query_scalar(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND query LIKE 'LISTEN%'",
    )
    .fetch_one(&mut conn)
    .await
    .expect("terminate the listener");
    assert_eq!(terminated, 1, "exactly one listening connection");
}

contract!(listen_for_work_wakes_workers_on_postgres);
async fn listen_for_work_wakes_workers_on_postgres(db: TestDb) {
    let notify = Arc::new(Notify::new());
    let shutdown = CancellationToken::new();
    let listener = tokio::spawn({
        let (store, notify, shutdown) = (db.store.clone(), notify.clone(), shutdown.clone());
        async move { store.listen_for_work(notify, shutdown).await }
    });

    if db.store.backend() == Backend::Sqlite {
        let returned = tokio::time::timeout(PATIENCE, listener).await;
        assert!(returned.is_ok(), "no channel to listen on, returns at once");
        return;
    }

    // The listener wakes workers once it is listening: that says it is ready.
    tokio::time::timeout(PATIENCE, notify.notified())
        .await
        .expect("listener ready");
    drain(&notify).await;

    let s = db.store.as_ref();
    let t = target(s, "t").await;
    // Armed before the insert, as a worker arms before it polls.
    let woken = notify.notified();
    let id = queue(s, &t, "k", 100).await.id;
    tokio::time::timeout(PATIENCE, woken)
        .await
        .expect("an insert wakes workers");
    drain(&notify).await;

    claim(s, "w", 1_000).await.expect("claim");
    let woken = notify.notified();
    assert!(s.requeue_run(id, "w", "retry", 1_000, true).await.unwrap());
    tokio::time::timeout(PATIENCE, woken)
        .await
        .expect("a requeue wakes workers");
    drain(&notify).await;

    // Notifications sent while the listener is disconnected are lost, so it wakes
    // workers when it is back, and then goes on listening.
    let woken = notify.notified();
    terminate_listener(&db.url).await;
    tokio::time::timeout(PATIENCE, woken)
        .await
        .expect("a reconnect wakes workers");
    drain(&notify).await;
    let woken = notify.notified();
    queue(s, &t, "k2", 200).await;
    tokio::time::timeout(PATIENCE, woken)
        .await
        .expect("an insert after a reconnect wakes workers");

    shutdown.cancel();
    let stopped = tokio::time::timeout(PATIENCE, listener).await;
    assert!(stopped.is_ok(), "the listener returns on shutdown");
}

// The contract of the store's other parts.
mod announcements;
mod keys;
mod signing;
mod watches;
mod webhooks;
