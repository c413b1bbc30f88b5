//! API keys: created through the store and through `protocheck keys`, stored
//! hashed, raising the submit limit above the per-address one, shown as the run's
//! owner, refused with 401 when unknown, malformed or revoked; `RateLimit-*`
//! headers on every submit answer. Every test runs on SQLite and on Postgres.

use crate::common;

use common::TestDb;
use common::app::TestApp;
use protocheck::api_keys::{self, KeyError, Rate, Refused};
use protocheck::store::Backend;
use serde_json::{Value, json};
use std::process::Command;

fn rate(s: &str) -> Rate {
    s.parse().expect("rate")
}

/// Every text column of every `api_keys` row, read straight from the database.
async fn raw_key_rows(db: &TestDb) -> Vec<String> {
    let sql = "SELECT id || ' ' || name || ' ' || COALESCE(owner, '') || ' ' || token_hash \
               || ' ' || webhook_secret FROM api_keys";
    match db.store.backend() {
        Backend::Sqlite => {
            let pool = sqlx::SqlitePool::connect(&db.url).await.expect("sqlite");
            sqlx::query_scalar(sql)
                .fetch_all(&pool)
                .await
                .expect("rows")
        }
        Backend::Postgres => {
            let pool = sqlx::PgPool::connect(&db.url).await.expect("postgres");
            sqlx::query_scalar(sql)
                .fetch_all(&pool)
                .await
                .expect("rows")
        }
    }
}

#[tokio::test]
async fn keys_are_stored_hashed_unique_by_name_and_revocable() {
    for db in common::all_backends().await {
        let (s, b) = (db.store.as_ref(), db.name());
        let created = api_keys::create_key(s, "ci", Some("Release team"), rate("60/h"), 1_000)
            .await
            .expect("create");
        assert!(api_keys::is_well_formed(&created.token), "{b}");
        assert!(created.webhook_secret.starts_with("whsec_"), "{b}");
        assert_eq!(created.key.display_owner(), "Release team", "{b}");
        assert_eq!(
            (created.key.rate_count, created.key.rate_period_s),
            (60, 3600)
        );

        // The token is never stored, only its SHA-256.
        let rows = raw_key_rows(&db).await;
        assert_eq!(rows.len(), 1, "{b}");
        assert!(!rows[0].contains(&created.token), "{b}: {}", rows[0]);
        assert!(
            rows[0].contains(&api_keys::hash_token(&created.token)),
            "{b}"
        );

        let header = format!("Bearer {}", created.token);
        let found = api_keys::authenticate(s, header.as_bytes()).await.unwrap();
        assert_eq!(found.map(|k| k.id), Ok(created.key.id), "{b}");
        assert_eq!(
            s.api_key_webhook_secret(created.key.id).await.unwrap(),
            Some(created.webhook_secret.clone()),
            "{b}"
        );

        // A live name is unique.
        let dup = api_keys::create_key(s, "ci", None, rate("1/s"), 2_000).await;
        assert!(matches!(dup, Err(KeyError::NameTaken(_))), "{b}: {dup:?}");
        let bad = api_keys::create_key(s, "white space", None, rate("1/s"), 2_000).await;
        assert!(matches!(bad, Err(KeyError::InvalidName(_))), "{b}: {bad:?}");

        // Revoked by name: the token stops working and the name is free again.
        let revoked = s
            .revoke_api_key("ci", 3_000)
            .await
            .unwrap()
            .expect("revoked");
        assert_eq!(revoked.revoked_at_ms, Some(3_000), "{b}");
        assert_eq!(s.revoke_api_key("ci", 3_001).await.unwrap(), None, "{b}");
        let found = api_keys::authenticate(s, header.as_bytes()).await.unwrap();
        assert_eq!(found.map(|k| k.id), Err(Refused::Revoked), "{b}");
        let again = api_keys::create_key(s, "ci", None, rate("5/m"), 4_000)
            .await
            .expect("the name of a revoked key may be reused");
        assert_eq!(
            again.key.display_owner(),
            "ci",
            "{b}: owner defaults to the name"
        );

        // Revoked by id.
        let by_id = s
            .revoke_api_key(&again.key.id.to_string(), 5_000)
            .await
            .unwrap();
        assert_eq!(by_id.map(|k| k.id), Some(again.key.id), "{b}");
        let listed = s.api_keys().await.unwrap();
        assert_eq!(listed.len(), 2, "{b}");
        assert!(listed.iter().all(|k| k.is_revoked()), "{b}");

        let unknown = format!("Bearer pck_{}", "A".repeat(32));
        let found = api_keys::authenticate(s, unknown.as_bytes()).await.unwrap();
        assert_eq!(found.map(|k| k.id), Err(Refused::Unknown), "{b}");
        let found = api_keys::authenticate(s, b"Bearer nope").await.unwrap();
        assert_eq!(found.map(|k| k.id), Err(Refused::Malformed), "{b}");
    }
}

