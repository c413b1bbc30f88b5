//! What a watched target's run announces when it ends (#54): a transition
//! once, however close together two runs end; and nothing for a run that
//! lost its target part-way, which is also never the run compared with.

use super::*;
use protocheck::store::{EndRecord, NewWatch};
use protocheck::suite::{Finding, Outcome};
use protocheck::webhook::WatchAnnouncer;

/// Watches `target_id`'s RCP runs for both transitions, with a webhook.
async fn watched(store: &dyn Store, id: &str) -> String {
    let t = target(store, id).await;
    store
        .put_watch(&NewWatch {
            target_id: t.clone(),
            suite: "rcp".into(),
            options: RunOptions::default(),
            interval_ms: 3_600_000,
            first_due_at_ms: i64::MAX / 4,
            api_key: None,
            created_at_ms: 1,
            expires_at_ms: None,
            webhook_url: Some("https://hooks.example/watch".into()),
            events: vec!["run.regressed".into(), "run.recovered".into()],
        })
        .await
        .expect("watch");
    t
}

fn finding(rule: &str, outcome: Outcome, message: &str) -> Finding {
    Finding {
        rule_id: rule.into(),
        outcome,
        message: message.into(),
        evidence: Vec::new(),
        duration_ms: 1,
    }
}

/// Queues and claims a run of `t`, records `findings` and ends it with
/// `verdict` as a worker does; what its end announced.
async fn end_with(
    store: &dyn Store,
    run_id: Uuid,
    worker: &str,
    verdict: &Verdict,
    findings: &[Finding],
    now_ms: i64,
) -> usize {
    assert!(
        store
            .append_findings(run_id, worker, 1, 0, findings, now_ms)
            .await
            .expect("findings")
    );
    let end = RunEnd::Verdict(verdict.clone());
    let announcer = WatchAnnouncer::new(verdict, findings, None);
    let record = EndRecord {
        announcer: Some(&announcer),
        ..EndRecord::plain(&end, "1.0.0", now_ms)
    };
    store
        .end_run(run_id, worker, &record)
        .await
        .expect("end")
        .expect("the worker held the run")
}

async fn run_once(
    store: &dyn Store,
    t: &str,
    key: &str,
    v: &Verdict,
    f: &[Finding],
    at: i64,
) -> usize {
    let run = queue(store, t, key, at).await;
    let claimed = claim(store, "w", at).await.expect("claimed");
    assert_eq!(claimed.id, run.id);
    end_with(store, run.id, "w", v, f, at + 1).await
}

contract!(
    two_runs_ending_together_announce_a_transition_once,
    flavor = "multi_thread",
    worker_threads = 4
);
async fn two_runs_ending_together_announce_a_transition_once(db: TestDb) {
    let pass = [finding("RCP-L0-001", Outcome::Pass, "ok")];
    let fail = [finding("RCP-L0-001", Outcome::Fail, "the answer has no id")];
    for n in 0..20 {
        let s = db.store.clone();
        let t = watched(s.as_ref(), &format!("raced-{n}")).await;
        assert_eq!(
            run_once(s.as_ref(), &t, "before", &verdict(true), &pass, 100).await,
            0
        );
        // Two runs of the target, both running, end at the same moment.
        queue(s.as_ref(), &t, "a", 200).await;
        queue(s.as_ref(), &t, "b", 200).await;
        let a = claim(s.as_ref(), "wa", 201).await.expect("a run");
        let b = claim(s.as_ref(), "wb", 201).await.expect("another run");
        let barrier = Arc::new(Barrier::new(2));
        let ends: Vec<_> = [(a.id, "wa"), (b.id, "wb")]
            .into_iter()
            .map(|(id, worker)| {
                let (s, barrier, fail) = (s.clone(), barrier.clone(), fail.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    end_with(s.as_ref(), id, worker, &verdict(false), &fail, 300).await
                })
            })
            .collect();
        let mut announced = 0;
        for end in ends {
            announced += end.await.expect("join");
        }
        assert_eq!(
            announced,
            1,
            "{}: race {n}: the regression is announced by one of the two runs",
            db.name()
        );
    }
}

contract!(a_run_that_lost_its_target_is_not_a_regression_nor_compared_with);
async fn a_run_that_lost_its_target_is_not_a_regression_nor_compared_with(db: TestDb) {
    let s = db.store.as_ref();
    let t = watched(s, "restarted").await;
    let pass = [
        finding("RCP-L0-001", Outcome::Pass, "ok"),
        finding("RCP-L0-002", Outcome::Pass, "ok"),
    ];
    assert_eq!(run_once(s, &t, "1", &verdict(true), &pass, 100).await, 0);
    // The server restarted during the run: its later rules could not connect.
    let lost = [
        finding("RCP-L0-001", Outcome::Pass, "ok"),
        finding(
            "RCP-L0-002",
            Outcome::Fail,
            "could not connect: tcp connect error: Connection refused (os error 111)",
        ),
    ];
    assert_eq!(
        run_once(s, &t, "2", &verdict(false), &lost, 200).await,
        0,
        "{}: a run that lost its target is no regression",
        db.name()
    );
    // Back: compared with the run before the restart, nothing changed.
    assert_eq!(
        run_once(s, &t, "3", &verdict(true), &pass, 300).await,
        0,
        "{}: nor is the next run a recovery",
        db.name()
    );
    // A real break is still announced.
    let broken = [
        finding("RCP-L0-001", Outcome::Pass, "ok"),
        finding("RCP-L0-002", Outcome::Fail, "the answer has no id"),
    ];
    assert_eq!(
        run_once(s, &t, "4", &verdict(false), &broken, 400).await,
        1,
        "{}",
        db.name()
    );
}
