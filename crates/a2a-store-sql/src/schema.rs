//! The schema, as numbered migrations, applied at connect.
//!
//! `owner` is the store instance (process) that last appended to a task (not to be confused
//! with `principal`, the authenticated caller the task belongs to); `a2a_instances`
//! holds each live instance's heartbeat, so the tasks of a process that stopped beating can
//! be found (see `leases.rs`).
//! Every row carries the `agent_id` of the agent whose task it is, so the agents of one host
//! share a database without seeing each other's tasks.
//! Tasks are stored as their event log (`a2a_task_events`, one row per event) plus one small
//! row of what listings filter and sort on (`a2a_tasks`). Appending an event writes the event
//! and updates that row: the write is proportional to the event, never to the whole task.

use sqlx::AnyPool;

use crate::Dialect;

/// A statement of a migration: for both dialects, or for one.
#[derive(Clone, Copy)]
enum Stmt {
    Both(&'static str),
    Sqlite(&'static str),
    Postgres(&'static str),
}

impl Stmt {
    fn for_dialect(self, dialect: Dialect) -> Option<&'static str> {
        match (self, dialect) {
            (Self::Both(s), _)
            | (Self::Sqlite(s), Dialect::Sqlite)
            | (Self::Postgres(s), Dialect::Postgres) => Some(s),
            _ => None,
        }
    }
}

use Stmt::{Both, Postgres, Sqlite};

/// The prefix migration 4 gives the owners of tasks stored before: bare names, from before
/// principals were qualified by their source. `SqlTaskStore::qualify_legacy_owners` maps
/// them; until then they match no caller.
pub(crate) const LEGACY_OWNER: &str = "legacy:";

/// `(version, statements)`, in order. Never edit a released migration; add one. Most DDL is
/// portable (TEXT, BIGINT, composite keys); what is not comes once per dialect.
const MIGRATIONS: &[(i64, &[Stmt])] = &[
    (
        1,
        &[
            Both("CREATE TABLE a2a_tasks (
            agent_id TEXT NOT NULL,
            id TEXT NOT NULL,
            context_id TEXT NOT NULL,
            state BIGINT NOT NULL,
            status_ms BIGINT NOT NULL,
            seq BIGINT NOT NULL,
            created_ms BIGINT NOT NULL,
            updated_ms BIGINT NOT NULL,
            owner TEXT NOT NULL,
            PRIMARY KEY (agent_id, id)
        )"),
            Both("CREATE INDEX a2a_tasks_by_status ON a2a_tasks (agent_id, status_ms DESC, id DESC)"),
            Both("CREATE INDEX a2a_tasks_by_context ON a2a_tasks (agent_id, context_id, status_ms DESC, id DESC)"),
            Both("CREATE INDEX a2a_tasks_by_state ON a2a_tasks (state, updated_ms)"),
            Both("CREATE TABLE a2a_instances (
            instance_id TEXT PRIMARY KEY,
            started_ms BIGINT NOT NULL,
            heartbeat_ms BIGINT NOT NULL
        )"),
            Both("CREATE TABLE a2a_task_events (
            agent_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            state BIGINT NOT NULL,
            event TEXT NOT NULL,
            PRIMARY KEY (agent_id, task_id, seq)
        )"),
            Both("CREATE TABLE a2a_push_configs (
            agent_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            config_id TEXT NOT NULL,
            config TEXT NOT NULL,
            PRIMARY KEY (agent_id, task_id, config_id)
        )"),
        ],
    ),
    // Push configs list in the order they were first stored.
    (
        2,
        &[Both("ALTER TABLE a2a_push_configs ADD COLUMN position BIGINT NOT NULL DEFAULT 0")],
    ),
    // Push delivery progress: the last event delivered and the process delivering, so that
    // deliveries a stopped process left unfinished are resumed (see `leases.rs`). Configs
    // stored before count as delivered (their process kept no progress: resuming them would
    // send every task's whole history again), and rows an older version still writes during
    // a rolling upgrade name no process, which the sweep leaves to the process delivering.
    (
        3,
        &[
            Both("ALTER TABLE a2a_push_configs ADD COLUMN delivered_seq BIGINT NOT NULL DEFAULT 0"),
            Both("ALTER TABLE a2a_push_configs ADD COLUMN delivery_owner TEXT NOT NULL DEFAULT ''"),
            Both("ALTER TABLE a2a_push_configs ADD COLUMN claimed_ms BIGINT NOT NULL DEFAULT 0"),
            Both("UPDATE a2a_push_configs SET delivered_seq = 9223372036854775807"),
        ],
    ),
    // The principal a task belongs to, as a column with an index (an authenticated listing
    // is an indexed query), and owners qualified by their source: the bare names stored
    // before (`alice`) become `legacy:alice` in the column and in the owner event alike, to
    // be mapped to `token:alice`, `jwt:{iss}:alice`, … by `qualify_legacy_owners`, which
    // knows the configuration that vouched for them. Until then they match no caller.
    (
        4,
        &[
            Both("ALTER TABLE a2a_tasks ADD COLUMN principal TEXT"),
            Sqlite(
                "UPDATE a2a_task_events SET event = '{\"owner\":' || json_quote('legacy:' || json_extract(event, '$.owner')) || '}'
                WHERE seq = 2 AND event LIKE '{\"owner\":%'",
            ),
            Postgres(
                "UPDATE a2a_task_events SET event = '{\"owner\":' || to_json('legacy:' || (event::json ->> 'owner'))::text || '}'
                WHERE seq = 2 AND event LIKE '{\"owner\":%'",
            ),
            Sqlite(
                "UPDATE a2a_tasks SET principal = (SELECT json_extract(e.event, '$.owner') FROM a2a_task_events e
                WHERE e.agent_id = a2a_tasks.agent_id AND e.task_id = a2a_tasks.id AND e.seq = 2 AND e.event LIKE '{\"owner\":%')",
            ),
            Postgres(
                "UPDATE a2a_tasks t SET principal = (SELECT e.event::json ->> 'owner' FROM a2a_task_events e
                WHERE e.agent_id = t.agent_id AND e.task_id = t.id AND e.seq = 2 AND e.event LIKE '{\"owner\":%')",
            ),
            Both(
                "CREATE INDEX a2a_tasks_by_principal ON a2a_tasks (agent_id, principal, status_ms DESC, id DESC)",
            ),
            Both(
                "CREATE INDEX a2a_tasks_legacy_owner ON a2a_tasks (principal) WHERE principal LIKE 'legacy:%'",
            ),
        ],
    ),
    // The listing indexes, rebuilt:
    // - in ascending order: a listing reads them backwards for its newest-first order (both
    //   databases do), and a new task's entries go at the end, where a B-tree appends
    //   cheaply. Descending, every new entry went in at the front, which split pages there
    //   and rewrote two or three of them per commit;
    // - the principal index with owned tasks only: its one use is an authenticated listing
    //   (`principal = $n`, which implies the index's condition), and without authentication
    //   every task paid for an entry nobody reads.
    (
        5,
        &[
            Both("DROP INDEX a2a_tasks_by_status"),
            Both("CREATE INDEX a2a_tasks_by_status ON a2a_tasks (agent_id, status_ms, id)"),
            Both("DROP INDEX a2a_tasks_by_context"),
            Both(
                "CREATE INDEX a2a_tasks_by_context ON a2a_tasks (agent_id, context_id, status_ms, id)",
            ),
            Both("DROP INDEX a2a_tasks_by_principal"),
            Both(
                "CREATE INDEX a2a_tasks_by_principal ON a2a_tasks (agent_id, principal, status_ms, id) WHERE principal IS NOT NULL",
            ),
        ],
    ),
    // Identifiers compare as bytes on PostgreSQL, as they do on SQLite and in memory. They
    // took the database's collation before: with an ICU or glibc locale (`en-US`,
    // `en_US.UTF-8`, the defaults of common images) every key comparison of every index
    // insert and lookup went through the locale (an ICU `en-US` database: the writer's
    // backend spent 50.5 µs per blocking send, 45.6 with this), and listings ordered ties
    // of `status_ms` by the locale's order (`Z B b a _x`) rather than the ids' bytes. Even
    // `C.UTF-8` is not `C` to PostgreSQL before 17 (`strcoll` on a copy of each side).
    // Only the collation changes, so the rows are not rewritten; the indexes on these
    // columns are rebuilt, under an `ACCESS EXCLUSIVE` lock on each table meanwhile.
    // Replicas still running the previous version find their prepared statements refused
    // (`cached plan must not change result type`) and prepare them again (`stale_plans.rs`);
    // versions without that recovery (before 2026-12-05) must be stopped before this starts.
    (
        6,
        &[
            Postgres(
                "ALTER TABLE a2a_tasks ALTER COLUMN agent_id TYPE TEXT COLLATE \"C\", \
                ALTER COLUMN id TYPE TEXT COLLATE \"C\", ALTER COLUMN context_id TYPE TEXT COLLATE \"C\", \
                ALTER COLUMN owner TYPE TEXT COLLATE \"C\", ALTER COLUMN principal TYPE TEXT COLLATE \"C\"",
            ),
            Postgres(
                "ALTER TABLE a2a_task_events ALTER COLUMN agent_id TYPE TEXT COLLATE \"C\", \
                ALTER COLUMN task_id TYPE TEXT COLLATE \"C\"",
            ),
            Postgres(
                "ALTER TABLE a2a_push_configs ALTER COLUMN agent_id TYPE TEXT COLLATE \"C\", \
                ALTER COLUMN task_id TYPE TEXT COLLATE \"C\", ALTER COLUMN config_id TYPE TEXT COLLATE \"C\", \
                ALTER COLUMN delivery_owner TYPE TEXT COLLATE \"C\"",
            ),
            Postgres("ALTER TABLE a2a_instances ALTER COLUMN instance_id TYPE TEXT COLLATE \"C\""),
        ],
    ),
    // On SQLite, the keys looked up by equality lead with the id, not the agent: nearly every
    // task of a database shares its agent id, and SQLite compares a record's first field by
    // itself, going on to decode and compare the rest only when that field is equal. Led by
    // the agent, each of the ~65 key comparisons of a blocking send's inserts took the slow
    // path; led by the id, the first field decides nearly all of them (5 % fewer instructions
    // for the whole send). The lookups (`agent_id = ? AND id = ?`, the events of a task by
    // `seq`, a context's tasks by `status_ms`) read the same keys in the new order. A key
    // cannot change in place: both tables are copied into new ones, once, which takes a
    // while on a large database. PostgreSQL compares key columns one by one in any case
    // (collation `C` since migration 6), and keeps its keys.
    (
        7,
        &[
            Sqlite(
                "CREATE TABLE a2a_tasks_7 (
            agent_id TEXT NOT NULL,
            id TEXT NOT NULL,
            context_id TEXT NOT NULL,
            state BIGINT NOT NULL,
            status_ms BIGINT NOT NULL,
            seq BIGINT NOT NULL,
            created_ms BIGINT NOT NULL,
            updated_ms BIGINT NOT NULL,
            owner TEXT NOT NULL,
            principal TEXT,
            PRIMARY KEY (id, agent_id)
        )",
            ),
            Sqlite(
                "INSERT INTO a2a_tasks_7 (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner, principal)
                SELECT agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner, principal FROM a2a_tasks",
            ),
            Sqlite("DROP TABLE a2a_tasks"),
            Sqlite("ALTER TABLE a2a_tasks_7 RENAME TO a2a_tasks"),
            Sqlite("CREATE INDEX a2a_tasks_by_status ON a2a_tasks (agent_id, status_ms, id)"),
            Sqlite(
                "CREATE INDEX a2a_tasks_by_context ON a2a_tasks (context_id, agent_id, status_ms, id)",
            ),
            Sqlite("CREATE INDEX a2a_tasks_by_state ON a2a_tasks (state, updated_ms)"),
            Sqlite(
                "CREATE INDEX a2a_tasks_by_principal ON a2a_tasks (agent_id, principal, status_ms, id) WHERE principal IS NOT NULL",
            ),
            Sqlite(
                "CREATE INDEX a2a_tasks_legacy_owner ON a2a_tasks (principal) WHERE principal LIKE 'legacy:%'",
            ),
            Sqlite(
                "CREATE TABLE a2a_task_events_7 (
            agent_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            state BIGINT NOT NULL,
            event TEXT NOT NULL,
            PRIMARY KEY (task_id, agent_id, seq)
        )",
            ),
            Sqlite(
                "INSERT INTO a2a_task_events_7 (agent_id, task_id, seq, state, event)
                SELECT agent_id, task_id, seq, state, event FROM a2a_task_events",
            ),
            Sqlite("DROP TABLE a2a_task_events"),
            Sqlite("ALTER TABLE a2a_task_events_7 RENAME TO a2a_task_events"),
        ],
    ),
];

