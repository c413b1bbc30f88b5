//! Shared test harness: a fresh database per test, on SQLite and on Postgres.
#![allow(dead_code)]

use protocheck::store::{self, Store};
use std::sync::Arc;

/// A fresh, migrated database; dropped (Postgres) or deleted (SQLite) afterwards.
pub struct TestDb {
    pub store: Arc<dyn Store>,
    pub url: String,
    drop_pg: Option<(String, String)>,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    pub fn name(&self) -> &'static str {
        match self.store.backend() {
            store::Backend::Postgres => "postgres",
            store::Backend::Sqlite => "sqlite",
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin_url, db)) = self.drop_pg.take() {
            // Drop on a separate thread and runtime: Drop cannot await, and the
            // test's runtime may be shutting down.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                if let Ok(rt) = rt {
                    rt.block_on(async {
                        use sqlx::Connection;
                        if let Ok(mut conn) = sqlx::PgConnection::connect(&admin_url).await {
                            let _ = sqlx::query(&format!(
                                "DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"
                            ))
                            .execute(&mut conn)
                            .await;
                        }
                    });
                }
            })
            .join();
        }
    }
}

/// A fresh SQLite database in a temporary directory.
pub async fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("test.db").display());
    let store = store::connect(&url).await.expect("open sqlite");
    store.migrate().await.expect("migrate sqlite");
    TestDb {
        store,
        url,
        drop_pg: None,
        _dir: Some(dir),
    }
}

/// A fresh Postgres database created from `PROTOCHECK_TEST_DATABASE_URL`, or
/// `None` (with a line saying so) when that variable is not set.
pub async fn postgres() -> Option<TestDb> {
    let Ok(admin_url) = std::env::var("PROTOCHECK_TEST_DATABASE_URL") else {
        say_postgres_skipped();
        return None;
    };
    use sqlx::Connection;
    let db = format!("protocheck_t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&admin_url)
        .await
        .expect("connect to Postgres");
    sqlx::query(&format!("CREATE DATABASE \"{db}\""))
        .execute(&mut conn)
        .await
        .expect("create test database");
    let mut url = url::Url::parse(&admin_url).expect("PROTOCHECK_TEST_DATABASE_URL is a URL");
    url.set_path(&db);
    let url = url.to_string();
    let store = store::connect(&url).await.expect("open postgres");
    store.migrate().await.expect("migrate postgres");
    Some(TestDb {
        store,
        url,
        drop_pg: Some((admin_url, db)),
        _dir: None,
    })
}

impl TestDb {
    /// The same database seen through `store` (for example a store connected
    /// through a proxy); `self` still owns the database and drops it.
    pub fn through(&self, store: Arc<dyn Store>) -> TestDb {
        TestDb {
            store,
            url: self.url.clone(),
            drop_pg: None,
            _dir: None,
        }
    }
}

/// Both backends: SQLite always, Postgres when configured.
pub async fn all_backends() -> Vec<TestDb> {
    let mut dbs = vec![sqlite().await];
    dbs.extend(postgres().await);
    dbs
}
pub mod app;
pub mod cli;
pub mod names;
pub mod proxy;
pub mod suite;

/// Says once per test binary, on the real stderr (the test harness captures
/// `eprintln!` of passing tests), that the Postgres legs did not run.
fn say_postgres_skipped() {
    use std::io::Write;
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: Postgres legs of these tests; set PROTOCHECK_TEST_DATABASE_URL to run them"
        );
    });
}
