//! The findings of a run in the `Store` contract: batches of them written under
//! the lease, numbered across batches, and what a batch costs the database.
//! Each body runs on SQLite and Postgres (see `store_contract::contract!`).

use crate::common::TestDb;
use crate::store_contract::{LEASE_MS, claim, contract, queue, target};
use protocheck::store::{FINDINGS_PER_STATEMENT, ReapReport, Store};
use protocheck::suite::{Exchange, Finding, Outcome, RequestRecord, ResponseRecord};
use uuid::Uuid;

fn finding(rule_id: &str, outcome: Outcome) -> Finding {
    Finding {
        rule_id: rule_id.to_string(),
        outcome,
        message: format!("{rule_id}: {}", outcome.as_str()),
        evidence: vec![Exchange {
            request: RequestRecord {
                line: "POST http://127.0.0.1:9/rcp/info".to_string(),
                headers: vec![("content-type".to_string(), "application/json".to_string())],
                body: "{}".to_string(),
            },
            response: Some(ResponseRecord {
                status: Some(200),
                headers: vec![],
                body: "{\"rcp\":\"1.0\"}".to_string(),
                truncated: false,
                elapsed_ms: 3,
            }),
            error: None,
        }],
        duration_ms: 4,
    }
}

async fn append(
    store: &dyn Store,
    run_id: Uuid,
    worker: &str,
    attempt: i32,
    seq: i64,
    rule_id: &str,
) -> bool {
    store
        .append_findings(
            run_id,
            worker,
            attempt,
            seq,
            &[finding(rule_id, Outcome::Pass)],
            10,
        )
        .await
        .expect("append finding")
}

async fn finding_rules(store: &dyn Store, run_id: Uuid, after_seq: i64) -> Vec<(i64, String)> {
    store
        .findings(run_id, after_seq)
        .await
        .expect("findings")
        .into_iter()
        .map(|f| (f.seq, f.finding.rule_id))
        .collect()
}

contract!(a_finding_needs_the_lease_and_the_current_attempt);
async fn a_finding_needs_the_lease_and_the_current_attempt(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let queued = queue(s, &t, "k", 100).await;
    assert!(
        !append(s, queued.id, "w1", 0, 0, "R-0").await,
        "a queued run takes none"
    );

    claim(s, "w1", 1_000).await.expect("claim");
    let stored = finding("RCP-L0-001", Outcome::Fail);
    assert!(
        s.append_findings(queued.id, "w1", 1, 0, std::slice::from_ref(&stored), 1_100)
            .await
            .unwrap(),
        "the holder appends"
    );
    assert!(
        !append(s, queued.id, "w2", 1, 1, "R-w2").await,
        "wrong worker"
    );
    assert!(
        !append(s, queued.id, "w1", 2, 1, "R-a2").await,
        "not the current attempt"
    );

    let findings = s.findings(queued.id, -1).await.unwrap();
    assert_eq!(findings.len(), 1, "only the accepted finding is stored");
    assert_eq!(findings[0].seq, 0);
    assert_eq!(findings[0].finding, stored, "the finding round-trips");
    assert_eq!(findings[0].created_at_ms, 1_100);

    assert!(
        s.requeue_run(queued.id, "w1", "lost", 2_000, true)
            .await
            .unwrap()
    );
    assert!(
        !append(s, queued.id, "w1", 1, 1, "R-late").await,
        "the lease is gone"
    );
}

contract!(findings_are_those_of_the_current_attempt);
async fn findings_are_those_of_the_current_attempt(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let id = queue(s, &t, "k", 100).await.id;

    claim(s, "w1", 1_000).await.expect("claim");
    for seq in 0..3 {
        assert!(append(s, id, "w1", 1, seq, &format!("A1-{seq}")).await);
    }
    assert_eq!(
        finding_rules(s, id, 0).await.len(),
        2,
        "after_seq is exclusive"
    );

    // The lease expires; another worker takes attempt 2 and starts afresh.
    let reaped = s.reap_expired(1_000 + LEASE_MS + 1, 0).await.unwrap();
    assert_eq!(
        reaped,
        ReapReport {
            requeued: 1,
            errored: 0
        }
    );
    let second = claim(s, "w2", 1_000 + LEASE_MS + 1).await.expect("claim");
    assert_eq!(second.attempts, 2);
    assert_eq!(finding_rules(s, id, -1).await, vec![], "attempt 1 is gone");
    assert!(
        !append(s, id, "w1", 1, 3, "A1-late").await,
        "the stale worker is refused"
    );
    for seq in 0..3 {
        assert!(append(s, id, "w2", 2, seq, &format!("A2-{seq}")).await);
    }
    let expected: Vec<_> = (1..3).map(|seq| (seq, format!("A2-{seq}"))).collect();
    assert_eq!(
        finding_rules(s, id, 0).await,
        expected,
        "in order, after seq 0"
    );

    // A graceful shutdown gives the attempt back: the next claim reuses its number
    // and must still start with no findings.
    assert!(
        s.requeue_run(id, "w2", "shutting down", 0, false)
            .await
            .unwrap()
    );
    let third = claim(s, "w3", 1_000 + LEASE_MS + 2).await.expect("claim");
    assert_eq!(third.attempts, 2, "the given-back attempt is reused");
    assert_eq!(finding_rules(s, id, -1).await, vec![], "no leftovers");
    assert!(
        append(s, id, "w3", 2, 0, "A3-0").await,
        "seq 0 is free again"
    );
    assert_eq!(
        finding_rules(s, id, -1).await,
        vec![(0, "A3-0".to_string())]
    );
}

