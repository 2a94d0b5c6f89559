//! The PostgreSQL writer connection: a round is one statement (data-modifying CTEs), so one
//! round trip and one implicit transaction (two, the first rolled back, for a round that
//! meets a key that exists: see [`WRITE`]). It speaks PostgreSQL's own protocol, not the
//! `Any` driver the readers use, so that a round's rows travel as typed arrays: a JSON batch
//! parameter made PostgreSQL lex the whole row (event text included) once per field it read,
//! which was a quarter of its CPU time under load.

use std::collections::HashMap;
use std::sync::Arc;

use sqlx::postgres::{PgArguments, PgConnection, PgRow, Postgres};
use sqlx::query::Query;
use sqlx::{Connection, Row};

use super::{DbError, Key, Planned, Position, Round, WriteConn, Written, borrowed};
use crate::stale_plans::stale_plan;
use crate::{seq_of, state_of};

/// The insert of a round's new tasks, in both forms of the write.
macro_rules! insert_new_tasks {
    () => {
        "INSERT INTO a2a_tasks (agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner, principal)
        SELECT j.agent, j.id, j.context, j.state, j.status_ms, j.seq, $18, $18, $19, j.principal
        FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::int8[], $6::int8[], $20::text[])
            AS j(agent, id, context, state, status_ms, seq, principal)"
    };
}

/// The sequence-checked update of a round's existing tasks, returning those it wrote, in both
/// forms of the write.
macro_rules! update_tasks {
    () => {
        "UPDATE a2a_tasks AS t SET seq = j.seq, state = j.state,
            status_ms = COALESCE(j.status_ms, t.status_ms), updated_ms = $18, owner = $19
        FROM unnest($7::text[], $8::text[], $9::int8[], $10::int8[], $11::int8[], $12::int8[])
            AS j(agent, id, expected, seq, state, status_ms)
        WHERE t.agent_id = j.agent AND t.id = j.id AND t.seq = j.expected
        RETURNING t.agent_id, t.id"
    };
}

/// New tasks `$1`–`$6` and `$20` (their principals), updates `$7`–`$12`, events `$13`–`$17`
/// (parallel arrays, see [`Columns`], the new tasks' events first), `$18` now, `$19` owner
/// (this process), `$21` how many of the events are the new tasks'. Returns the updated
/// tasks; the new ones were all written, or the statement failed.
///
/// New tasks are inserted as such, not `ON CONFLICT DO NOTHING`: their ids are new as a rule
/// (the runtime makes them with [`a2a_types::new_id`]; a caller of the store that creates an
/// id that exists pays for a second statement), and a conflict-checked insert costs
/// PostgreSQL a speculative insertion per row (a probe of the primary key first, a second WAL
/// record after), which measured 10–35 % more per task row. Their events need no check
/// either, where the conflict-checked form joined every event with the rows its inserts
/// returned. An existing id fails the whole statement (`unique_violation`, before anything
/// is committed), and the round runs again as [`WRITE_CHECKED`], which writes the others.
///
/// Notices to other processes are not sent from here: PostgreSQL serializes the commits of
/// transactions that notify (a lock on the notification queue), which would make the
/// writers take turns. `notify.rs` sends them from one connection of its own.
const WRITE: &str = concat!(
    "WITH created AS (",
    insert_new_tasks!(),
    "), updated AS (",
    update_tasks!(),
    "), events AS (
        INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event)
        SELECT j.agent, j.id, j.seq, j.state, j.event
        FROM unnest($13::text[], $14::text[], $15::int8[], $16::int8[], $17::text[]) WITH ORDINALITY
            AS j(agent, id, seq, state, event, n)
        WHERE j.n <= $21::int8
            OR EXISTS (SELECT 1 FROM updated AS u WHERE u.agent_id = j.agent AND u.id = j.id)
    )
    SELECT agent_id, id FROM updated"
);