fn header<'a>(resp: &'a reqwest::Response, name: &str) -> &'a str {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no {name} header: {:?}", resp.headers()))
}

fn header_n(resp: &reqwest::Response, name: &str) -> u64 {
    header(resp, name).parse().expect("a number")
}

async fn post(app: &TestApp, token: Option<&str>, body: &Value) -> reqwest::Response {
    let mut req = app.http.post(app.url("/api/v1/runs")).json(body);
    if let Some(t) = token {
        req = req.header("authorization", t);
    }
    req.send().await.expect("POST")
}

#[tokio::test]
async fn a_key_raises_the_limit_and_its_owner_is_shown_on_the_run() {
    for db in common::all_backends().await {
        let b = db.name();
        // Per address: 2 a minute. The key: 5 a minute.
        let app = TestApp::start(&db, 2).await;
        let created = api_keys::create_key(
            db.store.as_ref(),
            "ci",
            Some("Release team"),
            rate("5/min"),
            1,
        )
        .await
        .unwrap();
        let bearer = format!("Bearer {}", created.token);

        let mut keyed_run = None;
        for n in 0..5u64 {
            let body = json!({"url": format!("http://127.0.0.1:9/k{n}/rcp")});
            let resp = post(&app, Some(&bearer), &body).await;
            assert_eq!(resp.status(), 202, "{b}: keyed submission {n}");
            assert_eq!(header_n(&resp, "ratelimit-limit"), 5, "{b}");
            assert_eq!(header_n(&resp, "ratelimit-remaining"), 4 - n, "{b}");
            assert_eq!(header(&resp, "ratelimit-policy"), "5;w=60", "{b}");
            assert!(header_n(&resp, "ratelimit-reset") <= 60, "{b}");
            let doc: Value = resp.json().await.unwrap();
            assert_eq!(doc["owner"], "Release team", "{b}: {doc}");
            assert!(!doc.to_string().contains(&created.token), "{b}");
            keyed_run = doc["id"].as_str().map(str::to_owned);
        }
        let limited = post(
            &app,
            Some(&bearer),
            &json!({"url": "http://127.0.0.1:9/k5/rcp"}),
        )
        .await;
        assert_eq!(limited.status(), 429, "{b}: the key's sixth submission");
        assert_eq!(header_n(&limited, "ratelimit-remaining"), 0, "{b}");
        assert!(header_n(&limited, "retry-after") >= 1, "{b}");
        assert!(header_n(&limited, "ratelimit-reset") >= header_n(&limited, "retry-after"));
        let problem: Value = limited.json().await.unwrap();
        assert_eq!(problem["status"], 429, "{b}: {problem}");

        // The same address without the key still has its own two.
        for n in 0..2u64 {
            let resp = post(
                &app,
                None,
                &json!({"url": format!("http://127.0.0.1:9/a{n}/rcp")}),
            )
            .await;
            assert_eq!(resp.status(), 202, "{b}: anonymous submission {n}");
            assert_eq!(header_n(&resp, "ratelimit-limit"), 2, "{b}");
            assert_eq!(header_n(&resp, "ratelimit-remaining"), 1 - n, "{b}");
            assert_eq!(header(&resp, "ratelimit-policy"), "2;w=60", "{b}");
            let doc: Value = resp.json().await.unwrap();
            assert_eq!(
                doc["owner"],
                Value::Null,
                "{b}: anonymous runs have no owner"
            );
        }
        let resp = post(&app, None, &json!({"url": "http://127.0.0.1:9/a2/rcp"})).await;
        assert_eq!(resp.status(), 429, "{b}: the address's third submission");
        assert_eq!(header_n(&resp, "ratelimit-remaining"), 0, "{b}");

        // The run shows the owner, never the token.
        let keyed_run = keyed_run.expect("a keyed run");
        let (status, run) = app.get_json(&format!("/api/v1/runs/{keyed_run}")).await;
        assert_eq!(status, 200, "{b}");
        assert_eq!(run["owner"], "Release team", "{b}: {run}");
        assert!(!run.to_string().contains(&created.token), "{b}");
        let page = app.get_text(&format!("/runs/{keyed_run}")).await;
        assert!(
            page.contains("<dt>Submitted by</dt><dd>Release team (API key)</dd>"),
            "{b}: the run page shows the owner"
        );
        assert!(!page.contains(&created.token), "{b}");
        let key = db.store.get_api_key(created.key.id).await.unwrap().unwrap();
        assert!(key.last_used_at_ms.is_some(), "{b}: use is recorded");
    }
}

