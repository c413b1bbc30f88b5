//! Watches: targets re-checked on a schedule (#28). Each due slot starts
//! exactly one run, however many schedulers tick at once.

use super::*;
use protocheck::store::{HostBudget, NewWatch};
use std::sync::Arc;
use tokio::sync::Barrier;

const INTERVAL_MS: i64 = 3_600_000;
const NO_BUDGET: HostBudget = HostBudget {
    per_hour: 0,
    share: 0,
};

fn watch_of(target_id: &str, first_due_at_ms: i64) -> NewWatch {
    NewWatch {
        target_id: target_id.to_owned(),
        suite: "rcp".into(),
        options: RunOptions::default(),
        interval_ms: INTERVAL_MS,
        first_due_at_ms,
        api_key: None,
        created_at_ms: 1,
        expires_at_ms: None,
        webhook_url: None,
        events: Vec::new(),
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

    // The second scheduler has a pool of its own, as another process would.
    let other: Arc<dyn Store> = protocheck::store::connect(&db.url)
        .await
        .expect("a second pool");
    // Small batches, so that both schedulers take part.
    let cfg = protocheck::scheduler::ScheduleConfig {
        batch: 7,
        ..protocheck::scheduler::ScheduleConfig::default()
    };
    for slot in 0..2 {
        let now = t0 + slot * INTERVAL_MS;
        let barrier = Arc::new(Barrier::new(2));
        let mut ticks = Vec::new();
        for scheduler in [store.clone(), other.clone()] {
            let (barrier, cfg) = (barrier.clone(), cfg.clone());
            ticks.push(tokio::spawn(async move {
                barrier.wait().await;
                let tick = protocheck::scheduler::tick(scheduler.as_ref(), &cfg, now)
                    .await
                    .expect("tick");
                assert!(tick.skipped.is_empty(), "{:?}", tick.skipped);
                tick.started
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
        let again = store
            .start_due_watches(now, 1000, 3, NO_BUDGET)
            .await
            .expect("tick");
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
    let first = s
        .start_due_watches(1_000, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    assert_eq!(first.started.len(), 1);
    // The run is still queued at the next slot: no second run, the slot passes.
    let next = s
        .start_due_watches(1_000 + INTERVAL_MS, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    assert!(next.started.is_empty());
    assert_eq!(next.skipped.len(), 1, "{}", db.name());
    // Missed slots are not caught up: the next one is an interval after now.
    let late = 1_000 + 10 * INTERVAL_MS;
    let watch = s.get_watch(&t, "rcp").await.expect("get").expect("watch");
    assert_eq!(watch.next_due_at_ms, 1_000 + 2 * INTERVAL_MS);
    let _ = s
        .start_due_watches(late, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    let watch = s.get_watch(&t, "rcp").await.expect("get").expect("watch");
    assert_eq!(watch.next_due_at_ms, late + INTERVAL_MS, "{}", db.name());
}

contract!(a_scheduler_that_was_down_keeps_each_watch_on_its_beat);
async fn a_scheduler_that_was_down_keeps_each_watch_on_its_beat(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "beat").await;
    s.put_watch(&watch_of(&t, 1_000)).await.expect("watch");
    // Three and a half intervals late: one run, the slot it took, and the
    // next slot on the watch's own beat (not an interval after now).
    let now = 1_000 + 7 * INTERVAL_MS / 2;
    let tick = s
        .start_due_watches(now, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    assert_eq!(tick.started.len(), 1, "{}", db.name());
    assert_eq!(tick.lateness_ms, vec![now - 1_000], "{}", db.name());
    assert_eq!(
        tick.next_due_at_ms,
        Some(1_000 + 4 * INTERVAL_MS),
        "{}: the next tick with work",
        db.name()
    );
    let watch = s.get_watch(&t, "rcp").await.expect("get").expect("watch");
    assert_eq!(watch.last_due_at_ms, Some(1_000), "{}", db.name());
    assert_eq!(
        watch.next_due_at_ms,
        1_000 + 4 * INTERVAL_MS,
        "{}",
        db.name()
    );
}

contract!(scheduled_runs_keep_within_a_hosts_hourly_budget_and_share);
async fn scheduled_runs_keep_within_a_hosts_hourly_budget_and_share(db: TestDb) {
    let s = db.store.as_ref();
    for budget in [
        // The host's hour is spent after two runs.
        HostBudget {
            per_hour: 2,
            share: 2,
        },
        // The schedule's share is one run, whatever the host's budget.
        HostBudget {
            per_hour: 10,
            share: 1,
        },
    ] {
        let host = format!("shared-{}.example", budget.per_hour);
        let mut ids = Vec::new();
        for n in 0..3 {
            let id = format!("{host}-{n}");
            s.upsert_target(&id, &format!("https://{host}/rcp/{n}"), 1)
                .await
                .expect("target");
            s.put_watch(&watch_of(&id, 1_000 + n)).await.expect("watch");
            ids.push(id);
        }
        let tick = s
            .start_due_watches(10_000, 10, 3, budget)
            .await
            .expect("tick");
        let allowed = usize::try_from(budget.share.min(budget.per_hour)).unwrap();
        assert_eq!(tick.started.len(), allowed, "{}: {budget:?}", db.name());
        assert_eq!(tick.over_budget.len(), 3 - allowed, "{}", db.name());
        // The earliest slots went first.
        let started: Vec<&str> = tick.started.iter().map(|r| r.target_id.as_str()).collect();
        assert_eq!(started, ids[..allowed].to_vec(), "{}", db.name());
        for id in &ids {
            assert!(s.delete_watch(id, "rcp").await.expect("delete"));
        }
    }
}

contract!(a_badges_watch_is_extended_never_overrides_a_keys_and_ends);
async fn a_badges_watch_is_extended_never_overrides_a_keys_and_ends(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "badged").await;
    let mut badge = watch_of(&t, 1_000);
    badge.expires_at_ms = Some(50_000);
    s.keep_badge_watch(&badge).await.expect("keep");
    let kept = s.get_watch(&t, "rcp").await.expect("get").expect("watch");
    assert_eq!(
        (kept.expires_at_ms, kept.api_key),
        (Some(50_000), None),
        "{}",
        db.name()
    );
    // Served again: the end moves, the slot stays.
    badge.expires_at_ms = Some(90_000);
    badge.first_due_at_ms = 7_000;
    s.keep_badge_watch(&badge).await.expect("keep again");
    let kept = s.get_watch(&t, "rcp").await.expect("get").expect("watch");
    assert_eq!(
        (kept.id, kept.expires_at_ms, kept.next_due_at_ms),
        (kept.id, Some(90_000), 1_000),
        "{}",
        db.name()
    );
    // A key's watch replaces it and is not touched by the badge after.
    let mut asked = watch_of(&t, 2_000);
    asked.webhook_url = Some("https://hooks.example/x".into());
    asked.events = vec!["run.regressed".into()];
    let asked = s.put_watch(&asked).await.expect("put");
    s.keep_badge_watch(&badge).await.expect("keep after");
    assert_eq!(
        s.get_watch(&t, "rcp").await.expect("get"),
        Some(asked),
        "{}",
        db.name()
    );

    // A badge's watch past its end is removed at the next tick, unrun.
    let gone = target(s, "forgotten").await;
    let mut old = watch_of(&gone, 1_000);
    old.expires_at_ms = Some(5_000);
    s.keep_badge_watch(&old).await.expect("keep");
    let tick = s
        .start_due_watches(6_000, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    assert!(
        tick.started.iter().all(|r| r.target_id != gone),
        "{}",
        db.name()
    );
    assert_eq!(s.get_watch(&gone, "rcp").await.expect("get"), None);
}

contract!(a_scheduled_run_waits_behind_runs_people_submitted);
async fn a_scheduled_run_waits_behind_runs_people_submitted(db: TestDb) {
    let s = db.store.as_ref();
    let watched = target(s, "scheduled").await;
    s.put_watch(&watch_of(&watched, 1_000))
        .await
        .expect("watch");
    let tick = s
        .start_due_watches(1_000, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    assert_eq!(tick.started.len(), 1);
    // Queued after the scheduled run, claimed before it.
    let other = target(s, "submitted").await;
    let submitted = queue(s, &other, "people", 2_000).await;
    let first = claim(s, "w", 3_000).await.expect("a run");
    assert_eq!(first.id, submitted.id, "{}", db.name());
    let second = claim(s, "w", 3_000).await.expect("a run");
    assert_eq!(second.id, tick.started[0].id, "{}", db.name());
}
