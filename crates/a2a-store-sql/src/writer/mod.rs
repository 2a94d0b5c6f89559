//! Group commit: appends are queued to writer tasks, each owning one connection, which apply
//! every queued append together and answer each caller once that is committed. A caller is
//! answered only after its events are durable, and the cost of a commit is shared by all the
//! appends that arrived while the previous one was running.
//!
//! A batch is one transaction, whatever its size: new task rows, sequence-checked updates of
//! existing rows, and the events of the rows written. An append that is refused (a stale
//! sequence number, an existing id) writes nothing and does not undo the others. Each dialect
//! runs that in the cheapest way it has: on PostgreSQL, one statement per kind of row with
//! the batch as typed column arrays (a fixed statement text, so one prepared form, and one
//! round trip each); on SQLite, whose connection is the writer's own, one execution of a
//! prepared statement per row (see `sqlite.rs` and `postgres.rs`).
//!
//! A writer whose connection breaks (the database restarted, the network cut it) reconnects
//! by itself, with back-off; appends queued meanwhile wait for it up to [`OUTAGE_WAIT`], then
//! fail with [`StoreError::Unavailable`], which callers can retry.
//!
//! Appends to one task always go to the same writer (by a hash of its id), so they are
//! applied in the order they were made. Each writer remembers the position (sequence number
//! and state) of the unfinished tasks it wrote, so that the common append, by the process
//! that wrote the task last, needs no read; the update's sequence check in the database
//! stays the authority, so another replica's write is still caught.

mod checkpoint;
mod postgres;
mod sqlite;
mod wal_log;

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use a2a_runtime::store::{StoreError, TaskEvent, TaskEventRecord, sort_millis, status_set_by};
use a2a_types::TaskState;
use tokio::sync::{mpsc, oneshot};

use crate::now_ms;

/// Most appends applied in one batch.
const MAX_BATCH: usize = 256;

/// Most task positions a writer remembers; beyond it the memory is cleared (it is only a
/// shortcut: a forgotten task costs one read on its next append).
const MAX_REMEMBERED: usize = 16_384;

/// Longest an append waits for a writer that lost its connection to get a new one.
pub(crate) const OUTAGE_WAIT: Duration = Duration::from_secs(5);

/// Back-off between reconnection attempts: from the first to the last, doubling.
const RECONNECT_FIRST: Duration = Duration::from_millis(50);
const RECONNECT_LAST: Duration = Duration::from_secs(2);

/// A database error, whichever driver raised it.
pub(crate) type DbError = Box<dyn std::error::Error + Send + Sync>;

/// Whether `e` says the database cannot be reached or cannot write right now.
fn unreachable(e: &DbError) -> bool {
    if let Some(e) = e.downcast_ref::<sqlx::Error>() {
        return crate::unreachable(e);
    }
    if let Some(e) = e.downcast_ref::<rusqlite::Error>() {
        return match e {
            rusqlite::Error::SqliteFailure(f, _) => crate::sqlite_unreachable(f.extended_code),
            _ => false,
        };
    }
    e.downcast_ref::<std::io::Error>().is_some()
}

/// The error each caller of a failed round gets.
fn store_error(e: &DbError) -> StoreError {
    if unreachable(e) {
        StoreError::Unavailable(e.to_string())
    } else {
        StoreError::Backend(e.to_string().into())
    }
}

/// One append, as queued.
#[derive(Debug)]
pub(crate) struct Append {
    pub(crate) agent: Arc<str>,
    pub(crate) task_id: String,
    pub(crate) expected_seq: u64,
    /// Each event with its stored form, encoded by the caller: on the caller's thread, in
    /// parallel, not on the writer's, which every append waits for.
    pub(crate) events: Vec<(String, TaskEvent)>,
    /// When it was queued (it waits at most [`OUTAGE_WAIT`] for a broken connection).
    pub(crate) queued: Instant,
}

type Answer = Result<Vec<Arc<TaskEventRecord>>, StoreError>;
type Reply = oneshot::Sender<Answer>;