/// `n` distinct findings, ruled `{prefix}-0`….
fn findings(prefix: &str, n: usize) -> Vec<Finding> {
    (0..n)
        .map(|i| finding(&format!("{prefix}-{i}"), Outcome::Pass))
        .collect()
}

async fn append_batch(
    store: &dyn Store,
    run_id: Uuid,
    worker: &str,
    attempt: i32,
    first_seq: i64,
    batch: &[Finding],
) -> bool {
    store
        .append_findings(run_id, worker, attempt, first_seq, batch, 20)
        .await
        .expect("append findings")
}

contract!(a_batch_is_stored_whole_and_in_order);
async fn a_batch_is_stored_whole_and_in_order(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let id = queue(s, &t, "k", 100).await.id;
    claim(s, "w1", 1_000).await.expect("claim");

    let batch = vec![
        finding("R-a", Outcome::Pass),
        finding("R-b", Outcome::Fail),
        finding("R-c", Outcome::Skip),
    ];
    assert!(
        s.append_findings(id, "w1", 1, 0, &batch, 1_500)
            .await
            .unwrap()
    );
    let stored = s.findings(id, -1).await.unwrap();
    let seqs: Vec<i64> = stored.iter().map(|f| f.seq).collect();
    assert_eq!(seqs, vec![0, 1, 2]);
    let round_trip: Vec<Finding> = stored.iter().map(|f| f.finding.clone()).collect();
    assert_eq!(round_trip, batch, "every finding round-trips, in order");
    assert!(stored.iter().all(|f| f.created_at_ms == 1_500));

    // Larger than one statement carries: several statements, one transaction.
    let big = findings("B", 2 * FINDINGS_PER_STATEMENT + 1);
    assert!(append_batch(s, id, "w1", 1, 3, &big).await);
    let stored = s.findings(id, 2).await.unwrap();
    assert_eq!(stored.len(), big.len());
    assert!(
        stored
            .iter()
            .zip(3..)
            .all(|(f, seq)| f.seq == seq && f.finding.rule_id == format!("B-{}", seq - 3))
    );
}

contract!(an_empty_batch_stores_nothing_and_says_whether_the_lease_is_held);
async fn an_empty_batch_stores_nothing_and_says_whether_the_lease_is_held(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let id = queue(s, &t, "k", 100).await.id;
    assert!(
        !append_batch(s, id, "w1", 0, 0, &[]).await,
        "a queued run is nobody's"
    );
    claim(s, "w1", 1_000).await.expect("claim");
    assert!(append_batch(s, id, "w1", 1, 0, &[]).await, "the holder");
    assert!(
        !append_batch(s, id, "w2", 1, 0, &[]).await,
        "another worker"
    );
    assert!(
        !append_batch(s, id, "w1", 2, 0, &[]).await,
        "another attempt"
    );
    assert!(
        !append_batch(s, Uuid::new_v4(), "w1", 1, 0, &[]).await,
        "an unknown run"
    );
    assert_eq!(finding_rules(s, id, -1).await, vec![]);
}

