//! In-memory [`TaskStore`]: for tests and throwaway servers.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use a2a_types::{Task, TaskState};
use async_trait::async_trait;
use foldhash::fast::RandomState;
use hashbrown::HashTable;

use super::{
    StoreError, TaskEvent, TaskEventRecord, TaskPage, TaskQuery, TaskSnapshot, TaskStore, codec,
    decode_page_token, encode_page_token, owner_in, project, shape_for_listing, sort_millis,
    status_set_by,
};

const SHARDS: usize = 16;

/// The largest buffer a shard keeps for freezing logs ([`Log::freeze`]).
const MAX_SCRATCH: usize = 64 * 1024;

/// Settings of [`InMemoryTaskStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct InMemoryTaskStoreConfig {
    /// How many terminal tasks to keep; the oldest-finished are evicted beyond that.
    /// Tasks that are not terminal are never evicted.
    pub max_terminal_tasks: usize,
}

impl Default for InMemoryTaskStoreConfig {
    fn default() -> Self {
        Self {
            max_terminal_tasks: 10_000,
        }
    }
}

impl InMemoryTaskStoreConfig {
    /// Keeps at most `n` terminal tasks.
    pub fn with_max_terminal_tasks(mut self, n: usize) -> Self {
        self.max_terminal_tasks = n;
        self
    }
}

/// A task: its log, and what listings filter and sort on.
///
/// The snapshot is not kept: it is the projection of the log, computed when read. Most tasks
/// are written once and read once (or never), so keeping a second, projected copy of every
/// task would double both the memory and the copying on the write path.
#[derive(Debug)]
struct Entry {
    log: Log,
    state: TaskState,
    /// Status timestamp in milliseconds since the epoch (the listing sort key).
    status_millis: i64,
    /// When the task last changed while waiting for input or authentication (`None` while
    /// it is not waiting): what [`InMemoryTaskStore::idle_interrupted`] looks at.
    waiting_since: Option<Instant>,
    /// Push notification configs (rarely any; evicted with the task).
    push: Vec<a2a_types::TaskPushNotificationConfig>,
}

/// A task's log: its records while the task runs; once it is terminal, their stored form
/// ([`codec::write_compact_log`]) in one allocation, read back when asked for.
///
/// A finished task is kept until [`InMemoryTaskStoreConfig::max_terminal_tasks`] newer ones
/// push it out, and mostly never read again. As records it takes about 2.6 KB in some thirty
/// allocations; 10 000 of them outgrow the processor's caches, and evicting the oldest then
/// walks all of its allocations on cold memory, on every send. Stored, it is one allocation
/// of a few hundred bytes.
#[derive(Debug)]
enum Log {
    Live(Vec<Arc<TaskEventRecord>>),
    Frozen {
        /// Number of events.
        len: u64,
        /// The owner ([`TaskEvent::Owner`]), for reads and listings that filter on it.
        owner: Option<Arc<str>>,
        /// The context id (UTF-8), then the stored log: one allocation for both.
        bytes: Box<[u8]>,
        /// Where the context id ends in `bytes`.
        context_end: usize,
    },
}

/// The record of `event` as the log's record number `seq`, with `state` once the event is
/// applied.
fn next_record(seq: u64, state: &mut TaskState, event: TaskEvent) -> Arc<TaskEventRecord> {
    if let Some((s, _)) = status_set_by(&event) {
        *state = s;
    }
    Arc::new(TaskEventRecord::new(seq, *state, event))
}

impl Log {
    fn len(&self) -> u64 {
        match self {
            Log::Live(records) => records.len() as u64,
            Log::Frozen { len, .. } => *len,
        }
    }

