//! API keys.

use super::*;

fn new_api_key(name: &str, token_hash: &str, created_at_ms: i64) -> protocheck::store::NewApiKey {
    protocheck::store::NewApiKey {
        id: Uuid::now_v7(),
        name: name.to_string(),
        owner: None,
        token_hash: token_hash.to_string(),
        rate_count: 10,
        rate_period_s: 60,
        webhook_secret: format!("whsec_{name}"),
        created_at_ms,
        watch_quota: 100,
    }
}

contract!(api_keys_are_unique_among_live_ones_and_mark_their_runs);
async fn api_keys_are_unique_among_live_ones_and_mark_their_runs(db: TestDb) {
    let s = db.store.as_ref();
    let a = s
        .create_api_key(&new_api_key("ci", "h1", 10))
        .await
        .unwrap()
        .expect("created");
    assert_eq!(a.name, "ci");
    assert_eq!(a.display_owner(), "ci");
    assert_eq!((a.revoked_at_ms, a.last_used_at_ms), (None, None));
    assert_eq!(
        s.create_api_key(&new_api_key("ci", "h2", 11))
            .await
            .unwrap(),
        None,
        "a live key has the name"
    );
    assert_eq!(
        s.api_key_by_token_hash("h1").await.unwrap().map(|k| k.id),
        Some(a.id)
    );
    assert_eq!(s.api_key_by_token_hash("h2").await.unwrap(), None);
    assert_eq!(
        s.api_key_webhook_secret(a.id).await.unwrap().as_deref(),
        Some("whsec_ci")
    );
    s.touch_api_key(a.id, 20).await.unwrap();
    assert_eq!(
        s.get_api_key(a.id).await.unwrap().unwrap().last_used_at_ms,
        Some(20)
    );

    // A run records the key that submitted it; a deduplicated submit keeps the first.
    let t = target(s, "t").await;
    let keyed = match s
        .insert_run_as(&new_run(&t, "k1", 100), Some(a.id))
        .await
        .unwrap()
    {
        Inserted::New(run) => run,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        s.run_api_key(keyed.id).await.unwrap().map(|k| k.id),
        Some(a.id)
    );
    assert!(matches!(
        s.insert_run_as(&new_run(&t, "k1", 101), None).await.unwrap(),
        Inserted::Active(run) if run.id == keyed.id
    ));
    let anonymous = queue(s, &t, "k2", 102).await;
    assert_eq!(s.run_api_key(anonymous.id).await.unwrap(), None);

    // Revoking frees the name; an id is preferred to a name.
    let revoked = s.revoke_api_key(&a.id.to_string(), 30).await.unwrap();
    assert_eq!(revoked.map(|k| k.revoked_at_ms), Some(Some(30)));
    assert_eq!(s.revoke_api_key("ci", 31).await.unwrap(), None);
    let c = s
        .create_api_key(&new_api_key("ci", "h3", 40))
        .await
        .unwrap()
        .expect("the name is free again");
    let listed: Vec<_> = s
        .api_keys()
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.id)
        .collect();
    assert_eq!(listed, vec![a.id, c.id], "oldest first, revoked ones too");
    assert_eq!(
        s.run_api_key(keyed.id).await.unwrap().map(|k| k.id),
        Some(a.id),
        "a revoked key still names its runs"
    );
}

contract!(migrations_with_api_keys_are_reversible);
async fn migrations_with_api_keys_are_reversible(db: TestDb) {
    let s = db.store.as_ref();
    let key = s
        .create_api_key(&new_api_key("ci", "h1", 10))
        .await
        .unwrap()
        .expect("created");
    let t = target(s, "t").await;
    s.insert_run_as(&new_run(&t, "k", 100), Some(key.id))
        .await
        .unwrap();
    s.migrate_down_all().await.expect("down to zero");
    assert!(s.api_keys().await.is_err(), "the key table is gone");
    s.migrate().await.expect("up again");
    assert!(s.api_keys().await.unwrap().is_empty());
}
