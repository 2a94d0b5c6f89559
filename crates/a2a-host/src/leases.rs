//! Keeping this process's task leases, and failing the tasks of processes that stopped.

use std::collections::BTreeMap;
use std::sync::Arc;

use a2a_server::RequestHandler;
use a2a_store_sql::{LeaseConfig, SqlTaskStore};
use tokio::task::JoinHandle;

/// Most abandoned tasks handled per sweep (the next sweep takes the rest).
const SWEEP_LIMIT: usize = 200;

/// Beats for this process every `config.heartbeat` and fails, through the agent's runtime
/// (so that subscribers hear it), every SUBMITTED or WORKING task whose process has been
/// silent for `config.expiry`. Runs until the returned task is aborted.
pub fn keep_leases(
    db: SqlTaskStore,
    handlers: BTreeMap<String, Arc<RequestHandler>>,
    config: LeaseConfig,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(config.heartbeat);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = db.heartbeat().await {
                tracing::warn!(error = %e, "task store heartbeat failed");
                continue;
            }
            let abandoned = match db.abandoned(config.expiry, SWEEP_LIMIT).await {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "looking for abandoned tasks failed");
                    continue;
                }
            };
            for t in abandoned {
                let Some(handler) = handlers.get(&t.agent_id) else {
                    // Another host's agent: that host fails it.
                    continue;
                };
                let reason = format!(
                    "the server process running this task stopped (no heartbeat from instance {} for {:?}); the task did not finish",
                    t.owner, config.expiry
                );
                match handler.runtime().fail_abandoned(&t.task_id, &reason).await {
                    Ok(true) => tracing::warn!(
                        agent = %t.agent_id, task_id = %t.task_id, owner = %t.owner,
                        "failed a task abandoned by a stopped process"
                    ),
                    Ok(false) => {}
                    Err(e) => {
                        tracing::warn!(task_id = %t.task_id, error = %e, "could not fail an abandoned task")
                    }
                }
            }
        }
    })
}