/// Whether the database can take writes: set by the writers (and the store's heartbeat),
/// read by readiness checks. A failure makes the store unready for [`OUTAGE_WAIT`], or until a
/// write succeeds: a store no one writes to is tried again after that (a balancer that
/// routes around an unready replica would otherwise never let it prove it is back).
#[derive(Debug, Default)]
pub(crate) struct Health {
    /// When a write last failed (ms since the epoch), 0 once one succeeded since.
    failed_at: AtomicU64,
}

impl Health {
    pub(crate) fn reachable(&self) -> bool {
        let failed_at = self.failed_at.load(Ordering::Relaxed);
        failed_at == 0
            || crate::now_ms().saturating_sub(failed_at as i64) > OUTAGE_WAIT.as_millis() as i64
    }

    pub(crate) fn failed(&self) {
        self.failed_at
            .store(crate::now_ms().max(1) as u64, Ordering::Relaxed);
    }

    pub(crate) fn succeeded(&self) {
        // Read first: the common case writes nothing, and the line stays in every cache.
        if self.failed_at.load(Ordering::Relaxed) != 0 {
            self.failed_at.store(0, Ordering::Relaxed);
        }
    }
}

/// The writer tasks of one database.
#[derive(Debug, Clone)]
pub(crate) struct Writers {
    queues: Arc<[mpsc::Sender<(Append, Reply)>]>,
    hasher: foldhash::fast::FixedState,
    pub(crate) health: Arc<Health>,
}

impl Writers {
    /// The SQLite writer: one, on its own thread, with its own connection to `path`,
    /// recording `instance` as the owner of the tasks it writes.
    pub(crate) fn sqlite(path: &str, instance: Arc<str>) -> Result<Self, DbError> {
        let health = Arc::new(Health::default());
        let (tx, rx) = mpsc::channel(4 * MAX_BATCH);
        sqlite::start(path, Writer::new_for(instance, health.clone()), rx)?;
        Ok(Self::of(vec![tx], health))
    }

    /// `count` PostgreSQL writers, each with its own connection to `url`.
    pub(crate) async fn postgres(
        url: &str,
        count: usize,
        instance: Arc<str>,
    ) -> Result<Self, DbError> {
        let health = Arc::new(Health::default());
        let mut queues = Vec::with_capacity(count);
        for _ in 0..count.max(1) {
            let conn = postgres::Conn::connect(url).await?;
            let (tx, rx) = mpsc::channel(4 * MAX_BATCH);
            let writer = Writer::new_for(instance.clone(), health.clone());
            tokio::spawn(writer.with(conn).run(rx));
            queues.push(tx);
        }
        Ok(Self::of(queues, health))
    }

    fn of(queues: Vec<mpsc::Sender<(Append, Reply)>>, health: Arc<Health>) -> Self {
        Self {
            queues: queues.into(),
            hasher: foldhash::fast::FixedState::with_seed(0x5eed),
            health,
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

/// `key` as borrowed parts, to look up or compare without cloning it.
pub(crate) fn borrowed(key: &Key) -> (&str, &str) {
    (&key.0, &key.1)
}

/// Where a task's log stands: its last sequence number and state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Position {
    pub(crate) seq: u64,
    pub(crate) state: TaskState,
}

/// What a writer needs of its connection. Each method is one round trip at most, but for a
/// PostgreSQL write that meets a key that exists (see `postgres.rs`).
pub(crate) trait WriteConn: Send + 'static {
    /// The positions of the tasks named in `keys`.
    fn positions(
        &mut self,
        keys: &[&Key],
    ) -> impl Future<Output = Result<Vec<(Key, Position)>, DbError>> + Send;

    /// Writes one round atomically: the new tasks of `round.creates`, the sequence-checked
    /// updates of `round.updates`, and the events of those written; which appends were
    /// written.
    fn write(&mut self, round: &Round<'_>)
    -> impl Future<Output = Result<Written, DbError>> + Send;

    /// The sequence number of one task, if it exists.
    fn seq(&mut self, key: &Key) -> impl Future<Output = Result<Option<u64>, DbError>> + Send;

    /// Replaces the connection with a new one (the old one broke).
    fn reconnect(&mut self) -> impl Future<Output = Result<(), DbError>> + Send;

    /// Runs between two batches, once the callers of the first are answered: upkeep that
    /// should delay no caller's answer.
    fn after_batch(&mut self) {}
}

/// One round of a batch, checked and encoded, for [`WriteConn::write`].
pub(crate) struct Round<'a> {
    pub(crate) creates: Vec<&'a Planned>,
    pub(crate) updates: Vec<&'a Planned>,
    pub(crate) now: i64,
    pub(crate) owner: &'a str,
}

impl Round<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.creates.is_empty() && self.updates.is_empty()
    }
}

