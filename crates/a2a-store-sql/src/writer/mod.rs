//! Group commit: appends are queued to writer tasks, each owning one connection, which apply
//! every queued append together and answer each caller once that is committed. A caller is
//! answered only after its events are durable, and the cost of a commit is shared by all the
//! appends that arrived while the previous one was running.
//!
//! A batch costs a fixed number of statements, whatever its size: new task rows in one
//! insert, sequence-checked updates of existing rows in one update, and the events of the
//! rows written in one insert, each taking the batch as parameters of a fixed shape (one JSON
//! array on SQLite, typed column arrays on PostgreSQL), so the statement text, and its
//! prepared form, never changes. An append that is refused (a stale sequence
//! number, an existing id) writes nothing and does not undo the others. Each dialect runs
//! that in the cheapest way it has (see `sqlite.rs` and `postgres.rs`).
//!
//! Appends to one task always go to the same writer (by a hash of its id), so they are
//! applied in the order they were made. Each writer remembers the position (sequence number
//! and state) of the unfinished tasks it wrote, so that the common append, by the process
//! that wrote the task last, needs no read; the update's sequence check in the database
//! stays the authority, so another replica's write is still caught.

mod postgres;
mod sqlite;

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::Arc;

use a2a_server::store::{StoreError, TaskEvent, TaskEventRecord, sort_millis, status_set_by};
use a2a_types::TaskState;
use tokio::sync::{mpsc, oneshot};

use crate::{codec, now_ms};

/// Most appends applied in one batch.
const MAX_BATCH: usize = 256;

/// Most task positions a writer remembers; beyond it the memory is cleared (it is only a
/// shortcut: a forgotten task costs one read on its next append).
const MAX_REMEMBERED: usize = 16_384;

/// A database error, whichever driver raised it.
pub(crate) type DbError = Box<dyn std::error::Error + Send + Sync>;

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
    /// The SQLite writer: one, on its own thread, with its own connection to `path`,
    /// recording `instance` as the owner of the tasks it writes.
    pub(crate) fn sqlite(path: &str, instance: Arc<str>) -> Result<Self, DbError> {
        let (tx, rx) = mpsc::channel(4 * MAX_BATCH);
        sqlite::start(path, instance, rx)?;
        Ok(Self::of(vec![tx]))
    }

    /// `count` PostgreSQL writers, each with its own connection to `url`.
    pub(crate) async fn postgres(
        url: &str,
        count: usize,
        instance: Arc<str>,
    ) -> Result<Self, DbError> {
        let mut queues = Vec::with_capacity(count);
        for _ in 0..count.max(1) {
            let conn = postgres::Conn::connect(url).await?;
            let (tx, rx) = mpsc::channel(4 * MAX_BATCH);
            tokio::spawn(Writer::new(conn, instance.clone()).run(rx));
            queues.push(tx);
        }
        Ok(Self::of(queues))
    }

    fn of(queues: Vec<mpsc::Sender<(Append, Reply)>>) -> Self {
        Self {
            queues: queues.into(),
            hasher: foldhash::fast::FixedState::with_seed(0x5eed),
        }
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

/// A task, as the writer names it.
pub(crate) type Key = (Arc<str>, String);

/// Where a task's log stands: its last sequence number and state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Position {
    pub(crate) seq: u64,
    pub(crate) state: TaskState,
}

/// What a writer needs of its connection. Each method is one round trip at most.
pub(crate) trait WriteConn: Send + 'static {
    /// The positions of the tasks named in `keys`.
    fn positions(
        &mut self,
        keys: &[&Key],
    ) -> impl Future<Output = Result<Vec<(Key, Position)>, DbError>> + Send;

    /// Writes one round atomically: the new tasks of `round.creates`, the sequence-checked
    /// updates of `round.updates`, and the events of those written; which tasks were written.
    fn write(
        &mut self,
        round: &Round<'_>,
    ) -> impl Future<Output = Result<HashSet<Key>, DbError>> + Send;

    /// The sequence number of one task, if it exists.
    fn seq(&mut self, key: &Key) -> impl Future<Output = Result<Option<u64>, DbError>> + Send;
}

/// One round of a batch, checked and encoded, for [`WriteConn::write`].
pub(crate) struct Round<'a> {
    pub(crate) creates: Vec<&'a Planned>,
    pub(crate) updates: Vec<&'a Planned>,
    pub(crate) now: i64,
    pub(crate) owner: &'a str,
}

impl Round<'_> {
    /// `[agent, id, context, state, status_ms, seq, principal or null]` of each new task.
    pub(crate) fn creates_json(&self) -> String {
        let rows: Vec<_> = self
            .creates
            .iter()
            .map(|p| {
                (
                    &*p.key.0,
                    p.key.1.as_str(),
                    p.context_id.as_deref().unwrap_or_default(),
                    p.after.state.number(),
                    p.status_ms.unwrap_or(0),
                    p.after.seq,
                    p.principal.as_deref(),
                )
            })
            .collect();
        json(&rows)
    }

    /// `[agent, id, expected seq, seq, state, status_ms or null]` of each update.
    pub(crate) fn updates_json(&self) -> String {
        let rows: Vec<_> = self
            .updates
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
        json(&rows)
    }

    /// `[agent, task, seq, state, event]` of each event of the appends `written` accepts.
    pub(crate) fn events_json(&self, written: impl Fn(&Key) -> bool) -> String {
        let rows: Vec<_> = self
            .creates
            .iter()
            .chain(&self.updates)
            .filter(|p| written(&p.key))
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
        json(&rows)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.creates.is_empty() && self.updates.is_empty()
    }
}

