//! Group commit: appends are queued to writer tasks, each owning one connection, which apply
//! every queued append in one transaction and answer each caller once it is committed. A
//! caller is answered only after its events are durable, and the cost of a commit is shared
//! by all the appends that arrived while the previous one was running.
//!
//! A batch costs a fixed number of statements, whatever its size: the new task rows in one
//! insert, the sequence-checked updates of existing rows in one update, and every event in
//! one insert, each taking the whole batch as one JSON parameter (so the statement text, and
//! its prepared form, never changes). An append that is refused (a stale sequence number, an
//! existing id) is left out before its events are written, so it does not undo the others.
//!
//! Appends to one task always go to the same writer (by a hash of its id), so they are
//! applied in the order they were made. Each writer remembers the position (sequence number
//! and state) of the unfinished tasks it wrote, so that the common append, by the process
//! that wrote the task last, needs no read; the update's sequence check in the database
//! stays the authority, so another replica's write is still caught.

use std::collections::{HashMap, HashSet};
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

/// Most task positions a writer remembers; beyond it the memory is cleared (it is only a
/// shortcut: a forgotten task costs one read on its next append).
const MAX_REMEMBERED: usize = 16_384;

/// One append, as queued.
#[derive(Debug)]
pub(crate) struct Append {
    pub(crate) agent: Arc<str>,
    pub(crate) task_id: String,
    pub(crate) expected_seq: u64,
    pub(crate) events: Vec<TaskEvent>,
}