contract!(a_batch_from_a_worker_that_lost_its_lease_stores_nothing);
async fn a_batch_from_a_worker_that_lost_its_lease_stores_nothing(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let id = queue(s, &t, "k", 100).await.id;
    claim(s, "w1", 1_000).await.expect("claim");
    assert!(append_batch(s, id, "w1", 1, 0, &findings("A1", 2)).await);

    // The lease expires; another worker takes attempt 2.
    let reaped = s.reap_expired(1_000 + LEASE_MS + 1, 0).await.unwrap();
    assert_eq!(
        reaped,
        ReapReport {
            requeued: 1,
            errored: 0
        }
    );
    claim(s, "w2", 1_000 + LEASE_MS + 1).await.expect("claim");
    assert!(append_batch(s, id, "w2", 2, 0, &findings("A2", 2)).await);

    assert!(
        !append_batch(s, id, "w1", 1, 2, &findings("late", 3)).await,
        "the stale worker's batch is refused"
    );
    let big = findings("late-big", 2 * FINDINGS_PER_STATEMENT + 1);
    assert!(
        !append_batch(s, id, "w1", 1, 2, &big).await,
        "so is one of several statements"
    );
    assert!(
        !append_batch(s, id, "w1", 2, 2, &big).await,
        "the current attempt's number does not make w1 the holder"
    );
    assert_eq!(
        finding_rules(s, id, -1).await,
        vec![(0, "A2-0".to_string()), (1, "A2-1".to_string())],
        "only the holder's findings are stored"
    );
}

contract!(seqs_continue_across_batches_and_a_failed_batch_stores_nothing);
async fn seqs_continue_across_batches_and_a_failed_batch_stores_nothing(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let id = queue(s, &t, "k", 100).await.id;
    claim(s, "w1", 1_000).await.expect("claim");

    assert!(append_batch(s, id, "w1", 1, 0, &findings("first", 3)).await);
    assert!(append_batch(s, id, "w1", 1, 3, &findings("second", 2)).await);
    assert!(append_batch(s, id, "w1", 1, 5, &findings("third", 1)).await);
    assert_eq!(
        finding_rules(s, id, 2).await,
        vec![
            (3, "second-0".to_string()),
            (4, "second-1".to_string()),
            (5, "third-0".to_string()),
        ],
        "a reader that saw up to seq 2 gets the rest, in order"
    );

    // A batch that reuses a stored seq fails as a whole: its new seq 6 is not kept.
    let clash = s
        .append_findings(id, "w1", 1, 5, &findings("clash", 2), 20)
        .await;
    assert!(clash.is_err(), "seq 5 is taken: {clash:?}");
    let clash = s
        .append_findings(
            id,
            "w1",
            1,
            5,
            &findings("clash-big", FINDINGS_PER_STATEMENT + 2),
            20,
        )
        .await;
    assert!(clash.is_err(), "seq 5 is taken: {clash:?}");
    let stored = finding_rules(s, id, -1).await;
    assert_eq!(stored.len(), 6, "{stored:?}");
    assert_eq!(stored.last(), Some(&(5, "third-0".to_string())));
}

contract!(a_batch_costs_the_same_statements_whatever_its_size);
async fn a_batch_costs_the_same_statements_whatever_its_size(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let id = queue(s, &t, "k", 100).await.id;
    claim(s, "w1", 1_000).await.expect("claim");

    let mut seq = 0;
    let mut costs = Vec::new();
    for size in [1, 10, FINDINGS_PER_STATEMENT] {
        let before = s.statements();
        assert!(append_batch(s, id, "w1", 1, seq, &findings(&format!("n{size}"), size)).await);
        costs.push(s.statements() - before);
        seq += i64::try_from(size).unwrap();
    }
    assert_eq!(costs, vec![1, 1, 1], "one statement per batch");

    // Beyond one statement's worth: BEGIN, one INSERT per chunk, COMMIT.
    let before = s.statements();
    let big = findings("big", 2 * FINDINGS_PER_STATEMENT + 1);
    assert!(append_batch(s, id, "w1", 1, seq, &big).await);
    assert_eq!(s.statements() - before, 5);
}

/// The SQLite database holds every webhook secret: its file, and the WAL and
/// shared-memory files beside it, are readable by their owner only, whether
/// protocheck created the file or found it (#31: "create them 0600, like the
/// signing key").
#[tokio::test]
async fn the_sqlite_database_files_are_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let dir = tempfile::tempdir().expect("temp dir");
    // One created by protocheck, one found world-readable.
    let found = dir.path().join("found.db");
    std::fs::write(&found, b"").expect("create");
    std::fs::set_permissions(&found, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    for name in ["new.db", "found.db"] {
        let path = dir.path().join(name);
        let url = format!("sqlite://{}", path.display());
        let store = protocheck::store::connect(&url).await.expect("open sqlite");
        store.migrate().await.expect("migrate");
        for suffix in ["", "-wal", "-shm"] {
            let file = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
            if file.exists() {
                assert_eq!(mode(&file), 0o600, "{}", file.display());
            }
        }
        assert!(
            std::path::Path::new(&format!("{}-wal", path.display())).exists(),
            "WAL mode makes a -wal file, whose mode is checked above"
        );
    }
}
