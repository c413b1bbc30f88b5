//! Webhook deliveries, and the migrations that moved webhook URLs and stored suites.

use super::*;

fn webhook_run(target_id: &str, dedup_key: &str, created_at_ms: i64) -> NewRun {
    let mut new = new_run(target_id, dedup_key, created_at_ms);
    new.webhook_url = Some("https://hooks.example/h".to_string());
    new
}

contract!(webhook_deliveries_are_created_with_the_end_claimed_with_a_lease_and_recorded_once);
async fn webhook_deliveries_are_created_with_the_end_claimed_with_a_lease_and_recorded_once(
    db: TestDb,
) {
    use protocheck::store::{AttemptOutcome, WebhookAttempt};
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    // A run without a webhook gets no delivery.
    let plain = finished_run(s, &t, "plain", 10, RunEnd::Verdict(verdict(true)), 15).await;
    assert_eq!(s.run_webhook(plain.id).await.unwrap(), None);

    let run = match s.insert_run(&webhook_run(&t, "hooked", 20)).await.unwrap() {
        Inserted::New(run) => run,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        s.run_webhook(run.id).await.unwrap(),
        None,
        "not before the end"
    );
    claim(s, "w", 30).await.expect("claimed");
    assert!(
        s.finish_run(run.id, "w", &RunEnd::Verdict(verdict(false)), "1", 40)
            .await
            .unwrap()
    );
    let (d, attempts) = s.run_webhook(run.id).await.unwrap().expect("a delivery");
    assert_eq!(
        (
            d.url.as_str(),
            d.state.as_str(),
            d.attempts,
            d.next_attempt_at_ms
        ),
        ("https://hooks.example/h", "pending", 0, Some(40))
    );
    assert!(attempts.is_empty());

    // Due at 40; claimed once per lease.
    assert_eq!(s.claim_webhook_delivery(39, 100).await.unwrap(), None);
    let c = s
        .claim_webhook_delivery(40, 100)
        .await
        .unwrap()
        .expect("due");
    assert_eq!(c.id, d.id);
    assert_eq!(
        s.claim_webhook_delivery(41, 100).await.unwrap(),
        None,
        "leased"
    );
    let again = s.claim_webhook_delivery(141, 100).await.unwrap();
    assert_eq!(again.map(|x| x.id), Some(d.id.clone()), "the lease expired");

    let first = WebhookAttempt {
        attempt: 1,
        at_ms: 150,
        status_code: Some(500),
        error: Some("the receiver answered HTTP 500".into()),
        next_attempt_at_ms: Some(1_000),
    };
    let retry = AttemptOutcome::RetryAt(1_000);
    assert!(
        s.record_webhook_attempt(&d.id, &first, retry)
            .await
            .unwrap()
    );
    assert!(
        !s.record_webhook_attempt(&d.id, &first, retry)
            .await
            .unwrap(),
        "an attempt is recorded once"
    );
    assert_eq!(s.claim_webhook_delivery(999, 100).await.unwrap(), None);
    let c = s
        .claim_webhook_delivery(1_000, 100)
        .await
        .unwrap()
        .expect("due");
    assert_eq!(c.attempts, 1);
    let second = WebhookAttempt {
        attempt: 2,
        at_ms: 1_010,
        status_code: Some(204),
        error: None,
        next_attempt_at_ms: None,
    };
    assert!(
        s.record_webhook_attempt(&d.id, &second, AttemptOutcome::Delivered)
            .await
            .unwrap()
    );
    let (d, attempts) = s.run_webhook(run.id).await.unwrap().unwrap();
    assert_eq!((d.state.as_str(), d.attempts), ("delivered", 2));
    assert_eq!(attempts, vec![first, second]);
    assert_eq!(
        s.claim_webhook_delivery(i64::MAX / 2, 100).await.unwrap(),
        None
    );

    // A run the reaper ends as `error` is announced too.
    let reaped = match s
        .insert_run(&webhook_run(&t, "reaped", 2_000))
        .await
        .unwrap()
    {
        Inserted::New(run) => run,
        other => panic!("{other:?}"),
    };
    for n in 0..3 {
        let now = 3_000 + n * 100_000;
        claim(s, "w", now).await.expect("claimed");
        s.reap_expired(now + LEASE_MS + 1, 0).await.unwrap();
    }
    assert_eq!(run_status(s, reaped.id).await, RunStatus::Error);
    let (d, _) = s.run_webhook(reaped.id).await.unwrap().expect("announced");
    assert_eq!(d.state, DeliveryState::Pending);
}