/// [`WRITE`] for a round that met a key that exists (a new task's id, as a rule; or the key
/// of an event that an update which lost its race to another process would have written):
/// new tasks that exist are left as they are, and the statement returns every task it
/// wrote, new or updated. Events are inserted only for those.
const WRITE_CHECKED: &str = concat!(
    "WITH created AS (",
    insert_new_tasks!(),
    " ON CONFLICT (agent_id, id) DO NOTHING
        RETURNING agent_id, id
    ), updated AS (",
    update_tasks!(),
    "), written AS (
        SELECT agent_id, id FROM created UNION ALL SELECT agent_id, id FROM updated
    ), events AS (
        INSERT INTO a2a_task_events (agent_id, task_id, seq, state, event)
        SELECT j.agent, j.id, j.seq, j.state, j.event
        FROM unnest($13::text[], $14::text[], $15::int8[], $16::int8[], $17::text[])
            AS j(agent, id, seq, state, event)
        JOIN written AS w ON w.agent_id = j.agent AND w.id = j.id
    )
    SELECT agent_id, id FROM written"
);

const POSITIONS: &str = "SELECT t.agent_id, t.id, t.seq, t.state
    FROM unnest($1::text[], $2::text[]) AS j(agent, id)
    JOIN a2a_tasks AS t ON t.agent_id = j.agent AND t.id = j.id";

const SEQ: &str = "SELECT seq FROM a2a_tasks WHERE agent_id = $1 AND id = $2";

/// A writer's own connection, and where it connects.
pub(crate) struct Conn(PgConnection, String);

impl Conn {
    /// A writer connected to `url`. Its statements join a handful of array rows with
    /// `a2a_tasks` by key; PostgreSQL cannot see how few rows an array parameter holds (it
    /// assumes 100) and, while the table is small, plans a hash join over a scan of the whole
    /// table, a plan it keeps for the prepared statement as the table grows. Only key lookups
    /// make sense here, so this session plans nested loops over the primary key.
    pub(crate) async fn connect(url: &str) -> Result<Self, sqlx::Error> {
        let mut conn = PgConnection::connect(url).await?;
        for setting in [
            "SET enable_hashjoin = off",
            "SET enable_mergejoin = off",
            "SET enable_seqscan = off",
        ] {
            sqlx::query(setting).execute(&mut conn).await?;
        }
        Ok(Self(conn, url.to_owned()))
    }

    /// The rows of `statement`. A statement PostgreSQL refuses as prepared before a schema
    /// change (see `stale_plans.rs`) ran nothing: the connection's prepared statements are
    /// cleared and it runs once more.
    async fn fetch_all<'q>(
        &mut self,
        statement: impl Fn() -> Query<'q, Postgres, PgArguments>,
    ) -> Result<Vec<PgRow>, sqlx::Error> {
        match statement().fetch_all(&mut self.0).await {
            Err(e) if stale_plan(&e) => {
                tracing::info!(
                    "the writer's statements were prepared before a schema change: preparing them again"
                );
                self.0.clear_cached_statements().await?;
                statement().fetch_all(&mut self.0).await
            }
            rows => rows,
        }
    }
}

/// One column of a round's rows, as an array parameter.
type Column<T> = Vec<T>;

/// The rows of a round as parallel columns, borrowed from it.
#[derive(Default)]
struct Columns<'a> {
    c_agent: Column<&'a str>,
    c_id: Column<&'a str>,
    c_context: Column<&'a str>,
    c_state: Column<i64>,
    c_status_ms: Column<i64>,
    c_seq: Column<i64>,
    c_principal: Column<Option<&'a str>>,
    u_agent: Column<&'a str>,
    u_id: Column<&'a str>,
    u_expected: Column<i64>,
    u_seq: Column<i64>,
    u_state: Column<i64>,
    u_status_ms: Column<Option<i64>>,
    e_agent: Column<&'a str>,
    e_id: Column<&'a str>,
    e_seq: Column<i64>,
    e_state: Column<i64>,
    e_event: Column<&'a str>,
    /// How many of the events are the new tasks' (they come first).
    created_events: i64,
    now: i64,
    owner: &'a str,
}

