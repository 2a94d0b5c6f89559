//! Group commit: appends are queued to writer tasks, each owning one connection, which apply
//! every queued append in one transaction (one savepoint each, so one refused append does
//! not undo the others) and answer each caller once the transaction is committed. A caller
//! is answered only after its events are durable, and the cost of a commit is shared by all
//! the appends that arrived while the previous one was running.
//!
//! Appends to one task always go to the same writer (by a hash of its id), so they are
//! applied in the order they were made.

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use a2a_server::store::{StoreError, TaskEvent, TaskEventRecord};
use a2a_types::TaskState;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyPool, Row};
use tokio::sync::{mpsc, oneshot};

use crate::{Dialect, backend, codec, now_ms, seq_of, state_of};

/// Most appends applied in one transaction.
const MAX_BATCH: usize = 256;

/// One append, as queued.
#[derive(Debug)]
pub(crate) struct Append {
    pub(crate) agent: Arc<str>,
    pub(crate) task_id: String,
    pub(crate) expected_seq: u64,
    pub(crate) events: Vec<TaskEvent>,
}

type Reply = oneshot::Sender<Result<Vec<Arc<TaskEventRecord>>, StoreError>>;

/// The writer tasks of one database.
#[derive(Debug, Clone)]
pub(crate) struct Writers {
    queues: Arc<[mpsc::Sender<(Append, Reply)>]>,
    hasher: foldhash::fast::FixedState,
}

impl Writers {
    /// `count` writers, each with a connection of `pool`, recording `instance` as the owner
    /// of the tasks they write.
    pub(crate) async fn start(
        pool: &AnyPool,
        count: usize,
        dialect: Dialect,
        instance: Arc<str>,
    ) -> Result<Self, sqlx::Error> {
        let mut queues = Vec::with_capacity(count);
        for _ in 0..count.max(1) {
            let conn = pool.acquire().await?;
            let (tx, rx) = mpsc::channel(4 * MAX_BATCH);
            tokio::spawn(run(conn, rx, dialect, instance.clone()));
            queues.push(tx);
        }
        Ok(Self {
            queues: queues.into(),
            hasher: foldhash::fast::FixedState::with_seed(0x5eed),
        })
    }

    pub(crate) async fn append(
        &self,
        job: Append,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
        let mut h = self.hasher.build_hasher();
        job.task_id.hash(&mut h);
        let i = (h.finish() % self.queues.len() as u64) as usize;
        let (reply, answer) = oneshot::channel();
        let closed = || StoreError::Backend("the task store's writer stopped".into());
        self.queues[i]
            .send((job, reply))
            .await
            .map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    }
}

async fn run(
    mut conn: PoolConnection<Any>,
    mut rx: mpsc::Receiver<(Append, Reply)>,
    dialect: Dialect,
    instance: Arc<str>,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let jobs = std::mem::replace(&mut batch, Vec::with_capacity(MAX_BATCH));
        for (reply, result) in apply_batch(&mut conn, jobs, dialect, &instance).await {
            let _ = reply.send(result);
        }
    }
}

type Answered = Vec<(Reply, Result<Vec<Arc<TaskEventRecord>>, StoreError>)>;

/// The same failure for every caller of a batch.
fn failed_all(replies: impl IntoIterator<Item = Reply>, e: &sqlx::Error) -> Answered {
    replies
        .into_iter()
        .map(|r| (r, Err(StoreError::Backend(e.to_string().into()))))
        .collect()
}

/// Applies every append of `batch` in one transaction; one answer per append.
async fn apply_batch(
    conn: &mut PoolConnection<Any>,
    batch: Vec<(Append, Reply)>,
    dialect: Dialect,
    instance: &str,
) -> Answered {
    if let Err(e) = sqlx::query("BEGIN").execute(&mut **conn).await {
        return failed_all(batch.into_iter().map(|(_, r)| r), &e);
    }
    let mut results: Answered = Vec::with_capacity(batch.len());
    for (job, reply) in batch {
        let savepoint = sqlx::query("SAVEPOINT a").execute(&mut **conn).await;
        if let Err(e) = savepoint {
            results.push((reply, Err(backend(e))));
            continue;
        }
        let result = apply(conn, job, dialect, instance).await;
        let end = if result.is_ok() {
            "RELEASE SAVEPOINT a"
        } else {
            "ROLLBACK TO SAVEPOINT a"
        };
        let ended = sqlx::query(end).execute(&mut **conn).await;
        if result.is_err() && ended.is_ok() {
            // Release the rolled-back savepoint too, so savepoints do not pile up.
            let _ = sqlx::query("RELEASE SAVEPOINT a").execute(&mut **conn).await;
        }
        results.push((reply, result));
        if let Err(e) = ended {
            let _ = sqlx::query("ROLLBACK").execute(&mut **conn).await;
            return failed_all(results.into_iter().map(|(r, _)| r), &e);
        }
    }
    if let Err(e) = sqlx::query("COMMIT").execute(&mut **conn).await {
        let _ = sqlx::query("ROLLBACK").execute(&mut **conn).await;
        return failed_all(results.into_iter().map(|(r, _)| r), &e);
    }
    results
}

