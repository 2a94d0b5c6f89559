//! An agent declared safe to retry (`slow-retry`) does not lose a task to a crash: once the
//! killed process's lease expires, a live process runs the task again from its message, and
//! a subscriber sees it resume and complete. Events sent before the crash stay as they were.

mod common;

use std::time::Duration;

use a2a_client::A2aClient;
use a2a_types::{StreamResponse, TaskState};
use common::*;

/// Starts a 3-second `slow-retry` task on `victim`, kills it once the task is working, and
/// follows the task from `survivor` (started after the kill) to its end.
async fn abandoned_task_reruns(victim: Server, survivor: impl FnOnce() -> Server) {
    // The agent now waits 3 s after its `progress` artifact.
    let task_id = slow_task_working(&victim.base, "3").await;
    drop(victim); // SIGKILL

    let survivor = survivor();
    let c = A2aClient::connect(&survivor.base).await.unwrap();
    let follow = async {
        let mut sub = c.subscribe(&task_id).await.unwrap();
        let mut statuses = Vec::new();
        while let Some(ev) = sub.next().await {
            match ev.unwrap().response {
                StreamResponse::StatusUpdate(s) => statuses.push(s.status),
                StreamResponse::Task(t) => statuses.push(t.status),
                _ => {}
            }
        }
        statuses
    };
    // A guard against a hang, far above expiry plus the agent's 3 s; the test awaits events.
    let statuses = tokio::time::timeout(Duration::from_secs(60), follow)
        .await
        .expect("the abandoned task was re-run to its end");
    let resumed = statuses.iter().any(|s| {
        s.state == TaskState::Working
            && s.message
                .as_ref()
                .is_some_and(|m| m.text_content().contains("re-running"))
    });
    assert!(resumed, "{statuses:?}");
    assert_eq!(statuses.last().unwrap().state, TaskState::Completed);
    let task = c.get_task(&task_id, None).await.unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
    let names: Vec<_> = task
        .artifacts
        .iter()
        .filter_map(|a| a.name.clone())
        .collect();
    assert!(names.contains(&"result".to_owned()), "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_restart_reruns_a_retry_safe_task() {
    let store = temp_store();
    let args = [
        "--agent",
        "slow-retry",
        "--store",
        store.as_str(),
        "--lease-expiry",
        "1",
    ];
    abandoned_task_reruns(serve(&args), || serve(&args)).await;
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test(flavor = "multi_thread")]
async fn postgres_replica_reruns_a_retry_safe_task_of_a_killed_replica() {
    let Some(url) = postgres_store().await else {
        return;
    };
    let args = [
        "--agent",
        "slow-retry",
        "--store",
        url.as_str(),
        "--lease-expiry",
        "1",
    ];
    let survivor = serve(&args);
    abandoned_task_reruns(serve(&args), move || survivor).await;
}
