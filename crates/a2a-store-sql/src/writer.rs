//! Group commit: appends are queued to writer tasks, each owning one connection, which apply
//! every queued append in one transaction (an append that is refused, say for a stale
//! sequence number, is checked before it writes anything, so it does not undo the others)
//! and answer each caller once the transaction is committed. A caller
//! is answered only after its events are durable, and the cost of a commit is shared by all
//! the appends that arrived while the previous one was running.
//!
//! Appends to one task always go to the same writer (by a hash of its id), so they are
//! applied in the order they were made.

use std::hash::BuildHasher;
use std::sync::Arc;

use a2a_server::store::{StoreError, TaskEvent, TaskEventRecord, sort_millis, status_set_by};
use a2a_types::TaskState;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyPool, Row};
use tokio::sync::{mpsc, oneshot};

use crate::{Dialect, codec, now_ms, seq_of, state_of};

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
        let i = (self.hasher.hash_one(&job.task_id) % self.queues.len() as u64) as usize;
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

/// The same failure for every caller of a batch. `sqlx::Error` cannot be cloned, so each
/// caller gets its text; the writer logs the error itself once.
fn failed_all(replies: impl IntoIterator<Item = Reply>, e: &sqlx::Error) -> Answered {
    tracing::error!(error = %e, "a batch of task store writes failed and was rolled back");
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
    if let Err(e) = sqlx::query(dialect.begin_write())
        .execute(&mut **conn)
        .await
    {
        return failed_all(batch.into_iter().map(|(_, r)| r), &e);
    }
    let mut results: Answered = Vec::with_capacity(batch.len());
    let mut jobs = batch.into_iter();
    while let Some((job, reply)) = jobs.next() {
        // A refused append writes nothing; a database error while writing leaves the
        // transaction in doubt, so the whole batch is rolled back and every caller told,
        // including those whose appends were not reached.
        match apply(conn, job, dialect, instance).await {
            Ok(result) => results.push((reply, result)),
            Err(e) => {
                let _ = sqlx::query("ROLLBACK").execute(&mut **conn).await;
                let replies = results
                    .into_iter()
                    .map(|(r, _)| r)
                    .chain(std::iter::once(reply))
                    .chain(jobs.map(|(_, r)| r));
                return failed_all(replies, &e);
            }
        }
    }
    if let Err(e) = sqlx::query("COMMIT").execute(&mut **conn).await {
        let _ = sqlx::query("ROLLBACK").execute(&mut **conn).await;
        return failed_all(results.into_iter().map(|(r, _)| r), &e);
    }
    results
}

/// One append inside the batch's transaction: check the expected sequence number (a refused
/// append writes nothing: the inner error), then create or update the task's row and insert
/// the events in one statement. The outer error is a database failure while writing.
async fn apply(
    conn: &mut PoolConnection<Any>,
    job: Append,
    dialect: Dialect,
    instance: &str,
) -> Result<Result<Vec<Arc<TaskEventRecord>>, StoreError>, sqlx::Error> {
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
    .await?;
    let refused = |e: StoreError| Ok(Err(e));
    let (mut state, context_id, mut status_ms) = match (&row, expected_seq) {
        (Some(_), 0) => return refused(StoreError::AlreadyExists(task_id)),
        (None, 0) => match events.first() {
            Some(TaskEvent::Created(t)) => (TaskState::Unspecified, t.context_id.clone(), 0),
            _ => return refused(StoreError::NotCreated(task_id)),
        },
        (None, _) => return refused(StoreError::NotFound(task_id)),
        (Some(r), expected) => {
            let actual = seq_of(r.try_get("seq")?);
            if actual != expected {
                return refused(StoreError::Conflict {
                    task_id,
                    expected,
                    actual,
                });
            }
            (
                state_of(r.try_get("state")?),
                r.try_get::<String, _>("context_id")?,
                r.try_get::<i64, _>("status_ms")?,
            )
        }
    };
    // Encode everything before writing anything.
    let mut rows = Vec::with_capacity(events.len());
    let mut seq = expected_seq;
    for event in events {
        if let Some((new_state, at)) = status_set_by(&event) {
            state = new_state;
            status_ms = sort_millis(at);
        }
        seq += 1;
        let json = match codec::encode(&event) {
            Ok(j) => j,
            Err(e) => return refused(StoreError::Serialization(e)),
        };
        rows.push((json, TaskEventRecord::new(seq, state, event)));
    }
    let now = now_ms();
    let seq_i = i64::try_from(seq).unwrap_or(i64::MAX);
    let state_i = i64::from(state.number());
    // One statement creates or updates the task's row (the sequence check above decided which).
    sqlx::query(
        "INSERT INTO a2a_tasks (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)
         ON CONFLICT (agent_id, id) DO UPDATE SET state = excluded.state, status_ms = excluded.status_ms,
             seq = excluded.seq, updated_ms = excluded.updated_ms, owner = excluded.owner",
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
    .await?;
    if !rows.is_empty() {
        let placeholders: Vec<String> = (0..rows.len())
            .map(|i| {
                let b = i * 5;
                format!(
                    "(${}, ${}, ${}, ${}, ${})",
                    b + 1,
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event) VALUES {}",
            placeholders.join(", ")
        );
        let mut q = sqlx::query(&sql);
        for (json, r) in &rows {
            q = q
                .bind(&*agent)
                .bind(task_id.as_str())
                .bind(i64::try_from(r.seq).unwrap_or(i64::MAX))
                .bind(i64::from(r.state.number()))
                .bind(json.as_str());
        }
        q.execute(&mut **conn).await?;
    }
    Ok(Ok(rows.into_iter().map(|(_, r)| Arc::new(r)).collect()))
}
