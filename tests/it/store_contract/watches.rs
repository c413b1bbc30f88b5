//! Watches: targets re-checked on a schedule (#28). Each due slot starts
//! exactly one run, however many schedulers tick at once.

use super::*;
use protocheck::store::{HostBudget, KeyWatch, NewWatch};
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
        s.get_watch(&t, "rcp", None).await.expect("get"),
        Some(replaced.clone())
    );
    assert_eq!(s.get_watch(&t, "mcp", None).await.expect("get"), None);
    assert!(s.delete_watch(&t, "rcp", None).await.expect("delete"));
    assert!(!s.delete_watch(&t, "rcp", None).await.expect("delete again"));
    assert_eq!(s.get_watch(&t, "rcp", None).await.expect("get"), None);
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
    let watch = s
        .get_watch(&t, "rcp", None)
        .await
        .expect("get")
        .expect("watch");
    assert_eq!(watch.next_due_at_ms, 1_000 + 2 * INTERVAL_MS);
    let _ = s
        .start_due_watches(late, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    let watch = s
        .get_watch(&t, "rcp", None)
        .await
        .expect("get")
        .expect("watch");
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
    let watch = s
        .get_watch(&t, "rcp", None)
        .await
        .expect("get")
        .expect("watch");
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
            assert!(s.delete_watch(id, "rcp", None).await.expect("delete"));
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
    let kept = s
        .get_watch(&t, "rcp", None)
        .await
        .expect("get")
        .expect("watch");
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
    let kept = s
        .get_watch(&t, "rcp", None)
        .await
        .expect("get")
        .expect("watch");
    assert_eq!(
        (kept.id, kept.expires_at_ms, kept.next_due_at_ms),
        (kept.id, Some(90_000), 1_000),
        "{}",
        db.name()
    );
    // A key's watch stands beside it, and is not touched by the badge after.
    let key = watch_key(s, "beside", 10).await;
    let KeyWatch::Made(asked) = s.put_key_watch(&keyed(&t, key, 2_000), 10).await.unwrap() else {
        panic!("a new watch");
    };
    badge.expires_at_ms = Some(120_000);
    s.keep_badge_watch(&badge).await.expect("keep after");
    assert_eq!(
        s.get_watch(&t, "rcp", Some(key)).await.expect("get"),
        Some(asked),
        "{}",
        db.name()
    );
    assert_eq!(
        s.get_watch(&t, "rcp", None)
            .await
            .expect("get")
            .and_then(|w| w.expires_at_ms),
        Some(120_000),
        "{}",
        db.name()
    );
    // A watch without a key that does not end (an operator's) is not a
    // badge's to extend.
    let mut kept = watch_of(&t, 3_000);
    kept.webhook_url = Some("https://hooks.example/x".into());
    let kept = s.put_watch(&kept).await.expect("put");
    s.keep_badge_watch(&badge).await.expect("keep again");
    assert_eq!(
        s.get_watch(&t, "rcp", None).await.expect("get"),
        Some(kept),
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
    assert_eq!(s.get_watch(&gone, "rcp", None).await.expect("get"), None);
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

/// An API key, as the service makes one, that may keep `quota` watches.
async fn watch_key(store: &dyn Store, name: &str, quota: u32) -> Uuid {
    protocheck::api_keys::create_key_with_quota(
        store,
        name,
        None,
        "100/min".parse().expect("rate"),
        quota,
        1,
    )
    .await
    .expect("key")
    .key
    .id
}

fn keyed(target_id: &str, key: Uuid, first_due_at_ms: i64) -> NewWatch {
    NewWatch {
        api_key: Some(key),
        webhook_url: Some(format!("https://hooks.example/{key}")),
        events: vec!["run.regressed".into()],
        ..watch_of(target_id, first_due_at_ms)
    }
}

contract!(
    two_keys_watching_a_target_together_each_keep_their_own_watch,
    flavor = "multi_thread",
    worker_threads = 4
);
async fn two_keys_watching_a_target_together_each_keep_their_own_watch(db: TestDb) {
    let store = db.store.clone();
    let keys = [
        watch_key(store.as_ref(), "one", 1_000).await,
        watch_key(store.as_ref(), "two", 1_000).await,
    ];
    for n in 0..200 {
        let t = target(store.as_ref(), &format!("raced-{n}")).await;
        let barrier = Arc::new(Barrier::new(2));
        let puts: Vec<_> = keys
            .iter()
            .map(|&k| {
                let (store, barrier, new) = (store.clone(), barrier.clone(), keyed(&t, k, 1_000));
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.put_key_watch(&new, 1_000).await.expect("put")
                })
            })
            .collect();
        for (put, key) in puts.into_iter().zip(keys) {
            match put.await.expect("join") {
                KeyWatch::Made(w) => assert_eq!(w.api_key, Some(key), "{}", db.name()),
                other => panic!("{}: race {n}: {other:?}", db.name()),
            }
        }
        let owners: HashSet<_> = store
            .list_watches(Some(&t))
            .await
            .expect("list")
            .into_iter()
            .map(|w| (w.api_key, w.webhook_url))
            .collect();
        assert_eq!(
            owners,
            keys.iter()
                .map(|k| (Some(*k), Some(format!("https://hooks.example/{k}"))))
                .collect(),
            "{}: race {n}: two watches, each its key's with its own webhook",
            db.name()
        );
    }
}