/// A batch parameter: `rows` as a JSON array of arrays.
pub(crate) fn json<T: serde::Serialize>(rows: &[T]) -> String {
    // Tuples of strings and integers always serialize.
    serde_json::to_string(rows).unwrap_or_default()
}

pub(crate) struct Writer<C> {
    conn: C,
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
pub(crate) struct Planned {
    index: usize,
    pub(crate) key: Key,
    pub(crate) expected: u64,
    /// The context of a new task.
    pub(crate) context_id: Option<String>,
    /// The principal a new task belongs to (its [`TaskEvent::Owner`]).
    pub(crate) principal: Option<Arc<str>>,
    pub(crate) after: Position,
    pub(crate) status_ms: Option<i64>,
    pub(crate) rows: Vec<(String, TaskEventRecord)>,
}

impl<C: WriteConn> Writer<C> {
    pub(crate) fn new(conn: C, instance: Arc<str>) -> Self {
        Self {
            conn,
            instance,
            positions: HashMap::new(),
        }
    }

    pub(crate) async fn run(mut self, mut rx: mpsc::Receiver<(Append, Reply)>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
            let (jobs, replies): (Vec<_>, Vec<_>) = batch.drain(..).unzip();
            let answers = self.apply_batch(jobs).await;
            for (reply, answer) in replies.into_iter().zip(answers) {
                let _ = reply.send(answer);
            }
        }
    }

    /// Applies every append of `batch`: one answer per append, in order. Two appends to one
    /// task go in successive rounds, each round atomic; a round that fails fails its
    /// appends and the later rounds'.
    async fn apply_batch(&mut self, batch: Vec<Append>) -> Vec<Answer> {
        let n = batch.len();
        let mut answers: Vec<Option<Answer>> = (0..n).map(|_| None).collect();
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
        while !pending.is_empty() {
            let mut seen = HashSet::new();
            let (round, rest): (Vec<_>, Vec<_>) = pending
                .into_iter()
                .partition(|j| seen.insert(j.key.clone()));
            pending = rest;
            if let Err(e) = self.write_round(round, &mut answers).await {
                // What this writer remembers may describe writes that were undone.
                self.positions.clear();
                // Errors cannot be cloned: each caller gets the text, the log gets it once.
                tracing::error!(error = %e, "task store writes failed and were rolled back");
                for a in answers.iter_mut().filter(|a| a.is_none()) {
                    *a = Some(Err(StoreError::Backend(e.to_string().into())));
                }
                break;
            }
        }
        answers
            .into_iter()
            .map(|a| a.unwrap_or_else(|| Err(StoreError::Backend("append not applied".into()))))
            .collect()
    }

    async fn write_round(
        &mut self,
        round: Vec<Job>,
        answers: &mut [Option<Answer>],
    ) -> Result<(), DbError> {
        self.read_unknown_positions(&round).await?;
        let mut planned = Vec::with_capacity(round.len());
        for job in round {
            let index = job.index;
            match self.plan(job) {
                Ok(p) => planned.push(p),
                Err(e) => answers[index] = Some(Err(e)),
            }
        }
        let round = Round {
            creates: planned.iter().filter(|p| p.expected == 0).collect(),
            updates: planned.iter().filter(|p| p.expected > 0).collect(),
            now: now_ms(),
            owner: &self.instance,
        };
        let written = if round.is_empty() {
            HashSet::new()
        } else {
            self.conn.write(&round).await?
        };
        for p in planned {
            if written.contains(&p.key) {
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
            } else if p.expected == 0 {
                answers[p.index] = Some(Err(StoreError::AlreadyExists(p.key.1)));
            } else {
                // Another replica wrote since this writer last did: say where it is.
                self.positions.remove(&p.key);
                let e = match self.conn.seq(&p.key).await? {
                    None => StoreError::NotFound(p.key.1),
                    Some(actual) => StoreError::Conflict {
                        task_id: p.key.1,
                        expected: p.expected,
                        actual,
                    },
                };
                answers[p.index] = Some(Err(e));
            }
        }
        Ok(())
    }

    /// Reads, in one query, the positions of the round's tasks that this writer does not
    /// know at the caller's sequence number.
    async fn read_unknown_positions(&mut self, round: &[Job]) -> Result<(), DbError> {
        let unknown: Vec<&Key> = round
            .iter()
            .filter(|j| {
                j.expected > 0
                    && self
                        .positions
                        .get(&j.key)
                        .is_none_or(|p| p.seq != j.expected)
            })
            .map(|j| &j.key)
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        for key in &unknown {
            self.positions.remove(*key);
        }
        for (key, position) in self.conn.positions(&unknown).await? {
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
        let mut principal = None;
        let (mut state, context_id) = if expected == 0 {
            principal = a2a_server::store::owner_in(events.iter()).cloned();
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
            principal,
            after: Position { seq, state },
            status_ms,
            rows,
        })
    }
}
