//! A2A task stores on SQLite (embedded, nothing to install) and PostgreSQL (several
//! replicas on one database), behind the [`TaskStore`] trait of `a2a-runtime`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), a2a_store_sql::SqlStoreError> {
//! let store = a2a_store_sql::SqlTaskStore::connect("sqlite:a2a.db").await?;
//! # Ok(()) }
//! ```
//!
//! Each task is its event log: one row per event in `a2a_task_events`, and one row in
//! `a2a_tasks` with what listings filter and sort on and the log's last sequence number.
//! An append checks that number (optimistic concurrency), inserts the events and updates the
//! row in one transaction; a read projects the log with
//! [`apply_event`](a2a_runtime::store::apply_event), the same projection
//! every store uses.
//!
//! Queries read their rows with `fetch_all`, never `fetch_one` or `fetch_optional`: those
//! drop sqlx's row stream before SQLite's statement has finished, which leaves the
//! connection's read transaction open (sqlx#2543). That connection then reads an old
//! snapshot (a task just written looks missing) and no checkpoint can reset the log.

mod leases;
mod notify;
mod owners;
mod retention;
mod schema;
mod stale_plans;
#[cfg(feature = "test-util")]
pub mod test_util;
mod writer;

pub use leases::{AbandonedTask, LeaseConfig, OrphanedPush};
pub use notify::{NotifyBus, NotifyHub};
pub use owners::LegacyOwners;
pub use retention::{IdleTask, RetentionConfig};

use std::collections::HashMap;
use std::sync::Arc;

use a2a_runtime::store::{
    StoreError, TaskEvent, TaskEventRecord, TaskPage, TaskQuery, TaskSnapshot, TaskStore, codec,
    decode_page_token, encode_page_token, project, shape_for_listing,
};
use a2a_types::TaskState;
use async_trait::async_trait;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use stale_plans::StalePlans;

/// The SQL dialect behind a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dialect {
    /// SQLite: one file, one writer at a time.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Dialect {
    /// Opens a transaction that will write. SQLite's default (deferred) transaction starts
    /// as a reader and fails with `SQLITE_BUSY_SNAPSHOT` (not waiting) when another
    /// connection wrote in between; `IMMEDIATE` takes the write lock first, waiting for it.
    pub(crate) fn begin_write(self) -> &'static str {
        match self {
            Self::Sqlite => "BEGIN IMMEDIATE",
            Self::Postgres => "BEGIN",
        }
    }
}

/// Errors opening a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqlStoreError {
    /// The URL names no supported database.
    #[error("unsupported store URL {0:?} (expected sqlite:PATH or postgres://…)")]
    UnsupportedUrl(String),
    /// A SQLite URL that names no file (`sqlite::memory:`): every connection opens the
    /// file, and an in-memory database would be a different one for each.
    #[error("store URL {0:?} names no SQLite file (use `memory` to keep tasks in memory)")]
    SqliteWithoutFile(String),
    /// Connecting or migrating failed.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// The writer could not start.
    #[error("cannot start the task store's writer")]
    Writer(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// A [`TaskStore`] on SQLite or PostgreSQL, holding the tasks of one agent (its scope).
/// Cheap to clone; [`scoped`](Self::scoped) gives another agent's view of the same database.
#[derive(Debug, Clone)]
pub struct SqlTaskStore {
    pool: AnyPool,
    dialect: Dialect,
    agent: Arc<str>,
    /// This process's instance: the owner of the tasks it appends to.
    instance: Arc<str>,
    writers: writer::Writers,
    /// The URL connected to (PostgreSQL's listener opens its own connection with it).
    url: Url,
    /// Whether another process beat recently (see [`SqlTaskStore::refresh_peers`]); true
    /// until first checked.
    peers: Arc<std::sync::atomic::AtomicBool>,
    /// Readers' statements refused as prepared before a schema change.
    stale: Arc<StalePlans>,
}

/// A database URL, which may hold a password: never printed.
#[derive(Clone)]
struct Url(Arc<str>);

impl std::fmt::Debug for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Url(…)")
    }
}

/// The `busy_timeout` that [`SQLITE_PRAGMAS`] sets, for code that changes it and back (a
/// test keeps the two equal).
pub(crate) const SQLITE_BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(5000);

/// Set on every SQLite connection, the pool's and the writer's.
pub(crate) const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000; PRAGMA temp_store=MEMORY;";

// Every connection keeps SQLite's default page cache (2 MiB): the writer's hot pages are the
// newest leaves of a few B-trees and their parents, readers look tasks up by key, and each
// connection's cache fills to its size over time (at 16 MiB each, five connections came to
// hold 80 MiB).

pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn backend(e: sqlx::Error) -> StoreError {
    if unreachable(&e) {
        StoreError::Unavailable(e.to_string())
    } else {
        StoreError::Backend(Box::new(e))
    }
}

/// Whether `e` says the database cannot be reached or cannot write right now (as opposed to
/// a statement it refused): a lost or refused connection, a server shutting down or starting,
/// no connection to be had, a full disk, an I/O error, a busy database.
pub(crate) fn unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => {
            if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
                pg_unreachable(pg.code())
            } else {
                db.try_downcast_ref::<sqlx::sqlite::SqliteError>()
                    .and_then(sqlx::error::DatabaseError::code)
                    .and_then(|code| code.parse::<i32>().ok())
                    .is_some_and(sqlite_unreachable)
            }
        }
        _ => false,
    }
}

/// PostgreSQL SQLSTATEs of connection failures (class 08), operator intervention such as a
/// shutdown or a restart (57P01–57P03) and insufficient resources (class 53: disk full, out of
/// memory, too many connections).
pub(crate) fn pg_unreachable(sqlstate: &str) -> bool {
    sqlstate.starts_with("08")
        || sqlstate.starts_with("53")
        || matches!(sqlstate, "57P01" | "57P02" | "57P03")
}

/// SQLite result codes (extended; the primary code is the low byte) of a busy or locked
/// database, an I/O error, a full disk or a file it cannot open.
pub(crate) fn sqlite_unreachable(code: i32) -> bool {
    matches!(code & 0xff, 5 | 6 | 10 | 13 | 14)
}