#[tokio::test]
async fn unknown_malformed_and_revoked_keys_get_401_not_anonymous_use() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let created = api_keys::create_key(db.store.as_ref(), "gone", None, rate("10/m"), 1)
            .await
            .unwrap();
        db.store
            .revoke_api_key("gone", 2)
            .await
            .unwrap()
            .expect("revoked");
        let body = json!({"url": "http://127.0.0.1:9/rcp"});
        let cases = [
            format!("Bearer pck_{}", "x".repeat(32)),
            "Bearer not-a-key".to_owned(),
            "Basic dXNlcjpwYXNz".to_owned(),
            "Bearer".to_owned(),
            format!("Bearer {}", created.token),
        ];
        for auth in &cases {
            let resp = post(&app, Some(auth), &body).await;
            assert_eq!(resp.status(), 401, "{b}: {auth}");
            assert_eq!(
                header(&resp, "www-authenticate"),
                r#"Bearer error="invalid_token""#,
                "{b}"
            );
            assert_eq!(header(&resp, "content-type"), "application/problem+json");
            let problem: Value = resp.json().await.unwrap();
            assert_eq!(problem["status"], 401, "{b}: {problem}");
            assert_eq!(problem["type"], "/problems/invalid-token", "{b}");
        }
        assert!(
            db.store.count_by_status().await.unwrap().is_empty(),
            "{b}: no run was queued"
        );
    }
}

