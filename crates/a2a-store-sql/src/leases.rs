//! Leases: finding the tasks of a process that stopped.
//!
//! Every store instance (one per process) writes a heartbeat row; every append records the
//! instance as the task's `owner`. A task that is SUBMITTED or WORKING whose owner has not
//! beaten for [`LeaseConfig::expiry`] was left behind by a crash (kill -9, power loss, a
//! lost machine): [`SqlTaskStore::abandoned`] finds it, and the host fails it through its
//! runtime so that subscribers hear about it. One heartbeat write per process per interval
//! renews the leases of all its tasks at once.
//!
//! Push deliveries have leases of their own: each config names the process delivering to
//! it and the last event delivered. [`SqlTaskStore::orphaned_push`] finds the configs with
//! events left to deliver whose process stopped, and [`SqlTaskStore::claim_push`] hands one
//! to this process, which resumes after the last event delivered.

use std::time::Duration;

use sqlx::Row;

use crate::{SqlTaskStore, backend, now_ms, seq_of};
use a2a_runtime::store::StoreError;

/// How long, and how far apart, a checkpoint that found another one running is tried again.
const CHECKPOINT_TRYING: Duration = Duration::from_secs(1);
const CHECKPOINT_RETRY: Duration = Duration::from_millis(10);

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