/// One append inside the batch's transaction: check the expected sequence number, insert the
/// events, create or update the task's row.
async fn apply(
    conn: &mut PoolConnection<Any>,
    job: Append,
    dialect: Dialect,
    instance: &str,
) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
    let Append {
        agent,
        task_id,
        expected_seq,
        events,
    } = job;
    let lock = match dialect {
        Dialect::Postgres => " FOR UPDATE",
        Dialect::Sqlite => "",
    };
    let row = sqlx::query(&format!(
        "SELECT seq, state, context_id, status_ms FROM a2a_tasks WHERE agent_id = $1 AND id = $2{lock}"
    ))
    .bind(&*agent)
    .bind(task_id.as_str())
    .fetch_optional(&mut **conn)
    .await
    .map_err(backend)?;
    let (mut state, context_id, mut status_ms) = match (&row, expected_seq) {
        (Some(_), 0) => return Err(StoreError::AlreadyExists(task_id.clone())),
        (None, 0) => match events.first() {
            Some(TaskEvent::Created(t)) => (TaskState::Unspecified, t.context_id.clone(), 0),
            _ => return Err(StoreError::NotCreated(task_id.clone())),
        },
        (None, _) => return Err(StoreError::NotFound(task_id.clone())),
        (Some(r), expected) => {
            let actual = seq_of(r.try_get("seq").map_err(backend)?);
            if actual != expected {
                return Err(StoreError::Conflict {
                    task_id: task_id.clone(),
                    expected,
                    actual,
                });
            }
            (
                state_of(r.try_get("state").map_err(backend)?),
                r.try_get::<String, _>("context_id").map_err(backend)?,
                r.try_get::<i64, _>("status_ms").map_err(backend)?,
            )
        }
    };
    let mut records = Vec::with_capacity(events.len());
    let mut seq = expected_seq;
    for event in events {
        match &event {
            TaskEvent::Created(t) => {
                state = t.status.state;
                status_ms = millis(t.status.timestamp);
            }
            TaskEvent::Status(s) => {
                state = s.status.state;
                status_ms = millis(s.status.timestamp);
            }
            _ => {}
        }
        seq += 1;
        let json = codec::encode(&event).map_err(StoreError::Serialization)?;
        sqlx::query(
            "INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&*agent)
        .bind(task_id.as_str())
        .bind(i64::try_from(seq).unwrap_or(i64::MAX))
        .bind(i64::from(state.number()))
        .bind(json)
        .execute(&mut **conn)
        .await
        .map_err(backend)?;
        records.push(Arc::new(TaskEventRecord::new(seq, state, event)));
    }
    let now = now_ms();
    let seq_i = i64::try_from(seq).unwrap_or(i64::MAX);
    let state_i = i64::from(state.number());
    let written = if expected_seq == 0 {
        sqlx::query(
            "INSERT INTO a2a_tasks (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)",
        )
        .bind(&*agent)
        .bind(task_id.as_str())
        .bind(context_id)
        .bind(state_i)
        .bind(status_ms)
        .bind(seq_i)
        .bind(now)
        .bind(instance)
        .execute(&mut **conn)
        .await
    } else {
        sqlx::query(
            "UPDATE a2a_tasks SET state = $3, status_ms = $4, seq = $5, updated_ms = $6, owner = $7 WHERE agent_id = $1 AND id = $2",
        )
        .bind(&*agent)
        .bind(task_id.as_str())
        .bind(state_i)
        .bind(status_ms)
        .bind(seq_i)
        .bind(now)
        .bind(instance)
        .execute(&mut **conn)
        .await
    };
    match written {
        Ok(_) => Ok(records),
        // Two creators raced on different writers' connections; the other one won.
        Err(e)
            if e.as_database_error()
                .is_some_and(|d| d.is_unique_violation()) =>
        {
            Err(StoreError::AlreadyExists(task_id.clone()))
        }
        Err(e) => Err(backend(e)),
    }
}

fn millis(t: Option<chrono::DateTime<chrono::Utc>>) -> i64 {
    t.map_or(0, |t| t.timestamp_millis())
}