type Answer = Result<Vec<Arc<TaskEventRecord>>, StoreError>;
type Reply = oneshot::Sender<Answer>;

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
            let writer = Writer {
                conn,
                dialect,
                sql: Statements::of(dialect),
                instance: instance.clone(),
                positions: HashMap::new(),
            };
            tokio::spawn(writer.run(rx));
            queues.push(tx);
        }
        Ok(Self {
            queues: queues.into(),
            hasher: foldhash::fast::FixedState::with_seed(0x5eed),
        })
    }

    pub(crate) async fn append(&self, job: Append) -> Answer {
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

/// The batch statements of a dialect. Each takes the batch as a JSON array of arrays in `$1`
/// (SQLite reads it with `json_each`, PostgreSQL with `json_array_elements`).
struct Statements {
    /// `$1`: `[agent, id, seq, state]`… of tasks this writer does not know.
    positions: &'static str,
    /// `$1`: `[agent, id, context, state, status_ms, seq]`…, `$2` now, `$3` owner;
    /// returns the rows created (an existing id is skipped).
    create: &'static str,
    /// `$1`: `[agent, id, expected seq, seq, state, status_ms or null]`…, `$2` now, `$3` owner;
    /// returns the rows updated (a row whose seq moved on is skipped).
    update: &'static str,
    /// `$1`: `[agent, task, seq, state, event]`….
    events: &'static str,
}

impl Statements {
    fn of(dialect: Dialect) -> Self {
        match dialect {
            Dialect::Sqlite => Self {
                positions: "SELECT t.agent_id, t.id, t.seq, t.state FROM json_each($1) AS j
                    JOIN a2a_tasks AS t ON t.agent_id = json_extract(j.value, '$[0]') AND t.id = json_extract(j.value, '$[1]')",
                create: "INSERT INTO a2a_tasks (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner)
                    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
                        json_extract(value, '$[3]'), json_extract(value, '$[4]'), json_extract(value, '$[5]'), $2, $2, $3
                    FROM json_each($1) WHERE true
                    ON CONFLICT (agent_id, id) DO NOTHING
                    RETURNING agent_id, id",
                update: "UPDATE a2a_tasks SET seq = json_extract(j.value, '$[3]'), state = json_extract(j.value, '$[4]'),
                        status_ms = COALESCE(json_extract(j.value, '$[5]'), a2a_tasks.status_ms), updated_ms = $2, owner = $3
                    FROM json_each($1) AS j
                    WHERE a2a_tasks.agent_id = json_extract(j.value, '$[0]')
                        AND a2a_tasks.id = json_extract(j.value, '$[1]')
                        AND a2a_tasks.seq = json_extract(j.value, '$[2]')
                    RETURNING a2a_tasks.agent_id, a2a_tasks.id",
                events: "INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event)
                    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
                        json_extract(value, '$[3]'), json_extract(value, '$[4]')
                    FROM json_each($1)",
            },
            Dialect::Postgres => Self {
                positions: "SELECT t.agent_id, t.id, t.seq, t.state FROM json_array_elements($1::json) AS j
                    JOIN a2a_tasks AS t ON t.agent_id = j->>0 AND t.id = j->>1",
                create: "INSERT INTO a2a_tasks (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner)
                    SELECT j->>0, j->>1, j->>2, (j->>3)::bigint, (j->>4)::bigint, (j->>5)::bigint, $2, $2, $3
                    FROM json_array_elements($1::json) AS j
                    ON CONFLICT (agent_id, id) DO NOTHING
                    RETURNING agent_id, id",
                update: "UPDATE a2a_tasks AS t SET seq = (j->>3)::bigint, state = (j->>4)::bigint,
                        status_ms = COALESCE((j->>5)::bigint, t.status_ms), updated_ms = $2, owner = $3
                    FROM json_array_elements($1::json) AS j
                    WHERE t.agent_id = j->>0 AND t.id = j->>1 AND t.seq = (j->>2)::bigint
                    RETURNING t.agent_id, t.id",
                events: "INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event)
                    SELECT j->>0, j->>1, (j->>2)::bigint, (j->>3)::bigint, j->>4
                    FROM json_array_elements($1::json) AS j",
            },
        }
    }
}

/// A task, as the writer names it.
type Key = (Arc<str>, String);

/// Where a task's log stands: its last sequence number and state.
#[derive(Debug, Clone, Copy)]
struct Position {
    seq: u64,
    state: TaskState,
}

struct Writer {
    conn: PoolConnection<Any>,
    dialect: Dialect,
    sql: Statements,
    instance: Arc<str>,
    /// Positions of unfinished tasks this writer appended to.
    positions: HashMap<Key, Position>,
}

/// One append of a batch, by its index in the batch.
struct Job {
    index: usize,
    key: Key,
    expected: u64,
    events: Vec<TaskEvent>,
}

/// An append checked and encoded, waiting for its statements.
struct Planned {
    index: usize,
    key: Key,
    expected: u64,
    /// The context of a new task.
    context_id: Option<String>,
    after: Position,
    status_ms: Option<i64>,
    rows: Vec<(String, TaskEventRecord)>,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<(Append, Reply)>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
            let (jobs, replies): (Vec<_>, Vec<_>) = batch.drain(..).unzip();
            let answers = self.apply_batch(jobs).await;
            for (reply, answer) in replies.into_iter().zip(answers) {
                let _ = reply.send(answer);
            }
        }
    }

    /// Applies every append of `batch` in one transaction: one answer per append, in order.
    async fn apply_batch(&mut self, batch: Vec<Append>) -> Vec<Answer> {
        let n = batch.len();
        let mut answers: Vec<Option<Answer>> = (0..n).map(|_| None).collect();
        let mut result = self.write_batch(batch, &mut answers).await;
        if result.is_ok() {
            result = sqlx::query("COMMIT")
                .execute(&mut *self.conn)
                .await
                .map(drop);
        }
        match result {
            Ok(()) => answers
                .into_iter()
                .map(|a| a.unwrap_or_else(|| Err(StoreError::Backend("append not applied".into()))))
                .collect(),
            Err(e) => {
                let _ = sqlx::query("ROLLBACK").execute(&mut *self.conn).await;
                // What this writer remembers may describe writes that were undone.
                self.positions.clear();
                // `sqlx::Error` cannot be cloned: each caller gets its text, the log gets it once.
                tracing::error!(error = %e, "a batch of task store writes failed and was rolled back");
                (0..n)
                    .map(|_| Err(StoreError::Backend(e.to_string().into())))
                    .collect()
            }
        }
    }

    /// Writes the batch inside a transaction left open for the caller to commit.
    async fn write_batch(
        &mut self,
        batch: Vec<Append>,
        answers: &mut [Option<Answer>],
    ) -> Result<(), sqlx::Error> {
        sqlx::query(self.dialect.begin_write())
            .execute(&mut *self.conn)
            .await?;
        let mut pending: Vec<Job> = batch
            .into_iter()
            .enumerate()
            .map(|(index, a)| Job {
                index,
                key: (a.agent, a.task_id),
                expected: a.expected_seq,
                events: a.events,
            })
            .collect();
        // Two appends to one task in a batch go in successive rounds, in order.
        while !pending.is_empty() {
            let mut seen = HashSet::new();
            let (round, rest): (Vec<_>, Vec<_>) = pending
                .into_iter()
                .partition(|j| seen.insert(j.key.clone()));
            pending = rest;
            self.write_round(round, answers).await?;
        }
        Ok(())
    }

    async fn write_round(
        &mut self,
        round: Vec<Job>,
        answers: &mut [Option<Answer>],
    ) -> Result<(), sqlx::Error> {
        self.read_unknown_positions(&round).await?;
        let mut creates = Vec::new();
        let mut updates = Vec::new();
        for job in round {
            let index = job.index;
            match self.plan(job) {
                Ok(p) if p.expected == 0 => creates.push(p),
                Ok(p) => updates.push(p),
                Err(e) => answers[index] = Some(Err(e)),
            }
        }
        let now = now_ms();
        let mut written = Vec::with_capacity(creates.len() + updates.len());
        if !creates.is_empty() {
            let args: Vec<_> = creates
                .iter()
                .map(|p| {
                    (
                        &*p.key.0,
                        p.key.1.as_str(),
                        p.context_id.as_deref().unwrap_or_default(),
                        p.after.state.number(),
                        p.status_ms.unwrap_or(0),
                        p.after.seq,
                    )
                })
                .collect();
            let done = self
                .run_returning(self.sql.create, json(&args), now)
                .await?;
            for p in creates {
                if done.contains(&p.key) {
                    written.push(p);
                } else {
                    answers[p.index] = Some(Err(StoreError::AlreadyExists(p.key.1)));
                }
            }
        }
        if !updates.is_empty() {
            let args: Vec<_> = updates
                .iter()
                .map(|p| {
                    (
                        &*p.key.0,
                        p.key.1.as_str(),
                        p.expected,
                        p.after.seq,
                        p.after.state.number(),
                        p.status_ms,
                    )
                })
                .collect();
            let done = self
                .run_returning(self.sql.update, json(&args), now)
                .await?;
            for p in updates {
                if done.contains(&p.key) {
                    written.push(p);
                } else {
                    // Another replica wrote since this writer last did: say where it is.
                    self.positions.remove(&p.key);
                    answers[p.index] = Some(Err(self.refusal(&p.key, p.expected).await?));
                }
            }
        }
        let events: Vec<_> = written
            .iter()
            .flat_map(|p| {
                p.rows.iter().map(|(event, r)| {
                    (
                        &*p.key.0,
                        p.key.1.as_str(),
                        r.seq,
                        r.state.number(),
                        event.as_str(),
                    )
                })
            })
            .collect();
        if !events.is_empty() {
            sqlx::query(self.sql.events)
                .bind(json(&events))
                .execute(&mut *self.conn)
                .await?;
        }
        for p in written {
            if p.after.state.is_terminal() {
                self.positions.remove(&p.key);
            } else {
                if self.positions.len() >= MAX_REMEMBERED {
                    self.positions.clear();
                }
                self.positions.insert(p.key, p.after);
            }
            let records = p.rows.into_iter().map(|(_, r)| Arc::new(r)).collect();
            answers[p.index] = Some(Ok(records));
        }
        Ok(())
    }

    /// Reads, in one query, the positions of the round's tasks that this writer does not
    /// know at the caller's sequence number.
    async fn read_unknown_positions(&mut self, round: &[Job]) -> Result<(), sqlx::Error> {
        let unknown: Vec<(&str, &str)> = round
            .iter()
            .filter(|j| {
                j.expected > 0
                    && self
                        .positions
                        .get(&j.key)
                        .is_none_or(|p| p.seq != j.expected)
            })
            .map(|j| (&*j.key.0, j.key.1.as_str()))
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        for (agent, id) in &unknown {
            self.positions
                .remove(&(Arc::from(*agent), (*id).to_owned()));
        }
        let rows = sqlx::query(self.sql.positions)
            .bind(json(&unknown))
            .fetch_all(&mut *self.conn)
            .await?;
        for row in rows {
            let key = (Arc::from(row.try_get::<String, _>(0)?), row.try_get(1)?);
            let position = Position {
                seq: seq_of(row.try_get(2)?),
                state: state_of(row.try_get(3)?),
            };
            self.positions.insert(key, position);
        }
        Ok(())
    }

    /// Checks one append against what is known of its task and encodes its events.
    fn plan(&self, job: Job) -> Result<Planned, StoreError> {
        let Job {
            index,
            key,
            expected,
            events,
        } = job;
        let (mut state, context_id) = if expected == 0 {
            match events.first() {
                Some(TaskEvent::Created(t)) => (TaskState::Unspecified, Some(t.context_id.clone())),
                _ => return Err(StoreError::NotCreated(key.1)),
            }
        } else {
            match self.positions.get(&key) {
                None => return Err(StoreError::NotFound(key.1)),
                Some(p) if p.seq != expected => {
                    return Err(StoreError::Conflict {
                        actual: p.seq,
                        task_id: key.1,
                        expected,
                    });
                }
                Some(p) => (p.state, None),
            }
        };
        let mut rows = Vec::with_capacity(events.len());
        let mut seq = expected;
        let mut status_ms = None;
        for event in events {
            if let Some((new_state, at)) = status_set_by(&event) {
                state = new_state;
                status_ms = Some(sort_millis(at));
            }
            seq += 1;
            let json = codec::encode(&event).map_err(StoreError::Serialization)?;
            rows.push((json, TaskEventRecord::new(seq, state, event)));
        }
        Ok(Planned {
            index,
            key,
            expected,
            context_id,
            after: Position { seq, state },
            status_ms,
            rows,
        })
    }

    /// Runs a create or update statement; the tasks it wrote.
    async fn run_returning(
        &mut self,
        sql: &'static str,
        batch: String,
        now: i64,
    ) -> Result<HashSet<Key>, sqlx::Error> {
        let rows = sqlx::query(sql)
            .bind(batch)
            .bind(now)
            .bind(&*self.instance)
            .fetch_all(&mut *self.conn)
            .await?;
        rows.iter()
            .map(|r| Ok((Arc::from(r.try_get::<String, _>(0)?), r.try_get(1)?)))
            .collect()
    }

    /// Why a sequence-checked update of `key` wrote nothing.
    async fn refusal(&mut self, key: &Key, expected: u64) -> Result<StoreError, sqlx::Error> {
        let row = sqlx::query("SELECT seq FROM a2a_tasks WHERE agent_id = $1 AND id = $2")
            .bind(&*key.0)
            .bind(key.1.as_str())
            .fetch_all(&mut *self.conn)
            .await?;
        Ok(match row.first() {
            None => StoreError::NotFound(key.1.clone()),
            Some(r) => StoreError::Conflict {
                task_id: key.1.clone(),
                expected,
                actual: seq_of(r.try_get(0)?),
            },
        })
    }
}

/// The batch parameter: `rows` as a JSON array of arrays.
fn json<T: serde::Serialize>(rows: &[T]) -> String {
    // Tuples of strings and integers always serialize.
    serde_json::to_string(rows).unwrap_or_default()
}
