//! A process killed with SIGKILL leaves no task WORKING forever: once its heartbeat is older
//! than `--lease-expiry`, a live process fails its running tasks, and subscribers see it.
//! On SQLite the live process is the restarted server; on PostgreSQL it is a second replica
//! that was running all along.

mod common;

use std::time::Duration;

use a2a_client::A2aClient;
use a2a_types::{StreamResponse, TaskState};
use common::*;

/// Starts a long `slow` task on `victim`, kills it, and follows the task from `survivor`
/// (started by `survivor()` after the kill) until it fails.
async fn abandoned_task_fails(victim: Server, survivor: impl FnOnce() -> Server) {
    let task_id = slow_task_working(&format!("{}/a2a/slow", victim.base), "60").await;
    drop(victim); // SIGKILL

    let survivor = survivor();
    let slow = format!("{}/a2a/slow", survivor.base);
    let c = A2aClient::connect(&slow).await.unwrap();
    let follow = async {
        let mut sub = c.subscribe(&task_id).await.unwrap();
        let mut last = None;
        while let Some(ev) = sub.next().await {
            last = Some(ev.unwrap().response);
        }
        last
    };
    // A guard against a hang, far above the expiry; the test awaits the event itself.
    let last = tokio::time::timeout(Duration::from_secs(60), follow)
        .await
        .expect("the abandoned task was failed");
    let Some(StreamResponse::StatusUpdate(s)) = last else {
        panic!("{last:?}")
    };
    assert_eq!(s.status.state, TaskState::Failed);
    let reason = s.status.message.as_ref().unwrap().text_content();
    assert!(reason.contains("stopped"), "{reason}");
    // What was already sent stays as it was.
    let task = c.get_task(&task_id, None).await.unwrap();
    assert_eq!(task.status.state, TaskState::Failed);
    let names: Vec<_> = task
        .artifacts
        .iter()
        .filter_map(|a| a.name.clone())
        .collect();
    assert_eq!(names, ["progress"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_restart_fails_the_tasks_of_the_killed_process() {
    let store = temp_store();
    let args = ["--store", store.as_str(), "--lease-expiry", "1"];
    abandoned_task_fails(serve(&args), || serve(&args)).await;
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test(flavor = "multi_thread")]
async fn postgres_replica_fails_the_tasks_of_a_killed_replica() {
    let Some(url) = postgres_store().await else {
        return;
    };
    let args = ["--store", url.as_str(), "--lease-expiry", "1"];
    let survivor = serve(&args);
    abandoned_task_fails(serve(&args), move || survivor).await;
}