/// Key of the PostgreSQL advisory lock that serializes migrations across replicas.
const MIGRATION_LOCK: i64 = 0x0a2a_5707;

/// Applies the migrations the database has not seen yet, each in its own transaction. On
/// PostgreSQL an advisory lock makes replicas that start together take turns.
pub(crate) async fn migrate(pool: &AnyPool, dialect: Dialect) -> Result<(), sqlx::Error> {
    let mut conn = pool.acquire().await?;
    if dialect == Dialect::Postgres {
        sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut *conn)
            .await?;
    }
    let result = migrate_on(&mut conn, dialect).await;
    if dialect == Dialect::Postgres {
        sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut *conn)
            .await?;
    }
    result
}

async fn migrate_on(conn: &mut sqlx::AnyConnection, dialect: Dialect) -> Result<(), sqlx::Error> {
    use sqlx::Connection;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS a2a_schema (version BIGINT PRIMARY KEY, applied_ms BIGINT NOT NULL)",
    )
    .execute(&mut *conn)
    .await?;
    let current: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM a2a_schema")
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .next()
        .flatten();
    let current = current.unwrap_or(0);
    for (version, statements) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        let mut tx = conn.begin().await?;
        for statement in statements.iter().filter_map(|s| s.for_dialect(dialect)) {
            sqlx::query(statement).execute(&mut *tx).await?;
        }
        sqlx::query("INSERT INTO a2a_schema (version, applied_ms) VALUES ($1, $2)")
            .bind(*version)
            .bind(crate::now_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        tracing::info!(version, "applied task store migration");
    }
    Ok(())
}
