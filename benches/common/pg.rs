//! A Postgres database of its own for a benchmark, and plain SQL on it;
//! shared by the benchmarks that measure Postgres (`#[path]`-included).

use uuid::Uuid;

/// A database of its own on the Postgres server `admin` names, dropped at the end.
pub struct FreshPg {
    admin: String,
    pub name: String,
    pub url: String,
}

impl FreshPg {
    pub async fn create(admin: &str) -> Self {
        let name = format!("protocheck_bench_{}", Uuid::new_v4().simple());
        run_sql(admin, &format!("CREATE DATABASE \"{name}\"")).await;
        let mut url = url::Url::parse(admin).expect("url");
        url.set_path(&name);
        Self {
            admin: admin.to_owned(),
            name,
            url: url.to_string(),
        }
    }

    pub async fn drop(self) {
        run_sql(
            &self.admin,
            &format!("DROP DATABASE \"{}\" WITH (FORCE)", self.name),
        )
        .await;
    }
}

/// Runs one statement on `url`; a failure stops the benchmark.
pub async fn run_sql(url: &str, sql: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
    sqlx::query(sql).execute(&mut conn).await.expect("sql");
}
