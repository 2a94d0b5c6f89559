//! The SQLite writer: a synchronous connection (`rusqlite`) on its own thread.
//!
//! SQLite has one writer at a time anyway, and its statements take microseconds; what costs
//! is getting to them. Through sqlx each statement is a hop to the connection's worker
//! thread and back, several per batch, and on a busy machine each hop waits to be scheduled.
//! Here the writer task itself runs on the connection's thread (a small single-threaded
//! runtime), so a whole batch — `BEGIN IMMEDIATE`, its statements, `COMMIT` — runs without
//! leaving it. Reads stay on sqlx's pool, in parallel (WAL).

use std::collections::HashSet;
use std::sync::Arc;

use rusqlite::{Connection, TransactionBehavior, params};
use tokio::sync::mpsc;

use super::{Append, DbError, Key, NewWriter, Position, Reply, Round, WriteConn};
use crate::{seq_of, state_of};

const CREATE: &str = "INSERT INTO a2a_tasks (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner, principal)
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
        json_extract(value, '$[3]'), json_extract(value, '$[4]'), json_extract(value, '$[5]'), ?2, ?2, ?3,
        json_extract(value, '$[6]')
    FROM json_each(?1) WHERE true
    ON CONFLICT (agent_id, id) DO NOTHING
    RETURNING agent_id, id";

const UPDATE: &str = "UPDATE a2a_tasks SET seq = json_extract(j.value, '$[3]'), state = json_extract(j.value, '$[4]'),
        status_ms = COALESCE(json_extract(j.value, '$[5]'), a2a_tasks.status_ms), updated_ms = ?2, owner = ?3
    FROM json_each(?1) AS j
    WHERE a2a_tasks.agent_id = json_extract(j.value, '$[0]')
        AND a2a_tasks.id = json_extract(j.value, '$[1]')
        AND a2a_tasks.seq = json_extract(j.value, '$[2]')
    RETURNING a2a_tasks.agent_id, a2a_tasks.id";

const EVENTS: &str = "INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event)
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
        json_extract(value, '$[3]'), json_extract(value, '$[4]')
    FROM json_each(?1)";

const POSITIONS: &str = "SELECT t.agent_id, t.id, t.seq, t.state FROM json_each(?1) AS j
    JOIN a2a_tasks AS t ON t.agent_id = json_extract(j.value, '$[0]') AND t.id = json_extract(j.value, '$[1]')";

const SEQ: &str = "SELECT seq FROM a2a_tasks WHERE agent_id = ?1 AND id = ?2";

/// Opens the writer's connection to the database file at `path` and starts its thread.
pub(super) fn start(
    path: &str,
    writer: NewWriter,
    rx: mpsc::Receiver<(Append, Reply)>,
) -> Result<(), DbError> {
    let conn = Conn::open(path)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    std::thread::Builder::new()
        .name("a2a-sqlite-writer".into())
        .spawn(move || runtime.block_on(writer.with(conn).run(rx)))?;
    Ok(())
}

/// The writer's connection, and the file it opens.
struct Conn(Connection, String);

impl Conn {
    fn open(path: &str) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.execute_batch(crate::SQLITE_PRAGMAS)?;
        Ok(Self(conn, path.to_owned()))
    }
}

/// The `(agent, id)` rows of a `RETURNING agent_id, id` statement.
fn keys(
    tx: &rusqlite::Transaction<'_>,
    sql: &str,
    batch: &str,
    round: &Round<'_>,
) -> rusqlite::Result<Vec<Key>> {
    let mut stmt = tx.prepare_cached(sql)?;
    let rows = stmt.query_map(params![batch, round.now, round.owner], |r| {
        Ok((Arc::from(r.get::<_, String>(0)?), r.get::<_, String>(1)?))
    })?;
    rows.collect()
}

impl WriteConn for Conn {
    async fn positions(&mut self, keys: &[&Key]) -> Result<Vec<(Key, Position)>, DbError> {
        let keys: Vec<(&str, &str)> = keys.iter().map(|k| (&*k.0, k.1.as_str())).collect();
        let keys = super::json(&keys);
        let mut stmt = self.0.prepare_cached(POSITIONS)?;
        let rows = stmt.query_map([keys], |r| {
            let key = (Arc::from(r.get::<_, String>(0)?), r.get::<_, String>(1)?);
            let position = Position {
                seq: seq_of(r.get(2)?),
                state: state_of(r.get(3)?),
            };
            Ok((key, position))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    async fn write(&mut self, round: &Round<'_>) -> Result<HashSet<Key>, DbError> {
        let tx = self
            .0
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut written = HashSet::new();
        if !round.creates.is_empty() {
            written.extend(keys(&tx, CREATE, &round.creates_json(), round)?);
        }
        if !round.updates.is_empty() {
            written.extend(keys(&tx, UPDATE, &round.updates_json(), round)?);
        }
        if !written.is_empty() {
            let events = round.events_json(|k| written.contains(k));
            tx.prepare_cached(EVENTS)?.execute([events])?;
        }
        // Dropped without commit (an error above), the transaction rolls back.
        tx.commit()?;
        Ok(written)
    }

    async fn seq(&mut self, key: &Key) -> Result<Option<u64>, DbError> {
        let mut stmt = self.0.prepare_cached(SEQ)?;
        let mut rows = stmt.query(params![&*key.0, key.1.as_str()])?;
        Ok(match rows.next()? {
            Some(r) => Some(seq_of(r.get(0)?)),
            None => None,
        })
    }

    async fn reconnect(&mut self) -> Result<(), DbError> {
        *self = Self::open(&self.1)?;
        Ok(())
    }
}