    /// The stored form of a whole log, `earlier` records then `new` ones (`None` when it
    /// cannot be encoded). It is written into `scratch` (the shard's, reused) and copied once
    /// into an allocation of its size: written into a buffer of its own, it was copied as the
    /// buffer grew, and again as the buffer shrank to its length.
    fn frozen(
        earlier: &[Arc<TaskEventRecord>],
        new: &[Arc<TaskEventRecord>],
        scratch: &mut Vec<u8>,
    ) -> Option<Log> {
        let events = || earlier.iter().chain(new).map(|r| &r.event);
        let owner = owner_in(events()).cloned();
        let context = match events().next() {
            Some(TaskEvent::Created(t)) => t.context_id.as_str(),
            _ => "",
        };
        // The context id and the stored log in one buffer, which becomes the one allocation.
        scratch.clear();
        scratch.extend_from_slice(context.as_bytes());
        let bytes = codec::write_compact_log(scratch, events())
            .ok()
            .map(|()| Box::<[u8]>::from(scratch.as_slice()));
        // A very large task's form is not kept as the next one's buffer (written or not).
        if scratch.capacity() > MAX_SCRATCH {
            *scratch = Vec::new();
        }
        Some(Log::Frozen {
            len: (earlier.len() + new.len()) as u64,
            owner,
            context_end: context.len(),
            bytes: bytes?,
        })
    }

    /// The records, read back from their stored form for a frozen log.
    fn records(&self) -> Result<Cow<'_, [Arc<TaskEventRecord>]>, StoreError> {
        match self {
            Log::Live(records) => Ok(Cow::Borrowed(records)),
            Log::Frozen {
                bytes, context_end, ..
            } => {
                // The store's error carries a `serde_json::Error`: the compact form's own
                // error travels as its message.
                let events = codec::decode_compact_log(&bytes[*context_end..])
                    .map_err(|e| StoreError::Serialization(serde::de::Error::custom(e)))?;
                let mut records = Vec::with_capacity(events.len());
                let mut state = TaskState::Unspecified;
                for (seq, event) in (1..).zip(events) {
                    records.push(next_record(seq, &mut state, event));
                }
                Ok(Cow::Owned(records))
            }
        }
    }

    /// The live records, thawed first when frozen (a store caller appending to a finished
    /// task).
    fn live(&mut self) -> Result<&mut Vec<Arc<TaskEventRecord>>, StoreError> {
        if let Log::Frozen { .. } = self {
            *self = Log::Live(self.records()?.into_owned());
        }
        match self {
            Log::Live(records) => Ok(records),
            Log::Frozen { .. } => unreachable!("thawed above"),
        }
    }
}

impl Entry {
    fn project(&self, history_length: Option<usize>) -> Result<Task, StoreError> {
        let records = self.log.records()?;
        Ok(project(records.iter().map(|r| &r.event), history_length).unwrap_or_default())
    }

    fn owner(&self) -> Option<&Arc<str>> {
        match &self.log {
            Log::Live(records) => owner_in(records.iter().map(|r| &r.event)),
            Log::Frozen { owner, .. } => owner.as_ref(),
        }
    }

    fn sort_key(&self) -> i64 {
        self.status_millis
    }

    fn context_id(&self) -> &str {
        match &self.log {
            Log::Live(records) => match records.first().map(|r| &r.event) {
                Some(TaskEvent::Created(t)) => &t.context_id,
                _ => "",
            },
            // Written from a `&str`, so valid UTF-8.
            Log::Frozen {
                bytes, context_end, ..
            } => std::str::from_utf8(&bytes[..*context_end]).unwrap_or_default(),
        }
    }
}

/// A task in its shard's table: its id, the id's hash (a resize moves slots without reading
/// the ids again), its number in the shard and the task.
#[derive(Debug)]
struct Slot {
    hash: u64,
    /// Told apart from other slots of the same hash by this number, not by the id's address:
    /// an id referenced from the eviction queue would be an `Arc`, whose count the eviction
    /// writes, one more line of cold memory a send.
    number: u64,
    id: Box<str>,
    entry: Entry,
}