contract!(a_keys_watch_is_its_own_beside_others_and_a_badges_and_ends_with_the_key);
async fn a_keys_watch_is_its_own_beside_others_and_a_badges_and_ends_with_the_key(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "shared").await;
    let (one, two) = (watch_key(s, "one", 10).await, watch_key(s, "two", 10).await);
    let mut badge = watch_of(&t, 1_000);
    badge.expires_at_ms = Some(50_000);
    s.keep_badge_watch(&badge).await.expect("badge");
    let KeyWatch::Made(first) = s.put_key_watch(&keyed(&t, one, 2_000), 10).await.unwrap() else {
        panic!("a new watch");
    };
    let KeyWatch::Made(_) = s.put_key_watch(&keyed(&t, two, 3_000), 10).await.unwrap() else {
        panic!("another key's watch is its own");
    };
    // Asked again with the same interval: replaced, on the same beat.
    let mut again = keyed(&t, one, 9_000);
    again.events = vec!["run.recovered".into()];
    let KeyWatch::Replaced(replaced) = s.put_key_watch(&again, 10).await.unwrap() else {
        panic!("the key's own watch is replaced");
    };
    assert_eq!(
        (
            replaced.id,
            replaced.next_due_at_ms,
            replaced.events.clone()
        ),
        (first.id, 2_000, vec!["run.recovered".to_owned()]),
        "{}",
        db.name()
    );
    assert_eq!(s.list_watches(Some(&t)).await.unwrap().len(), 3);
    assert_eq!(
        s.get_watch(&t, "rcp", None)
            .await
            .unwrap()
            .map(|w| w.expires_at_ms),
        Some(Some(50_000)),
        "{}: the badge's watch is untouched",
        db.name()
    );
    // A key ends only its own.
    assert!(s.delete_watch(&t, "rcp", Some(two)).await.unwrap());
    assert!(!s.delete_watch(&t, "rcp", Some(two)).await.unwrap());
    assert!(s.get_watch(&t, "rcp", Some(one)).await.unwrap().is_some());
    // An operator ends any by its id.
    let badge_id = s
        .get_watch(&t, "rcp", None)
        .await
        .unwrap()
        .expect("badge")
        .id;
    assert!(s.delete_watch_by_id(badge_id).await.unwrap());
    assert!(!s.delete_watch_by_id(badge_id).await.unwrap());
    // A revoked key's watches end with it.
    let other = target(s, "other").await;
    s.put_key_watch(&keyed(&other, one, 1_000), 10)
        .await
        .unwrap();
    assert_eq!(s.count_key_watches(one).await.unwrap(), 2);
    s.revoke_api_key("one", 5_000)
        .await
        .unwrap()
        .expect("revoked");
    assert_eq!(s.count_key_watches(one).await.unwrap(), 0, "{}", db.name());
    assert_eq!(s.list_watches(None).await.unwrap(), vec![], "{}", db.name());
}