async fn run_status(store: &dyn Store, id: Uuid) -> RunStatus {
    run(store, id).await.status
}

/// Runs one statement against the test database behind the store's back.
/// Runs `$body` with `$conn` bound to a new raw connection to `$db`'s
/// database, of the backend's own connection type.
macro_rules! on_raw_connection {
    ($db:expr, |$conn:ident| $body:expr) => {{
        use sqlx::Connection;
        match $db.store.backend() {
            Backend::Sqlite => {
                let mut $conn = sqlx::SqliteConnection::connect(&$db.url)
                    .await
                    .expect("sqlite");
                $body
            }
            Backend::Postgres => {
                let mut $conn = sqlx::PgConnection::connect(&$db.url)
                    .await
                    .expect("postgres");
                $body
            }
        }
    }};
}

async fn execute_raw(db: &TestDb, sql: &str) {
    on_raw_connection!(db, |conn| {
        sqlx::query(sql).execute(&mut conn).await.expect(sql);
    })
}

contract!(a_stored_suite_that_names_no_suite_is_corrupt);
async fn a_stored_suite_that_names_no_suite_is_corrupt(db: TestDb) {
    use protocheck::store::StoreError;
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let run = queue(s, &t, "queued", 20).await;
    // A stored suite that names no suite is refused when the run is read, so a
    // worker never runs it as something it did not ask for.
    execute_raw(
        &db,
        &format!("UPDATE runs SET suite = 'nope' WHERE id = '{}'", run.id),
    )
    .await;
    assert!(
        matches!(s.get_run(run.id).await, Err(StoreError::Corrupt(m)) if m.contains("nope")),
        "{}",
        db.name()
    );
    execute_raw(
        &db,
        &format!("UPDATE runs SET suite = 'mcp' WHERE id = '{}'", run.id),
    )
    .await;
    assert_eq!(self::run(s, run.id).await.suite, SuiteChoice::Mcp);
}

/// Reverts the migration that gave runs their `webhook_url` column, and only it.
async fn undo_webhook_column(db: &TestDb) {
    // The last migration kept: 0004 on SQLite, 0005 on Postgres.
    let (migrator, keep) = match db.store.backend() {
        Backend::Sqlite => (&protocheck::store::sqlite::MIGRATOR, 4),
        Backend::Postgres => (&protocheck::store::postgres::MIGRATOR, 5),
    };
    on_raw_connection!(db, |conn| migrator.undo(&mut conn, keep).await)
        .expect("undo the webhook column");
}

async fn select_text(db: &TestDb, sql: &str) -> String {
    on_raw_connection!(db, |conn| sqlx::query_scalar(sql)
        .fetch_one(&mut conn)
        .await
        .expect(sql))
}

contract!(the_webhook_column_migration_moves_urls_both_ways);
async fn the_webhook_column_migration_moves_urls_both_ways(db: TestDb) {
    let s = db.store.as_ref();
    let t = target(s, "t").await;
    let hooked = match s.insert_run(&webhook_run(&t, "hooked", 10)).await {
        Ok(Inserted::New(run)) => run,
        other => panic!("expected a new run, got {other:?}"),
    };
    let plain = queue(s, &t, "plain", 20).await;

    // Down: the URL goes back into the options document, beside the options.
    undo_webhook_column(&db).await;
    let options = select_text(
        &db,
        &format!("SELECT options FROM runs WHERE id = '{}'", hooked.id),
    )
    .await;
    let doc: serde_json::Value = serde_json::from_str(&options).expect("options JSON");
    assert_eq!(
        doc["webhook_url"],
        "https://hooks.example/h",
        "{}",
        db.name()
    );
    assert_eq!(doc["profile"], "spec", "{}", db.name());
    let options = select_text(
        &db,
        &format!("SELECT options FROM runs WHERE id = '{}'", plain.id),
    )
    .await;
    assert!(!options.contains("webhook_url"), "{}: {options}", db.name());

    // Up: out of the options, into the column; runs without one are untouched.
    s.migrate().await.expect("up again");
    let back = run(s, hooked.id).await;
    assert_eq!(back.webhook_url.as_deref(), Some("https://hooks.example/h"));
    assert_eq!(back.options, hooked.options, "{}", db.name());
    let back = run(s, plain.id).await;
    assert_eq!(back.webhook_url, None, "{}", db.name());
    assert_eq!(back.options, plain.options, "{}", db.name());
}
