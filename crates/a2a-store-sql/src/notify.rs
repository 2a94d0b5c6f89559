//! Events across processes on PostgreSQL: `LISTEN/NOTIFY` behind the `EventBus` trait.
//!
//! Every record a process appends is already committed when it is published; the bus then
//! sends a small notice (agent, task, sequence number, state) on the `a2a_events` channel.
//! The other processes hand it to the local subscribers of that task as
//! [`BusEvent::Appended`]: streams read the new events from the store (in order, none
//! twice), and a runtime running the task stops it when the state is terminal (a cancel
//! sent to another replica). Notices are batched: one `NOTIFY` carries every notice queued
//! while the previous one was sent, so publishing never waits for the database.
//!
//! `NOTIFY` is not durable: notices sent while a listener is reconnecting are lost. Streams
//! therefore keep reading the store now and then while quiet (`RuntimeConfig::store_poll`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use a2a_server::bus::{BusEvent, BusSubscription, EventBus, InProcessBus};
use a2a_types::TaskState;
use serde::{Deserialize, Serialize};
use sqlx::AnyPool;
use sqlx::postgres::PgListener;
use tokio::sync::mpsc;

/// The channel every process listens on.
const CHANNEL: &str = "a2a_events";

/// PostgreSQL refuses payloads of 8000 bytes or more.
const MAX_PAYLOAD: usize = 7900;

/// One notice: `(agent, task, seq, state)`.
type Notice = (Arc<str>, String, u64, i32);

#[derive(Serialize, Deserialize)]
struct Payload<'a> {
    /// The sending process.
    #[serde(borrow)]
    from: &'a str,
    #[serde(borrow)]
    notices: Vec<(&'a str, &'a str, u64, i32)>,
}

/// The process's end of the channel: one listening connection, one sender, and the
/// in-process bus of each agent. Cheap to clone.
#[derive(Debug, Clone)]
pub struct NotifyHub {
    inner: Arc<Hub>,
}

#[derive(Debug)]
struct Hub {
    outbox: mpsc::UnboundedSender<Notice>,
    agents: Mutex<HashMap<Arc<str>, InProcessBus>>,
}

impl Hub {
    fn local(&self, agent: &str) -> InProcessBus {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        agents.entry(Arc::from(agent)).or_default().clone()
    }
}

impl NotifyHub {
    /// Starts listening on `url` and sending through `pool`, as process `instance`.
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
        NotifyBus {
            agent: Arc::from(agent_id),
            local: self.inner.local(agent_id),
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
            // Fails only once the sender stopped (the hub is being dropped).
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

/// Sends queued notices, as many per `NOTIFY` as fit.
async fn send(pool: AnyPool, instance: Arc<str>, mut rx: mpsc::UnboundedReceiver<Notice>) {
    let mut queued = Vec::new();
    while rx.recv_many(&mut queued, 1024).await > 0 {
        for payload in payloads(&instance, &queued) {
            let sent = sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(payload)
                .execute(&pool)
                .await;
            if let Err(e) = sent {
                // Other processes' streams still read the store while quiet.
                tracing::warn!(error = %e, "could not notify other processes of task events");
            }
        }
        queued.clear();
    }
}

/// `notices` as JSON payloads under PostgreSQL's size limit.
fn payloads(instance: &str, notices: &[Notice]) -> Vec<String> {
    let mut out = Vec::new();
    let mut batch = Payload {
        from: instance,
        notices: Vec::new(),
    };
    let mut size = instance.len() + 32;
    for (agent, task, seq, state) in notices {
        // Exact: the notice as it will be written, and its separating comma.
        let len =
            serde_json::to_string(&(agent, task, seq, state)).map_or(MAX_PAYLOAD, |j| j.len() + 1);
        if len + instance.len() + 32 > MAX_PAYLOAD {
            tracing::warn!(task_id = %task, "task id too long to notify other processes");
            continue;
        }
        if size + len > MAX_PAYLOAD {
            out.extend(serde_json::to_string(&batch).ok());
            batch.notices.clear();
            size = instance.len() + 32;
        }
        batch.notices.push((agent, task, *seq, *state));
        size += len;
    }
    if !batch.notices.is_empty() {
        out.extend(serde_json::to_string(&batch).ok());
    }
    out
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
        let payload: Payload<'_> = match serde_json::from_str(notification.payload()) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "ignoring a malformed task event notice");
                continue;
            }
        };
        if payload.from == &*instance {
            continue;
        }
        let agents = hub.agents.lock().unwrap_or_else(|e| e.into_inner());
        for (agent, task, seq, state) in payload.notices {
            // Agents this process does not serve have no subscribers here.
            if let Some(bus) = agents.get(agent) {
                let state = TaskState::from_number(i64::from(state)).unwrap_or_default();
                bus.publish(task, BusEvent::Appended { seq, state });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_stay_under_the_limit_and_keep_every_notice() {
        let agent: Arc<str> = Arc::from("agent");
        let notices: Vec<Notice> = (0..500)
            .map(|i| (agent.clone(), format!("task-{i:0>40}"), i, 2))
            .collect();
        let out = payloads("me", &notices);
        assert!(out.len() > 1);
        let mut seen = 0;
        for p in &out {
            assert!(p.len() < 8000, "{}", p.len());
            let parsed: Payload<'_> = serde_json::from_str(p).unwrap();
            assert_eq!(parsed.from, "me");
            for (a, t, seq, _) in parsed.notices {
                assert_eq!(a, "agent");
                assert_eq!(t, format!("task-{seq:0>40}"));
                assert_eq!(seq, seen);
                seen += 1;
            }
        }
        assert_eq!(seen, 500);
    }
}