fn seq_of(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn state_of(n: i64) -> TaskState {
    TaskState::from_number(n).unwrap_or_default()
}

impl SqlTaskStore {
    /// Opens the store at `url` (`sqlite:PATH`, created if missing, or `postgres://…`) and
    /// brings its schema up to date.
    pub async fn connect(url: &str) -> Result<Self, SqlStoreError> {
        sqlx::any::install_default_drivers();
        let mut sqlite_path = None;
        let (dialect, url) = if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.trim_start_matches("//");
            let file = path.split('?').next().unwrap_or_default();
            // Each connection (readers, the writer) opens the file: an in-memory database
            // would be a different one per connection.
            if file.is_empty() || file.contains(":memory:") || file.starts_with("file:") {
                return Err(SqlStoreError::SqliteWithoutFile(url.to_owned()));
            }
            sqlite_path = Some(file.to_owned());
            let sep = if path.contains('?') { '&' } else { '?' };
            (Dialect::Sqlite, format!("sqlite://{path}{sep}mode=rwc"))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Dialect::Postgres, url.to_owned())
        } else {
            return Err(SqlStoreError::UnsupportedUrl(url.to_owned()));
        };
        let options = AnyPoolOptions::new()
            // Every store operation waits for the database as long as an append does.
            .acquire_timeout(writer::OUTAGE_WAIT)
            // No ping before each use: a broken connection fails its query, which is reported.
            .test_before_acquire(false);
        // The pool is for readers. Writers have connections of their own (`writer/`); on
        // SQLite, WAL lets readers run beside the writer.
        let (writers, readers) = match dialect {
            Dialect::Sqlite => (1, 4),
            // One PostgreSQL writer: its group commit already batches every append that
            // arrives during a round, and fewer, larger commits beat parallel ones (at 32
            // concurrent streams: 4.8k/s with one writer, 4.1k with two, 3.4k with four).
            Dialect::Postgres => (1, 12),
        };
        let options = options.max_connections(readers);
        let stale = Arc::new(StalePlans::default());
        let pool = match dialect {
            Dialect::Sqlite => {
                options
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            use sqlx::Executor;
                            conn.execute(SQLITE_PRAGMAS).await?;
                            Ok(())
                        })
                    })
                    .connect(&url)
                    .await?
            }
            Dialect::Postgres => {
                let stale = stale.clone();
                options
                    .before_acquire(move |_, meta| {
                        let fresh = !stale.opened_before_refusal(meta.age);
                        Box::pin(async move { Ok(fresh) })
                    })
                    .connect(&url)
                    .await?
            }
        };
        schema::migrate(&pool, dialect).await?;
        let instance: Arc<str> = Arc::from(uuid::Uuid::new_v4().to_string());
        let writers = match &sqlite_path {
            Some(path) => writer::Writers::sqlite(path, instance.clone()),
            None => writer::Writers::postgres(&url, writers, instance.clone()).await,
        }
        .map_err(SqlStoreError::Writer)?;
        Ok(Self {
            pool,
            dialect,
            agent: Arc::from(""),
            instance,
            writers,
            url: Url(Arc::from(url)),
            peers: Arc::new(std::sync::atomic::AtomicBool::new(true)),
            stale,
        })
    }

    /// The store of agent `agent_id` on the same database and connections.
    pub fn scoped(&self, agent_id: &str) -> Self {
        Self {
            pool: self.pool.clone(),
            dialect: self.dialect,
            agent: Arc::from(agent_id),
            instance: self.instance.clone(),
            writers: self.writers.clone(),
            url: self.url.clone(),
            peers: self.peers.clone(),
            stale: self.stale.clone(),
        }
    }

    /// PostgreSQL: starts carrying task events between the processes of this database
    /// (`LISTEN/NOTIFY`); give each agent's runtime [`NotifyHub::bus`]. `None` on SQLite,
    /// whose processes share one file on one machine and follow each other through the
    /// store alone.
    pub async fn notify_hub(&self) -> Result<Option<NotifyHub>, SqlStoreError> {
        match self.dialect {
            Dialect::Sqlite => Ok(None),
            Dialect::Postgres => {
                let hub =
                    NotifyHub::start(&self.url.0, self.pool.clone(), self.instance.clone()).await?;
                Ok(Some(hub))
            }
        }
    }

    /// The agent whose tasks this store holds.
    pub fn agent_id(&self) -> &str {
        &self.agent
    }

    /// The dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The connection pool (for tests and maintenance).
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The rows of the query `query` builds, read on the pool (with `fetch_all`, see the
    /// crate's documentation); built and run once more when PostgreSQL refused it as
    /// prepared before a schema change (see `stale_plans.rs`).
    async fn rows<'q>(&self, query: impl Fn() -> AnyQuery<'q>) -> Result<Vec<AnyRow>, sqlx::Error> {
        self.stale.retrying(|| query().fetch_all(&self.pool)).await
    }

    async fn log(&self, task_id: &str, after_seq: u64) -> Result<Vec<TaskEventRecord>, StoreError> {
        let after_seq = i64::try_from(after_seq).unwrap_or(i64::MAX);
        let rows = self
            .rows(|| {
                sqlx::query(
                    "SELECT seq, state, event FROM a2a_task_events WHERE agent_id = $1 AND task_id = $2 AND seq > $3 ORDER BY seq",
                )
                .bind(&*self.agent)
                .bind(task_id)
                .bind(after_seq)
            })
            .await
            .map_err(backend)?;
        let mut log = Vec::with_capacity(rows.len());
        for_each_row(&rows, |row| {
            log.push(record(row)?);
            Ok(())
        })
        .await?;
        Ok(log)
    }

    /// The events of several tasks, read in one query (a listing page).
    async fn logs_of<'a>(
        &self,
        ids: impl Iterator<Item = &'a str>,
    ) -> Result<HashMap<String, Vec<TaskEvent>>, StoreError> {
        let ids: Vec<&str> = ids.collect();
        let mut logs = HashMap::with_capacity(ids.len());
        if ids.is_empty() {
            return Ok(logs);
        }
        let placeholders: Vec<String> = (2..ids.len() + 2).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT task_id, event FROM a2a_task_events WHERE agent_id = $1 AND task_id IN ({}) ORDER BY task_id, seq",
            placeholders.join(", ")
        );
        let rows = self
            .rows(|| {
                let mut q = sqlx::query(&sql).bind(&*self.agent);
                for id in &ids {
                    q = q.bind(*id);
                }
                q
            })
            .await
            .map_err(backend)?;
        for_each_row(&rows, |row| {
            let id: String = row.try_get("task_id").map_err(backend)?;
            let json: String = row.try_get("event").map_err(backend)?;
            let event = codec::decode(&json).map_err(StoreError::Serialization)?;
            logs.entry(id).or_insert_with(Vec::new).push(event);
            Ok(())
        })
        .await?;
        Ok(logs)
    }

    /// Whether the task exists.
    async fn exists(&self, task_id: &str) -> Result<bool, StoreError> {
        let rows = self
            .rows(|| {
                sqlx::query("SELECT 1 AS one FROM a2a_tasks WHERE agent_id = $1 AND id = $2")
                    .bind(&*self.agent)
                    .bind(task_id)
            })
            .await
            .map_err(backend)?;
        Ok(!rows.is_empty())
    }

    async fn project(
        &self,
        task_id: &str,
        history_length: Option<usize>,
    ) -> Result<Option<TaskSnapshot>, StoreError> {
        let log = self.log(task_id, 0).await?;
        let seq = log.last().map_or(0, |r| r.seq);
        let owner = a2a_runtime::store::owner_in(log.iter().map(|r| &r.event)).cloned();
        Ok(project(log.iter().map(|r| &r.event), history_length)
            .map(|task| TaskSnapshot::new(task, seq).with_owner(owner)))
    }
}