fn protocheck(db: &TestDb, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_protocheck"))
        .env("DATABASE_URL", &db.url)
        .env("RUST_LOG", "warn")
        .args(args)
        .output()
        .expect("run protocheck")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keys_command_creates_lists_and_revokes() {
    for db in common::all_backends().await {
        let b = db.name();
        let out = tokio::task::block_in_place(|| {
            protocheck(
                &db,
                &[
                    "keys", "create", "--name", "ci", "--rate", "60/h", "--owner", "QA",
                ],
            )
        });
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{b}: {stdout}{}",
            text(&out.stderr)
        );
        assert!(stdout.contains("shown this once"), "{b}: {stdout}");
        let value_after = |label: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(label))
                .map(str::trim)
                .map(str::to_owned)
                .unwrap_or_else(|| panic!("{b}: no `{label}` in {stdout}"))
        };
        let token = value_after("token:");
        let secret = value_after("webhook signing secret:");
        assert!(api_keys::is_well_formed(&token), "{b}: {token}");

        let header = format!("Bearer {token}");
        let key = api_keys::authenticate(db.store.as_ref(), header.as_bytes())
            .await
            .unwrap()
            .expect("the printed token authenticates");
        assert_eq!(
            (key.name.as_str(), key.display_owner()),
            ("ci", "QA"),
            "{b}"
        );
        assert_eq!((key.rate_count, key.rate_period_s), (60, 3600), "{b}");
        assert_eq!(
            db.store.api_key_webhook_secret(key.id).await.unwrap(),
            Some(secret.clone()),
            "{b}"
        );

        let out = tokio::task::block_in_place(|| {
            protocheck(&db, &["keys", "create", "--name", "ci", "--rate", "1/s"])
        });
        assert_eq!(out.status.code(), Some(2), "{b}: a duplicate name");
        assert!(
            text(&out.stderr).contains("exists already"),
            "{b}: {}",
            text(&out.stderr)
        );

        for bad in ["60/fortnight", "0/h", "sixty/h", "60"] {
            let out = tokio::task::block_in_place(|| {
                protocheck(&db, &["keys", "create", "--name", "other", "--rate", bad])
            });
            assert_eq!(out.status.code(), Some(2), "{b}: rate {bad}");
            assert!(
                text(&out.stderr).contains("rate"),
                "{b}: {}",
                text(&out.stderr)
            );
        }

        let out = tokio::task::block_in_place(|| protocheck(&db, &["keys", "list"]));
        let listed = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{b}");
        assert!(
            listed.contains("ci") && listed.contains("60/h"),
            "{b}: {listed}"
        );
        assert!(listed.contains("active"), "{b}: {listed}");
        assert!(
            !listed.contains(&token) && !listed.contains(&secret),
            "{b}: {listed}"
        );
        assert!(
            !listed.contains(&api_keys::hash_token(&token)),
            "{b}: {listed}"
        );

        let out = tokio::task::block_in_place(|| protocheck(&db, &["keys", "revoke", "ci"]));
        assert_eq!(out.status.code(), Some(0), "{b}: {}", text(&out.stderr));
        let out = tokio::task::block_in_place(|| protocheck(&db, &["keys", "revoke", "ci"]));
        assert_eq!(out.status.code(), Some(2), "{b}: nothing left to revoke");
        let found = api_keys::authenticate(db.store.as_ref(), header.as_bytes())
            .await
            .unwrap();
        assert_eq!(found.map(|k| k.id), Err(Refused::Revoked), "{b}");
        let out = tokio::task::block_in_place(|| protocheck(&db, &["keys", "list"]));
        assert!(text(&out.stdout).contains("revoked"), "{b}");
    }
}

