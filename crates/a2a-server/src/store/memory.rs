//! In-memory [`TaskStore`]: for tests and throwaway servers.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use a2a_types::Task;
use async_trait::async_trait;

use super::{
    StoreError, TaskEvent, TaskEventRecord, TaskPage, TaskQuery, TaskSnapshot, TaskStore,
    apply_event, decode_page_token, encode_page_token, shape_for_listing, sort_key,
};

const SHARDS: usize = 16;

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

#[derive(Debug)]
struct Entry {
    task: Task,
    log: Vec<Arc<TaskEventRecord>>,
}

#[derive(Debug, Default)]
struct Shard {
    tasks: HashMap<String, Entry>,
    /// Terminal tasks in the order they finished: the eviction queue.
    finished: VecDeque<String>,
}

/// Keeps tasks and their logs in memory, sharded so that writers of different tasks rarely
/// meet on a lock. Memory stays bounded: each shard evicts its oldest terminal tasks once it
/// holds more than its share of [`InMemoryTaskStoreConfig::max_terminal_tasks`] (O(1)
/// amortized per append; no scan of the store).
#[derive(Debug)]
pub struct InMemoryTaskStore {
    shards: Box<[Mutex<Shard>]>,
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
            terminal_per_shard: config.max_terminal_tasks.div_ceil(SHARDS).max(1),
        }
    }

    fn shard(&self, task_id: &str) -> MutexGuard<'_, Shard> {
        let mut h = DefaultHasher::new();
        task_id.hash(&mut h);
        let i = (h.finish() as usize) % self.shards.len();
        lock(&self.shards[i])
    }

    /// Number of tasks held (for tests and metrics).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).tasks.len()).sum()
    }

    /// True when no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn lock(m: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    // A panic while holding the lock cannot leave a shard half-updated in a way that
    // matters more than losing the whole store, so keep serving.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn tail_clone(task: &Task, history_length: Option<usize>) -> Task {
    let history = match history_length {
        Some(n) if n < task.history.len() => task.history[task.history.len() - n..].to_vec(),
        _ => task.history.clone(),
    };
    let mut t = Task::new(task.id.clone(), task.context_id.clone(), task.status.state);
    t.status = task.status.clone();
    t.artifacts = task.artifacts.clone();
    t.history = history;
    t.metadata = task.metadata.clone();
    t
}

#[async_trait]
impl TaskStore for InMemoryTaskStore {
    async fn append(
        &self,
        task_id: &str,
        expected_seq: u64,
        events: Vec<TaskEvent>,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
        let mut shard = self.shard(task_id);
        let shard = &mut *shard;
        let was_terminal;
        let entry = if expected_seq == 0 {
            if shard.tasks.contains_key(task_id) {
                return Err(StoreError::AlreadyExists(task_id.to_owned()));
            }
            if !matches!(events.first(), Some(TaskEvent::Created(_))) {
                return Err(StoreError::NotCreated(task_id.to_owned()));
            }
            was_terminal = false;
            shard
                .tasks
                .entry(task_id.to_owned())
                .or_insert_with(|| Entry {
                    task: Task::default(),
                    log: Vec::new(),
                })
        } else {
            let entry = shard
                .tasks
                .get_mut(task_id)
                .ok_or_else(|| StoreError::NotFound(task_id.to_owned()))?;
            let actual = entry.log.len() as u64;
            if actual != expected_seq {
                return Err(StoreError::Conflict {
                    task_id: task_id.to_owned(),
                    expected: expected_seq,
                    actual,
                });
            }
            was_terminal = entry.task.status.state.is_terminal();
            entry
        };
        let mut records = Vec::with_capacity(events.len());
        for event in events {
            apply_event(&mut entry.task, &event);
            let seq = entry.log.len() as u64 + 1;
            let record = Arc::new(TaskEventRecord::new(seq, entry.task.status.state, event));
            entry.log.push(record.clone());
            records.push(record);
        }
        if !was_terminal && entry.task.status.state.is_terminal() {
            shard.finished.push_back(task_id.to_owned());
            while shard.finished.len() > self.terminal_per_shard {
                if let Some(old) = shard.finished.pop_front() {
                    shard.tasks.remove(&old);
                }
            }
        }
        Ok(records)
    }

    async fn get(
        &self,
        task_id: &str,
        history_length: Option<usize>,
    ) -> Result<Option<TaskSnapshot>, StoreError> {
        let shard = self.shard(task_id);
        Ok(shard.tasks.get(task_id).map(|e| TaskSnapshot {
            task: tail_clone(&e.task, history_length),
            seq: e.log.len() as u64,
        }))
    }

    async fn events_after(
        &self,
        task_id: &str,
        after_seq: u64,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
        let shard = self.shard(task_id);
        let entry = shard
            .tasks
            .get(task_id)
            .ok_or_else(|| StoreError::NotFound(task_id.to_owned()))?;
        let start = usize::try_from(after_seq)
            .unwrap_or(usize::MAX)
            .min(entry.log.len());
        Ok(entry.log[start..].to_vec())
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
            for e in shard.tasks.values() {
                let t = &e.task;
                if query
                    .context_id
                    .as_deref()
                    .is_some_and(|c| c != t.context_id)
                {
                    continue;
                }
                if query.status.is_some_and(|s| s != t.status.state) {
                    continue;
                }
                let (millis, id) = sort_key(t);
                if after_millis.is_some_and(|a| millis < a) {
                    continue;
                }
                keys.push((millis, id.to_owned()));
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
            let shard = self.shard(id);
            if let Some(e) = shard.tasks.get(id) {
                tasks.push(shape_for_listing(
                    tail_clone(&e.task, query.history_length),
                    query,
                ));
            }
        }
        let next_page_token = if end < keys.len() {
            let (millis, id) = &keys[end - 1];
            let ts = chrono::DateTime::from_timestamp_millis(*millis);
            encode_page_token(ts, id)
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
