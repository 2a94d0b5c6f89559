//! The PostgreSQL writer connection: a round is one statement (data-modifying CTEs), so one
//! round trip and one implicit transaction.

use std::collections::HashSet;

use sqlx::pool::PoolConnection;
use sqlx::{Any, Row};

use super::{DbError, Key, Position, Round, WriteConn};
use crate::{seq_of, state_of};

/// `$1` new tasks, `$2` updates, `$3` events (see [`Round`]'s JSON forms), `$4` now, `$5`
/// owner. Events are inserted only for the tasks the insert or the update wrote.
///
/// Notices to other processes are not sent from here: PostgreSQL serializes the commits of
/// transactions that notify (a lock on the notification queue), which would make the
/// writers take turns. `notify.rs` sends them from one connection of its own.
const WRITE: &str = "WITH created AS (
        INSERT INTO a2a_tasks (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner)
        SELECT j->>0, j->>1, j->>2, (j->>3)::bigint, (j->>4)::bigint, (j->>5)::bigint, $4, $4, $5
        FROM json_array_elements($1::json) AS j
        ON CONFLICT (agent_id, id) DO NOTHING
        RETURNING agent_id, id
    ), updated AS (
        UPDATE a2a_tasks AS t SET seq = (j->>3)::bigint, state = (j->>4)::bigint,
            status_ms = COALESCE((j->>5)::bigint, t.status_ms), updated_ms = $4, owner = $5
        FROM json_array_elements($2::json) AS j
        WHERE t.agent_id = j->>0 AND t.id = j->>1 AND t.seq = (j->>2)::bigint
        RETURNING t.agent_id, t.id
    ), written AS (
        SELECT agent_id, id FROM created UNION ALL SELECT agent_id, id FROM updated
    ), events AS (
        INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event)
        SELECT j->>0, j->>1, (j->>2)::bigint, (j->>3)::bigint, j->>4
        FROM json_array_elements($3::json) AS j
        JOIN written AS w ON w.agent_id = j->>0 AND w.id = j->>1
    )
    SELECT agent_id, id FROM written";

const POSITIONS: &str = "SELECT t.agent_id, t.id, t.seq, t.state
    FROM json_array_elements($1::json) AS j
    JOIN a2a_tasks AS t ON t.agent_id = j->>0 AND t.id = j->>1";

const SEQ: &str = "SELECT seq FROM a2a_tasks WHERE agent_id = $1 AND id = $2";

/// A writer's own connection of the pool.
pub(crate) struct Conn(PoolConnection<Any>);

impl Conn {
    /// A writer on `conn`. Its statements join a handful of JSON rows with `a2a_tasks` by
    /// key; PostgreSQL cannot see how few rows a JSON parameter holds (it assumes 100) and,
    /// while the table is small, plans a hash join over a scan of the whole table, a plan
    /// it keeps for the prepared statement as the table grows. Only key lookups make sense
    /// here, so this session plans nested loops over the primary key.
    pub(crate) async fn new(mut conn: PoolConnection<Any>) -> Result<Self, sqlx::Error> {
        for setting in [
            "SET enable_hashjoin = off",
            "SET enable_mergejoin = off",
            "SET enable_seqscan = off",
        ] {
            sqlx::query(setting).execute(&mut *conn).await?;
        }
        Ok(Self(conn))
    }
}

impl WriteConn for Conn {
    async fn positions(&mut self, keys: String) -> Result<Vec<(Key, Position)>, DbError> {
        let rows = sqlx::query(POSITIONS)
            .bind(keys)
            .fetch_all(&mut *self.0)
            .await?;
        rows.iter()
            .map(|r| {
                let key = (r.try_get::<String, _>(0)?.into(), r.try_get(1)?);
                let position = Position {
                    seq: seq_of(r.try_get(2)?),
                    state: state_of(r.try_get(3)?),
                };
                Ok((key, position))
            })
            .collect()
    }

    async fn write(&mut self, round: &Round<'_>) -> Result<HashSet<Key>, DbError> {
        let rows = sqlx::query(WRITE)
            .bind(round.creates_json())
            .bind(round.updates_json())
            .bind(round.events_json(|_| true))
            .bind(round.now)
            .bind(round.owner)
            .fetch_all(&mut *self.0)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get::<String, _>(0)?.into(), r.try_get(1)?)))
            .collect()
    }

    async fn seq(&mut self, key: &Key) -> Result<Option<u64>, DbError> {
        let rows = sqlx::query(SEQ)
            .bind(&*key.0)
            .bind(key.1.as_str())
            .fetch_all(&mut *self.0)
            .await?;
        match rows.first() {
            Some(r) => Ok(Some(seq_of(r.try_get(0)?))),
            None => Ok(None),
        }
    }
}