contract!(
    a_keys_watches_stop_at_its_quota_even_when_asked_together,
    flavor = "multi_thread",
    worker_threads = 4
);
async fn a_keys_watches_stop_at_its_quota_even_when_asked_together(db: TestDb) {
    let store = db.store.clone();
    let key = watch_key(store.as_ref(), "small", 3).await;
    assert_eq!(
        store.get_api_key(key).await.unwrap().map(|k| k.watch_quota),
        Some(3)
    );
    let mut targets = Vec::new();
    for n in 0..8 {
        targets.push(target(store.as_ref(), &format!("quota-{n}")).await);
    }
    let barrier = Arc::new(Barrier::new(targets.len()));
    let puts: Vec<_> = targets
        .iter()
        .map(|t| {
            let (store, barrier, new) = (store.clone(), barrier.clone(), keyed(t, key, 1_000));
            tokio::spawn(async move {
                barrier.wait().await;
                store.put_key_watch(&new, 3).await.expect("put")
            })
        })
        .collect();
    let (mut made, mut refused) = (Vec::new(), 0);
    for put in puts {
        match put.await.expect("join") {
            KeyWatch::Made(w) => made.push(w.target_id),
            KeyWatch::OverQuota { quota, kept } => {
                assert_eq!((quota, kept), (3, 3), "{}", db.name());
                refused += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((made.len(), refused), (3, 5), "{}", db.name());
    assert_eq!(store.count_key_watches(key).await.unwrap(), 3);
    // At its quota, a key still changes the watches it keeps.
    let KeyWatch::Replaced(_) = store
        .put_key_watch(&keyed(&made[0], key, 1), 3)
        .await
        .unwrap()
    else {
        panic!("replaced");
    };
}

contract!(the_watchers_of_a_target_share_its_scheduled_run);
async fn the_watchers_of_a_target_share_its_scheduled_run(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "popular").await;
    for name in ["one", "two", "three"] {
        let key = watch_key(s, name, 10).await;
        s.put_key_watch(&keyed(&t, key, 1_000), 10).await.unwrap();
    }
    let tick = s
        .start_due_watches(2_000, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    assert_eq!(
        (tick.started.len(), tick.skipped.len()),
        (1, 2),
        "{}: one run for the three watchers due together",
        db.name()
    );
}

contract!(a_scheduled_run_carries_the_policy_its_target_was_accepted_under);
async fn a_scheduled_run_carries_the_policy_its_target_was_accepted_under(db: TestDb) {
    let s = db.store.as_ref();
    for (name, accepted) in [
        ("private-ok", Some(true)),
        ("public-only", Some(false)),
        ("never", None),
    ] {
        let t = target(s, name).await;
        if accepted.is_some() {
            let origin = protocheck::store::RunOrigin {
                private_targets: accepted,
                ..protocheck::store::RunOrigin::default()
            };
            s.insert_run_from(&new_run(&t, &format!("submitted-{name}"), 10), &origin)
                .await
                .expect("submitted run");
        }
        s.put_watch(&watch_of(&t, 1_000)).await.expect("watch");
    }
    let ticked = s
        .start_due_watches(1_000, 10, 3, NO_BUDGET)
        .await
        .expect("tick");
    // The submitted runs are still queued under other dedup keys; each watch
    // starts one run of its own.
    assert_eq!(ticked.started.len(), 3, "{}", db.name());
    for run in &ticked.started {
        let want = match run.target_id.as_str() {
            "private-ok" => Some(true),
            "public-only" => Some(false),
            _ => None,
        };
        assert_eq!(
            run.private_targets,
            want,
            "{}: {}",
            db.name(),
            run.target_id
        );
    }
}