/// A push config whose delivering process stopped with events left to deliver.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OrphanedPush {
    /// The agent whose task it is.
    pub agent_id: String,
    /// The task.
    pub task_id: String,
    /// The config's id.
    pub config_id: String,
    /// The last event delivered (resume after it).
    pub delivered_seq: u64,
    /// The process that was delivering.
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
        let beat = sqlx::query(
            "INSERT INTO a2a_instances (instance_id, started_ms, heartbeat_ms) VALUES ($1, $2, $2)
             ON CONFLICT (instance_id) DO UPDATE SET heartbeat_ms = $2",
        )
        .bind(&*self.instance)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(backend);
        if let Err(StoreError::Unavailable(_)) = beat {
            self.writers.health.failed();
        }
        beat.map(drop)
    }

    /// Whether another process has beaten within `expiry`, remembered for
    /// [`TaskStore::may_have_peers`](a2a_runtime::store::TaskStore::may_have_peers) (on a
    /// read error: assumed so). Called after each heartbeat, so a process that starts on the
    /// same database is known within a heartbeat.
    pub async fn refresh_peers(&self, expiry: Duration) -> bool {
        let since = now_ms() - millis(expiry);
        let others = self
            .rows(|| {
                sqlx::query(
                    "SELECT COUNT(*) FROM a2a_instances WHERE instance_id <> $1 AND heartbeat_ms > $2",
                )
                .bind(&*self.instance)
                .bind(since)
            })
            .await
            .and_then(|rows| match rows.first() {
            Some(row) => row.try_get::<i64, _>(0),
            None => Ok(1),
        });
        let peers = others.map_or(true, |n| n > 0);
        self.peers
            .store(peers, std::sync::atomic::Ordering::Relaxed);
        peers
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

    /// On SQLite, copies every committed page from the write-ahead log into the database
    /// file and empties the log (`PRAGMA wal_checkpoint(TRUNCATE)`), so that the file alone
    /// holds every task: a clean shutdown calls it last, and a user who copies `a2a.db`
    /// afterwards copies everything. `Ok(false)` when a reader kept the log from being
    /// emptied (SQLite waits for readers up to its busy timeout). Nothing to do on PostgreSQL.
    pub async fn checkpoint(&self) -> Result<bool, StoreError> {
        if self.dialect != crate::Dialect::Sqlite {
            return Ok(true);
        }
        // The store's checkpointer may be in a pass (a second checkpoint is refused at once,
        // whatever the busy timeout); it ends within milliseconds. (A reader in the way is
        // waited for by SQLite itself, up to the busy timeout.)
        let deadline = std::time::Instant::now() + CHECKPOINT_TRYING;
        loop {
            let rows = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .fetch_all(&self.pool)
                .await
                .map_err(backend)?;
            // (busy, frames in the log, frames checkpointed): busy 0 means it completed.
            let busy: i64 = match rows.first() {
                Some(row) => row.try_get(0).map_err(backend)?,
                None => 1,
            };
            if busy == 0 {
                return Ok(true);
            }
            if std::time::Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(CHECKPOINT_RETRY).await;
        }
    }

    /// SUBMITTED or WORKING tasks, of every agent, whose owner has been silent for
    /// `expiry` (at most `limit` of them). Also forgets instances silent for much longer.
    ///
    /// Never this process's own tasks: its runtime knows which of them it runs, and fails
    /// those whose turn ended while the store refused writes once the store is back, with
    /// that reason. When its heartbeat could not be written for a while (a full disk fails
    /// writes while reads still work), its own row looked silent, and its sweep failed
    /// those tasks too, as left by a process that stopped, which this one had not.
    pub async fn abandoned(
        &self,
        expiry: Duration,
        limit: usize,
    ) -> Result<Vec<AbandonedTask>, StoreError> {
        let cutoff = now_ms().saturating_sub(millis(expiry));
        let sql = format!(
            "SELECT t.agent_id, t.id, t.seq, t.owner FROM a2a_tasks t
             LEFT JOIN a2a_instances i ON i.instance_id = t.owner
             WHERE t.state IN ($1, $2) AND t.updated_ms < $3
               AND (i.heartbeat_ms IS NULL OR i.heartbeat_ms < $3)
               AND t.owner <> $4
             LIMIT {limit}"
        );
        let rows = self
            .rows(|| {
                sqlx::query(&sql)
                    .bind(i64::from(a2a_types::TaskState::Submitted.number()))
                    .bind(i64::from(a2a_types::TaskState::Working.number()))
                    .bind(cutoff)
                    .bind(&*self.instance)
            })
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
        // Instances silent for a hundred expiries own nothing running any more (their push
        // configs are found by `orphaned_push` before: it needs no instance row).
        sqlx::query("DELETE FROM a2a_instances WHERE heartbeat_ms < $1")
            .bind(now_ms().saturating_sub(millis(expiry).saturating_mul(100)))
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(out)
    }

    /// Push configs of `agents` with events left to deliver (the task's log goes on past
    /// the last delivered) whose delivering process has been silent for `expiry` (or is
    /// gone), at most `limit` of them. Configs claimed less than `expiry` ago are left
    /// alone: their process may not have beaten yet.
    pub async fn orphaned_push(
        &self,
        expiry: Duration,
        agents: &[&str],
        limit: usize,
    ) -> Result<Vec<OrphanedPush>, StoreError> {
        if agents.is_empty() {
            return Ok(Vec::new());
        }
        let cutoff = now_ms().saturating_sub(millis(expiry));
        let agents_in = (0..agents.len())
            .map(|i| format!("${}", i + 3))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT c.agent_id, c.task_id, c.config_id, c.delivered_seq, c.delivery_owner
             FROM a2a_push_configs c
             JOIN a2a_tasks t ON t.agent_id = c.agent_id AND t.id = c.task_id
             LEFT JOIN a2a_instances i ON i.instance_id = c.delivery_owner
             WHERE c.delivered_seq < t.seq AND c.claimed_ms < $1
               AND c.delivery_owner <> $2 AND c.delivery_owner <> ''
               AND c.agent_id IN ({agents_in})
               AND (i.heartbeat_ms IS NULL OR i.heartbeat_ms < $1)
             LIMIT {limit}"
        );
        let rows = self
            .rows(|| {
                let mut query = sqlx::query(&sql).bind(cutoff).bind(&*self.instance);
                for agent in agents {
                    query = query.bind(*agent);
                }
                query
            })
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|r| {
                Ok(OrphanedPush {
                    agent_id: r.try_get("agent_id").map_err(backend)?,
                    task_id: r.try_get("task_id").map_err(backend)?,
                    config_id: r.try_get("config_id").map_err(backend)?,
                    delivered_seq: seq_of(r.try_get("delivered_seq").map_err(backend)?),
                    owner: r.try_get("delivery_owner").map_err(backend)?,
                })
            })
            .collect()
    }

    /// Makes this process the one delivering to `orphan`'s config; `false` when another
    /// process claimed it first (or it was deleted).
    pub async fn claim_push(&self, orphan: &OrphanedPush) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE a2a_push_configs SET delivery_owner = $1, claimed_ms = $2
             WHERE agent_id = $3 AND task_id = $4 AND config_id = $5 AND delivery_owner = $6",
        )
        .bind(&*self.instance)
        .bind(now_ms())
        .bind(&orphan.agent_id)
        .bind(&orphan.task_id)
        .bind(&orphan.config_id)
        .bind(&orphan.owner)
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives back a config [`claim_push`](Self::claim_push) took whose deliveries could
    /// not be resumed here. The release counts as a claim for [`orphaned_push`]'s `expiry`:
    /// a sweep (of any process) tries again after that, not at once, so a lasting failure is
    /// retried (and logged) once per expiry rather than on every sweep.
    ///
    /// [`orphaned_push`]: Self::orphaned_push
    pub async fn release_push(&self, orphan: &OrphanedPush) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE a2a_push_configs SET delivery_owner = $1, claimed_ms = $6
             WHERE agent_id = $2 AND task_id = $3 AND config_id = $4 AND delivery_owner = $5",
        )
        .bind(&orphan.owner)
        .bind(&orphan.agent_id)
        .bind(&orphan.task_id)
        .bind(&orphan.config_id)
        .bind(&*self.instance)
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }
}