/// Whether `e` is PostgreSQL refusing a row whose key exists (`unique_violation`).
fn unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.is_unique_violation())
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl<'a> Columns<'a> {
    fn of(round: &'a Round<'_>) -> Self {
        let mut c = Self {
            now: round.now,
            owner: round.owner,
            ..Self::default()
        };
        for p in &round.creates {
            c.c_agent.push(&*p.key.0);
            c.c_id.push(p.key.1.as_str());
            c.c_context
                .push(p.context_id.as_deref().unwrap_or_default());
            c.c_state.push(p.after.state.number().into());
            c.c_status_ms.push(p.status_ms.unwrap_or(0));
            c.c_seq.push(int(p.after.seq));
            c.c_principal.push(p.principal.as_deref());
            c.push_events(p);
        }
        c.created_events = c.e_event.len() as i64;
        for p in &round.updates {
            c.u_agent.push(&*p.key.0);
            c.u_id.push(p.key.1.as_str());
            c.u_expected.push(int(p.expected));
            c.u_seq.push(int(p.after.seq));
            c.u_state.push(p.after.state.number().into());
            c.u_status_ms.push(p.status_ms);
            c.push_events(p);
        }
        c
    }

    fn push_events(&mut self, p: &'a Planned) {
        for (event, r) in &p.rows {
            self.e_agent.push(&*p.key.0);
            self.e_id.push(p.key.1.as_str());
            self.e_seq.push(int(r.seq));
            self.e_state.push(r.state.number().into());
            self.e_event.push(event.as_str());
        }
    }

    /// `statement` with the round's parameters `$1`–`$20` bound.
    fn bind<'q>(&'q self, statement: &'q str) -> Query<'q, Postgres, PgArguments> {
        sqlx::query(statement)
            .bind(&self.c_agent)
            .bind(&self.c_id)
            .bind(&self.c_context)
            .bind(&self.c_state)
            .bind(&self.c_status_ms)
            .bind(&self.c_seq)
            .bind(&self.u_agent)
            .bind(&self.u_id)
            .bind(&self.u_expected)
            .bind(&self.u_seq)
            .bind(&self.u_state)
            .bind(&self.u_status_ms)
            .bind(&self.e_agent)
            .bind(&self.e_id)
            .bind(&self.e_seq)
            .bind(&self.e_state)
            .bind(&self.e_event)
            .bind(self.now)
            .bind(self.owner)
            .bind(&self.c_principal)
    }
}

impl WriteConn for Conn {
    async fn positions(&mut self, keys: &[&Key]) -> Result<Vec<(Key, Position)>, DbError> {
        let agents: Vec<&str> = keys.iter().map(|k| &*k.0).collect();
        let ids: Vec<&str> = keys.iter().map(|k| k.1.as_str()).collect();
        let rows = self
            .fetch_all(|| sqlx::query(POSITIONS).bind(&agents).bind(&ids))
            .await?;
        rows.iter()
            .map(|r| {
                let key = (Arc::from(r.try_get::<&str, _>(0)?), r.try_get(1)?);
                let position = Position {
                    seq: seq_of(r.try_get(2)?),
                    state: state_of(r.try_get(3)?),
                };
                Ok((key, position))
            })
            .collect()
    }

    async fn write(&mut self, round: &Round<'_>) -> Result<Written, DbError> {
        let c = Columns::of(round);
        let rows = self
            .fetch_all(|| c.bind(WRITE).bind(c.created_events))
            .await;
        let mut written = Written::none_of(round);
        let rows = match rows {
            // Every new task was written; the rows are the updated tasks.
            Ok(rows) => {
                for p in &round.creates {
                    written.mark(p);
                }
                rows
            }
            // The rows are every task written, new or updated.
            Err(e) if unique_violation(&e) => self.fetch_all(|| c.bind(WRITE_CHECKED)).await?,
            Err(e) => return Err(e.into()),
        };
        if !rows.is_empty() {
            let by_key: HashMap<(&str, &str), &Planned, foldhash::fast::RandomState> = round
                .creates
                .iter()
                .chain(&round.updates)
                .map(|p| (borrowed(&p.key), *p))
                .collect();
            for r in &rows {
                let key = (r.try_get::<&str, _>(0)?, r.try_get::<&str, _>(1)?);
                if let Some(p) = by_key.get(&key) {
                    written.mark(p);
                }
            }
        }
        Ok(written)
    }

    async fn reconnect(&mut self) -> Result<(), DbError> {
        *self = Self::connect(&self.1).await?;
        Ok(())
    }

    async fn seq(&mut self, key: &Key) -> Result<Option<u64>, DbError> {
        let rows = self
            .fetch_all(|| sqlx::query(SEQ).bind(&*key.0).bind(key.1.as_str()))
            .await?;
        match rows.first() {
            Some(r) => Ok(Some(seq_of(r.try_get(0)?))),
            None => Ok(None),
        }
    }
}
