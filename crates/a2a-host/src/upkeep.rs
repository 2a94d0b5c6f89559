//! Store upkeep: keeping this process's task leases, failing the tasks of processes that
//! stopped and resuming their push deliveries, expiring tasks left waiting for input,
//! deleting old finished tasks.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use a2a_server::{InMemoryTaskStore, Recovery, RequestHandler};
use a2a_store_sql::{LeaseConfig, RetentionConfig, SqlTaskStore};
use tokio::task::JoinHandle;

/// Most tasks handled per step and sweep (the next sweep takes the rest).
const SWEEP_LIMIT: usize = 200;

type Handlers = BTreeMap<String, Arc<RequestHandler>>;

/// Every `leases.heartbeat`: beats for this process; recovers, through the agent's runtime
/// (so that subscribers hear it), every SUBMITTED or WORKING task whose process has been
/// silent for `leases.expiry` (re-run when the agent is safe to retry, else failed), and
/// resumes the push deliveries such processes left unfinished;
/// cancels tasks waiting for input longer than `retention.idle_interrupted`; deletes
/// finished tasks older than `retention.terminal`. Each step logs its own failure and the
/// others still run. Runs until the returned task is aborted.
pub fn keep_store(
    db: SqlTaskStore,
    handlers: Handlers,
    leases: LeaseConfig,
    retention: RetentionConfig,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(leases.heartbeat);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = db.heartbeat().await {
                tracing::warn!(error = %e, "task store heartbeat failed");
            }
            db.refresh_peers(leases.expiry).await;
            fail_abandoned(&db, &handlers, leases.expiry).await;
            resume_push(&db, &handlers, leases.expiry).await;
            if let Some(idle) = retention.idle_interrupted {
                expire_idle(&db, &handlers, idle).await;
            }
            if let Some(age) = retention.terminal {
                match db.delete_finished(age, SWEEP_LIMIT).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(deleted = n, "deleted finished tasks past retention"),
                    Err(e) => tracing::warn!(error = %e, "deleting old tasks failed"),
                }
            }
        }
    })
}

async fn fail_abandoned(db: &SqlTaskStore, handlers: &Handlers, expiry: Duration) {
    let abandoned = match db.abandoned(expiry, SWEEP_LIMIT).await {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!(error = %e, "looking for abandoned tasks failed");
            return;
        }
    };
    for t in abandoned {
        // Another host's agent: that host fails it.
        let Some(handler) = handlers.get(&t.agent_id) else {
            continue;
        };
        let reason = format!(
            "the server process running this task stopped (no heartbeat from instance {} for {expiry:?}); the task did not finish",
            t.owner
        );
        match handler
            .runtime()
            .recover_abandoned(&t.task_id, &reason)
            .await
        {
            Ok(Recovery::Failed) => tracing::warn!(
                agent = %t.agent_id, task_id = %t.task_id, owner = %t.owner,
                "failed a task abandoned by a stopped process"
            ),
            Ok(Recovery::Rerun) => tracing::warn!(
                agent = %t.agent_id, task_id = %t.task_id, owner = %t.owner,
                "re-running a task abandoned by a stopped process (the agent is safe to retry)"
            ),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(task_id = %t.task_id, error = %e, "could not recover an abandoned task")
            }
        }
    }
}

/// Takes over the push deliveries of stopped processes, for the agents here that send
/// them: each resumes after the last event its process recorded as delivered
/// (at-least-once: a few may be sent twice). A claim that cannot be resumed is given back.
async fn resume_push(db: &SqlTaskStore, handlers: &Handlers, expiry: Duration) {
    let agents: Vec<&str> = handlers
        .iter()
        .filter(|(_, h)| h.sends_push_notifications())
        .map(|(id, _)| id.as_str())
        .collect();
    let orphans = match db.orphaned_push(expiry, &agents, SWEEP_LIMIT).await {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(error = %e, "looking for unfinished push deliveries failed");
            return;
        }
    };
    for o in orphans {
        let Some(handler) = handlers.get(&o.agent_id) else {
            continue;
        };
        match db.claim_push(&o).await {
            Ok(true) => {}
            Ok(false) => continue, // another process took it
            Err(e) => {
                tracing::warn!(task_id = %o.task_id, error = %e, "could not claim a push delivery");
                continue;
            }
        }
        let resumed = handler
            .resume_push(&o.task_id, &o.config_id, o.delivered_seq)
            .await;
        match resumed {
            Ok(true) => tracing::info!(
                agent = %o.agent_id, task_id = %o.task_id, config = %o.config_id, owner = %o.owner,
                after_seq = o.delivered_seq, "resumed push deliveries left by a stopped process"
            ),
            Ok(false) => {} // the config is gone
            Err(ref e) => {
                tracing::warn!(task_id = %o.task_id, error = %e, "could not resume push deliveries");
            }
        }
        // A config that is gone has nothing to give back.
        if resumed.is_err()
            && let Err(e) = db.release_push(&o).await
        {
            tracing::warn!(task_id = %o.task_id, error = %e, "could not give back a push delivery");
        }
    }
}

async fn expire_idle(db: &SqlTaskStore, handlers: &Handlers, idle: Duration) {
    let tasks = match db.idle_interrupted(idle, SWEEP_LIMIT).await {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "looking for idle tasks failed");
            return;
        }
    };
    for t in tasks {
        if let Some(handler) = handlers.get(&t.agent_id) {
            expire(handler, &t.task_id, idle).await;
        }
    }
}

/// For in-memory stores: cancels, through each agent's runtime, the tasks that have waited
/// for input or authentication longer than `idle`, sweeping every tenth of `idle` (between
/// 100 ms and a minute). Runs until the returned task is aborted.
pub fn expire_idle_in_memory(
    stores: Vec<(Arc<InMemoryTaskStore>, Arc<RequestHandler>)>,
    idle: Duration,
) -> JoinHandle<()> {
    let every = (idle / 10).clamp(Duration::from_millis(100), Duration::from_secs(60));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            for (store, handler) in &stores {
                for task_id in store.idle_interrupted(idle, SWEEP_LIMIT) {
                    expire(handler, &task_id, idle).await;
                }
            }
        }
    })
}

/// Cancels one task left waiting for `idle`, with a status message that says so.
async fn expire(handler: &RequestHandler, task_id: &str, idle: Duration) {
    let reason = format!("expired: no input for {idle:?}");
    if let Err(e) = handler.runtime().expire_interrupted(task_id, &reason).await {
        tracing::warn!(task_id, error = %e, "could not expire an idle task");
    }
}