/// Rows decoded between two yields to the runtime. Decoding a task of a thousand large
/// events takes a worker for milliseconds (tens in a debug build); meanwhile other reads'
/// rows wait to be taken, and on SQLite each of those holds its snapshot in the log, which
/// keeps the log from starting over (seen with three readers of 8 MiB tasks on two
/// workers: one read's rows waited over a second).
const ROWS_BETWEEN_YIELDS: usize = 64;

/// Decodes `rows` with `decode`, yielding to the runtime every [`ROWS_BETWEEN_YIELDS`] rows.
async fn for_each_row(
    rows: &[AnyRow],
    mut decode: impl FnMut(&AnyRow) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    for (i, row) in rows.iter().enumerate() {
        if i > 0 && i % ROWS_BETWEEN_YIELDS == 0 {
            tokio::task::yield_now().await;
        }
        decode(row)?;
    }
    Ok(())
}

fn record(row: &AnyRow) -> Result<TaskEventRecord, StoreError> {
    let seq: i64 = row.try_get("seq").map_err(backend)?;
    let state: i64 = row.try_get("state").map_err(backend)?;
    let json: String = row.try_get("event").map_err(backend)?;
    let event = codec::decode(&json).map_err(StoreError::Serialization)?;
    Ok(TaskEventRecord::new(seq_of(seq), state_of(state), event))
}

/// A value bound to a query built at run time.
enum Arg {
    Text(String),
    Int(i64),
}

/// A query on the readers' pool, its arguments bound.
type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

/// `q` with `args` bound in order.
fn bind_all<'q>(mut q: AnyQuery<'q>, args: &'q [Arg]) -> AnyQuery<'q> {
    for a in args {
        q = match a {
            Arg::Text(s) => q.bind(s.as_str()),
            Arg::Int(n) => q.bind(*n),
        };
    }
    q
}

#[async_trait]
impl TaskStore for SqlTaskStore {
    async fn append(
        &self,
        task_id: &str,
        expected_seq: u64,
        events: Vec<TaskEvent>,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
        let events = events
            .into_iter()
            .map(|e| Ok((codec::encode(&e)?, e)))
            .collect::<serde_json::Result<_>>()
            .map_err(StoreError::Serialization)?;
        self.writers
            .append(writer::Append {
                agent: self.agent.clone(),
                task_id: task_id.to_owned(),
                expected_seq,
                events,
                queued: std::time::Instant::now(),
            })
            .await
    }

    async fn get(
        &self,
        task_id: &str,
        history_length: Option<usize>,
    ) -> Result<Option<TaskSnapshot>, StoreError> {
        self.project(task_id, history_length).await
    }

    async fn events_after(
        &self,
        task_id: &str,
        after_seq: u64,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
        let log = self.log(task_id, after_seq).await?;
        if log.is_empty() {
            // Tell an unknown task from one with nothing new.
            if !self.exists(task_id).await? {
                return Err(StoreError::NotFound(task_id.to_owned()));
            }
        }
        Ok(log.into_iter().map(Arc::new).collect())
    }

    async fn put_push_config(
        &self,
        task_id: &str,
        config: &a2a_types::TaskPushNotificationConfig,
    ) -> Result<(), StoreError> {
        if !self.exists(task_id).await? {
            return Err(StoreError::NotFound(task_id.to_owned()));
        }
        let json = serde_json::to_string(config).map_err(StoreError::Serialization)?;
        // This process delivers to it from now on (the worker runs here).
        sqlx::query(
            "INSERT INTO a2a_push_configs (agent_id, task_id, config_id, config, position, delivery_owner, claimed_ms) \
             VALUES ($1, $2, $3, $4, \
             (SELECT COALESCE(MAX(position), 0) + 1 FROM a2a_push_configs WHERE agent_id = $1 AND task_id = $2), $5, $6) \
             ON CONFLICT (agent_id, task_id, config_id) DO UPDATE SET config = excluded.config, \
             delivery_owner = excluded.delivery_owner, claimed_ms = excluded.claimed_ms",
        )
        .bind(&*self.agent)
        .bind(task_id)
        .bind(config.id.clone().unwrap_or_default())
        .bind(json)
        .bind(&*self.instance)
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<a2a_types::TaskPushNotificationConfig>, StoreError> {
        let rows = self
            .rows(|| {
                sqlx::query(
                    "SELECT config FROM a2a_push_configs WHERE agent_id = $1 AND task_id = $2 ORDER BY position",
                )
                .bind(&*self.agent)
                .bind(task_id)
            })
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|r| {
                let json: String = r.try_get("config").map_err(backend)?;
                serde_json::from_str(&json).map_err(StoreError::Serialization)
            })
            .collect()
    }

