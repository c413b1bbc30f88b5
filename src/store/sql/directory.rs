//! The public directory ([`DirectoryStore`]) on the SQL store.

use crate::store::{
    DirectoryEntry, DirectoryKey, DirectoryQuery, DirectorySort, DirectoryStore, DirectorySync,
    GradeFilter, StoreResult, directory_grade_rank, directory_name_key,
};
use crate::suite::{Verdict, VerdictDetail};
use sqlx::Row;
use uuid::Uuid;

impl_sql_store!(inherent {
    /// A transaction that writes: on SQLite begun `IMMEDIATE`, so a read
    /// before its first write never has to become a write lock (which fails
    /// at once when another writer went first).
    async fn begin_write(&self) -> StoreResult<sqlx::Transaction<'static, DB>> {
        match DB::BEGIN_CLAIM {
            Some(begin) => self.begin_with(begin).await,
            None => self.begin().await,
        }
    }

    /// Records an MCP verdict on the directory entries of its run's target
    /// (none, for a target the directory does not list: one statement that
    /// changes nothing): the lowest grade, each revision's, when, and the
    /// grade before it.
    pub(super) async fn record_directory_grade_in(
        &self,
        conn: &mut DB::Connection,
        run_id: Uuid,
        verdict: &Verdict,
        now_ms: i64,
    ) -> StoreResult<()> {
        let VerdictDetail::Mcp {
            grade,
            grade_by_revision,
            withheld,
            ..
        } = &verdict.detail
        else {
            return Ok(());
        };
        let listed = sqlx::query(
            "UPDATE directory_entries
             SET previous_grade = CASE WHEN last_run_id = $1 THEN previous_grade ELSE grade END,
                 grade = $2, last_run_id = $1, judged_at_ms = $3, judged_key = $3,
                 grade_rank = $4, withheld = $5
             WHERE target_id = (SELECT target_id FROM runs WHERE id = $1)",
        )
        .bind(run_id.to_string())
        .bind(grade)
        .bind(now_ms)
        .bind(directory_grade_rank(Some(grade)))
        .bind(withheld.as_deref())
        .execute(self.statements.on(&mut *conn))
        .await?;
        if DB::rows_affected(&listed) == 0 {
            return Ok(());
        }
        sqlx::query(
            "DELETE FROM directory_grades WHERE url IN (SELECT url FROM directory_entries
             WHERE target_id = (SELECT target_id FROM runs WHERE id = $1))",
        )
        .bind(run_id.to_string())
        .execute(self.statements.on(&mut *conn))
        .await?;
        let by_revision: Vec<(&str, &str)> = if grade_by_revision.is_empty() {
            vec![(verdict.spec_revision.as_str(), grade.as_str())]
        } else {
            grade_by_revision
                .iter()
                .map(|(r, g)| (r.as_str(), g.as_str()))
                .collect()
        };
        for (revision, grade) in by_revision {
            sqlx::query(
                "INSERT INTO directory_grades (url, revision, grade)
                 SELECT url, $2, $3 FROM directory_entries
                 WHERE target_id = (SELECT target_id FROM runs WHERE id = $1)",
            )
            .bind(run_id.to_string())
            .bind(revision)
            .bind(grade)
            .execute(self.statements.on(&mut *conn))
            .await?;
        }
        Ok(())
    }
});

/// The columns of a [`DirectoryEntry`], in [`entry_from_row`]'s order.
const ENTRY_COLUMNS: &str = "url, source, registry_name, title, description, version, status, \
     transport, not_probed, target_id, registry_updated_at, listed_at_ms, updated_at_ms, \
     grade, previous_grade, last_run_id, judged_at_ms, withheld";

fn entry_from_row<R: Row>(row: &R) -> StoreResult<DirectoryEntry>
where
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    usize: sqlx::ColumnIndex<R>,
{
    Ok(DirectoryEntry {
        url: row.try_get(0)?,
        source: row.try_get(1)?,
        registry_name: row.try_get(2)?,
        title: row.try_get(3)?,
        description: row.try_get(4)?,
        version: row.try_get(5)?,
        status: row.try_get(6)?,
        transport: row.try_get(7)?,
        not_probed: row.try_get(8)?,
        target_id: row.try_get(9)?,
        registry_updated_at: row.try_get(10)?,
        listed_at_ms: row.try_get(11)?,
        updated_at_ms: row.try_get(12)?,
        grade: row.try_get(13)?,
        previous_grade: row.try_get(14)?,
        last_run_id: row.try_get(15)?,
        judged_at_ms: row.try_get(16)?,
        withheld: row.try_get(17)?,
    })
}

