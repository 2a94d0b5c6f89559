//! Bounded growth: finished tasks are deleted after a while, and tasks left waiting for input
//! are found so the host can expire them.

use std::time::Duration;

use a2a_runtime::store::StoreError;
use a2a_types::TaskState;
use sqlx::Row;

use crate::{SqlTaskStore, backend, now_ms};

/// How long tasks are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetentionConfig {
    /// Finished (terminal) tasks are deleted with their events this long after their last
    /// change. `None`: kept forever.
    pub terminal: Option<Duration>,
    /// Tasks waiting for input or authentication with no change for this long are expired
    /// (the host cancels them). `None`: they wait forever.
    pub idle_interrupted: Option<Duration>,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        Self {
            terminal: Some(Duration::from_secs(7 * 24 * 3600)),
            idle_interrupted: Some(Duration::from_secs(24 * 3600)),
        }
    }
}

/// A task waiting for input (or authentication) for longer than allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IdleTask {
    /// The agent whose task it is.
    pub agent_id: String,
    /// The task.
    pub task_id: String,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

const TERMINAL: [TaskState; 4] = [
    TaskState::Completed,
    TaskState::Failed,
    TaskState::Canceled,
    TaskState::Rejected,
];

impl SqlTaskStore {
    /// Deletes, with their events, up to `limit` terminal tasks (of every agent) unchanged
    /// for `age`. Returns how many were deleted.
    pub async fn delete_finished(&self, age: Duration, limit: usize) -> Result<u64, StoreError> {
        let cutoff = now_ms().saturating_sub(millis(age));
        let states = TERMINAL
            .iter()
            .map(|s| s.number().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let victims = format!(
            "SELECT agent_id, id FROM a2a_tasks WHERE state IN ({states}) AND updated_ms < $1 LIMIT {limit}"
        );
        let mut conn = self.pool.acquire().await.map_err(backend)?;
        sqlx::query(self.dialect.begin_write())
            .execute(&mut *conn)
            .await
            .map_err(backend)?;
        let deleted = delete_victims(&mut conn, &victims, cutoff)
            .await
            .inspect_err(|e| self.stale.note(e));
        let end = if deleted.is_ok() {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        let ended = sqlx::query(end).execute(&mut *conn).await;
        let n = deleted.map_err(backend)?;
        ended.map_err(backend)?;
        Ok(n)
    }

    /// Up to `limit` tasks (of every agent) waiting for input or authentication with no
    /// change for `idle`.
    pub async fn idle_interrupted(
        &self,
        idle: Duration,
        limit: usize,
    ) -> Result<Vec<IdleTask>, StoreError> {
        let cutoff = now_ms().saturating_sub(millis(idle));
        let sql = format!(
            "SELECT agent_id, id FROM a2a_tasks WHERE state IN ($1, $2) AND updated_ms < $3 LIMIT {limit}"
        );
        let rows = self
            .rows(|| {
                sqlx::query(&sql)
                    .bind(i64::from(TaskState::InputRequired.number()))
                    .bind(i64::from(TaskState::AuthRequired.number()))
                    .bind(cutoff)
            })
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|r| {
                Ok(IdleTask {
                    agent_id: r.try_get("agent_id").map_err(backend)?,
                    task_id: r.try_get("id").map_err(backend)?,
                })
            })
            .collect()
    }
}

/// Deletes the tasks `victims` selects (unchanged since `cutoff`), rows of every table.
async fn delete_victims(
    conn: &mut sqlx::AnyConnection,
    victims: &str,
    cutoff: i64,
) -> Result<u64, sqlx::Error> {
    let rows = sqlx::query(victims)
        .bind(cutoff)
        .fetch_all(&mut *conn)
        .await?;
    for r in &rows {
        let agent: String = r.try_get("agent_id")?;
        let id: String = r.try_get("id")?;
        for delete in [
            "DELETE FROM a2a_task_events WHERE agent_id = $1 AND task_id = $2",
            "DELETE FROM a2a_push_configs WHERE agent_id = $1 AND task_id = $2",
            "DELETE FROM a2a_tasks WHERE agent_id = $1 AND id = $2",
        ] {
            sqlx::query(delete)
                .bind(&agent)
                .bind(&id)
                .execute(&mut *conn)
                .await?;
        }
    }
    Ok(rows.len() as u64)
}
