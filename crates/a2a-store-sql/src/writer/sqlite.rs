//! The SQLite writer: a synchronous connection (`rusqlite`) on its own thread.
//!
//! SQLite has one writer at a time anyway, and its statements take microseconds; what costs
//! is getting to them. Through sqlx each statement is a hop to the connection's worker
//! thread and back, several per batch, and on a busy machine each hop waits to be scheduled.
//! Here the writer task itself runs on the connection's thread (a small single-threaded
//! runtime), so a whole batch — `BEGIN IMMEDIATE`, its statements, `COMMIT` — runs without
//! leaving it. Reads stay on sqlx's pool, in parallel (WAL).
//!
//! Checkpoints (copying the log into the database file) run on a thread of their own, with
//! the writer finishing each round between two batches: see `checkpoint.rs`.

use std::sync::Arc;

use rusqlite::{Connection, ToSql, params, params_from_iter};
use tokio::sync::mpsc;

use super::checkpoint::Checkpointer;
use super::{
    Append, DbError, Key, NewWriter, Position, Reply, Round, WriteConn, Written, borrowed,
};
use crate::{seq_of, state_of};

// One row per execution of a prepared statement: on the writer's own connection a step costs
// no round trip, so rows need not be packed into one parameter (which SQLite would parse as
// JSON and the event text escaped into it), and no `RETURNING` (which collects its rows in a
// temporary table): `changes()` says whether the row was written.
const CREATE: &str = "INSERT INTO a2a_tasks (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner, principal)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9)
    ON CONFLICT (agent_id, id) DO NOTHING";

const UPDATE: &str =
    "UPDATE a2a_tasks SET seq = ?4, state = ?5, updated_ms = ?6, owner = ?7, status_ms = ?8
    WHERE agent_id = ?1 AND id = ?2 AND seq = ?3";

/// [`UPDATE`] for events that set no status (artifact chunks, messages), with the same
/// parameters but the last: SQLite rewrites the entry of every index holding a column the
/// `SET` names, whether its value changes or not, so `status_ms`, which
/// `a2a_tasks_by_status`, `_by_context` and `_by_principal` hold, is left out rather than
/// set to itself.
const UPDATE_NO_STATUS: &str =
    "UPDATE a2a_tasks SET seq = ?4, state = ?5, updated_ms = ?6, owner = ?7
    WHERE agent_id = ?1 AND id = ?2 AND seq = ?3";

const EVENTS: &str = "INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event) VALUES (?1, ?2, ?3, ?4, ?5)";

const POSITIONS: &str = "SELECT t.agent_id, t.id, t.seq, t.state FROM json_each(?1) AS j
    JOIN a2a_tasks AS t ON t.agent_id = json_extract(j.value, '$[0]') AND t.id = json_extract(j.value, '$[1]')";

const SEQ: &str = "SELECT seq FROM a2a_tasks WHERE agent_id = ?1 AND id = ?2";

/// Opens the writer's connection to the database file at `path` and starts its thread.
pub(super) fn start(
    path: &str,
    writer: NewWriter,
    rx: mpsc::Receiver<(Append, Reply)>,
) -> Result<(), DbError> {
    let conn = Conn {
        conn: open(path)?,
        path: path.to_owned(),
        checkpoints: Checkpointer::start(path)?,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    std::thread::Builder::new()
        .name("a2a-sqlite-writer".into())
        .spawn(move || runtime.block_on(writer.with(conn).run(rx)))?;
    Ok(())
}

/// The writer's connection, the file it opens, and the thread that checkpoints the file.
struct Conn {
    conn: Connection,
    path: String,
    checkpoints: Checkpointer,
}

/// Opens the writer's connection to `path`, through the VFS that writes a commit's log
/// frames in two calls (`wal_log.rs`).
fn open(path: &str) -> rusqlite::Result<Connection> {
    // Checkpoints: the checkpointer does them, with the writer's help (`after_batch`).
    super::wal_log::open(
        path,
        &[crate::SQLITE_PRAGMAS, "PRAGMA wal_autocheckpoint=0;"],
    )
}

/// A transaction begun with `BEGIN IMMEDIATE`, whose `BEGIN`, `COMMIT` and `ROLLBACK` are
/// cached prepared statements: rusqlite's `Transaction` runs them through `execute_batch`,
/// which parses each again at every round (about 4 000 instructions a round, a percent of
/// a blocking send's). Dropped without [`Immediate::commit`] (an error on the way, or a
/// `COMMIT` that failed), it rolls back, as rusqlite's does.
struct Immediate<'c> {
    conn: &'c Connection,
}

impl<'c> Immediate<'c> {
    fn begin(conn: &'c Connection) -> rusqlite::Result<Self> {
        if !conn.is_autocommit() {
            // A rollback on drop that failed left the last round's transaction open.
            rollback(conn)?;
        }
        conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        Ok(Self { conn })
    }