impl_sql_store!(DirectoryStore {
    async fn put_directory_entry(&self, e: &DirectoryEntry) -> StoreResult<bool> {
        // One statement, so a delisting and a listing cannot interleave (and
        // SQLite never has to turn a read into a write).
        let done = sqlx::query(
            "INSERT INTO directory_entries (url, source, registry_name, title, description,
                 version, status, transport, not_probed, target_id, registry_updated_at,
                 listed_at_ms, updated_at_ms, name_key)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14
             WHERE NOT EXISTS (SELECT 1 FROM directory_delisted WHERE url = $1)
             ON CONFLICT (url) DO UPDATE SET
                 source = excluded.source, registry_name = excluded.registry_name,
                 title = excluded.title, description = excluded.description,
                 version = excluded.version, status = excluded.status,
                 transport = excluded.transport, not_probed = excluded.not_probed,
                 target_id = excluded.target_id,
                 registry_updated_at = excluded.registry_updated_at,
                 updated_at_ms = excluded.updated_at_ms, name_key = excluded.name_key",
        )
        .bind(&e.url)
        .bind(&e.source)
        .bind(&e.registry_name)
        .bind(&e.title)
        .bind(&e.description)
        .bind(&e.version)
        .bind(&e.status)
        .bind(&e.transport)
        .bind(&e.not_probed)
        .bind(&e.target_id)
        .bind(&e.registry_updated_at)
        .bind(e.listed_at_ms)
        .bind(e.updated_at_ms)
        .bind(directory_name_key(e.registry_name.as_deref(), &e.url))
        .execute(self.db())
        .await?;
        Ok(DB::rows_affected(&done) > 0)
    }

    async fn remove_directory_entries(
        &self,
        registry_name: &str,
        keep: &[String],
    ) -> StoreResult<Vec<DirectoryEntry>> {
        let mut tx = self.begin_write().await?;
        let rows = sqlx::query(&format!(
            "SELECT {ENTRY_COLUMNS} FROM directory_entries
             WHERE registry_name = $1 AND source = 'registry' ORDER BY url"
        ))
        .bind(registry_name)
        .fetch_all(self.statements.on(&mut *tx))
        .await?;
        let mut removed = Vec::new();
        for row in &rows {
            let entry = entry_from_row(row)?;
            if keep.contains(&entry.url) {
                continue;
            }
            for table in ["directory_grades", "directory_entries"] {
                sqlx::query(&format!("DELETE FROM {table} WHERE url = $1"))
                    .bind(&entry.url)
                    .execute(self.statements.on(&mut *tx))
                    .await?;
            }
            removed.push(entry);
        }
        self.commit(tx).await?;
        Ok(removed)
    }

    async fn delist_directory_url(
        &self,
        url: &str,
        reason: &str,
        by: &str,
        now_ms: i64,
    ) -> StoreResult<Option<DirectoryEntry>> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO directory_delisted (url, reason, delisted_by, at_ms)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (url) DO UPDATE SET reason = excluded.reason,
                 delisted_by = excluded.delisted_by, at_ms = excluded.at_ms",
        )
        .bind(url)
        .bind(reason)
        .bind(by)
        .bind(now_ms)
        .execute(self.statements.on(&mut *tx))
        .await?;
        let row = sqlx::query(&format!(
            "SELECT {ENTRY_COLUMNS} FROM directory_entries WHERE url = $1"
        ))
        .bind(url)
        .fetch_optional(self.statements.on(&mut *tx))
        .await?;
        let entry = row.as_ref().map(entry_from_row).transpose()?;
        for table in ["directory_grades", "directory_entries"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE url = $1"))
                .bind(url)
                .execute(self.statements.on(&mut *tx))
                .await?;
        }
        self.commit(tx).await?;
        Ok(entry)
    }

    async fn directory_delisting(&self, url: &str) -> StoreResult<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT reason FROM directory_delisted WHERE url = $1")
                .bind(url)
                .fetch_optional(self.db())
                .await?,
        )
    }

    async fn directory_entry(&self, url: &str) -> StoreResult<Option<DirectoryEntry>> {
        let row = sqlx::query(&format!(
            "SELECT {ENTRY_COLUMNS} FROM directory_entries WHERE url = $1"
        ))
        .bind(url)
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(entry_from_row).transpose()
    }

    async fn directory_entries(&self) -> StoreResult<Vec<DirectoryEntry>> {
        let rows = sqlx::query(&format!(
            "SELECT {ENTRY_COLUMNS} FROM directory_entries ORDER BY registry_name, url"
        ))
        .fetch_all(self.db())
        .await?;
        rows.iter().map(entry_from_row).collect()
    }

    async fn directory_page(&self, query: &DirectoryQuery) -> StoreResult<Vec<DirectoryEntry>> {
        let (sql, binds) = page_statement(query);
        let mut statement = sqlx::query(&sql);
        for value in binds {
            statement = match value {
                DirectoryKey::Text(s) => statement.bind(s),
                DirectoryKey::Int(n) => statement.bind(n),
            };
        }
        let rows = statement.fetch_all(self.db()).await?;
        rows.iter().map(entry_from_row).collect()
    }

    async fn directory_revision_grades(
        &self,
        urls: &[String],
    ) -> StoreResult<Vec<(String, String, String)>> {
        if urls.is_empty() {
            return Ok(Vec::new());
        }
        let marks: Vec<String> = (1..=urls.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT url, revision, grade FROM directory_grades WHERE url IN ({})
             ORDER BY url, revision DESC",
            marks.join(", ")
        );
        let mut statement = sqlx::query(&sql);
        for url in urls {
            statement = statement.bind(url.as_str());
        }
        let rows = statement.fetch_all(self.db()).await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect()
    }

    async fn directory_export(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> StoreResult<Vec<(DirectoryEntry, Option<String>)>> {
        let columns: Vec<String> = ENTRY_COLUMNS
            .split(',')
            .map(|c| format!("d.{}", c.trim()))
            .collect();
        let rows = sqlx::query(&format!(
            "SELECT {}, a.envelope FROM directory_entries d
             LEFT JOIN attestations a ON a.run_id = d.last_run_id
             WHERE d.url > $1 ORDER BY d.url LIMIT $2",
            columns.join(", ")
        ))
        .bind(after.unwrap_or(""))
        .bind(i64::from(limit))
        .fetch_all(self.db())
        .await?;
        rows.iter()
            .map(|r| Ok((entry_from_row(r)?, r.try_get(18)?)))
            .collect()
    }

    async fn directory_syncs(&self) -> StoreResult<Vec<DirectorySync>> {
        let rows = sqlx::query(
            "SELECT registry, high_water, last_success_ms, last_attempt_ms, last_error,
                    listed, skipped
             FROM directory_syncs ORDER BY registry",
        )
        .fetch_all(self.db())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(DirectorySync {
                    registry: r.try_get(0)?,
                    high_water: r.try_get(1)?,
                    last_success_ms: r.try_get(2)?,
                    last_attempt_ms: r.try_get(3)?,
                    last_error: r.try_get(4)?,
                    listed: r.try_get(5)?,
                    skipped: r.try_get(6)?,
                })
            })
            .collect()
    }

    async fn directory_sync(&self, registry: &str) -> StoreResult<Option<DirectorySync>> {
        let row = sqlx::query(
            "SELECT registry, high_water, last_success_ms, last_attempt_ms, last_error,
                    listed, skipped
             FROM directory_syncs WHERE registry = $1",
        )
        .bind(registry)
        .fetch_optional(self.db())
        .await?;
        row.map(|r| {
            Ok(DirectorySync {
                registry: r.try_get(0)?,
                high_water: r.try_get(1)?,
                last_success_ms: r.try_get(2)?,
                last_attempt_ms: r.try_get(3)?,
                last_error: r.try_get(4)?,
                listed: r.try_get(5)?,
                skipped: r.try_get(6)?,
            })
        })
        .transpose()
    }

    async fn put_directory_sync(&self, s: &DirectorySync) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO directory_syncs (registry, high_water, last_success_ms,
                 last_attempt_ms, last_error, listed, skipped)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (registry) DO UPDATE SET high_water = excluded.high_water,
                 last_success_ms = excluded.last_success_ms,
                 last_attempt_ms = excluded.last_attempt_ms,
                 last_error = excluded.last_error, listed = excluded.listed,
                 skipped = excluded.skipped",
        )
        .bind(&s.registry)
        .bind(&s.high_water)
        .bind(s.last_success_ms)
        .bind(s.last_attempt_ms)
        .bind(&s.last_error)
        .bind(s.listed)
        .bind(s.skipped)
        .execute(self.db())
        .await?;
        Ok(())
    }
});

