//! Leases: finding the tasks of a process that stopped.
//!
//! Every store instance (one per process) writes a heartbeat row; every append records the
//! instance as the task's `owner`. A task that is SUBMITTED or WORKING whose owner has not
//! beaten for [`LeaseConfig::expiry`] was left behind by a crash (kill -9, power loss, a
//! lost machine): [`SqlTaskStore::abandoned`] finds it, and the host fails it through its
//! runtime so that subscribers hear about it. One heartbeat write per process per interval
//! renews the leases of all its tasks at once.

use std::time::Duration;

use sqlx::Row;

use crate::{SqlTaskStore, backend, now_ms, seq_of};
use a2a_server::store::StoreError;

/// How often a process beats and how long silence means it stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseConfig {
    /// Heartbeat and sweep interval.
    pub heartbeat: Duration,
    /// A process silent for this long is considered gone, and its running tasks abandoned.
    pub expiry: Duration,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        Self {
            heartbeat: Duration::from_secs(2),
            expiry: Duration::from_secs(10),
        }
    }
}

impl LeaseConfig {
    /// Abandoned after `expiry`, beating a fifth of that (at least every 100 ms).
    pub fn with_expiry(expiry: Duration) -> Self {
        Self {
            heartbeat: (expiry / 5).max(Duration::from_millis(100)),
            expiry,
        }
    }
}

/// A running task whose process stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AbandonedTask {
    /// The agent whose task it is.
    pub agent_id: String,
    /// The task.
    pub task_id: String,
    /// Its log position when found.
    pub seq: u64,
    /// The instance that ran it.
    pub owner: String,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl SqlTaskStore {
    /// This process's instance id (the owner recorded on the tasks it writes).
    pub fn instance_id(&self) -> &str {
        &self.instance
    }

    /// Records that this process is alive (renewing the leases of every task it owns).
    pub async fn heartbeat(&self) -> Result<(), StoreError> {
        let now = now_ms();
        sqlx::query(
            "INSERT INTO a2a_instances (instance_id, started_ms, heartbeat_ms) VALUES ($1, $2, $2)
             ON CONFLICT (instance_id) DO UPDATE SET heartbeat_ms = $2",
        )
        .bind(&*self.instance)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    /// Removes this process's heartbeat (on a clean shutdown, after its tasks ended).
    pub async fn retire(&self) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM a2a_instances WHERE instance_id = $1")
            .bind(&*self.instance)
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }

    /// SUBMITTED or WORKING tasks, of every agent, whose owner has been silent for
    /// `expiry` (at most `limit` of them). Also forgets instances silent for much longer.
    pub async fn abandoned(
        &self,
        expiry: Duration,
        limit: usize,
    ) -> Result<Vec<AbandonedTask>, StoreError> {
        let cutoff = now_ms().saturating_sub(millis(expiry));
        let rows = sqlx::query(&format!(
            "SELECT t.agent_id, t.id, t.seq, t.owner FROM a2a_tasks t
             LEFT JOIN a2a_instances i ON i.instance_id = t.owner
             WHERE t.state IN ($1, $2) AND t.updated_ms < $3
               AND (i.heartbeat_ms IS NULL OR i.heartbeat_ms < $3)
             LIMIT {limit}"
        ))
        .bind(i64::from(a2a_types::TaskState::Submitted.number()))
        .bind(i64::from(a2a_types::TaskState::Working.number()))
        .bind(cutoff)
        .fetch_all(&self.pool)
        .await
        .map_err(backend)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.push(AbandonedTask {
                agent_id: r.try_get("agent_id").map_err(backend)?,
                task_id: r.try_get("id").map_err(backend)?,
                seq: seq_of(r.try_get("seq").map_err(backend)?),
                owner: r.try_get("owner").map_err(backend)?,
            });
        }
        // Instances silent for a hundred expiries own nothing running any more.
        sqlx::query("DELETE FROM a2a_instances WHERE heartbeat_ms < $1")
            .bind(now_ms().saturating_sub(millis(expiry).saturating_mul(100)))
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(out)
    }
}