    async fn push_delivered(&self, task_id: &str, id: &str, seq: u64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE a2a_push_configs SET delivered_seq = CASE WHEN delivered_seq < $4 THEN $4 ELSE delivered_seq END \
             WHERE agent_id = $1 AND task_id = $2 AND config_id = $3",
        )
        .bind(&*self.agent)
        .bind(task_id)
        .bind(id)
        .bind(i64::try_from(seq).unwrap_or(i64::MAX))
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM a2a_push_configs WHERE agent_id = $1 AND task_id = $2 AND config_id = $3",
        )
        .bind(&*self.agent)
        .bind(task_id)
        .bind(id)
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    fn reachable(&self) -> bool {
        self.writers.health.reachable()
    }

    fn may_have_peers(&self) -> bool {
        self.peers.load(std::sync::atomic::Ordering::Relaxed)
    }

    async fn list(&self, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let cursor = query
            .page_token
            .as_deref()
            .map(decode_page_token)
            .transpose()?;
        let mut args = vec![Arg::Text(self.agent.to_string())];
        let mut filters = vec!["agent_id = $1".to_owned()];
        if let Some(c) = &query.context_id {
            args.push(Arg::Text(c.clone()));
            filters.push(format!("context_id = ${}", args.len()));
        }
        if let Some(s) = query.status {
            args.push(Arg::Int(i64::from(s.number())));
            filters.push(format!("state = ${}", args.len()));
        }
        if let Some(t) = query.status_timestamp_after {
            args.push(Arg::Int(t.timestamp_millis()));
            filters.push(format!("status_ms >= ${}", args.len()));
        }
        if let Some(owner) = &query.owner {
            // Indexed: (agent_id, principal, status_ms, id).
            args.push(Arg::Text(owner.to_string()));
            filters.push(format!("principal = ${}", args.len()));
        }
        let where_all = format!(" WHERE {}", filters.join(" AND "));
        let total: i64 = {
            let sql = format!("SELECT COUNT(*) AS n FROM a2a_tasks{where_all}");
            let rows = self
                .rows(|| bind_all(sqlx::query(&sql), &args))
                .await
                .map_err(backend)?;
            match rows.first() {
                Some(r) => r.try_get("n").map_err(backend)?,
                None => 0,
            }
        };
        if let Some((ms, id)) = &cursor {
            args.push(Arg::Int(*ms));
            let m = args.len();
            args.push(Arg::Text(id.clone()));
            let i = args.len();
            filters.push(format!(
                "(status_ms < ${m} OR (status_ms = ${m} AND id < ${i}))"
            ));
        }
        let where_page = format!(" WHERE {}", filters.join(" AND "));
        let limit = query.page_size.max(1);
        let sql = format!(
            "SELECT id, status_ms FROM a2a_tasks{where_page} ORDER BY status_ms DESC, id DESC LIMIT {}",
            limit + 1
        );
        let rows = self
            .rows(|| bind_all(sqlx::query(&sql), &args))
            .await
            .map_err(backend)?;
        let mut keys = Vec::with_capacity(rows.len());
        for r in &rows {
            let id: String = r.try_get("id").map_err(backend)?;
            let ms: i64 = r.try_get("status_ms").map_err(backend)?;
            keys.push((ms, id));
        }
        let more = keys.len() > limit;
        keys.truncate(limit);
        let mut logs = self.logs_of(keys.iter().map(|(_, id)| id.as_str())).await?;
        let tasks = keys
            .iter()
            .filter_map(|(_, id)| {
                let events = logs.remove(id.as_str())?;
                project(events.iter(), query.history_length)
            })
            .map(|task| shape_for_listing(task, query))
            .collect();
        let next_page_token = match keys.last() {
            Some((ms, id)) if more => {
                encode_page_token(chrono::DateTime::from_timestamp_millis(*ms), id)
            }
            _ => String::new(),
        };
        Ok(TaskPage::new(
            tasks,
            next_page_token,
            usize::try_from(total).unwrap_or(0),
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pragmas_set_the_named_busy_timeout() {
        let pragma = format!(
            "PRAGMA busy_timeout={};",
            super::SQLITE_BUSY_TIMEOUT.as_millis()
        );
        assert!(
            super::SQLITE_PRAGMAS.contains(&pragma),
            "{}",
            super::SQLITE_PRAGMAS
        );
    }
}