/// The tasks whose ids hash to one shard. Every call hashes its task id once, to pick the
/// shard, and finds the task's slot with that same hash.
#[derive(Debug, Default)]
struct Shard {
    tasks: HashTable<Slot>,
    /// Terminal tasks in the order they finished, by hash and [`Slot::number`]: the eviction
    /// queue. The oldest is found by its hash and told apart by its number, so neither its id
    /// nor any memory but its slot is read.
    finished: VecDeque<(u64, u64)>,
    /// The next slot's [`Slot::number`].
    next_number: u64,
    /// Where [`Log::frozen`] writes.
    scratch: Vec<u8>,
}

impl Shard {
    /// A number for a new slot, none of the shard's others.
    fn take_number(&mut self) -> u64 {
        let number = self.next_number;
        self.next_number += 1;
        number
    }

    fn get(&self, hash: u64, task_id: &str) -> Option<&Entry> {
        self.tasks
            .find(hash, |s| &*s.id == task_id)
            .map(|s| &s.entry)
    }

    fn get_mut(&mut self, hash: u64, task_id: &str) -> Option<&mut Entry> {
        self.tasks
            .find_mut(hash, |s| &*s.id == task_id)
            .map(|s| &mut s.entry)
    }

    /// Takes the oldest finished task out once more than `keep` are queued, for the caller
    /// to drop once it has let go of the shard's lock. A task that left its terminal state
    /// since it was queued (a caller of the store may append one) is not evicted: only
    /// terminal tasks ever are.
    fn evict_beyond(&mut self, keep: usize) -> Option<Slot> {
        if self.finished.len() <= keep {
            return None;
        }
        let (hash, number) = self.finished.pop_front()?;
        debug_assert!(self.finished.len() <= keep);
        match self.tasks.find_entry(hash, |s| s.number == number) {
            Ok(slot) if slot.get().entry.state.is_terminal() => Some(slot.remove().0),
            _ => None,
        }
    }
}

/// Keeps task logs in memory, sharded so that writers of different tasks rarely meet on a
/// lock. Memory stays bounded: each shard evicts its oldest terminal tasks once it holds more
/// than its share of [`InMemoryTaskStoreConfig::max_terminal_tasks`] (O(1) amortized per
/// append; no scan of the store).
#[derive(Debug)]
pub struct InMemoryTaskStore {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    terminal_per_shard: usize,
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self::new(InMemoryTaskStoreConfig::default())
    }
}

impl InMemoryTaskStore {
    /// A store with the given settings.
    pub fn new(config: InMemoryTaskStoreConfig) -> Self {
        let shards = (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect();
        Self {
            shards,
            hasher: RandomState::default(),
            terminal_per_shard: config.max_terminal_tasks.div_ceil(SHARDS).max(1),
        }
    }

    /// The shard of `task_id`, locked, and the id's hash.
    fn shard(&self, task_id: &str) -> (MutexGuard<'_, Shard>, u64) {
        let hash = self.hasher.hash_one(task_id);
        // A table takes a slot's position from the hash's low bits and its tag from the top
        // seven; the shard takes bits of neither, so each shard's tasks still spread over
        // its whole table.
        let i = ((hash >> 32) as usize) % self.shards.len();
        (lock(&self.shards[i]), hash)
    }

    /// Number of tasks held (for tests and metrics).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).tasks.len()).sum()
    }

    /// True when no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Up to `limit` tasks that have waited for input or authentication, unchanged, for at
    /// least `idle`: the host expires them through the runtime
    /// ([`TaskRuntime::expire_interrupted`](crate::TaskRuntime::expire_interrupted)), so the
    /// in-memory store has the same bound on abandoned conversations as the SQL stores.
    pub fn idle_interrupted(&self, idle: Duration, limit: usize) -> Vec<String> {
        let mut found = Vec::new();
        for shard in self.shards.iter() {
            let shard = lock(shard);
            for slot in &shard.tasks {
                if found.len() >= limit {
                    return found;
                }
                if slot
                    .entry
                    .waiting_since
                    .is_some_and(|t| t.elapsed() >= idle)
                {
                    found.push(slot.id.to_string());
                }
            }
        }
        found
    }
}