/// Which appends of a round were written, by their index in the batch (no key is cloned
/// or hashed for it: most rounds write every append).
pub(crate) struct Written(Vec<bool>);

impl Written {
    /// None of `round`'s appends, yet.
    pub(crate) fn none_of(round: &Round<'_>) -> Self {
        let len = round
            .creates
            .iter()
            .chain(&round.updates)
            .map(|p| p.index + 1)
            .max()
            .unwrap_or(0);
        Self(vec![false; len])
    }

    pub(crate) fn mark(&mut self, p: &Planned) {
        self.0[p.index] = true;
    }

    pub(crate) fn contains(&self, p: &Planned) -> bool {
        self.0.get(p.index).copied().unwrap_or(false)
    }
}

/// A batch parameter: `rows` as a JSON array of arrays.
pub(crate) fn json<T: serde::Serialize>(rows: &[T]) -> String {
    // Tuples of strings and integers always serialize.
    a2a_json::to_string(rows).unwrap_or_default()
}

/// A writer not yet given its connection.
pub(crate) struct NewWriter {
    instance: Arc<str>,
    health: Arc<Health>,
}

impl NewWriter {
    pub(crate) fn with<C: WriteConn>(self, conn: C) -> Writer<C> {
        Writer {
            conn,
            instance: self.instance,
            health: self.health,
            positions: HashMap::default(),
            broken: false,
        }
    }
}

pub(crate) struct Writer<C> {
    conn: C,
    instance: Arc<str>,
    health: Arc<Health>,
    /// Positions of unfinished tasks this writer appended to.
    positions: HashMap<Key, Position, foldhash::fast::RandomState>,
    /// The connection failed as if lost: get a new one before the next round.
    broken: bool,
}

type Queued = (Append, Reply);

/// One append of a batch, by its index in the batch.
struct Job {
    index: usize,
    key: Key,
    expected: u64,
    events: Vec<(String, TaskEvent)>,
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

impl Writer<()> {
    /// A writer for `instance` that reports to `health`; [`NewWriter::with`] its connection.
    pub(crate) fn new_for(instance: Arc<str>, health: Arc<Health>) -> NewWriter {
        NewWriter { instance, health }
    }
}

impl<C: WriteConn> Writer<C> {
    pub(crate) async fn run(mut self, mut rx: mpsc::Receiver<Queued>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
            if self.broken {
                self.reconnect(&mut batch, &mut rx).await;
                if batch.is_empty() {
                    continue;
                }
            }
            let (jobs, replies): (Vec<_>, Vec<_>) = batch.drain(..).unzip();
            let answers = self.apply_batch(jobs).await;
            for (reply, answer) in replies.into_iter().zip(answers) {
                let _ = reply.send(answer);
            }
            if !self.broken {
                self.conn.after_batch();
            }
        }
    }

