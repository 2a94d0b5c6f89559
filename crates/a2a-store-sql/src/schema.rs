//! The schema, as numbered migrations, applied at connect.
//!
//! `owner` is the store instance (process) that last appended to a task; `a2a_instances`
//! holds each live instance's heartbeat, so the tasks of a process that stopped beating can
//! be found (see `leases.rs`).
//! Every row carries the `agent_id` of the agent whose task it is, so the agents of one host
//! share a database without seeing each other's tasks.
//! Tasks are stored as their event log (`a2a_task_events`, one row per event) plus one small
//! row of what listings filter and sort on (`a2a_tasks`). Appending an event writes the event
//! and updates that row: the write is proportional to the event, never to the whole task.

use sqlx::AnyPool;

use crate::Dialect;

/// `(version, statements)`, in order. Never edit a released migration; add one. The DDL so
/// far is portable (TEXT, BIGINT, composite keys), so both dialects share it; a migration
/// that is not gets a per-dialect list here.
const MIGRATIONS: &[(i64, &[&str])] = &[
    (
        1,
        &[
            "CREATE TABLE a2a_tasks (
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
        )",
            "CREATE INDEX a2a_tasks_by_status ON a2a_tasks (agent_id, status_ms DESC, id DESC)",
            "CREATE INDEX a2a_tasks_by_context ON a2a_tasks (agent_id, context_id, status_ms DESC, id DESC)",
            "CREATE INDEX a2a_tasks_by_state ON a2a_tasks (state, updated_ms)",
            "CREATE TABLE a2a_instances (
            instance_id TEXT PRIMARY KEY,
            started_ms BIGINT NOT NULL,
            heartbeat_ms BIGINT NOT NULL
        )",
            "CREATE TABLE a2a_task_events (
            agent_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            state BIGINT NOT NULL,
            event TEXT NOT NULL,
            PRIMARY KEY (agent_id, task_id, seq)
        )",
            "CREATE TABLE a2a_push_configs (
            agent_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            config_id TEXT NOT NULL,
            config TEXT NOT NULL,
            PRIMARY KEY (agent_id, task_id, config_id)
        )",
        ],
    ),
    // Push configs list in the order they were first stored.
    (
        2,
        &["ALTER TABLE a2a_push_configs ADD COLUMN position BIGINT NOT NULL DEFAULT 0"],
    ),
    // Push delivery progress: the last event delivered and the process delivering, so that
    // deliveries a stopped process left unfinished are resumed (see `leases.rs`). Configs
    // stored before count as delivered (their process kept no progress: resuming them would
    // send every task's whole history again), and rows an older version still writes during
    // a rolling upgrade name no process, which the sweep leaves to the process delivering.
    (
        3,
        &[
            "ALTER TABLE a2a_push_configs ADD COLUMN delivered_seq BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE a2a_push_configs ADD COLUMN delivery_owner TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE a2a_push_configs ADD COLUMN claimed_ms BIGINT NOT NULL DEFAULT 0",
            "UPDATE a2a_push_configs SET delivered_seq = 9223372036854775807",
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
    let result = migrate_on(&mut conn).await;
    if dialect == Dialect::Postgres {
        sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut *conn)
            .await?;
    }
    result
}

async fn migrate_on(conn: &mut sqlx::AnyConnection) -> Result<(), sqlx::Error> {
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
        for statement in *statements {
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