fn lock(m: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    // A panic while holding the lock cannot leave a shard half-updated in a way that
    // matters more than losing the whole store, so keep serving.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[async_trait]
impl TaskStore for InMemoryTaskStore {
    async fn append(
        &self,
        task_id: &str,
        expected_seq: u64,
        events: Vec<TaskEvent>,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
        let (mut guard, hash) = self.shard(task_id);
        let shard = &mut *guard;
        let slot = if expected_seq == 0 {
            // Looked up first, inserted after: a refused create must not grow the table
            // (`HashTable::entry` reserves room before it looks).
            if shard.get(hash, task_id).is_some() {
                return Err(StoreError::AlreadyExists(task_id.to_owned()));
            }
            if !matches!(events.first(), Some(TaskEvent::Created(_))) {
                return Err(StoreError::NotCreated(task_id.to_owned()));
            }
            let entry = Entry {
                // Allocated only if the task is still running after this append (see below).
                log: Log::Live(Vec::new()),
                state: TaskState::Unspecified,
                status_millis: 0,
                waiting_since: None,
                push: Vec::new(),
            };
            let slot = Slot {
                hash,
                number: shard.take_number(),
                id: Box::from(task_id),
                entry,
            };
            shard.tasks.insert_unique(hash, slot, |s| s.hash).into_mut()
        } else {
            let slot = shard
                .tasks
                .find_mut(hash, |s| &*s.id == task_id)
                .ok_or_else(|| StoreError::NotFound(task_id.to_owned()))?;
            let actual = slot.entry.log.len();
            if actual != expected_seq {
                return Err(StoreError::Conflict {
                    task_id: task_id.to_owned(),
                    expected: expected_seq,
                    actual,
                });
            }
            slot
        };
        let entry = &mut slot.entry;
        let was_terminal = entry.state.is_terminal();
        let log = entry.log.live()?;
        let first = log.len() as u64 + 1;
        let mut records = Vec::with_capacity(events.len());
        for (seq, event) in (first..).zip(events) {
            if let Some((_, at)) = status_set_by(&event) {
                entry.status_millis = sort_millis(at);
            }
            records.push(next_record(seq, &mut entry.state, event));
        }
        // Read the clock only for waiting tasks: the hot path never waits.
        entry.waiting_since = entry.state.is_interrupted().then(Instant::now);
        let terminal = entry.state.is_terminal();
        // A finished task is frozen now, while its records are in this core's caches:
        // freezing it later (even one finished task later, often on the other worker's core)
        // measured 1.5–2 µs more per send. It is frozen from its live log and this append's
        // records, which the caller keeps to answer from: the live log never holds those (a
        // task created and finished by one append, a blocking send's, takes no allocation for
        // it), and no count of theirs goes up here to come down at the freeze.
        let frozen = if terminal {
            Log::frozen(log, &records, &mut shard.scratch)
        } else {
            None
        };
        match frozen {
            Some(frozen) => entry.log = frozen,
            // Running, or a log that cannot be encoded (it stays live).
            None => log.extend(records.iter().cloned()),
        }
        let mut evicted = None;
        if terminal && !was_terminal {
            shard.finished.push_back((slot.hash, slot.number));
            // One task more finished, so at most one is beyond the bound.
            evicted = shard.evict_beyond(self.terminal_per_shard);
        }
        // The evicted task is freed after the lock is released, not while other writers of
        // the shard wait.
        drop(guard);
        drop(evicted);
        Ok(records)
    }

    async fn get(
        &self,
        task_id: &str,
        history_length: Option<usize>,
    ) -> Result<Option<TaskSnapshot>, StoreError> {
        let (shard, hash) = self.shard(task_id);
        let Some(e) = shard.get(hash, task_id) else {
            return Ok(None);
        };
        Ok(Some(
            TaskSnapshot::new(e.project(history_length)?, e.log.len())
                .with_owner(e.owner().cloned()),
        ))
    }

    async fn events_after(
        &self,
        task_id: &str,
        after_seq: u64,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
        let (shard, hash) = self.shard(task_id);
        let entry = shard
            .get(hash, task_id)
            .ok_or_else(|| StoreError::NotFound(task_id.to_owned()))?;
        let records = entry.log.records()?;
        let start = usize::try_from(after_seq)
            .unwrap_or(usize::MAX)
            .min(records.len());
        Ok(records[start..].to_vec())
    }

    async fn put_push_config(
        &self,
        task_id: &str,
        config: &a2a_types::TaskPushNotificationConfig,
    ) -> Result<(), StoreError> {
        let (mut shard, hash) = self.shard(task_id);
        let entry = shard
            .get_mut(hash, task_id)
            .ok_or_else(|| StoreError::NotFound(task_id.to_owned()))?;
        match entry.push.iter_mut().find(|c| c.id == config.id) {
            Some(existing) => *existing = config.clone(),
            None => entry.push.push(config.clone()),
        }
        Ok(())
    }

    async fn push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<a2a_types::TaskPushNotificationConfig>, StoreError> {
        let (shard, hash) = self.shard(task_id);
        Ok(shard
            .get(hash, task_id)
            .map(|e| e.push.clone())
            .unwrap_or_default())
    }

    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), StoreError> {
        let (mut shard, hash) = self.shard(task_id);
        if let Some(entry) = shard.get_mut(hash, task_id) {
            entry.push.retain(|c| c.id.as_deref() != Some(id));
        }
        Ok(())
    }

    async fn list(&self, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let cursor = query
            .page_token
            .as_deref()
            .map(decode_page_token)
            .transpose()?;
        let after_millis = query.status_timestamp_after.map(|t| t.timestamp_millis());
        let mut keys: Vec<(i64, String)> = Vec::new();
        for shard in self.shards.iter() {
            let shard = lock(shard);
            for Slot { id, entry: e, .. } in &shard.tasks {
                if query
                    .context_id
                    .as_deref()
                    .is_some_and(|c| c != e.context_id())
                {
                    continue;
                }
                if query.status.is_some_and(|s| s != e.state) {
                    continue;
                }
                if query.owner.is_some() && query.owner.as_ref() != e.owner() {
                    continue;
                }
                let millis = e.sort_key();
                if after_millis.is_some_and(|a| millis < a) {
                    continue;
                }
                keys.push((millis, id.to_string()));
            }
        }
        let total_size = keys.len();
        keys.sort_unstable_by(|a, b| b.cmp(a));
        let start = match &cursor {
            Some((m, id)) => {
                keys.partition_point(|(km, kid)| (*km, kid.as_str()) >= (*m, id.as_str()))
            }
            None => 0,
        };
        let end = (start + query.page_size).min(keys.len());
        let mut tasks = Vec::with_capacity(end - start);
        for (_, id) in &keys[start..end] {
            let (shard, hash) = self.shard(id);
            if let Some(e) = shard.get(hash, id) {
                tasks.push(shape_for_listing(e.project(query.history_length)?, query));
            }
        }
        let next_page_token = if end < keys.len() {
            let (millis, id) = &keys[end - 1];
            encode_page_token(chrono::DateTime::from_timestamp_millis(*millis), id)
        } else {
            String::new()
        };
        Ok(TaskPage {
            tasks,
            next_page_token,
            total_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use a2a_types::{TaskStatus, TaskStatusUpdateEvent};

    use super::*;

    /// Task `t`'s status event setting `state`.
    fn status(state: TaskState) -> TaskEvent {
        TaskEvent::Status(TaskStatusUpdateEvent::new("t", "c", TaskStatus::new(state)))
    }

    /// Task `t`'s creation, in context `c`.
    fn created() -> TaskEvent {
        TaskEvent::Created(Task::new("t", "c", TaskState::Submitted))
    }

    fn is_frozen(store: &InMemoryTaskStore, id: &str) -> bool {
        let (shard, hash) = store.shard(id);
        matches!(shard.get(hash, id).expect("kept").log, Log::Frozen { .. })
    }

    /// A task keeps its records while it runs and is frozen by the append that ends it; an
    /// append to it afterwards thaws it.
    #[tokio::test]
    async fn a_task_is_frozen_when_it_finishes() {
        let store = InMemoryTaskStore::default();
        store.append("t", 0, vec![created()]).await.unwrap();
        store
            .append("t", 1, vec![status(TaskState::Working)])
            .await
            .unwrap();
        assert!(!is_frozen(&store, "t"), "a running task is frozen");
        store
            .append("t", 2, vec![status(TaskState::Completed)])
            .await
            .unwrap();
        assert!(is_frozen(&store, "t"), "a finished task is not frozen");
        let snap = store.get("t", None).await.unwrap().expect("kept");
        assert_eq!(
            (snap.seq, snap.task.status.state),
            (3, TaskState::Completed)
        );
        store
            .append("t", 3, vec![status(TaskState::Working)])
            .await
            .unwrap();
        assert!(!is_frozen(&store, "t"), "thawed");
        let states: Vec<_> = store
            .events_after("t", 0)
            .await
            .unwrap()
            .iter()
            .map(|r| (r.seq, r.state))
            .collect();
        assert_eq!(
            states,
            [
                (1, TaskState::Submitted),
                (2, TaskState::Working),
                (3, TaskState::Completed),
                (4, TaskState::Working)
            ]
        );
    }

    /// A task created and finished by one append (a blocking send's) is frozen from that
    /// append's records: numbered and read back as any other, and thawed by a later append.
    #[tokio::test]
    async fn a_task_created_finished_is_frozen_at_once() {
        let store = InMemoryTaskStore::default();
        let seqs = |records: &[Arc<TaskEventRecord>]| -> Vec<_> {
            records.iter().map(|r| (r.seq, r.state)).collect()
        };
        let appended = store
            .append("t", 0, vec![created(), status(TaskState::Completed)])
            .await
            .unwrap();
        let done = [(1, TaskState::Submitted), (2, TaskState::Completed)];
        assert_eq!(seqs(&appended), done);
        assert!(is_frozen(&store, "t"), "a finished task is not frozen");
        assert_eq!(seqs(&store.events_after("t", 0).await.unwrap()), done);
        let snap = store.get("t", None).await.unwrap().expect("kept");
        assert_eq!((snap.seq, snap.task.context_id.as_str()), (2, "c"));
        let after = store
            .append("t", 2, vec![status(TaskState::Working)])
            .await
            .unwrap();
        assert_eq!(seqs(&after), [(3, TaskState::Working)]);
        assert!(!is_frozen(&store, "t"), "thawed");
        assert_eq!(store.events_after("t", 0).await.unwrap().len(), 3);
    }

    /// Frozen logs are written in the shard's buffer and read back whole, a large one
    /// included, whose buffer the shard then lets go of.
    #[tokio::test]
    async fn a_large_log_is_frozen_whole_and_its_buffer_not_kept() {
        let store = InMemoryTaskStore::default();
        let text = |n: usize| "é".repeat(n);
        for (id, n) in [("small", 10), ("large", 60_000), ("after", 20)] {
            let mut task = Task::new(id, "c", TaskState::Submitted);
            task.history.push(a2a_types::Message::user_text(text(n)));
            let done = TaskEvent::Status(TaskStatusUpdateEvent::new(
                id,
                "c",
                TaskStatus::new(TaskState::Completed),
            ));
            store
                .append(id, 0, vec![TaskEvent::Created(task), done])
                .await
                .unwrap();
            assert!(is_frozen(&store, id));
            let kept = store.shard(id).0.scratch.capacity();
            assert!(kept <= MAX_SCRATCH, "{id}: a buffer of {kept} bytes kept");
            let snap = store.get(id, None).await.unwrap().expect("kept");
            assert_eq!(snap.task.context_id, "c");
            assert_eq!(snap.task.status.state, TaskState::Completed);
            assert_eq!(snap.task.history[0].text_content(), text(n), "{id}");
        }
    }
}