    /// Gets a new connection, retrying with back-off; meanwhile the appends queued (in `batch`
    /// and behind it in `rx`) wait, and those that have waited [`OUTAGE_WAIT`] fail with
    /// [`StoreError::Unavailable`].
    async fn reconnect(&mut self, batch: &mut Vec<Queued>, rx: &mut mpsc::Receiver<Queued>) {
        let mut delay = RECONNECT_FIRST;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let attempt = tokio::time::timeout(OUTAGE_WAIT, self.conn.reconnect()).await;
            match attempt.unwrap_or_else(|_| Err("connecting timed out".into())) {
                Ok(()) => {
                    self.broken = false;
                    tracing::info!(attempts, "task store writer reconnected");
                    return;
                }
                // The first failure, then one line every ~30 attempts (about a minute).
                Err(e) if attempts % 30 == 1 => {
                    tracing::warn!(error = %e, attempts, "task store writer cannot reconnect yet");
                }
                Err(_) => {}
            }
            while let Ok(job) = rx.try_recv() {
                batch.push(job);
            }
            let now = Instant::now();
            let (expired, waiting): (Vec<_>, Vec<_>) = batch
                .drain(..)
                .partition(|(a, _)| now.duration_since(a.queued) >= OUTAGE_WAIT);
            *batch = waiting;
            for (_, reply) in expired {
                let _ = reply.send(Err(StoreError::Unavailable(format!(
                    "the database has not been reachable for {}s",
                    OUTAGE_WAIT.as_secs()
                ))));
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(RECONNECT_LAST);
        }
    }

    /// Notes a statement's failure: one that says the database cannot be reached breaks the
    /// connection (replaced before the next batch) and makes the store unready.
    fn failed(&mut self, e: &DbError) {
        if unreachable(e) {
            self.broken = true;
            self.health.failed();
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
            // Each task's first append goes in this round, the others wait for the next.
            let first: Vec<bool> = {
                let mut seen = HashSet::with_capacity_and_hasher(
                    pending.len(),
                    foldhash::fast::RandomState::default(),
                );
                pending
                    .iter()
                    .map(|j| seen.insert(borrowed(&j.key)))
                    .collect()
            };
            let mut first = first.into_iter();
            let (round, rest): (Vec<_>, Vec<_>) = pending
                .into_iter()
                .partition(|_| first.next().unwrap_or(false));
            pending = rest;
            if let Err(e) = self.write_round(round, &mut answers).await {
                // What this writer remembers may describe writes that were undone.
                self.positions.clear();
                self.failed(&e);
                // Errors cannot be cloned: each caller gets the text, the log gets it once.
                if self.broken {
                    tracing::warn!(error = %e, "task store writes failed: the database cannot be reached");
                } else {
                    tracing::error!(error = %e, "task store writes failed and were rolled back");
                }
                for a in answers.iter_mut().filter(|a| a.is_none()) {
                    *a = Some(Err(store_error(&e)));
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
            Written::none_of(&round)
        } else {
            let written = self.conn.write(&round).await?;
            self.health.succeeded();
            written
        };
        let mut conflicted = Vec::new();
        for p in planned {
            if written.contains(&p) {
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
                self.positions.remove(&p.key);
                conflicted.push(p);
            }
        }
        // Another replica wrote since this writer last did: say where each task is. The
        // round is committed and its other appends answered, so a failed read fails only
        // the append it was for.
        for p in conflicted {
            let e = match self.conn.seq(&p.key).await {
                Ok(None) => StoreError::NotFound(p.key.1),
                Ok(Some(actual)) => StoreError::Conflict {
                    task_id: p.key.1,
                    expected: p.expected,
                    actual,
                },
                Err(e) => {
                    self.failed(&e);
                    store_error(&e)
                }
            };
            answers[p.index] = Some(Err(e));
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

    /// Checks one append against what is known of its task.
    fn plan(&self, job: Job) -> Result<Planned, StoreError> {
        let Job {
            index,
            key,
            expected,
            events,
        } = job;
        let mut principal = None;
        let (mut state, context_id) = if expected == 0 {
            principal = a2a_runtime::store::owner_in(events.iter().map(|(_, e)| e)).cloned();
            match events.first() {
                Some((_, TaskEvent::Created(t))) => {
                    (TaskState::Unspecified, Some(t.context_id.clone()))
                }
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
        for (json, event) in events {
            if let Some((new_state, at)) = status_set_by(&event) {
                state = new_state;
                status_ms = Some(sort_millis(at));
            }
            seq += 1;
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
