//! Events across processes on PostgreSQL: `LISTEN/NOTIFY` behind the `EventBus` trait.
//!
//! Every record a process appends is already committed when it is published; the bus then
//! queues a notice (`[sender, agent, task, seq, state]`) for the channel of its schema (`a2a_events:{schema}`). The
//! other processes hand it to the local subscribers of that task as [`BusEvent::Appended`]:
//! streams read the new events from the store (in order, none twice), and a runtime running
//! the task stops it when the state is terminal (a cancel sent to another replica).
//!
//! One sender per process sends every notice queued while its previous send ran, in one
//! statement, on a connection of its own with `synchronous_commit` off (a notice needs no
//! durability). PostgreSQL serializes the commits of transactions that notify, so notices
//! never ride on the writers' transactions, which would then take turns.
//!
//! A process alone on its database sends no notices: nobody would read them but its own
//! listener, and they cost the database a queue write and a wake-up per event. Each process
//! says hello when it starts listening and answers the hello of a process new to it, so
//! two processes know of each other as soon as the second starts, and from then on both
//! send. (One that learns of a peer late, in the first milliseconds, misses notices that the
//! store poll below makes up for.)
//!
//! `NOTIFY` is not durable: notices sent while a listener is reconnecting are lost. Streams
//! therefore keep reading the store now and then while quiet (`RuntimeConfig::store_poll`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use a2a_runtime::bus::{BusEvent, BusSubscription, EventBus, InProcessBus};
use a2a_types::TaskState;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgListener;
use sqlx::{Any, AnyPool};
use tokio::sync::mpsc;

/// The channel of the processes whose tables are in `schema`: `NOTIFY` reaches every session
/// of the database, and deployments in different schemas of one database must not hear (nor
/// pay for) each other's events. Channel names are identifiers (at most 63 bytes): a long
/// schema name is replaced by a hash of it.
fn channel(schema: &str) -> String {
    let channel = format!("a2a_events:{schema}");
    if channel.len() <= 63 {
        return channel;
    }
    // FNV-1a: the same in every process, whatever its build.
    let hash = schema.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("a2a_events:{hash:016x}")
}

/// One notice: `[sender, agent, task, seq, state]` (owned: ids may hold escapes). A hello
/// has empty ids and the state [`HELLO`].
type Notice = (String, String, String, u64, i64);

/// The state number of a hello notice (no task state is negative).
const HELLO: i64 = -1;

/// The process's end of the channel: one listening connection and the in-process bus of
/// each agent. Cheap to clone.
#[derive(Debug, Clone)]
pub struct NotifyHub {
    inner: Arc<Hub>,
}

/// A queued notice.
#[derive(Debug)]
enum Outgoing {
    /// A record was appended: `(agent, task, seq, state)`.
    Record(Arc<str>, String, u64, i32),
    /// This process listens (sent at start, and in answer to a new process's hello).
    Hello,
}

#[derive(Debug)]
struct Hub {
    outbox: mpsc::UnboundedSender<Outgoing>,
    agents: Mutex<HashMap<Arc<str>, InProcessBus>>,
    /// Another process listens on this database: records are worth notifying.
    peers: AtomicBool,
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
        let schema: Vec<String> = sqlx::query_scalar("SELECT COALESCE(current_schema()::text, '')")
            .fetch_all(&pool)
            .await?;
        let channel = channel(schema.first().map_or("", String::as_str));
        let mut listener = PgListener::connect(url).await?;
        listener.listen(&channel).await?;
        let (outbox, rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Hub {
            outbox,
            agents: Mutex::new(HashMap::new()),
            peers: AtomicBool::new(false),
        });
        let _ = inner.outbox.send(Outgoing::Hello);
        tokio::spawn(send(pool, channel, instance.clone(), rx));
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
        if let BusEvent::Record(r) = &event
            && self.hub.peers.load(Ordering::Relaxed)
        {
            // Fails only once the sender stopped (the process is ending).
            let _ = self.hub.outbox.send(Outgoing::Record(
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
async fn send(
    pool: AnyPool,
    channel: String,
    instance: Arc<str>,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
) {
    let mut conn = None;
    let mut queued = Vec::new();
    while rx.recv_many(&mut queued, 4096).await > 0 {
        let notices: Vec<_> = queued
            .drain(..)
            .map(|notice| match notice {
                Outgoing::Record(agent, task, seq, state) => {
                    (instance.clone(), agent, task, seq, i64::from(state))
                }
                Outgoing::Hello => (instance.clone(), Arc::from(""), String::new(), 0, HELLO),
            })
            .collect();
        let notices = crate::writer::json(&notices);
        if let Err(e) = send_once(&pool, &mut conn, &channel, notices).await {
            conn = None;
            // Other processes' streams still read the store while quiet.
            tracing::warn!(error = %e, "could not notify other processes of task events");
        }
    }
}

async fn send_once(
    pool: &AnyPool,
    conn: &mut Option<PoolConnection<Any>>,
    channel: &str,
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
    sqlx::query("SELECT count(pg_notify($2, j::text)) FROM json_array_elements($1::json) AS j")
        .bind(notices)
        .bind(channel)
        .fetch_all(&mut **conn)
        .await?;
    Ok(())
}

/// Hands the other processes' notices to local subscribers while the hub exists.
async fn listen(mut listener: PgListener, instance: Arc<str>, hub: Weak<Hub>) {
    let mut known = HashSet::new();
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
        hub.peers.store(true, Ordering::Relaxed);
        if known.insert(from) {
            // A process new to this one: make sure it knows of this one too.
            let _ = hub.outbox.send(Outgoing::Hello);
        }
        if state == HELLO {
            continue;
        }
        // Agents this process does not serve have no subscribers here.
        if let Some(bus) = hub.agents().get(agent.as_str()) {
            let state = TaskState::from_number(state).unwrap_or_default();
            bus.publish(&task, BusEvent::Appended { seq, state });
        }
    }
}
