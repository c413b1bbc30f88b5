//! Watches: targets re-checked on a schedule (#28). Each due slot starts
//! exactly one run, however many schedulers tick at once.

use super::*;
use protocheck::store::NewWatch;
use std::sync::Arc;
use tokio::sync::Barrier;

const INTERVAL_MS: i64 = 3_600_000;

fn watch_of(target_id: &str, first_due_at_ms: i64) -> NewWatch {
    NewWatch {
        target_id: target_id.to_owned(),
        suite: "rcp".into(),
        options: RunOptions::default(),
        interval_ms: INTERVAL_MS,
        first_due_at_ms,
        api_key: None,
        created_at_ms: 1,
    }
}

contract!(a_watch_is_created_replaced_read_and_deleted);
async fn a_watch_is_created_replaced_read_and_deleted(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "watched").await;
    let first = s.put_watch(&watch_of(&t, 1_000)).await.expect("put");
    assert_eq!(
        (first.interval_ms, first.next_due_at_ms),
        (INTERVAL_MS, 1_000)
    );
    let mut wider = watch_of(&t, 5_000);
    wider.interval_ms = 2 * INTERVAL_MS;
    let replaced = s.put_watch(&wider).await.expect("put again");
    assert_eq!(replaced.id, first.id, "one watch per target and suite");
    assert_eq!(
        (replaced.interval_ms, replaced.next_due_at_ms),
        (2 * INTERVAL_MS, 5_000)
    );
    assert_eq!(
        s.get_watch(&t, "rcp").await.expect("get"),
        Some(replaced.clone())
    );
    assert_eq!(s.get_watch(&t, "mcp").await.expect("get"), None);
    assert!(s.delete_watch(&t, "rcp").await.expect("delete"));
    assert!(!s.delete_watch(&t, "rcp").await.expect("delete again"));
    assert_eq!(s.get_watch(&t, "rcp").await.expect("get"), None);
}

contract!(
    two_schedulers_ticking_together_start_one_run_per_slot,
    flavor = "multi_thread",
    worker_threads = 4
);
async fn two_schedulers_ticking_together_start_one_run_per_slot(db: TestDb) {
    let store = db.store.clone();
    let t0 = 10_000_000;
    for n in 0..100 {
        let t = target(store.as_ref(), &format!("watched-{n}")).await;
        // Spread over the minute before t0, as jitter spreads first slots.
        store
            .put_watch(&watch_of(&t, t0 - n * 600))
            .await
            .expect("watch");
    }
    // A watch due after both slots below.
    let later = target(store.as_ref(), "watched-later").await;
    store
        .put_watch(&watch_of(&later, t0 + 2 * INTERVAL_MS))
        .await
        .expect("watch");

    for slot in 0..2 {
        let now = t0 + slot * INTERVAL_MS;
        let barrier = Arc::new(Barrier::new(2));
        let mut ticks = Vec::new();
        for _ in 0..2 {
            let (store, barrier) = (store.clone(), barrier.clone());
            ticks.push(tokio::spawn(async move {
                barrier.wait().await;
                // Small batches, so that both schedulers take part.
                let mut started = Vec::new();
                loop {
                    let tick = store.start_due_watches(now, 7, 3).await.expect("tick");
                    assert!(tick.skipped.is_empty(), "{:?}", tick.skipped);
                    if tick.started.is_empty() {
                        return started;
                    }
                    started.extend(tick.started);
                }
            }));
        }
        let mut runs = Vec::new();
        for tick in ticks {
            runs.extend(tick.await.expect("join"));
        }
        let targets: HashSet<&str> = runs.iter().map(|r| r.target_id.as_str()).collect();
        assert_eq!(runs.len(), 100, "{}: slot {slot}", db.name());
        assert_eq!(targets.len(), 100, "{}: one run per watch", db.name());
        assert!(!targets.contains("watched-later"), "{}", db.name());
        assert!(
            runs.iter()
                .all(|r| r.status == RunStatus::Queued && r.suite == SuiteChoice::Rcp)
        );
        // The slot is taken: ticking again at the same moment starts nothing.
        let again = store.start_due_watches(now, 1000, 3).await.expect("tick");
        assert!(
            again.started.is_empty() && again.skipped.is_empty(),
            "{}",
            db.name()
        );
        // The runs end before the next slot (a worker would run them).
        for _ in &runs {
            let claimed = claim(store.as_ref(), "w", now + 1).await.expect("a run");
            assert!(
                store
                    .finish_run(claimed.id, "w", &RunEnd::Error("x".into()), "1", now + 2)
                    .await
                    .expect("finish")
            );
        }
    }
}

contract!(a_watch_whose_run_is_still_active_skips_its_slot);
async fn a_watch_whose_run_is_still_active_skips_its_slot(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "slow").await;
    s.put_watch(&watch_of(&t, 1_000)).await.expect("watch");
    let first = s.start_due_watches(1_000, 10, 3).await.expect("tick");
    assert_eq!(first.started.len(), 1);
    // The run is still queued at the next slot: no second run, the slot passes.
    let next = s
        .start_due_watches(1_000 + INTERVAL_MS, 10, 3)
        .await
        .expect("tick");
    assert!(next.started.is_empty());
    assert_eq!(next.skipped.len(), 1, "{}", db.name());
    // Missed slots are not caught up: the next one is an interval after now.
    let late = 1_000 + 10 * INTERVAL_MS;
    let watch = s.get_watch(&t, "rcp").await.expect("get").expect("watch");
    assert_eq!(watch.next_due_at_ms, 1_000 + 2 * INTERVAL_MS);
    let _ = s.start_due_watches(late, 10, 3).await.expect("tick");
    let watch = s.get_watch(&t, "rcp").await.expect("get").expect("watch");
    assert_eq!(watch.next_due_at_ms, late + INTERVAL_MS, "{}", db.name());
}