    fn commit(self) -> rusqlite::Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(())
    }
}

impl std::ops::Deref for Immediate<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Immediate<'_> {
    fn drop(&mut self) {
        if !self.conn.is_autocommit() {
            // If this fails, the next round's `begin` tries again.
            let _ = rollback(self.conn);
        }
    }
}

fn rollback(conn: &Connection) -> rusqlite::Result<()> {
    conn.prepare_cached("ROLLBACK")?.execute([])?;
    Ok(())
}

impl WriteConn for Conn {
    async fn positions(&mut self, keys: &[&Key]) -> Result<Vec<(Key, Position)>, DbError> {
        let keys: Vec<(&str, &str)> = keys.iter().map(|k| borrowed(k)).collect();
        let keys = super::json(&keys);
        let mut stmt = self.conn.prepare_cached(POSITIONS)?;
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

    async fn write(&mut self, round: &Round<'_>) -> Result<Written, DbError> {
        let tx = Immediate::begin(&self.conn)?;
        let mut written = Vec::with_capacity(round.creates.len() + round.updates.len());
        if !round.creates.is_empty() {
            let mut create = tx.prepare_cached(CREATE)?;
            for p in &round.creates {
                let row = params![
                    &*p.key.0,
                    p.key.1.as_str(),
                    p.context_id.as_deref().unwrap_or_default(),
                    p.after.state.number(),
                    p.status_ms.unwrap_or(0),
                    p.after.seq as i64,
                    round.now,
                    round.owner,
                    p.principal.as_deref(),
                ];
                if create.execute(row)? == 1 {
                    written.push(*p);
                }
            }
        }
        if !round.updates.is_empty() {
            let mut with_status = tx.prepare_cached(UPDATE)?;
            let mut without_status = tx.prepare_cached(UPDATE_NO_STATUS)?;
            for p in &round.updates {
                let agent: &str = &p.key.0;
                let row: [&dyn ToSql; 7] = [
                    &agent,
                    &p.key.1,
                    &(p.expected as i64),
                    &(p.after.seq as i64),
                    &p.after.state.number(),
                    &round.now,
                    &round.owner,
                ];
                let changed = match &p.status_ms {
                    Some(ms) => with_status
                        .execute(params_from_iter(row.into_iter().chain([ms as &dyn ToSql])))?,
                    None => without_status.execute(row)?,
                };
                if changed == 1 {
                    written.push(*p);
                }
            }
        }
        let (mut bytes, mut rows) = (0, written.len());
        if !written.is_empty() {
            let mut insert = tx.prepare_cached(EVENTS)?;
            for p in &written {
                for (event, r) in &p.rows {
                    let row = params![
                        &*p.key.0,
                        p.key.1.as_str(),
                        r.seq as i64,
                        r.state.number(),
                        event.as_str()
                    ];
                    insert.execute(row)?;
                    bytes += event.len();
                    rows += 1;
                }
            }
        }
        tx.commit()?;
        self.checkpoints.committed(bytes, rows);
        let mut marked = Written::none_of(round);
        for p in written {
            marked.mark(p);
        }
        Ok(marked)
    }

    async fn seq(&mut self, key: &Key) -> Result<Option<u64>, DbError> {
        let mut stmt = self.conn.prepare_cached(SEQ)?;
        let mut rows = stmt.query(params![&*key.0, key.1.as_str()])?;
        Ok(match rows.next()? {
            Some(r) => Some(seq_of(r.get(0)?)),
            None => None,
        })
    }

    async fn reconnect(&mut self) -> Result<(), DbError> {
        self.conn = open(&self.path)?;
        Ok(())
    }

    fn after_batch(&mut self) {
        self.checkpoints.between_batches(&self.conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_round_not_committed_is_rolled_back_and_the_next_one_commits() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x INTEGER)").unwrap();

        let tx = Immediate::begin(&conn).unwrap();
        tx.execute("INSERT INTO t VALUES (1)", []).unwrap();
        drop(tx);
        assert!(conn.is_autocommit(), "the transaction is still open");
        assert_eq!(rows(&conn), 0);

        let tx = Immediate::begin(&conn).unwrap();
        tx.execute("INSERT INTO t VALUES (2)", []).unwrap();
        tx.commit().unwrap();
        assert!(conn.is_autocommit());
        assert_eq!(rows(&conn), 1);

        // A transaction left open (a rollback that failed) is rolled back by the next begin.
        conn.execute_batch("BEGIN; INSERT INTO t VALUES (3)")
            .unwrap();
        let tx = Immediate::begin(&conn).unwrap();
        tx.commit().unwrap();
        assert_eq!(rows(&conn), 1);
    }
}
