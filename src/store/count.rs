//! Counting the statements a store sends to its database.
//!
//! What a run costs the database is the number of round trips it makes, not
//! the number of [`super::Store`] calls: a claim is four statements (`BEGIN`,
//! the `UPDATE`, the `DELETE` of older findings, `COMMIT`), a heartbeat one.
//! [`Counted`] wraps the executor every statement of [`super::sql`] runs on and
//! adds one per statement it runs; [`super::sql::SqlStore`] adds one per
//! `BEGIN` and per `COMMIT`. Benchmarks and tests read the total through
//! [`super::Store::statements`].
//!
//! Why a wrapper rather than sqlx's statement logging: the log's level and
//! format belong to the tracing set-up of whoever runs the store, and a test
//! binary has one global subscriber; a counter on the store counts that store's
//! statements whoever else runs beside it. Not counted: migrations, the Postgres
//! work listener, and the rollback of an abandoned transaction (sqlx sends it
//! with the connection's next statement).

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use sqlx::{Database, Describe, Either, Error, Execute, Executor};
use std::sync::atomic::{AtomicU64, Ordering};

/// The running total of the statements a store has sent.
#[derive(Debug, Default)]
pub struct Statements(AtomicU64);

impl Statements {
    /// Adds one statement.
    pub fn add(&self) {
        // Relaxed: a tally read after the work it counts, never a synchronisation point.
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub fn total(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// `executor`, counting each statement it runs here.
    pub fn on<E>(&self, executor: E) -> Counted<'_, E> {
        Counted {
            inner: executor,
            counter: self,
        }
    }
}

/// An executor (a pool or a transaction's connection) that counts each
/// statement before handing it on. sqlx's `execute`, `fetch` and `fetch_all`
/// all end in `fetch_many`, and `fetch_one` in `fetch_optional`: counting those
/// two counts every statement once.
#[derive(Debug)]
pub struct Counted<'s, E> {
    inner: E,
    counter: &'s Statements,
}

impl<'c, E> Executor<'c> for Counted<'_, E>
where
    E: Executor<'c>,
{
    type Database = E::Database;

    fn fetch_many<'e, 'q: 'e, Q>(
        self,
        query: Q,
    ) -> BoxStream<
        'e,
        Result<
            Either<<Self::Database as Database>::QueryResult, <Self::Database as Database>::Row>,
            Error,
        >,
    >
    where
        'c: 'e,
        Q: 'q + Execute<'q, Self::Database>,
    {
        self.counter.add();
        self.inner.fetch_many(query)
    }

    fn fetch_optional<'e, 'q: 'e, Q>(
        self,
        query: Q,
    ) -> BoxFuture<'e, Result<Option<<Self::Database as Database>::Row>, Error>>
    where
        'c: 'e,
        Q: 'q + Execute<'q, Self::Database>,
    {
        self.counter.add();
        self.inner.fetch_optional(query)
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [<Self::Database as Database>::TypeInfo],
    ) -> BoxFuture<'e, Result<<Self::Database as Database>::Statement<'q>, Error>>
    where
        'c: 'e,
    {
        self.inner.prepare_with(sql, parameters)
    }

    fn describe<'e, 'q: 'e>(
        self,
        sql: &'q str,
    ) -> BoxFuture<'e, Result<Describe<Self::Database>, Error>>
    where
        'c: 'e,
    {
        self.inner.describe(sql)
    }
}