/// The column of `sort`'s key (each has an index on it and the URL).
fn sort_column(sort: DirectorySort) -> &'static str {
    match sort {
        DirectorySort::Name => "name_key",
        DirectorySort::Url => "url",
        DirectorySort::Transport => "transport",
        DirectorySort::Status => "status",
        DirectorySort::Grade => "grade_rank",
        DirectorySort::Judged => "judged_key",
    }
}

/// `text` as a LIKE pattern matching it anywhere, its wildcards escaped.
fn contains_pattern(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// The statement of one directory page and its values, in order. The
/// order is the sort column's index (key, url), walked forwards or
/// backwards from the cursor: a page reads its rows and the filters' misses
/// on the way, never the whole table sorted.
fn page_statement(q: &DirectoryQuery) -> (String, Vec<DirectoryKey>) {
    let mut binds = Vec::new();
    let mark = |v: DirectoryKey, binds: &mut Vec<DirectoryKey>| {
        binds.push(v);
        format!("${}", binds.len())
    };
    let mut clauses: Vec<String> = Vec::new();
    match (&q.revision, q.grade) {
        (Some(revision), grade) => {
            let r = mark(DirectoryKey::Text(revision.clone()), &mut binds);
            match grade {
                Some(GradeFilter::Grade(g)) => {
                    let g = mark(DirectoryKey::Text(g.to_owned()), &mut binds);
                    clauses.push(format!(
                        "url IN (SELECT url FROM directory_grades WHERE revision = {r} AND grade = {g})"
                    ));
                }
                Some(GradeFilter::None) => clauses.push(format!(
                    "url NOT IN (SELECT url FROM directory_grades WHERE revision = {r})"
                )),
                None => clauses.push(format!(
                    "url IN (SELECT url FROM directory_grades WHERE revision = {r})"
                )),
            }
        }
        (None, Some(grade)) => {
            let rank = match grade {
                GradeFilter::Grade(g) => directory_grade_rank(Some(g)),
                GradeFilter::None => 0,
            };
            let m = mark(DirectoryKey::Int(rank), &mut binds);
            clauses.push(format!("grade_rank = {m}"));
        }
        (None, None) => {}
    }
    if let Some(t) = &q.transport {
        let m = mark(DirectoryKey::Text(t.clone()), &mut binds);
        clauses.push(format!("transport = {m}"));
    }
    if let Some(text) = &q.search {
        let m = mark(DirectoryKey::Text(contains_pattern(text)), &mut binds);
        clauses.push(format!(
            "(name_key LIKE {m} ESCAPE '\\' OR lower(COALESCE(title, '')) LIKE {m} ESCAPE '\\')"
        ));
    }
    let col = sort_column(q.sort);
    let (cmp, dir) = if q.descending {
        ("<", "DESC")
    } else {
        (">", "ASC")
    };
    if let Some((key, url)) = &q.after {
        if q.sort == DirectorySort::Url {
            let u = mark(DirectoryKey::Text(url.clone()), &mut binds);
            clauses.push(format!("url {cmp} {u}"));
        } else {
            let k = mark(key.clone(), &mut binds);
            let u = mark(DirectoryKey::Text(url.clone()), &mut binds);
            clauses.push(format!("({col}, url) {cmp} ({k}, {u})"));
        }
    }
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };
    let order = if q.sort == DirectorySort::Url {
        format!("url {dir}")
    } else {
        format!("{col} {dir}, url {dir}")
    };
    let limit = mark(DirectoryKey::Int(i64::from(q.limit)), &mut binds);
    (
        format!(
            "SELECT {ENTRY_COLUMNS} FROM directory_entries {filter} ORDER BY {order} LIMIT {limit}"
        ),
        binds,
    )
}
