//! Events across processes on PostgreSQL: `LISTEN/NOTIFY` behind the `EventBus` trait.
//!
//! Every record a process appends is already committed when it is published; the bus then
//! queues a notice (`[sender, agent, task, seq, state]`) for the `a2a_events` channel. The
//! other processes hand it to the local subscribers of that task as [`BusEvent::Appended`]:
//! streams read the new events from the store (in order, none twice), and a runtime running
//! the task stops it when the state is terminal (a cancel sent to another replica).
//!
//! One sender per process sends every notice queued while its previous send ran, in one
//! statement, on a connection of its own with `synchronous_commit` off (a notice needs no
//! durability). PostgreSQL serializes the commits of transactions that notify, so notices
//! never ride on the writers' transactions, which would then take turns.
//!
//! `NOTIFY` is not durable: notices sent while a listener is reconnecting are lost. Streams
//! therefore keep reading the store now and then while quiet (`RuntimeConfig::store_poll`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use a2a_server::bus::{BusEvent, BusSubscription, EventBus, InProcessBus};
use a2a_types::TaskState;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgListener;
use sqlx::{Any, AnyPool};
use tokio::sync::mpsc;

/// The channel every process listens on (and `writer/postgres.rs` notifies).
const CHANNEL: &str = "a2a_events";

/// One notice: `[sender, agent, task, seq, state]` (owned: ids may hold escapes).
type Notice = (String, String, String, u64, i64);

/// The process's end of the channel: one listening connection and the in-process bus of
/// each agent. Cheap to clone.
#[derive(Debug, Clone)]
pub struct NotifyHub {
    inner: Arc<Hub>,
}

/// A queued notice: `(agent, task, seq, state)`.
type Outgoing = (Arc<str>, String, u64, i32);

#[derive(Debug)]
struct Hub {
    outbox: mpsc::UnboundedSender<Outgoing>,
    agents: Mutex<HashMap<Arc<str>, InProcessBus>>,
}

impl Hub {
    fn agents(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, InProcessBus>> {
        self.agents.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl NotifyHub {
    /// Starts listening on `url` and sending through `pool`, as process `instance` (whose
    /// own notices the listener skips).
    pub(crate) async fn start(
        url: &str,
        pool: AnyPool,
        instance: Arc<str>,
    ) -> Result<Self, sqlx::Error> {
        let mut listener = PgListener::connect(url).await?;
        listener.listen(CHANNEL).await?;
        let (outbox, rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Hub {
            outbox,
            agents: Mutex::new(HashMap::new()),
        });
        tokio::spawn(send(pool, instance.clone(), rx));
        tokio::spawn(listen(listener, instance, Arc::downgrade(&inner)));
        Ok(Self { inner })
    }

    /// The bus of agent `agent_id`: local subscribers get this process's events directly
    /// and the other processes' as [`BusEvent::Appended`].
    pub fn bus(&self, agent_id: &str) -> NotifyBus {
        let local = self
            .inner
            .agents()
            .entry(Arc::from(agent_id))
            .or_default()
            .clone();
        NotifyBus {
            agent: Arc::from(agent_id),
            local,
            hub: self.inner.clone(),
        }
    }
}

/// One agent's bus across the processes of a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct NotifyBus {
    agent: Arc<str>,
    local: InProcessBus,
    hub: Arc<Hub>,
}

impl EventBus for NotifyBus {
    fn publish(&self, task_id: &str, event: BusEvent) {
        if let BusEvent::Record(r) = &event {
            // Fails only once the sender stopped (the process is ending).
            let _ = self.hub.outbox.send((
                self.agent.clone(),
                task_id.to_owned(),
                r.seq,
                r.state.number(),
            ));
        }
        self.local.publish(task_id, event);
    }

    fn subscribe(&self, task_id: &str) -> BusSubscription {
        self.local.subscribe(task_id)
    }

    fn spans_processes(&self) -> bool {
        true
    }
}

/// Sends the queued notices, all those queued meanwhile in one statement. A broken
/// connection is replaced from `pool` at the next send.
async fn send(pool: AnyPool, instance: Arc<str>, mut rx: mpsc::UnboundedReceiver<Outgoing>) {
    let mut conn = None;
    let mut queued = Vec::new();
    while rx.recv_many(&mut queued, 4096).await > 0 {
        let notices: Vec<_> = queued
            .drain(..)
            .map(|(agent, task, seq, state)| (instance.clone(), agent, task, seq, state))
            .collect();
        if let Err(e) = send_once(&pool, &mut conn, crate::writer::json(&notices)).await {
            conn = None;
            // Other processes' streams still read the store while quiet.
            tracing::warn!(error = %e, "could not notify other processes of task events");
        }
    }
}

async fn send_once(
    pool: &AnyPool,
    conn: &mut Option<PoolConnection<Any>>,
    notices: String,
) -> Result<(), sqlx::Error> {
    let conn = match conn {
        Some(c) => c,
        None => {
            let mut c = pool.acquire().await?;
            // A notice needs no durability: its commit need not wait for the disk.
            sqlx::query("SET synchronous_commit = off")
                .execute(&mut *c)
                .await?;
            conn.insert(c)
        }
    };
    sqlx::query(
        "SELECT count(pg_notify('a2a_events', j::text)) FROM json_array_elements($1::json) AS j",
    )
    .bind(notices)
    .fetch_all(&mut **conn)
    .await?;
    Ok(())
}

/// Hands the other processes' notices to local subscribers while the hub exists.
async fn listen(mut listener: PgListener, instance: Arc<str>, hub: Weak<Hub>) {
    loop {
        let received = listener.try_recv().await;
        let Some(hub) = hub.upgrade() else { return };
        let notification = match received {
            Ok(Some(n)) => n,
            Ok(None) => {
                tracing::warn!(
                    "lost the connection listening for other processes' task events; reconnecting"
                );
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "listening for other processes' task events failed; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let (from, agent, task, seq, state): Notice =
            match serde_json::from_str(notification.payload()) {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(error = %e, "ignoring a malformed task event notice");
                    continue;
                }
            };
        if *from == *instance {
            continue;
        }
        // Agents this process does not serve have no subscribers here.
        if let Some(bus) = hub.agents().get(agent.as_str()) {
            let state = TaskState::from_number(state).unwrap_or_default();
            bus.publish(&task, BusEvent::Appended { seq, state });
        }
    }
}