/// A key's watch quota is set when it is made and shown with it; an operator
/// sees every watch and ends any; a revoked key's watches end with it (#54).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_set_a_keys_watch_quota_see_every_watch_and_end_any() {
    for db in common::all_backends().await {
        let b = db.name();
        let run = |args: &[&str]| tokio::task::block_in_place(|| protocheck(&db, args));
        let out = run(&[
            "keys",
            "create",
            "--name",
            "ops",
            "--rate",
            "1/s",
            "--watch-quota",
            "5",
        ]);
        assert_eq!(out.status.code(), Some(0), "{b}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("watch quota: 5"), "{b}");
        let out = run(&[
            "keys",
            "create",
            "--name",
            "nope",
            "--rate",
            "1/s",
            "--watch-quota",
            "-1",
        ]);
        assert_eq!(out.status.code(), Some(2), "{b}: a negative quota");

        let key = db
            .store
            .api_keys()
            .await
            .unwrap()
            .into_iter()
            .find(|k| k.name == "ops")
            .expect("made");
        assert_eq!(key.watch_quota, 5, "{b}");
        let target = "0123456789abcdef00000001";
        db.store
            .upsert_target(target, "https://watched.example/rcp", 1)
            .await
            .unwrap();
        let new = protocheck::store::NewWatch {
            target_id: target.into(),
            suite: "rcp".into(),
            options: Default::default(),
            interval_ms: 3_600_000,
            first_due_at_ms: 1,
            api_key: Some(key.id),
            created_at_ms: 1,
            expires_at_ms: None,
            webhook_url: Some("https://hooks.example/secret-path".into()),
            events: vec!["run.regressed".into()],
        };
        db.store.put_key_watch(&new, 5).await.unwrap();
        let out = run(&["keys", "list"]);
        let listed = text(&out.stdout);
        assert!(
            listed.contains("WATCHES") && listed.contains("1/5"),
            "{b}: {listed}"
        );

        let out = run(&["watches", "list", "--target", target]);
        let listed = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{b}: {}", text(&out.stderr));
        assert!(
            listed.contains("key ops") && listed.contains(target),
            "{b}: {listed}"
        );
        assert!(!listed.contains("secret-path"), "{b}: {listed}");
        let id = db.store.list_watches(Some(target)).await.unwrap()[0]
            .id
            .to_string();
        assert!(listed.contains(&id), "{b}: {listed}");
        let out = run(&["watches", "remove", "not-a-watch"]);
        assert_eq!(out.status.code(), Some(2), "{b}");
        let out = run(&["watches", "remove", &id]);
        assert_eq!(out.status.code(), Some(0), "{b}: {}", text(&out.stderr));
        let out = run(&["watches", "remove", &id]);
        assert_eq!(out.status.code(), Some(2), "{b}: already gone");
        assert_eq!(db.store.list_watches(None).await.unwrap(), vec![], "{b}");

        // Revoked, the key's watches end.
        db.store.put_key_watch(&new, 5).await.unwrap();
        let out = run(&["keys", "revoke", "ops"]);
        assert_eq!(out.status.code(), Some(0), "{b}");
        assert_eq!(db.store.list_watches(None).await.unwrap(), vec![], "{b}");
        let out = run(&["watches", "list"]);
        assert!(text(&out.stdout).contains("no watches"), "{b}");
    }
}

/// An `Idempotency-Key` belongs to whoever sent it: another API key, or a
/// client without one, sending the same key is a request of its own, never
/// answered with the first one's run and owner nor refused as a mismatch
/// (#31 item 11); the same key from the same submitter still replays. (Each
/// submitter names another target, so that dedup of active runs of one
/// target, which is no idempotency, stays out of it.)
#[tokio::test]
async fn idempotency_keys_are_scoped_to_their_submitter() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let mut bearers = Vec::new();
        for name in ["team-a", "team-b"] {
            let created = api_keys::create_key(db.store.as_ref(), name, None, rate("100/min"), 1)
                .await
                .unwrap();
            bearers.push(format!("Bearer {}", created.token));
        }
        let send = |token: Option<String>, path: &str| {
            let body = json!({"url": format!("http://127.0.0.1:9/{path}/rcp"), "suite": "rcp"});
            let mut req = app
                .http
                .post(app.url("/api/v1/runs"))
                .header("idempotency-key", "release-42")
                .json(&body);
            if let Some(t) = token {
                req = req.header("authorization", t);
            }
            req.send()
        };
        let a = send(Some(bearers[0].clone()), "a").await.unwrap();
        assert_eq!(a.status(), 202, "{b}");
        let a: Value = a.json().await.unwrap();
        let again: Value = send(Some(bearers[0].clone()), "a")
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(again["id"], a["id"], "{b}: the same submitter replays");
        for (token, path) in [(Some(bearers[1].clone()), "b"), (None, "anonymous")] {
            let resp = send(token, path).await.unwrap();
            assert_eq!(resp.status(), 202, "{b}: {path} gets a run of its own");
            let run: Value = resp.json().await.unwrap();
            assert_ne!(run["id"], a["id"], "{b}: {run}");
            assert_ne!(run["owner"], "team-a", "{b}: {run}");
        }
    }
}
